// Ground truth (.ibin / .ivecs): whole-file read and atomic write. Ground truth
// is small (queries x k), so it is held in memory.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dataset/file_util.h"
#include "dataset/finite.h"
#include "dataset/layout.h"
#include "strata/dataset.h"

namespace strata {

using dataset_internal::CorruptionAt;
using dataset_internal::InvalidArgumentAt;

Status GroundTruth::Validate(std::uint64_t num_base) const {
  std::uint64_t n = 0;
  if (__builtin_mul_overflow(num_queries, static_cast<std::uint64_t>(k), &n) || ids.size() != n) {
    return Status::InvalidArgument("ground truth: ids has " + std::to_string(ids.size()) +
                                   " entries, expected num_queries * k = " +
                                   std::to_string(num_queries) + " * " + std::to_string(k));
  }
  if (!distances.empty() && distances.size() != ids.size()) {
    return Status::InvalidArgument("ground truth: distances has " +
                                   std::to_string(distances.size()) + " entries, expected 0 or " +
                                   std::to_string(ids.size()));
  }
  if (num_base > 0) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] >= num_base && ids[i] != kInvalidVectorId) {
        return Status::InvalidArgument("ground truth: query " + std::to_string(i / k) +
                                       " position " + std::to_string(i % k) + " has id " +
                                       std::to_string(ids[i]) + " >= number of base vectors " +
                                       std::to_string(num_base));
      }
    }
  }
  return Status::OK();
}

Result<GroundTruth> ReadGroundTruth(const std::string& path, const DatasetReadOptions& options) {
  dataset_internal::InputFile file;
  STRATA_ASSIGN_OR_RETURN(auto layout, dataset_internal::OpenAndProbe(path, options, &file));
  const DatasetInfo& info = layout.info;
  if (!info.ground_truth) {
    return InvalidArgumentAt(path, "is a ." + std::string(DatasetFormatName(info.format)) +
                                       " vector file, not ground truth (.ibin or .ivecs)");
  }
  GroundTruth gt;
  gt.num_queries = info.rows;
  gt.k = info.dim;
  const std::size_t n = static_cast<std::size_t>(info.rows) * info.dim;
  std::vector<std::uint32_t> raw(n);
  if (info.format == DatasetFormat::kIbin) {
    STRATA_RETURN_IF_ERROR(file.ReadAt(8, n * 4, raw.data()));
    if (info.has_distances) {
      gt.distances.resize(n);
      STRATA_RETURN_IF_ERROR(file.ReadAt(8 + n * 4, n * 4, gt.distances.data()));
      if (options.check_finite) {
        // A missing result's distance is +inf; every other one is finite.
        std::vector<float> checked(gt.distances);
        for (std::size_t i = 0; i < n; ++i) {
          if (dataset_internal::LoadU32(&raw[i]) == kMissingIdU32 &&
              checked[i] == std::numeric_limits<float>::infinity()) {
            checked[i] = 0.0f;
          }
        }
        STRATA_RETURN_IF_ERROR(
            dataset_internal::CheckFiniteFloat(path, checked.data(), info.rows, info.dim, 0));
      }
    }
  } else {
    // .ivecs: rows of (i32 k, k x i32 id), read in bounded chunks.
    const std::uint64_t stride = layout.row_stride;
    const std::uint64_t per_chunk = std::max<std::uint64_t>(1, (std::uint64_t{4} << 20) / stride);
    std::vector<unsigned char> scratch(
        static_cast<std::size_t>(std::min(info.rows, per_chunk) * stride));
    for (std::uint64_t done = 0; done < info.rows;) {
      const std::uint64_t rows = std::min(per_chunk, info.rows - done);
      STRATA_RETURN_IF_ERROR(
          file.ReadAt(done * stride, static_cast<std::size_t>(rows * stride), scratch.data()));
      for (std::uint64_t r = 0; r < rows; ++r) {
        const unsigned char* row = scratch.data() + r * stride;
        const std::int32_t k = dataset_internal::LoadI32(row);
        if (k != static_cast<std::int32_t>(info.dim)) {
          return CorruptionAt(path, "row " + std::to_string(done + r) + " has k " +
                                        std::to_string(k) + " but row 0 has " +
                                        std::to_string(info.dim) + " (inconsistent row sizes)");
        }
        for (std::uint32_t j = 0; j < info.dim; ++j) {
          const std::int32_t id = dataset_internal::LoadI32(row + 4 + 4 * j);
          if (id == -1) {  // no result at this position (faiss writes -1)
            raw[(done + r) * info.dim + j] = kMissingIdU32;
            continue;
          }
          if (id < 0) {
            return CorruptionAt(path, "row " + std::to_string(done + r) + " position " +
                                          std::to_string(j) + " holds negative id " +
                                          std::to_string(id));
          }
          raw[(done + r) * info.dim + j] = static_cast<std::uint32_t>(id);
        }
      }
      done += rows;
    }
  }
  if (info.format == DatasetFormat::kIbin) {
    // Ids are stored little-endian; LoadU32 keeps that explicit.
    for (std::uint32_t& v : raw) v = dataset_internal::LoadU32(&v);
  }
  gt.ids.resize(n);
  for (std::size_t i = 0; i < n; ++i) gt.ids[i] = raw[i] == kMissingIdU32 ? kInvalidVectorId : raw[i];
  return gt;
}

Status WriteGroundTruth(const std::string& path, const GroundTruth& gt,
                        const DatasetWriteOptions& options) {
  DatasetFormat format;
  if (options.format.has_value()) {
    format = *options.format;
  } else {
    STRATA_ASSIGN_OR_RETURN(format, DetectDatasetFormat(path));
  }
  if (!IsGroundTruthFormat(format)) {
    return InvalidArgumentAt(path, "ground truth is written as .ibin or .ivecs, not ." +
                                       std::string(DatasetFormatName(format)));
  }
  Status valid = gt.Validate();
  if (!valid.ok()) return valid.WithContext(path);
  if (gt.k == 0 || gt.k > kMaxDatasetDimension) {
    return InvalidArgumentAt(path, "k " + std::to_string(gt.k) + " is outside 1.." +
                                       std::to_string(kMaxDatasetDimension));
  }
  const bool ibin = format == DatasetFormat::kIbin;
  if (ibin && gt.num_queries > std::numeric_limits<std::uint32_t>::max()) {
    return InvalidArgumentAt(path, ".ibin holds at most 2^32-1 queries");
  }
  // The largest id each format holds; kInvalidVectorId (no result) is
  // written as the missing-id sentinel instead.
  const std::uint64_t max_id =
      ibin ? kMissingIdU32 - 1
           : static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max());
  for (std::size_t i = 0; i < gt.ids.size(); ++i) {
    if (gt.ids[i] > max_id && gt.ids[i] != kInvalidVectorId) {
      return InvalidArgumentAt(path, "query " + std::to_string(i / gt.k) + " position " +
                                         std::to_string(i % gt.k) + " has id " +
                                         std::to_string(gt.ids[i]) + ", which does not fit the " +
                                         (ibin ? "u32 ids of .ibin (ids must be < 2^32 - 1)"
                                               : "i32 ids of .ivecs (ids must be < 2^31)"));
    }
  }

  std::string temp;
  STRATA_ASSIGN_OR_RETURN(int fd, dataset_internal::CreateTempFor(path, &temp));
  std::vector<unsigned char> buf;
  Status s;
  auto flush = [&]() {
    if (s.ok() && !buf.empty()) s = dataset_internal::WriteFull(fd, temp, buf.data(), buf.size());
    buf.clear();
  };
  auto put_u32 = [&](std::uint32_t v) {
    unsigned char b[4];
    dataset_internal::StoreU32(b, v);
    buf.insert(buf.end(), b, b + 4);
    if (buf.size() >= (std::size_t{1} << 20)) flush();
  };
  if (ibin) {
    put_u32(static_cast<std::uint32_t>(gt.num_queries));
    put_u32(gt.k);
    for (VectorId id : gt.ids) {
      put_u32(id == kInvalidVectorId ? kMissingIdU32 : static_cast<std::uint32_t>(id));
    }
    for (float d : gt.distances) {
      std::uint32_t bits;
      std::memcpy(&bits, &d, 4);
      put_u32(bits);
    }
  } else {
    for (std::uint64_t q = 0; q < gt.num_queries; ++q) {
      put_u32(gt.k);
      for (VectorId id : gt.ids_of(q)) {
        put_u32(id == kInvalidVectorId ? 0xFFFFFFFFu : static_cast<std::uint32_t>(id));  // -1
      }
    }
  }
  flush();
  if (!s.ok()) {
    dataset_internal::DiscardTemp(fd, temp);
    return s;
  }
  return dataset_internal::CommitTemp(fd, temp, path, options.sync);
}

}  // namespace strata
