// Format names and detection, VectorMatrix, DatasetInfo rendering.
#include <cassert>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dataset/element_traits.h"
#include "strata/dataset.h"

namespace strata {

namespace {

struct FormatEntry {
  DatasetFormat format;
  std::string_view name;
};
constexpr FormatEntry kFormats[] = {
    {DatasetFormat::kFbin, "fbin"},   {DatasetFormat::kU8bin, "u8bin"},
    {DatasetFormat::kI8bin, "i8bin"}, {DatasetFormat::kIbin, "ibin"},
    {DatasetFormat::kFvecs, "fvecs"}, {DatasetFormat::kBvecs, "bvecs"},
    {DatasetFormat::kIvecs, "ivecs"}, {DatasetFormat::kNpy, "npy"},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view DatasetFormatName(DatasetFormat format) {
  for (const auto& e : kFormats) {
    if (e.format == format) return e.name;
  }
  return "unknown";
}

Result<DatasetFormat> ParseDatasetFormat(std::string_view name) {
  if (!name.empty() && name.front() == '.') name.remove_prefix(1);
  const std::string lower = Lower(name);
  for (const auto& e : kFormats) {
    if (e.name == lower) return e.format;
  }
  return Status::InvalidArgument(
      "unknown dataset format '" + std::string(name) +
      "' (expected fbin, u8bin, i8bin, ibin, fvecs, bvecs, ivecs or npy)");
}

Result<DatasetFormat> DetectDatasetFormat(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const std::size_t dot = base.find_last_of('.');
  if (dot == std::string_view::npos || dot + 1 == base.size()) {
    return Status::InvalidArgument(std::string(path) +
                                   ": cannot tell the format without a file extension "
                                   "(.fbin, .u8bin, .i8bin, .ibin, .fvecs, .bvecs, .ivecs, .npy); "
                                   "pass the format explicitly");
  }
  const std::string ext = Lower(base.substr(dot + 1));
  for (const auto& e : kFormats) {
    if (e.name == ext) return e.format;
  }
  return Status::InvalidArgument(std::string(path) + ": unrecognised extension '." + ext +
                                 "' (expected .fbin, .u8bin, .i8bin, .ibin, .fvecs, .bvecs, "
                                 ".ivecs or .npy); pass the format explicitly");
}

bool IsGroundTruthFormat(DatasetFormat format) {
  return format == DatasetFormat::kIbin || format == DatasetFormat::kIvecs;
}

// --- VectorMatrix ---------------------------------------------------------

void VectorMatrix::Free::operator()(std::byte* p) const { std::free(p); }

Result<VectorMatrix> VectorMatrix::Allocate(ElementType type, std::uint64_t rows,
                                            std::uint32_t dim) {
  if (dim == 0) return Status::InvalidArgument("VectorMatrix: dimension must be > 0");
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(rows, static_cast<std::uint64_t>(dim) * ElementSize(type), &bytes) ||
      bytes > (std::uint64_t{1} << 62)) {
    return Status::InvalidArgument("VectorMatrix: " + std::to_string(rows) + " x " +
                                   std::to_string(dim) + " elements overflow");
  }
  VectorMatrix m;
  m.type_ = type;
  m.rows_ = rows;
  m.dim_ = dim;
  if (bytes > 0) {
    // aligned_alloc reports failure with nullptr (no exception), which becomes
    // a Status; the size must be a multiple of the alignment.
    const std::size_t rounded = (static_cast<std::size_t>(bytes) + 63) & ~std::size_t{63};
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) {
      return Status::InvalidArgument("VectorMatrix: cannot allocate " + std::to_string(bytes) +
                                     " bytes");
    }
    std::memset(p, 0, rounded);
    m.data_.reset(static_cast<std::byte*>(p));
  }
  return m;
}

std::size_t VectorMatrix::row_bytes() const {
  return static_cast<std::size_t>(dim_) * ElementSize(type_);
}

std::byte* VectorMatrix::bytes() { return data_.get(); }
const std::byte* VectorMatrix::bytes() const { return data_.get(); }

template <typename T>
std::span<T> VectorMatrix::values() {
  const bool match = dataset_internal::TypeMatches<T>(type_);
  assert(match && "VectorMatrix::values<T>: T does not match the element type");
  if (!match || data_ == nullptr) return {};
  return {reinterpret_cast<T*>(data_.get()), static_cast<std::size_t>(rows_) * dim_};
}

template <typename T>
std::span<const T> VectorMatrix::values() const {
  const bool match = dataset_internal::TypeMatches<T>(type_);
  assert(match && "VectorMatrix::values<T>: T does not match the element type");
  if (!match || data_ == nullptr) return {};
  return {reinterpret_cast<const T*>(data_.get()), static_cast<std::size_t>(rows_) * dim_};
}

template std::span<float> VectorMatrix::values<float>();
template std::span<std::uint16_t> VectorMatrix::values<std::uint16_t>();
template std::span<std::uint8_t> VectorMatrix::values<std::uint8_t>();
template std::span<std::int8_t> VectorMatrix::values<std::int8_t>();
template std::span<const float> VectorMatrix::values<float>() const;
template std::span<const std::uint16_t> VectorMatrix::values<std::uint16_t>() const;
template std::span<const std::uint8_t> VectorMatrix::values<std::uint8_t>() const;
template std::span<const std::int8_t> VectorMatrix::values<std::int8_t>() const;

// --- DatasetInfo ----------------------------------------------------------

std::string DatasetInfo::ToString() const {
  char size[32];
  const double b = static_cast<double>(file_bytes);
  if (b >= 1024.0 * 1024 * 1024) {
    std::snprintf(size, sizeof(size), "%.2f GiB", b / (1024.0 * 1024 * 1024));
  } else if (b >= 1024.0 * 1024) {
    std::snprintf(size, sizeof(size), "%.1f MiB", b / (1024.0 * 1024));
  } else if (b >= 1024.0) {
    std::snprintf(size, sizeof(size), "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(size, sizeof(size), "%llu B", static_cast<unsigned long long>(file_bytes));
  }
  std::string out(DatasetFormatName(format));
  if (ground_truth) {
    out += " ground truth: queries=" + std::to_string(rows) + " k=" + std::to_string(dim) +
           (has_distances ? " (ids + distances)" : " (ids only)");
  } else {
    // Appended piecewise: GCC 12 emits a bogus -Wrestrict for `" " + std::string(...)`.
    out += ' ';
    out += ElementTypeName(element_type);
    out += " rows=" + std::to_string(rows) + " dim=" + std::to_string(dim);
  }
  if (npy_version > 0) out += " npy v" + std::to_string(npy_version);
  out += " (" + std::string(size) + ")";
  return out;
}

}  // namespace strata
