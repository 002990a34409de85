// Writing a new graph index from an existing one plus deletes and inserts,
// without rebuilding the graph: FreshDiskANN's StreamingMerge (Singh et al.,
// graph/streaming_merge.h) over the old index's graph and vectors, the old
// PQ codebook (and OPQ rotation) reused for every code — the quantizer is
// trained once, as DefraDB's DISKANN prescribes — and the new file written in the
// options' layout (page shuffle, MemGraph) through the same writer as a
// build. For the collection's merges (src/collection).
#ifndef STRATA_INDEX_GRAPH_INDEX_MERGE_H_
#define STRATA_INDEX_GRAPH_INDEX_MERGE_H_

#include <cstdint>
#include <span>
#include <string>

#include "graph/streaming_merge.h"
#include "strata/graph_index.h"

namespace strata {

// Rows of the index in `old_dir` (its row ids, as searches return them)
// whose `deleted[row]` is nonzero are dropped; the `new_rows` (m x dim
// float32, given as stored: cosine rows are normalised here) are appended.
// The new index in `index_dir` numbers its rows as the merge does: the
// surviving old rows in old order, then the new rows. `options` gives R, L,
// alpha, the layout and threads (its PQ fields are ignored: the codebook is
// the old one); its `labels`, when set, label the merged rows in that order
// and make the merge label-aware (graph::StreamingMergeOptions::labels). Errors: InvalidArgument for mismatching shapes or options,
// Corruption / IOError from the files.
Result<GraphBuildReport> MergeGraphIndex(const std::string& old_dir,
                                         std::span<const std::uint8_t> deleted,
                                         std::span<const float> new_rows,
                                         const std::string& index_dir,
                                         const GraphBuildOptions& options,
                                         graph::StreamingMergeReport* merge_report = nullptr);

}  // namespace strata

#endif  // STRATA_INDEX_GRAPH_INDEX_MERGE_H_
