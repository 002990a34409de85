// Steps every index build shares: loading the base rows, writing the index
// directory aside and switching it in, cosine normalisation of loaded rows,
// and writing a float row back in its stored element type.
#ifndef STRATA_INDEX_BUILD_UTIL_H_
#define STRATA_INDEX_BUILD_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>

#include "strata/dataset.h"
#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {
namespace format {
struct Manifest;
}

// A base file's rows, widened to float32 for a build.
struct BuildRows {
  ElementType type = ElementType::kFloat32;  // as stored in the file
  std::uint32_t dim = 0;
  std::uint64_t n = 0;
  VectorMatrix matrix;  // n x dim float32
};

// Aborted naming `what` once `stop` is requested (builds check it between
// phases); OK otherwise.
inline Status StopRequested(const std::stop_token& stop, const char* what) {
  if (!stop.stop_requested()) return Status::OK();
  return Status::Aborted(std::string(what) + ": stopped on request");
}

// Reads every row of `base_path` as float32. InvalidArgument for a file
// without rows; NotSupported for 2^32 - 1 rows or more (`what` names the
// index kind in the message); reader errors pass through.
Result<BuildRows> LoadBuildRows(const std::string& base_path, const std::string& what);

// Writes an index aside and switches it into `index_dir` only once it is
// complete and durable, so that a failed build (bad input found late, an I/O
// error, a crash) leaves a previous index there untouched.
//
// Makes a staging directory `<index_dir>.staging-<pid>-<counter>` beside
// `index_dir` (same parent: the switch is a rename), calls
// `write(staging_dir)` to write every file of the index, manifest included,
// fsyncs those files and the directory, then switches:
//  - no `index_dir` yet: renames the staging directory to it;
//  - `index_dir` holds nothing but index files (the manifest, files either
//    manifest lists, writer temporaries): swaps the two directories in one
//    step (Linux renameat2 RENAME_EXCHANGE), fsyncs the parent and deletes
//    the old index;
//  - otherwise (other files kept there, `index_dir` a mount point, a file
//    system without RENAME_EXCHANGE): removes the old manifest, renames the
//    new files in one by one and the manifest last. Files of other names
//    stay. A crash during these renames leaves no manifest (no index), never
//    a mixed one; a mount point is staged inside it (`.strata.staging-*`).
// A symbolic link `index_dir` is followed (the link itself stays). Staging
// directories of the same `index_dir` left by a crashed build (no live build
// holds their lock) are removed first. Concurrent builds into one
// `index_dir`: the last switch wins.
//
// InvalidArgument if `index_dir` exists and is not a directory; otherwise
// write's error or IOError, in both cases with the staging directory removed
// and `index_dir` untouched (except for an I/O error during the one-by-one
// renames, after which the directory holds no manifest).
Status BuildAside(const std::string& index_dir,
                  const std::function<Status(const std::string& staging_dir)>& write);

// The checks every index merge makes of its inputs against the old index
// (manifest `m`): the options' metric is the index's, `deleted_flags` has one
// flag per old row, `new_values` is a whole number of dim-float rows.
// InvalidArgument naming the mismatch.
Status CheckMergeInputs(const format::Manifest& m, Metric options_metric, std::size_t deleted_flags,
                        std::size_t new_values);

// Normalises each of the n rows (dim floats) to unit length in place, for
// cosine. InvalidArgument naming `path` and the row for a zero vector.
Status NormalizeRowsForCosine(float* rows, std::uint64_t n, std::uint32_t dim,
                              const std::string& path);

// Converts float row `row` back to the stored element type. Integer and half
// inputs were widened exactly on load, so this reproduces the input bytes.
void StoreVector(ElementType type, const float* row, std::size_t dim, std::byte* out);

// The inverse: `dim` stored elements of `type` at `in` widened to float32.
void WidenToFloat(ElementType type, const void* in, std::size_t dim, float* out);

// float32, float16 or bfloat16.
inline bool IsFloatType(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16;
}

}  // namespace strata

#endif  // STRATA_INDEX_BUILD_UTIL_H_
