// Label files: DiskANN's text form and big-ann-benchmarks' .spmat CSR
// (strata/labels.h).
#include "strata/labels.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <string_view>

#include "dataset/file_util.h"

namespace strata {
namespace {

using dataset_internal::CorruptionAt;
using dataset_internal::InputFile;
using dataset_internal::InvalidArgumentAt;

// The largest label: 2^32 - 1 is kept free as a "no label" sentinel.
constexpr std::uint64_t kMaxLabel = std::numeric_limits<std::uint32_t>::max() - 1;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

Result<std::string> ReadWhole(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path));
  std::string bytes(static_cast<std::size_t>(file.size()), '\0');
  if (!bytes.empty()) STRATA_RETURN_IF_ERROR(file.ReadAt(0, bytes.size(), bytes.data()));
  return bytes;
}

Status WriteWhole(const std::string& path, const std::string& bytes) {
  std::string temp;
  STRATA_ASSIGN_OR_RETURN(int fd, dataset_internal::CreateTempFor(path, &temp));
  Status s = dataset_internal::WriteFull(fd, temp, bytes.data(), bytes.size());
  if (!s.ok()) {
    dataset_internal::DiscardTemp(fd, temp);
    return s;
  }
  return dataset_internal::CommitTemp(fd, temp, path, /*sync=*/true);
}

template <typename T>
void Put(std::string* out, T value) {
  char b[sizeof(T)];
  std::memcpy(b, &value, sizeof(T));
  out->append(b, sizeof(T));
}

}  // namespace

void LabelSets::AddRow(std::vector<std::uint32_t> row_labels) {
  std::sort(row_labels.begin(), row_labels.end());
  row_labels.erase(std::unique(row_labels.begin(), row_labels.end()), row_labels.end());
  labels.insert(labels.end(), row_labels.begin(), row_labels.end());
  offsets.push_back(labels.size());
}

bool LabelSets::HasAll(std::size_t i, std::span<const std::uint32_t> required) const {
  const std::span<const std::uint32_t> have = row(i);
  return std::includes(have.begin(), have.end(), required.begin(), required.end());
}

std::uint64_t LabelSets::CountWith(std::uint32_t label) const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < rows(); ++i) {
    const auto r = row(i);
    n += std::binary_search(r.begin(), r.end(), label) ? 1 : 0;
  }
  return n;
}

Result<LabelSets> ReadLabelText(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadWhole(path));
  LabelSets sets;
  std::string_view rest(text);
  std::size_t line_no = 0;
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    ++line_no;
    std::vector<std::uint32_t> row;
    line = Trim(line);
    while (!line.empty()) {
      const std::size_t comma = line.find(',');
      const std::string_view field = Trim(line.substr(0, comma));
      line = comma == std::string_view::npos ? std::string_view() : line.substr(comma + 1);
      std::uint64_t value = 0;
      const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
      if (field.empty() || ec != std::errc() || end != field.data() + field.size() ||
          value > kMaxLabel) {
        return InvalidArgumentAt(
            path, "line " + std::to_string(line_no) + ": label '" + std::string(field) +
                      "' is not an integer in 0.." + std::to_string(kMaxLabel) +
                      " (labels are comma-separated non-negative integers; map string labels "
                      "to integers first)");
      }
      row.push_back(static_cast<std::uint32_t>(value));
    }
    sets.AddRow(std::move(row));
  }
  return sets;
}

Result<LabelSets> ReadSpmat(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path));
  std::int64_t header[3];
  if (file.size() < sizeof(header)) return CorruptionAt(path, "shorter than the .spmat header");
  STRATA_RETURN_IF_ERROR(file.ReadAt(0, sizeof(header), header));
  const std::int64_t nrow = header[0], ncol = header[1], nnz = header[2];
  if (nrow < 0 || ncol < 0 || nnz < 0) {
    return CorruptionAt(path, "negative nrow, ncol or nnz in the .spmat header");
  }
  if (static_cast<std::uint64_t>(ncol) > kMaxLabel + 1) {
    return InvalidArgumentAt(path, "ncol " + std::to_string(ncol) + " labels: too many");
  }
  std::uint64_t indptr_bytes = 0, expect = 0;
  if (!dataset_internal::MulOk(static_cast<std::uint64_t>(nrow) + 1, 8, &indptr_bytes) ||
      !dataset_internal::MulOk(static_cast<std::uint64_t>(nnz), 8, &expect) ||
      !dataset_internal::AddOk(expect, indptr_bytes + sizeof(header), &expect) ||
      expect != file.size()) {
    return CorruptionAt(path, "size " + std::to_string(file.size()) + " bytes does not match " +
                                  "its header (nrow " + std::to_string(nrow) + ", nnz " +
                                  std::to_string(nnz) + "): truncated or not a .spmat file");
  }
  std::vector<std::int64_t> indptr(static_cast<std::size_t>(nrow) + 1);
  STRATA_RETURN_IF_ERROR(file.ReadAt(sizeof(header), indptr_bytes, indptr.data()));
  std::vector<std::int32_t> indices(static_cast<std::size_t>(nnz));
  if (nnz > 0) {
    STRATA_RETURN_IF_ERROR(
        file.ReadAt(sizeof(header) + indptr_bytes, indices.size() * 4, indices.data()));
  }
  if (indptr.front() != 0 || indptr.back() != nnz) {
    return CorruptionAt(path, "indptr must start at 0 and end at nnz");
  }
  LabelSets sets;
  sets.offsets.reserve(indptr.size());
  sets.labels.reserve(indices.size());
  for (std::int64_t r = 0; r < nrow; ++r) {
    if (indptr[r + 1] < indptr[r]) {
      return CorruptionAt(path, "indptr decreases at row " + std::to_string(r));
    }
    std::vector<std::uint32_t> row;
    for (std::int64_t j = indptr[r]; j < indptr[r + 1]; ++j) {
      const std::int32_t label = indices[static_cast<std::size_t>(j)];
      if (label < 0 || label >= ncol) {
        return CorruptionAt(path, "row " + std::to_string(r) + ": column " +
                                      std::to_string(label) + " outside 0.." +
                                      std::to_string(ncol - 1));
      }
      row.push_back(static_cast<std::uint32_t>(label));
    }
    sets.AddRow(std::move(row));
  }
  return sets;
}

Result<LabelSets> ReadLabels(const std::string& path) {
  return EndsWith(path, ".spmat") ? ReadSpmat(path) : ReadLabelText(path);
}

Status WriteLabels(const std::string& path, const LabelSets& sets) {
  std::string out;
  if (EndsWith(path, ".spmat")) {
    std::uint32_t max_label = 0;
    for (std::uint32_t l : sets.labels) max_label = std::max(max_label, l);
    if (sets.labels.size() > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()) ||
        max_label > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max())) {
      return InvalidArgumentAt(path, ".spmat stores labels as int32: a label is too large");
    }
    Put<std::int64_t>(&out, static_cast<std::int64_t>(sets.rows()));
    Put<std::int64_t>(&out, sets.labels.empty() ? 0 : static_cast<std::int64_t>(max_label) + 1);
    Put<std::int64_t>(&out, static_cast<std::int64_t>(sets.labels.size()));
    for (std::uint64_t o : sets.offsets) Put<std::int64_t>(&out, static_cast<std::int64_t>(o));
    for (std::uint32_t l : sets.labels) Put<std::int32_t>(&out, static_cast<std::int32_t>(l));
    for (std::size_t i = 0; i < sets.labels.size(); ++i) Put<float>(&out, 1.0f);
  } else {
    for (std::size_t i = 0; i < sets.rows(); ++i) {
      const auto r = sets.row(i);
      for (std::size_t j = 0; j < r.size(); ++j) {
        if (j > 0) out += ',';
        out += std::to_string(r[j]);
      }
      out += '\n';
    }
  }
  return WriteWhole(path, out);
}

std::vector<std::vector<std::uint32_t>> InvertLabels(const LabelSets& sets) {
  std::vector<std::vector<std::uint32_t>> out;
  for (std::size_t i = 0; i < sets.rows(); ++i) {
    for (std::uint32_t l : sets.row(i)) {
      if (l >= out.size()) out.resize(static_cast<std::size_t>(l) + 1);
      out[l].push_back(static_cast<std::uint32_t>(i));
    }
  }
  return out;
}

std::optional<std::vector<std::uint64_t>> RowsWithAll(
    const LabelSets& sets, const std::vector<std::vector<std::uint32_t>>& inverted,
    std::span<const std::uint32_t> required, std::uint64_t limit_scan) {
  if (required.empty()) return std::nullopt;
  const std::vector<std::uint32_t>* rarest = nullptr;
  static const std::vector<std::uint32_t> kNone;
  for (std::uint32_t l : required) {
    const std::vector<std::uint32_t>& list = l < inverted.size() ? inverted[l] : kNone;
    if (rarest == nullptr || list.size() < rarest->size()) rarest = &list;
  }
  if (rarest->size() > limit_scan) return std::nullopt;
  std::vector<std::uint64_t> out;
  for (std::uint32_t row : *rarest) {
    if (sets.HasAll(row, required)) out.push_back(row);
  }
  return out;
}

}  // namespace strata
