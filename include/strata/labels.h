// Per-vector label sets, in the two forms users of filtered search already
// have them:
//   - DiskANN's label file (`--label_file`): text, line i holds vector i's
//     labels as comma-separated non-negative integers (an empty line: none);
//   - big-ann-benchmarks' `.spmat` (the NeurIPS'23 filter track): a CSR
//     matrix, little-endian int64 nrow, ncol, nnz, then int64 indptr[nrow+1],
//     int32 indices[nnz] (the labels) and float32 data[nnz] (ignored).
// Filter-track semantics: a query's labels are ANDed; a base vector passes
// when it carries every one of them.
#ifndef STRATA_LABELS_H_
#define STRATA_LABELS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "strata/result.h"
#include "strata/search.h"
#include "strata/status.h"

namespace strata {

// Row i's labels are labels[offsets[i] .. offsets[i+1]), sorted, no
// duplicates (the readers sort and deduplicate).
struct LabelSets {
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint32_t> labels;

  std::size_t rows() const { return offsets.size() - 1; }
  std::span<const std::uint32_t> row(std::size_t i) const {
    return {labels.data() + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i])};
  }
  // Appends a row (sorted and deduplicated here).
  void AddRow(std::vector<std::uint32_t> row_labels);
  // Whether row i carries every label of `required` (sorted, unique).
  bool HasAll(std::size_t i, std::span<const std::uint32_t> required) const;
  // How many rows carry label `label`.
  std::uint64_t CountWith(std::uint32_t label) const;
};

// Inverted lists: for each label up to the largest present, the rows that
// carry it, ascending.
std::vector<std::vector<std::uint32_t>> InvertLabels(const LabelSets& sets);

// The rows carrying every label of `required` (sorted, unique), ascending,
// when the rarest of them is carried by at most `limit_scan` rows; nullopt
// otherwise (too many to list cheaply) . Empty `required`: nullopt.
std::optional<std::vector<std::uint64_t>> RowsWithAll(
    const LabelSets& sets, const std::vector<std::vector<std::uint32_t>>& inverted,
    std::span<const std::uint32_t> required, std::uint64_t limit_scan);

// The ids (rows of `base`) that carry every label of `required`, as a
// search filter. Both must outlive it. Ids past base.rows() are rejected.
class LabelFilter : public IdFilter {
 public:
  LabelFilter(const LabelSets& base, std::span<const std::uint32_t> required)
      : base_(base), required_(required) {}
  bool Accept(std::uint64_t id) const override {
    return id < base_.rows() && base_.HasAll(static_cast<std::size_t>(id), required_);
  }

 private:
  const LabelSets& base_;
  std::span<const std::uint32_t> required_;
};

// Reads a label file by its extension: `.spmat` as CSR, anything else as
// DiskANN's text format. InvalidArgument naming the file and line / field on
// malformed input (non-integer or negative label, label above 2^32 - 2,
// truncated or inconsistent CSR); IOError when it cannot be read.
Result<LabelSets> ReadLabels(const std::string& path);
Result<LabelSets> ReadLabelText(const std::string& path);
Result<LabelSets> ReadSpmat(const std::string& path);

// Writes `.spmat` (data all 1.0) or, for any other extension, the text form.
Status WriteLabels(const std::string& path, const LabelSets& sets);

}  // namespace strata

#endif  // STRATA_LABELS_H_
