// The Collection: an embedded, crash-safe vector store that takes upserts
// and deletes under 64-bit user ids while it serves searches. It follows the
// DISKANN design of DefraDB's vector index inside its LSM store: an exact flat scan while the
// collection is small; the write that crosses `flat_threshold` live vectors
// builds the first SSD index; after that writes go to a durable pending list
// searched beside the SSD index and merged into a new index version in the
// background (FreshDiskANN, Singh et al., "FreshDiskANN: A Fast and Accurate
// Graph-Based ANN Index for Streaming Similarity Search").
//
// A collection lives in a directory:
//   LOCK            advisory lock: one process opens a directory at a time
//   db/             RocksDB: options, vectors and payloads by id, the pending
//                   list, tombstones and the pointer to the current version
//   index/vNNNNNN/  immutable SSD index versions (graph or IVF, strata/index.h)
//                   with `slots.bin`, the slot -> user id map; a version
//                   becomes current in one RocksDB write batch, an old one is
//                   deleted once no search holds it, and whatever a crash
//                   left half-written is removed at open
// Layout details: docs/collection.md.
//
// Durability: a write that returned OK is in RocksDB's write-ahead log. With
// Durability::kSync the log is fsynced before the call returns (survives
// power loss), by group commit: concurrent writers share one fsync, and a
// write becomes visible to searches only once it is durable; if that fsync
// fails the call returns the error and the write's outcome is unknown (the
// log may still hold it). With kAsync the log is written to the OS before
// the call returns (survives kill -9) and fsynced every `sync_interval_ms`.
//
// Concurrency contract:
//   - Any number of threads may call any method at once (except Close and the
//     destructor, which must not race with other calls).
//   - Writes (Upsert, Delete) are serialised in one order; each is atomic (a
//     batch is applied whole or not at all, also across a crash).
//   - A write is visible to every Search and Get that starts after it
//     returned. A Search sees one consistent snapshot: every write up to some
//     point in that order and none after it, even while a merge switches the
//     index version underneath it.
//   - Merges run on a background thread (at most `merge_threads` cores, at a
//     lower scheduling priority, off the CPUs that take the disk's
//     interrupts: `background_cpus`) and never block searches; writes wait only
//     for the short switch at the end of a merge, and for the first index
//     build (the write that crosses the threshold builds it before it
//     returns).
#ifndef STRATA_COLLECTION_H_
#define STRATA_COLLECTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/filter.h"
#include "strata/graph_index.h"
#include "strata/index.h"
#include "strata/ivf_index.h"
#include "strata/result.h"
#include "strata/search.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

enum class Durability : std::uint8_t {
  kSync,   // fsync the log before a write returns (power-loss safe)
  kAsync,  // log written before a write returns (kill -9 safe), fsynced periodically
};
// "sync" / "async".
Result<Durability> ParseDurability(std::string_view name);
std::string_view DurabilityName(Durability d);

enum class UpdateMode : std::uint8_t {
  kBuffered,  // pending list + background merges into new versions (this design)
  // NAVIS in-place updates (graph indexes): each write is applied to the
  // SSD graph itself shortly after it is acknowledged (Sun et al., "NAVIS:
  // Concurrent Search and Update with Low Position-Seeking Overhead in
  // On-SSD Graph-Based Vector Search"); merges only rebuild when deletes
  // pile up or the graph's capacity is reached.
  kInPlace,
};
// "buffered" / "in_place".
Result<UpdateMode> ParseUpdateMode(std::string_view name);
std::string_view UpdateModeName(UpdateMode m);

// How to create or open a collection. The fields marked "creation" are
// stored when the collection is created; on reopen an unset field takes the
// stored value and a set one that differs is InvalidArgument. The others
// apply to this open only.
struct CollectionOptions {
  // creation: vector dimension (0 = unset; required to create).
  std::uint32_t dim = 0;
  // creation: distance (default l2 when creating).
  std::optional<Metric> metric;
  // creation: element type the vectors are stored in, in RocksDB and in the
  // SSD index (default float32). Vectors are given and returned as float32;
  // float16 and bfloat16 round to nearest even, uint8/int8 must hold
  // integers in range. bfloat16 vectors are kept as bfloat16 in RocksDB and
  // the pending list is float32; the SSD index stores them as float32 (no
  // index file format stores bfloat16).
  std::optional<ElementType> element_type;
  // creation: "graph" or "ivf" (default graph).
  std::optional<std::string> index_type;
  // creation: build parameters of the SSD index, under the CLI's names
  // (metric and threads are set by the collection). The graph defaults are
  // the "default" profile (OPQ codes, page shuffle, MemGraph).
  GraphBuildOptions graph = DefaultGraphBuildOptions();
  // IVF collections keep the 2-bit filter codes by default: filtered
  // searches that list their rows are exact at 0.42x the pages (synth1m).
  IvfBuildOptions ivf = DefaultIvfBuildOptions();

  bool create_if_missing = true;
  bool error_if_exists = false;

  Durability durability = Durability::kAsync;
  std::uint32_t sync_interval_ms = 100;  // kAsync: fsync period of the log
  // creation: how writes reach the SSD index (default buffered). In place
  // (graph indexes of float32 or bfloat16 vectors): the index is searched on
  // its decoupled layout (edge pages apart from the vectors, NAVIS), and an
  // applier thread inserts each write into it out of place, journalling
  // the moved edge lists in RocksDB in the batch that retires the write's
  // pending entry; a write is searchable from the pending list until then.
  // A delete tombstones the vertex at once (still walked through, never
  // returned, never linked to again), and the applier then re-links its
  // in-neighbours to its out-neighbours (IP-DiskANN). A merge rebuilds the
  // index only when
  // in_place_rebuild_dead_ratio of it is dead or its capacity (twice the
  // rows it was built with, at least 64k more) is reached.
  std::optional<UpdateMode> update_mode;
  double in_place_rebuild_dead_ratio = 0.3;
  // Applier threads: their position seeking runs at once, the graph's
  // structural updates one at a time. Seeking waits on edge-page reads, so
  // more threads than cores pay: synth1m 100k + 60k - 30k beside a search
  // thread on 2 cores, 737 / 986 / 1,157 inserts/s on 1 / 2 / 4 threads at
  // the same search QPS (bench/results/in_place_threads_synth1m.md).
  unsigned in_place_threads = 4;
  // Position seeking's list size (also a repair's search). 64, not the
  // build's L (125): on synth1m 500k it keeps recall after inserts equal to a
  // fresh build's at half the seek (bench/results/collection_update_*).
  std::uint32_t in_place_L = 64;
  // Back-edges an insert adds, to its nearest out-neighbours (0: to every
  // one, as Vamana, FreshDiskANN and NAVIS do). Each is an edge
  // list rewritten. 12: synth1m 100k + 60k inserts beside a search
  // thread (in_place_bench), every one (20.8 lists an insert) against 12
  // (14.5) and 8 (10.2): 19.2 / 14.7 / 11.0 KB written an insert, recall@10
  // after at L 12 0.917 / 0.916 / 0.914
  // (bench/results/in_place_back_edges_synth1m.md).
  std::uint32_t in_place_back_edges = 12;
  // Keep the edge pages full: inserts take along the few lists left on the
  // pages they empty, and the applier repacks sparse pages once writes have
  // paused (docs/collection.md, "Full edge pages"). Off: inserts
  // are faster, the edge file grows by about two pages an insert and
  // searches fetch emptier pages.
  bool in_place_compaction = true;
  // How long writes must have paused (no write applied, no delete
  // repaired) before compaction packs the pages fully; beside a stream of
  // writes it only keeps them under twice the fewest. 0: in every gap
  // between writes. synth1m 500k + 60k inserts - 30k deletes at 300 a
  // second, 1 search thread: at 0, searches ran at 1,038 QPS by the end of
  // the stream, against 1,287 with no compaction at all
  // (bench/results/idle_compaction_synth1m.md). At most 3,600,000.
  std::uint32_t in_place_compaction_pause_ms = 1000;
  // Hot edge pages are rewritten whole: an insert's changed list on a page
  // the edge-page cache counts at least this hot stays with its page mates
  // (the page written out of place, changes in) instead of moving alone to
  // the insert's fresh pages. Lower keeps the cached pages' lists together
  // (fewer pages a search reads while writes run) for more bytes written
  // an insert; 0: off. Edge pages hold lists packed by length (about 25 a
  // page), so a page counts the accesses of 2.4 times the lists it did with
  // fixed slots and more pages pass a given heat: synth1m 100k + 60k, 48 MiB
  // cache, L 12, at 32 an insert rewrote 3.1 hot pages and wrote 19.9 KB
  // against 8.4 KB at 128 (0.02 hot pages), with 4,857 against 5,110 QPS
  // during the writes and 1,668 against 1,890 inserts/s
  // (bench/results/in_place_packed_lists_synth1m.md; with fixed slots,
  // 32: bench/results/in_place_hot_pages_synth500k.md).
  std::uint32_t in_place_hot_page_heat = 128;
  // A baseline for benches, not a choice to serve with: the in-place
  // layout's edge slots carry their vectors (OdinANN-like packed records,
  // DecoupledLayoutOptions::vectors_in_edge_pages), so every list an insert
  // changes rewrites its vector too. Applies where a layout is written (the
  // first build and each rebuild); a layout keeps what it was written with.
  bool in_place_packed_baseline = false;

  // Below this many live vectors no SSD index exists and a search is an exact
  // scan; the write that reaches it builds the first index (DefraDB's DISKANN: 1,024).
  std::uint64_t flat_threshold = 1024;
  // The first build trains the quantizer on a random sample of at most this
  // many bytes of vectors (DefraDB's DISKANN: 128 MiB).
  std::uint64_t train_sample_bytes = 128ull << 20;
  // Merge policy: a background merge starts when the pending list holds
  // max(merge_pending_count, merge_pending_ratio * indexed vectors) vectors,
  // or merge_pending_bytes bytes (0 = no byte limit), or when the index's
  // dead slots reach that many. Each merge writes a whole new version, so
  // its cost grows with the collection: a ratio keeps the total work of a
  // live build proportional to its size (with ratio r, about 1/r versions'
  // worth of writing in all) where a fixed count makes it quadratic.
  std::uint64_t merge_pending_count = 16384;
  double merge_pending_ratio = 0.1;
  std::uint64_t merge_pending_bytes = 0;
  // Run merges on a background thread; when false, merges happen only when
  // Merge() is called (the threshold's first build still happens).
  bool background_merge = true;
  // Graph merges update the existing graph (FreshDiskANN's StreamingMerge:
  // deleted nodes spliced out through RobustPrune, new vectors inserted by
  // greedy search, the PQ codebook reused) instead of rebuilding it; a
  // merge with more than half of the index dead rebuilds anyway.
  bool streaming_merge = true;
  unsigned merge_threads = 1;
  // The CPUs the background threads (merges and the pending-graph indexer)
  // run on. Empty: every CPU the process may use except those that service
  // the interrupts of the collection's storage device, where that leaves at
  // least one. On a VM whose disk has one request queue, all completions
  // interrupt one vCPU; a busy thread there slowed the searches' reads 18x
  // whatever its priority (io/interrupt_cpus.h). Stats().background_cpus
  // says what was chosen.
  std::vector<unsigned> background_cpus;
  // Memory budget for what the collection holds in RAM besides the index's
  // codes and MemGraph: the pending vectors and the node cache (0 = none).
  // Writes wait for a merge when the pending vectors would exceed it.
  std::uint64_t memory_budget_bytes = 0;
  // How the SSD index is opened (node cache, I/O engine, resident codes:
  // DefraDB's DISKANN opt-in for all-in-storage indexes).
  OpenOptions open;
  // Payloads larger than this are InvalidArgument.
  std::uint32_t max_payload_bytes = 1u << 20;
  // Payload fields indexed for filtering (kept in RAM, strata/filter.h
  // PayloadFieldSpec). Stored: on reopen the stored fields stay indexed and
  // a field given here that is not yet indexed is added (its values taken
  // from the stored payloads); a stored field given with another type is
  // InvalidArgument. The index is rebuilt from the stored payloads at open.
  std::vector<PayloadFieldSpec> payload_index;
  // creation, graph collections: build the graph label-aware over this
  // payload field (declared in payload_index as "integer", values in
  // [0, 2^32 - 2] being labels, or as "keyword", each keyword numbered on
  // first sight in a stored dictionary): Gollapudi et al., "Filtered-DiskANN", WWW
  // 2023, FilteredVamana, in full builds and streaming merges alike, with a
  // start row per label. A filtered search whose `must` matches values of
  // the field then walks only passing points from those values' start rows.
  // Searches without such a filter lose recall on a label-aware graph
  // (bench/results/filter_synth1m_2026-12-03.md): for labelled workloads.
  // Empty: an ordinary graph. Stored; reopening with another is an error.
  std::string graph_label_field;
  // Largest batch one Upsert or Delete takes.
  std::uint64_t max_batch = 1u << 20;

  // The graph and IVF build options the collection uses by default.
  static GraphBuildOptions DefaultGraphBuildOptions();
  static IvfBuildOptions DefaultIvfBuildOptions();
  // InvalidArgument naming the bad field.
  Status Validate() const;
};

// One search hit: a user id, its exact metric distance (squared L2, -<q,x>,
// or 1 - cos; ascending) and, when asked for, its payload.
struct SearchHit {
  VectorId id = 0;
  float distance = 0;
  std::string payload;
};

// Per-search knobs: the index's parameters (k, L or nprobe, ...) plus what to
// return.
struct CollectionSearchParams {
  SearchParams index;
  bool with_payload = false;
  // Only points that pass it are returned (null or empty: all). Checked
  // inside the index's walk on each candidate near enough to be returned:
  // from the payload index when every field the filter reads is indexed
  // (CollectionOptions::payload_index), else on the stored payload (a read
  // of its record from RocksDB, counted in QueryStats::payload_reads). The
  // payload checked is the one current when the search reads it. Not owned;
  // must outlive the call.
  const PayloadFilter* filter = nullptr;
  // Exact-scan fallback for selective filters (the NeurIPS'23 filter
  // track's faiss baseline and ParlayIVF do the same): when the payload
  // index or the filter's has_id bounds the passing points by at most this
  // many candidates, the search skips the walk and computes the exact
  // distance of every candidate that passes (its stored vector read from
  // RocksDB): exact results however few points pass, where a walk steered
  // through a graph few of whose nodes pass loses recall. 0 = never.
  // The scan reads the current records, which may be newer than the
  // search's snapshot. Default from bench/results/filter_collection_*.md
  // and filter_fmnist_graph.md: at 4096 a Fashion-MNIST class the query is
  // not of (6,000 points, 10 %) was walked, and the walk, crowded by failing
  // neighbours of the query, found 2 of its 10 nearest; the scan of those
  // 6,000 finds all 10 at about the walk's QPS.
  std::uint64_t exact_scan_limit = 16384;
};

// A stored record, as Get returns it.
struct StoredRecord {
  VectorId id = 0;
  bool found = false;
  std::vector<float> vector;  // dim floats (the stored element type, widened)
  std::string payload;
};

struct CollectionStats {
  std::uint32_t dim = 0;
  Metric metric = Metric::kL2;
  ElementType element_type = ElementType::kFloat32;
  std::string index_type;           // "graph" / "ivf"
  std::string graph_label_field;    // CollectionOptions::graph_label_field ("" = none)
  UpdateMode update_mode = UpdateMode::kBuffered;
  std::uint32_t graph_R = 0;        // the graph's build R and L, as created (0 for IVF)
  std::uint32_t graph_L = 0;
  std::uint64_t live = 0;           // vectors a search can return (== Count())
  std::uint64_t indexed = 0;        // slots in the current SSD index version
  std::uint64_t pending = 0;        // live vectors only in the pending list
  std::uint64_t deleted = 0;        // dead slots in the current version (tombstones)
  std::uint64_t index_version = 0;  // 0 = no SSD index yet (flat phase)
  std::uint64_t merges = 0;         // merges done since open
  std::uint64_t streaming_merges = 0;  // ... of which updated the graph in place of a rebuild
  bool merging = false;             // a merge is running now
  double last_merge_seconds = 0;
  double first_build_seconds = 0;   // the threshold write's build, when in this open
  std::uint64_t ram_bytes = 0;      // index RAM + pending vectors + maps
  std::uint64_t pending_ram_bytes = 0;  // the pending vectors' RAM (bounded by memory_budget_bytes)
  std::uint64_t cached_nodes = 0;   // graph records in the node cache (at most half the budget)
  // update_mode in_place: writes applied to the graph since open, and the
  // rows the current version may still take before a rebuild.
  std::uint64_t in_place_inserts = 0;
  std::uint64_t in_place_repairs = 0;  // deleted rows whose in-neighbours were re-linked
  std::uint64_t in_place_repairs_queued = 0;  // ... and those still to be (the applier's backlog)
  // Cached edge pages inserts rewrote whole (in_place_hot_page_heat).
  std::uint64_t in_place_hot_pages_rewritten = 0;
  // Bytes the graph's writes wrote (edge pages and vector sectors) for
  // inserts, and for repairs and compactions, since open.
  std::uint64_t in_place_insert_bytes_written = 0;
  std::uint64_t in_place_upkeep_bytes_written = 0;
  std::uint64_t in_place_insert_lists_changed = 0;  // edge lists the inserts changed (not the swept)
  std::uint64_t in_place_compactions = 0;  // sparse edge pages repacked (InPlaceGraph::PrepareCompaction)
  std::uint64_t in_place_edge_pages = 0;   // pages of the edge file, and those a list is on
  std::uint64_t in_place_live_edge_pages = 0;
  std::uint64_t in_place_capacity_left = 0;
  std::uint64_t disk_bytes = 0;     // index files + RocksDB files
  std::uint64_t last_sequence = 0;  // number of the last applied write
  std::uint64_t log_syncs = 0;      // sync mode: fsyncs of the log by writers (group commits)
  std::vector<unsigned> background_cpus;  // where merges and the indexer run (empty: anywhere)
  std::string index_description;    // Index::Describe() of the current version
  std::vector<PayloadFieldSpec> payload_fields;  // the indexed payload fields
  std::uint64_t payload_index_bytes = 0;  // their RAM (included in ram_bytes)
};

class Collection {
 public:
  // Opens (or creates) the collection in `dir`. InvalidArgument for bad or
  // mismatching options; NotFound if absent and !create_if_missing; Busy if
  // another process holds the directory; Corruption for damaged files
  // (RocksDB checksums, index checksums, missing version); InvalidArgument
  // for update_mode in_place on IVF or on integer or float16 vectors.
  static Result<std::unique_ptr<Collection>> Open(const std::string& dir,
                                                  const CollectionOptions& options);
  // Closes (stops the merge and applier threads, syncs the log) if Close
  // was not called.
  ~Collection();
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;

  // Inserts or replaces `ids.size()` vectors (`vectors`: ids.size() * dim
  // floats, row-major) with optional payloads (empty span = none; else one
  // per id, an empty string meaning no payload). Atomic. InvalidArgument for
  // an empty batch, a size mismatch, NaN/Inf, a zero vector under cosine, a
  // value out of range for an integer element type, duplicate ids in one
  // batch, or an oversized payload or batch; nothing is written then. OK
  // means durable (per `durability`) and visible. If this write crosses the
  // flat threshold and the first index build fails, the write still
  // returns OK (it is durable); the collection stays exact-scan, the build
  // error is returned by WaitForMerge, and the next write retries it.
  Status Upsert(std::span<const VectorId> ids, std::span<const float> vectors,
                std::span<const std::string> payloads = {});
  Status Upsert(VectorId id, std::span<const float> vector, std::string_view payload = {});
  // Deletes the ids that exist (atomic); returns how many existed.
  // InvalidArgument for an empty batch or duplicate ids.
  Result<std::uint64_t> Delete(std::span<const VectorId> ids);
  // The current vector and payload of each id (found = false if absent).
  Result<std::vector<StoredRecord>> Get(std::span<const VectorId> ids) const;

  // The params.index.k nearest live vectors to `query` (dim floats), nearest
  // first (fewer if the collection holds fewer). InvalidArgument for a wrong
  // dimension, NaN, or bad parameters. With `stats`, what the SSD index's
  // part of the query cost (zero in the flat phase; the pending list is in
  // RAM), latency_us the whole query's.
  Result<std::vector<SearchHit>> Search(std::span<const float> query,
                                        const CollectionSearchParams& params,
                                        QueryStats* stats = nullptr) const;
  // Searches each of the queries.size() / dim rows with `threads` threads
  // (0 = all cores); every query sees the same snapshot. With `stats`, one
  // entry per query, as Search gives.
  Result<std::vector<std::vector<SearchHit>>> SearchBatch(std::span<const float> queries,
                                                          const CollectionSearchParams& params,
                                                          unsigned threads = 0,
                                                          std::vector<QueryStats>* stats = nullptr) const;

  std::uint64_t Count() const;
  CollectionStats Stats() const;
  std::uint32_t dim() const;
  Metric metric() const;

  // Indexes payload field `field` for filtering, from the payloads already
  // stored (writes wait meanwhile); durable. OK if it is indexed already
  // with that type; InvalidArgument for another type or a bad path.
  Status CreatePayloadIndex(const PayloadFieldSpec& field);

  // Fsyncs the write-ahead log (everything acknowledged survives power loss).
  Status Flush();
  // Merges the pending list and tombstones into a new index version now and
  // waits for it (builds the first index even below the threshold once the
  // collection holds 256 vectors, the fewest its codes train on). OK with
  // nothing to do. With background_merge the merge thread runs it (at most
  // merge_threads cores, lower priority: searches keep their share); else
  // the calling thread does, with merge_threads threads. Aborted if the
  // collection is closed while waiting.
  Status Merge();
  // Waits for a running background merge; OK if none. Returns its error.
  Status WaitForMerge();
  // Stops merging for a quick Close: a running merge is abandoned at its
  // next phase or chunk of inserts (within about a second; its partial
  // version is deleted) and no other starts. Nothing is lost: the pending
  // entries and tombstones it would have merged stay in the durable store
  // and are merged after the next open. Merge() then returns Aborted; writes
  // and searches go on (over a growing pending list). For servers stopping
  // on a signal, whose supervisors will not wait minutes for a rebuild.
  void StopMerges();
  // Waits for a running merge (see StopMerges), stops the merge thread,
  // syncs the log and releases the directory. Idempotent.
  Status Close();

  struct Impl;

 private:
  explicit Collection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What a directory holds: "collection", "index" or NotFound. For `strata info`.
Result<std::string> DescribeCollectionDirectory(const std::string& dir);
// True if `dir` holds a collection (db/ and the collection's LOCK file).
bool IsCollectionDirectory(const std::string& dir);

}  // namespace strata

#endif  // STRATA_COLLECTION_H_
