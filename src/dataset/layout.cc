#include "dataset/layout.h"

#include <string>

#include "dataset/element_traits.h"
#include "dataset/npy.h"

namespace strata::dataset_internal {

namespace {

Status CheckDim(const std::string& path, std::uint64_t dim, std::string_view what) {
  if (dim == 0) return CorruptionAt(path, std::string(what) + " is 0 in the header");
  if (dim > kMaxDatasetDimension) {
    return CorruptionAt(path, std::string(what) + " " + std::to_string(dim) +
                                  " exceeds the maximum " + std::to_string(kMaxDatasetDimension) +
                                  " (corrupt header or wrong format?)");
  }
  return Status::OK();
}

std::string SizeMismatch(std::uint64_t actual, std::uint64_t expected) {
  return std::string(actual < expected ? "truncated: " : "") + "file size " +
         std::to_string(actual) + " does not match the header (expected " +
         std::to_string(expected) + " bytes)";
}

// u32 rows, u32 dim header, then rows * dim elements (and for .ibin the
// optional distances block).
Result<FileLayout> ProbeBin(const InputFile& file, DatasetFormat format) {
  const std::string& path = file.path();
  if (file.size() < 8) {
    return CorruptionAt(path, "file is " + std::to_string(file.size()) +
                                  " bytes, too short for the 8-byte header (u32 rows, u32 dim)");
  }
  unsigned char header[8];
  STRATA_RETURN_IF_ERROR(file.ReadAt(0, 8, header));
  const std::uint64_t rows = LoadU32(header);
  const std::uint64_t dim = LoadU32(header + 4);
  const bool gt = format == DatasetFormat::kIbin;
  STRATA_RETURN_IF_ERROR(CheckDim(path, dim, gt ? "k (neighbours per query)" : "dimension"));
  FileLayout layout;
  DatasetInfo& info = layout.info;
  info.ground_truth = gt;
  info.element_type = gt ? ElementType::kFloat32 : *FixedElementType(format);
  const std::uint64_t elem = gt ? 4 : ElementSize(info.element_type);
  std::uint64_t block = 0, expected = 0;
  // rows and dim are below 2^32 and 2^17, so this cannot overflow 64 bits.
  block = rows * dim * elem;
  expected = 8 + block;
  if (gt) {
    // Distances block present (the usual ground truth) or ids only.
    if (file.size() == 8 + 2 * block) {
      info.has_distances = true;
    } else if (file.size() != expected) {
      return CorruptionAt(path, SizeMismatch(file.size(), 8 + 2 * block) + " for " +
                                    std::to_string(rows) + " queries x k=" + std::to_string(dim) +
                                    " (u32 ids then float32 distances)");
    }
  } else if (file.size() != expected) {
    return CorruptionAt(path, SizeMismatch(file.size(), expected) + " for " + std::to_string(rows) +
                                  " rows x dim " + std::to_string(dim) + " of " +
                                  std::string(ElementTypeName(info.element_type)));
  }
  info.rows = rows;
  info.dim = static_cast<std::uint32_t>(dim);
  info.data_offset = 8;
  layout.row_stride = dim * elem;
  return layout;
}

// TEXMEX: every row is i32 dim followed by dim elements.
Result<FileLayout> ProbeVecs(const InputFile& file, DatasetFormat format) {
  const std::string& path = file.path();
  const bool gt = format == DatasetFormat::kIvecs;
  if (file.size() == 0) return CorruptionAt(path, "file is empty (no rows, dimension unknown)");
  if (file.size() < 4) return CorruptionAt(path, "truncated: file is shorter than one row header");
  unsigned char head[4];
  STRATA_RETURN_IF_ERROR(file.ReadAt(0, 4, head));
  const std::int32_t d = LoadI32(head);
  if (d < 0) {
    return CorruptionAt(path, "row 0 declares a negative dimension " + std::to_string(d));
  }
  STRATA_RETURN_IF_ERROR(
      CheckDim(path, static_cast<std::uint64_t>(d), gt ? "k (row 0)" : "dimension (row 0)"));
  FileLayout layout;
  DatasetInfo& info = layout.info;
  info.ground_truth = gt;
  info.element_type = gt ? ElementType::kFloat32 : *FixedElementType(format);
  const std::uint64_t elem = gt ? 4 : ElementSize(info.element_type);
  const std::uint64_t stride = 4 + static_cast<std::uint64_t>(d) * elem;
  if (file.size() % stride != 0) {
    return CorruptionAt(path, "file size " + std::to_string(file.size()) +
                                  " is not a multiple of the row size " + std::to_string(stride) +
                                  " (4 + " + std::to_string(d) + " x " + std::to_string(elem) +
                                  "): truncated, or rows with different dimensions");
  }
  const std::uint64_t rows = file.size() / stride;
  // Cheap early check of the last row; ReadRows checks every row it reads.
  STRATA_RETURN_IF_ERROR(file.ReadAt((rows - 1) * stride, 4, head));
  const std::int32_t last = LoadI32(head);
  if (last != d) {
    return CorruptionAt(path, "row " + std::to_string(rows - 1) + " has dimension " +
                                  std::to_string(last) + " but row 0 has " + std::to_string(d) +
                                  " (inconsistent row dimensions)");
  }
  info.rows = rows;
  info.dim = static_cast<std::uint32_t>(d);
  info.data_offset = 0;
  layout.row_stride = stride;
  layout.row_prefix = 4;
  return layout;
}

Result<FileLayout> ProbeNpy(const InputFile& file) {
  const std::string& path = file.path();
  STRATA_ASSIGN_OR_RETURN(NpyHeader h, ReadNpyHeader(file));
  STRATA_ASSIGN_OR_RETURN(ElementType type, NpyElementType(path, h.descr));
  if (h.fortran_order) {
    return NotSupportedAt(path,
                          "Fortran-order (column-major) npy array; save a C-order array "
                          "(np.ascontiguousarray) instead");
  }
  if (h.shape.size() != 2) {
    std::string shape = "(";
    for (std::size_t i = 0; i < h.shape.size(); ++i) {
      shape += (i ? ", " : "") + std::to_string(h.shape[i]);
    }
    shape += h.shape.size() == 1 ? ",)" : ")";
    return InvalidArgumentAt(path, "npy array has shape " + shape + " (" +
                                       std::to_string(h.shape.size()) +
                                       "-D); expected a 2-D array (rows, dim)");
  }
  const std::uint64_t rows = h.shape[0];
  const std::uint64_t dim = h.shape[1];
  if (dim == 0 || dim > kMaxDatasetDimension) {
    return InvalidArgumentAt(path, "npy array dimension " + std::to_string(dim) +
                                       " is outside 1.." + std::to_string(kMaxDatasetDimension));
  }
  std::uint64_t block = 0, expected = 0;
  if (!MulOk(rows, dim * ElementSize(type), &block) || !AddOk(block, h.data_offset, &expected)) {
    return CorruptionAt(
        path, "npy shape (" + std::to_string(rows) + ", " + std::to_string(dim) + ") overflows");
  }
  if (file.size() != expected) {
    return CorruptionAt(path, SizeMismatch(file.size(), expected) + " for shape (" +
                                  std::to_string(rows) + ", " + std::to_string(dim) + ") of " +
                                  std::string(ElementTypeName(type)));
  }
  FileLayout layout;
  DatasetInfo& info = layout.info;
  info.element_type = type;
  info.rows = rows;
  info.dim = static_cast<std::uint32_t>(dim);
  info.data_offset = h.data_offset;
  info.npy_version = h.major;
  layout.row_stride = dim * ElementSize(type);
  return layout;
}

}  // namespace

Result<FileLayout> ProbeLayout(const InputFile& file, DatasetFormat format) {
  Result<FileLayout> layout = Status::Corruption("unreachable");
  switch (format) {
    case DatasetFormat::kFbin:
    case DatasetFormat::kU8bin:
    case DatasetFormat::kI8bin:
    case DatasetFormat::kIbin:
      layout = ProbeBin(file, format);
      break;
    case DatasetFormat::kFvecs:
    case DatasetFormat::kBvecs:
    case DatasetFormat::kIvecs:
      layout = ProbeVecs(file, format);
      break;
    case DatasetFormat::kNpy:
      layout = ProbeNpy(file);
      break;
  }
  if (!layout.ok()) return layout;
  layout->info.path = file.path();
  layout->info.format = format;
  layout->info.file_bytes = file.size();
  return layout;
}

Result<FileLayout> OpenAndProbe(const std::string& path, const DatasetReadOptions& options,
                                InputFile* file) {
  DatasetFormat format;
  if (options.format.has_value()) {
    format = *options.format;
  } else {
    STRATA_ASSIGN_OR_RETURN(format, DetectDatasetFormat(path));
  }
  STRATA_ASSIGN_OR_RETURN(*file, InputFile::Open(path));
  return ProbeLayout(*file, format);
}

}  // namespace strata::dataset_internal

namespace strata {

Result<DatasetInfo> GetDatasetInfo(const std::string& path, const DatasetReadOptions& options) {
  dataset_internal::InputFile file;
  STRATA_ASSIGN_OR_RETURN(auto layout, dataset_internal::OpenAndProbe(path, options, &file));
  return layout.info;
}

}  // namespace strata
