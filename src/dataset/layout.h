// Header probing: turns a file's header and size into a validated DatasetInfo
// plus the row geometry the readers need. One place for every format's
// header rules, so GetDatasetInfo, DatasetReader and ReadGroundTruth agree.
#ifndef STRATA_DATASET_LAYOUT_H_
#define STRATA_DATASET_LAYOUT_H_

#include <cstdint>

#include "dataset/file_util.h"
#include "strata/dataset.h"

namespace strata::dataset_internal {

struct FileLayout {
  DatasetInfo info;
  // Bytes per row in the file, including a TEXMEX dim prefix; for .ibin the
  // ids row (k * 4 bytes).
  std::uint64_t row_stride = 0;
  // 4 for .fvecs/.bvecs/.ivecs (the per-row i32 dim), else 0.
  std::uint64_t row_prefix = 0;
};

// Validates `file` as `format`: header fields, dimension in
// 1..kMaxDatasetDimension, no size overflow, file size consistent with the
// header (for TEXMEX formats: a whole number of rows, and the first and last
// rows agree on the dimension). Errors name file.path().
Result<FileLayout> ProbeLayout(const InputFile& file, DatasetFormat format);

// Opens `path` and probes it with the format from `options` or the extension.
Result<FileLayout> OpenAndProbe(const std::string& path, const DatasetReadOptions& options,
                                InputFile* file);

}  // namespace strata::dataset_internal

#endif  // STRATA_DATASET_LAYOUT_H_
