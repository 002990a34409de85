// A graph index whose decoupled layout (WriteDecoupledLayout) takes inserts
// and deletes in place while it is searched (NAVIS; Sun et al., "NAVIS:
// Concurrent Search and Update with Low Position-Seeking Overhead in On-SSD
// Graph-Based Vector Search"): no pending list and no merge. An insert seeks
// its position over edge pages, writes its vector and every edge list it
// changes out of place in one batch of asynchronous writes, then switches
// the RAM indirection table; a delete tombstones the row at once. Searchers
// from index() may run on any number of threads beside one writer.
//
// Today the changes live in the layout's files and this process's RAM
// table: a reopen does not find them (the journal of the table is the
// collection's in-place mode, still to come), and the hot edge-page cache
// is not used.
#ifndef STRATA_IN_PLACE_GRAPH_H_
#define STRATA_IN_PLACE_GRAPH_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "strata/graph_index.h"
#include "strata/index.h"

namespace strata {

struct InPlaceGraphOptions {
  std::uint32_t capacity = 0;  // most vectors, the index's and the inserted (RAM reserved up front)
  std::uint32_t R = 0;         // out-degree of new lists; 0 = the layout's (capacity / 1.3)
  std::uint32_t L = 64;        // position seeking's list size
  std::uint32_t beam_width = 4;
  std::uint32_t exact_neighbours = 16;  // candidates given exact distances while seeking
  float alpha = 1.2f;
};

// What one insert did: reads, the write volume and where the time went.
struct InsertReport {
  std::uint32_t pages_read = 0;
  std::uint32_t lists_written = 0;
  std::uint32_t lists_pruned = 0;
  std::uint32_t edge_pages_written = 0;
  std::uint32_t pages_reused = 0;
  std::uint64_t bytes_written = 0;
  double seek_us = 0, prune_us = 0, write_us = 0, publish_us = 0;
};

class InPlaceGraph {
 public:
  // Opens the graph index in `index_dir` with its decoupled layout in
  // `decoupled_dir` (`open` as for GraphIndex::Open, its decoupled_dir
  // replaced; cache_mib must be 0). NotSupported for element types other
  // than float32.
  static Result<std::unique_ptr<InPlaceGraph>> Open(const std::string& index_dir,
                                                    const std::string& decoupled_dir,
                                                    const InPlaceGraphOptions& options,
                                                    OpenOptions open = {});
  ~InPlaceGraph();

  // Inserts a vector; returns its row (the index's rows, then one per
  // insert). Not thread-safe with Insert or Delete.
  Result<std::uint32_t> Insert(std::span<const float> vector, InsertReport* report = nullptr);
  // Tombstones a row. NotFound for a missing or deleted row.
  Status Delete(std::uint32_t row);

  // The searchable index (NewSearcher and searches are thread-safe beside
  // the writer); searchers must not outlive this object.
  const Index& index() const;
  std::uint64_t num_rows() const;     // rows ever held (deleted ones too)
  std::uint64_t edge_pages() const;   // edge pages in the file
  std::uint64_t free_edge_pages() const;  // pages whose lists have all moved, to be reused

 private:
  struct State;
  explicit InPlaceGraph(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace strata

#endif  // STRATA_IN_PLACE_GRAPH_H_
