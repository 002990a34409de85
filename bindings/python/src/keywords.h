// Keyword arguments of the Python API, mapped onto the C++ option structs.
//
// One table per struct, under the `strata` CLI's flag names with '-' written
// as '_' (`L`, `beamwidth`, `pq_bytes`, `memgraph_ratio`, ...) and, where the
// C++ field is named differently, that name as an alias (`list_size`,
// `beam_width`, `mem_graph_ratio`, ...). Giving a field twice (under its name
// and its alias) or a keyword no table knows is a ValueError naming it and
// listing the known ones; a value of the wrong type is a TypeError, one out of
// range a ValueError. `profile` (graph build and search) is applied before
// the other keywords, whatever their order, as the CLI applies --profile
// before the technique flags.
#ifndef STRATA_BINDINGS_PYTHON_KEYWORDS_H_
#define STRATA_BINDINGS_PYTHON_KEYWORDS_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "strata/collection.h"
#include "strata/graph_index.h"
#include "strata/index.h"
#include "strata/ivf_index.h"
#include "strata/search.h"

namespace strata::python {

namespace py = pybind11;

// Argument converters, raising TypeError for the wrong type and ValueError
// out of range; `name` is the argument's name in the message. Integers are
// Python or numpy ints (not bools), bools are True/False (or numpy bools),
// numbers are ints or floats (finite).
std::uint64_t ToU64(py::handle value, const char* name);
std::uint32_t ToU32(py::handle value, const char* name);
double ToF64(py::handle value, const char* name);
bool ToBool(py::handle value, const char* name);
std::string ToStr(py::handle value, const char* name);
py::dict ToDict(py::handle value, const char* name);

// Build parameters of a graph index (`strata build --type graph`): R, L,
// alpha, passes, pq_bytes, pq_train_rows, profile, opq, memgraph_ratio,
// memgraph_R, memgraph_L, shuffle, shuffle_rounds, shuffle_swaps,
// all_in_storage, reuse_graph, threads, seed. `for_collection` drops threads
// and reuse_graph, which a collection sets itself.
void ApplyGraphBuildKeywords(const py::dict& kwargs, bool for_collection,
                             GraphBuildOptions* options);
// Build parameters of an IVF index (`strata build --type ivf`): clusters,
// prefix_bits, bits, rerank, coarse, page_order, kmeans_iterations, threads,
// seed (threads dropped for a collection).
void ApplyIvfBuildKeywords(const py::dict& kwargs, bool for_collection, IvfBuildOptions* options);

// How an SSD index is opened (the CLI's open flags): cache_nodes, cache_mib,
// cache_policy ("bfs" or "frequency"), cache_warmup, io_engine ("auto",
// "uring", "aio", "pread"), resident_codes, verify_checksums.
void ApplyOpenKeywords(const py::dict& kwargs, OpenOptions* options);

// Per-call search knobs: SearchParams plus the batch's thread count.
struct SearchKeywords {
  SearchParams params;
  unsigned threads = 0;  // 0 = all cores
};
// `strata search`'s flags: L, beamwidth, max_expansions, profile, memgraph,
// memgraph_L, page_search, dynamic_width, min_beamwidth, pipelined, nprobe,
// pipeline, inflight, drain_alpha, fill_first, and threads. L defaults to
// max(50, k), as in `strata collection search`. ValueError when the result
// fails SearchParams::Validate.
SearchKeywords ParseSearchKeywords(const py::dict& kwargs, std::int64_t k);

// The CollectionOptions fields under their C++ names, except dim, metric and
// index_type (Collection's own arguments): element_type, create_if_missing,
// error_if_exists, durability, sync_interval_ms, update_mode, in_place_threads,
// in_place_L, in_place_back_edges, in_place_compaction, in_place_compaction_pause_ms,
// in_place_hot_page_heat, in_place_rebuild_dead_ratio, flat_threshold,
// train_sample_bytes, merge_pending_count, merge_pending_ratio,
// merge_pending_bytes, background_merge, streaming_merge, merge_threads,
// memory_budget_bytes, max_payload_bytes, max_batch, and the nested structs
// graph / ivf / open as dicts of the keywords above.
void ApplyCollectionKeywords(const py::dict& kwargs, CollectionOptions* options);

}  // namespace strata::python

#endif  // STRATA_BINDINGS_PYTHON_KEYWORDS_H_
