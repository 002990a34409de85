// Labels of a label-aware graph built on a keyword field: each keyword gets
// a label number on first sight, kept in the store ('g' + keyword -> the
// label, u32 LE) so that the graph's labels (its per-label start rows and
// the labels its build took into account; Gollapudi et al.,
// "Filtered-DiskANN: Graph Algorithms for Approximate Nearest Neighbor
// Search with Filters", WWW 2023) mean the same keywords after a reopen.
// The payload index's intern ids cannot serve: they follow the order in
// which payloads are read at open.
//
// Numbers are never reused or changed, so the newest dictionary reads every
// index version. Thread-safety: Assign from one thread at a time (the merge
// thread), concurrently with any number of Find.
#ifndef STRATA_COLLECTION_GRAPH_LABEL_DICTIONARY_H_
#define STRATA_COLLECTION_GRAPH_LABEL_DICTIONARY_H_

#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "strata/status.h"

namespace rocksdb {
class DB;
}

namespace strata::collection {

class GraphLabelDictionary {
 public:
  // Reads the stored keywords; Corruption on a malformed entry.
  Status Load(rocksdb::DB* db);
  // The label of `keyword`, if it has one.
  std::optional<std::uint32_t> Find(std::string_view keyword) const;
  // Gives the keywords without a label the next numbers, stored (one
  // synced batch) before they are visible to Find; InvalidArgument past
  // `max_labels` labels in all.
  Status Assign(rocksdb::DB* db, std::span<const std::string> keywords, std::uint32_t max_labels);
  std::size_t size() const;

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::uint32_t> labels_;
};

}  // namespace strata::collection

#endif  // STRATA_COLLECTION_GRAPH_LABEL_DICTIONARY_H_
