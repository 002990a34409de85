// `strata collection`: create, write to, read from and search a Collection
// (include/strata/collection.h) from the shell. Every subcommand but `create`
// opens an existing collection with its stored creation options; the flags
// given here only set what applies to this open (durability, merge policy,
// how the SSD index is opened).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <fstream>
#include <iterator>
#include <vector>

#include "collection_io.h"
#include "command.h"
#include "search_report.h"
#include "strata/collection.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/progress.h"

namespace strata::cli {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

unsigned long long U(std::uint64_t v) { return static_cast<unsigned long long>(v); }

// The per-open settings of the writing subcommands (not stored in the
// collection; see CollectionOptions).
struct WriteFlags {
  std::string durability = "async";
  std::optional<std::uint64_t> flat_threshold, merge_pending, merge_pending_bytes;
  bool no_background_merge = false;
  std::vector<unsigned> background_cpus;
  std::vector<std::string> payload_index;  // FIELD:TYPE
};

void AddWriteFlags(CLI::App* cmd, WriteFlags* f) {
  cmd->add_option("--durability", f->durability,
                  "sync (fsync the log before each write returns) or async (kill -9 safe, "
                  "fsynced periodically)")
      ->capture_default_str();
  cmd->add_option("--flat-threshold", f->flat_threshold,
                  "Live vectors at which the first SSD index is built (default 1024; applies "
                  "to this open)");
  cmd->add_option("--merge-pending", f->merge_pending,
                  "Pending vectors that start a background merge (default 16384)");
  cmd->add_option("--merge-pending-mib", f->merge_pending_bytes,
                  "Pending MiB that start a background merge (default 0 = no limit)");
  cmd->add_flag("--no-background-merge", f->no_background_merge,
                "Merge only on `strata collection merge` (the first build still happens)");
  cmd->add_option("--background-cpus", f->background_cpus,
                  "CPUs for merges and the pending-graph indexer, e.g. 0,2 (default: all but "
                  "those that take the disk's interrupts)")
      ->delimiter(',');
  cmd->add_option("--payload-index", f->payload_index,
                  "Index payload field FIELD (dotted path) of TYPE keyword, integer, float or "
                  "bool for filtering, e.g. tags:keyword (repeatable; stored: stays indexed)");
}

Status ApplyWriteFlags(const WriteFlags& f, CollectionOptions* o) {
  STRATA_ASSIGN_OR_RETURN(o->durability, ParseDurability(f.durability));
  if (f.flat_threshold) o->flat_threshold = *f.flat_threshold;
  if (f.merge_pending) o->merge_pending_count = *f.merge_pending;
  if (f.merge_pending_bytes) o->merge_pending_bytes = *f.merge_pending_bytes << 20;
  o->background_merge = !f.no_background_merge;
  o->background_cpus = f.background_cpus;
  for (const std::string& spec : f.payload_index) {
    const std::size_t colon = spec.rfind(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument("--payload-index: '" + spec + "' is not FIELD:TYPE");
    }
    PayloadFieldSpec field;
    field.path = spec.substr(0, colon);
    STRATA_RETURN_IF_ERROR(CheckPayloadPath(field.path));
    STRATA_ASSIGN_OR_RETURN(field.type, ParsePayloadFieldType(spec.substr(colon + 1)));
    o->payload_index.push_back(std::move(field));
  }
  return Status::OK();
}

// Options of an open that only reads: no background merges are started.
CollectionOptions ReadOnlyOptions() {
  CollectionOptions o;
  o.background_merge = false;
  return o;
}

// Closes `c` and reports the close's failure (a log sync or a merge error).
Status CloseCollection(std::unique_ptr<Collection>& c, const std::string& dir) {
  Status s = c->Close();
  if (!s.ok()) return s.WithContext("closing collection " + dir);
  return Status::OK();
}

Status DimMismatch(const std::string& what, std::uint32_t got, const std::string& dir,
                   std::uint32_t want) {
  return Status::InvalidArgument(what + " has dimension " + std::to_string(got) +
                                 ", but collection " + dir + " has dimension " +
                                 std::to_string(want));
}

// ---------------------------------------------------------------------------
// create
// ---------------------------------------------------------------------------

struct CreateArgs {
  std::string dir, metric = "l2", type = "f32", index = "graph", update_mode = "buffered";
  std::uint32_t dim = 0;
  GraphBuildOptions graph = CollectionOptions::DefaultGraphBuildOptions();
  std::optional<std::string> profile;
  std::optional<std::uint32_t> opq_iterations, mem_graph_R, shuffle_rounds, shuffle_swaps;
  std::optional<double> mem_graph_ratio;
  std::optional<bool> page_shuffle, all_in_storage;
  IvfBuildOptions ivf = CollectionOptions().ivf;
  WriteFlags write;
  bool json = false;
};

Status RunCreate(CreateArgs a) {
  CollectionOptions o;
  o.dim = a.dim;
  STRATA_ASSIGN_OR_RETURN(Metric metric, ParseMetric(a.metric));
  o.metric = metric;
  STRATA_ASSIGN_OR_RETURN(ElementType type, ParseElementType(a.type));
  o.element_type = type;
  if (a.index != "graph" && a.index != "ivf") {
    return Status::InvalidArgument("--index '" + a.index + "' (available: graph, ivf)");
  }
  o.index_type = a.index;
  STRATA_ASSIGN_OR_RETURN(o.update_mode, ParseUpdateMode(a.update_mode));
  // The profile's layout, then each technique flag given explicitly (as in
  // `strata build`).
  if (a.profile) STRATA_RETURN_IF_ERROR(ApplyBuildProfile(*a.profile, &a.graph));
  if (a.opq_iterations) a.graph.opq_iterations = *a.opq_iterations;
  if (a.mem_graph_ratio) a.graph.mem_graph_ratio = *a.mem_graph_ratio;
  if (a.mem_graph_R) a.graph.mem_graph_R = *a.mem_graph_R;
  if (a.page_shuffle) a.graph.page_shuffle = *a.page_shuffle;
  if (a.shuffle_rounds) a.graph.shuffle_rounds = *a.shuffle_rounds;
  if (a.shuffle_swaps) a.graph.shuffle_swaps = *a.shuffle_swaps;
  if (a.all_in_storage) a.graph.all_in_storage = *a.all_in_storage;
  a.graph.metric = metric;
  a.ivf.metric = metric;
  o.graph = a.graph;
  o.ivf = a.ivf;
  STRATA_RETURN_IF_ERROR(ApplyWriteFlags(a.write, &o));
  o.create_if_missing = true;
  o.error_if_exists = true;
  STRATA_RETURN_IF_ERROR(o.Validate());
  if (Result<std::string> what = DescribeCollectionDirectory(a.dir); what.ok()) {
    return Status::InvalidArgument("a" + std::string(*what == "index" ? "n index" : " collection") +
                                   " already exists in " + a.dir);
  }
  Result<std::unique_ptr<Collection>> opened = Collection::Open(a.dir, o);
  if (!opened.ok()) return opened.status().WithContext("creating collection " + a.dir);
  std::unique_ptr<Collection> c = std::move(*opened);
  const CollectionStats stats = c->Stats();
  STRATA_RETURN_IF_ERROR(CloseCollection(c, a.dir));
  if (a.write.flat_threshold || a.write.merge_pending || a.write.merge_pending_bytes) {
    // CollectionOptions keeps these per open (they are not stored).
    std::fprintf(stderr,
                 "note: --flat-threshold and --merge-pending* are not stored in the collection; "
                 "give them to each upsert/delete as well\n");
  }
  if (a.json) {
    std::printf("%s\n", CollectionStatsToJson(stats).dump(2).c_str());
  } else {
    std::printf("created ");
    PrintCollectionStats(a.dir, stats, stdout);
  }
  return Status::OK();
}

void AddCreate(CLI::App* parent, CommandAction* action) {
  auto a = std::make_shared<CreateArgs>();
  CLI::App* cmd = parent->add_subcommand("create", "Create an empty collection in DIR");
  cmd->add_option("dir", a->dir, "Collection directory (must not hold a collection)")->required();
  cmd->add_option("--dim", a->dim, "Vector dimension")->required()->check(CLI::Range(1, 65536));
  cmd->add_option("--metric", a->metric, "l2, ip or cosine")->capture_default_str();
  cmd->add_option("--type", a->type, "Element type vectors are stored in: f32, f16, bf16, u8 or i8")
      ->capture_default_str();
  cmd->add_option("--index", a->index, "SSD index built past the flat threshold: graph or ivf")
      ->capture_default_str();
  cmd->add_option("--update-mode", a->update_mode,
                  "buffered (pending list + merges) or in_place (graph only: writes applied to "
                  "the SSD graph itself, NAVIS)")
      ->capture_default_str();
  GraphBuildOptions& g = a->graph;
  cmd->add_option("--R", g.R, "Graph: maximum degree")->capture_default_str();
  cmd->add_option("--L", g.L, "Graph: build search list size (L_build)")->capture_default_str();
  cmd->add_option("--alpha", g.alpha, "Graph: RobustPrune alpha")->capture_default_str();
  cmd->add_option("--passes", g.passes, "Graph: build passes (1 or 2)")->capture_default_str();
  cmd->add_option("--pq-bytes", g.pq_bytes, "Graph: PQ bytes per vector in RAM (0 = auto)")
      ->capture_default_str();
  cmd->add_option("--pq-train-rows", g.pq_train_rows,
                  "Graph: rows sampled to train PQ (0 = 65,536)")
      ->capture_default_str();
  cmd->add_option("--profile", a->profile,
                  "Graph layout profile: baseline (DiskANN) or default (the collection's default)");
  cmd->add_option("--opq", a->opq_iterations, "Graph: OPQ rotation iterations (0 = off)");
  cmd->add_option("--memgraph-ratio", a->mem_graph_ratio,
                  "Graph: fraction of nodes in the in-RAM navigation graph (0 = none)");
  cmd->add_option("--memgraph-R", a->mem_graph_R, "Graph: MemGraph degree");
  cmd->add_option("--shuffle", a->page_shuffle, "Graph: page shuffle (true/false)");
  cmd->add_option("--shuffle-rounds", a->shuffle_rounds, "Graph: page shuffle LDG rounds");
  cmd->add_option("--shuffle-swaps", a->shuffle_swaps, "Graph: page shuffle pair-swap passes");
  cmd->add_option("--all-in-storage", a->all_in_storage,
                  "Graph: store neighbours' PQ codes in each record (true/false)");
  cmd->add_option("--seed", g.seed, "Graph/IVF: build seed")->capture_default_str();
  IvfBuildOptions& v = a->ivf;
  cmd->add_option("--clusters", v.clusters, "IVF: clusters (0 = N / 1024)")->capture_default_str();
  cmd->add_option("--prefix-bits", v.prefix_bits, "IVF: code bits per vector in RAM (0 = all)")
      ->capture_default_str();
  cmd->add_option("--bits", v.bits, "IVF: RaBitQ bits per dimension (1..9)")->capture_default_str();
  cmd->add_option("--rerank", v.rerank, "IVF: SSD records, excode or raw")->capture_default_str();
  cmd->add_option("--coarse", v.coarse, "IVF: coarse quantizer, irq or flat")
      ->capture_default_str();
  cmd->add_option("--page-order", v.page_order, "IVF: locality or centroid")->capture_default_str();
  cmd->add_option("--filter-codes", v.filter_codes,
                  "IVF: keep 2-bit codes in RAM for exact filtered scans (true/false)")
      ->capture_default_str();
  AddWriteFlags(cmd, &a->write);
  cmd->add_flag("--json", a->json, "Print the new collection's stats as JSON");
  cmd->callback([a, action] {
    *action = [a] {
      CreateArgs copy = *a;
      copy.ivf.seed = copy.graph.seed;
      return RunCreate(std::move(copy));
    };
  });
}

// ---------------------------------------------------------------------------
// upsert
// ---------------------------------------------------------------------------

struct UpsertArgs {
  std::string dir, vectors, ids, payloads;
  std::uint64_t batch = 1000;
  std::uint64_t id_offset = 0;
  WriteFlags write;
};

Status RunUpsert(const UpsertArgs& a) {
  STRATA_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(a.vectors));
  const std::uint64_t n = reader->rows();
  std::vector<VectorId> ids;
  if (!a.ids.empty()) {
    STRATA_ASSIGN_OR_RETURN(ids, ReadIdsFile(a.ids));
    if (ids.size() != n) {
      return Status::InvalidArgument(a.ids + " holds " + std::to_string(ids.size()) + " ids, but " +
                                     a.vectors + " holds " + std::to_string(n) + " vectors");
    }
  } else {
    if (n > 0 && a.id_offset > std::numeric_limits<VectorId>::max() - (n - 1)) {
      return Status::InvalidArgument("--id-offset " + std::to_string(a.id_offset) +
                                     " + rows overflows 64-bit ids");
    }
  }
  std::unique_ptr<PayloadReader> payloads;
  if (!a.payloads.empty()) {
    STRATA_ASSIGN_OR_RETURN(payloads, PayloadReader::Open(a.payloads));
    if (payloads->lines() != n) {
      return Status::InvalidArgument(a.payloads + " holds " + std::to_string(payloads->lines()) +
                                     " lines, but " + a.vectors + " holds " + std::to_string(n) +
                                     " vectors (one payload line per vector)");
    }
  }
  CollectionOptions o;
  STRATA_RETURN_IF_ERROR(ApplyWriteFlags(a.write, &o));
  o.max_batch = std::max<std::uint64_t>(o.max_batch, a.batch);
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Collection> c, OpenExistingCollection(a.dir, o));
  if (reader->dim() != c->dim()) {
    return DimMismatch(a.vectors, reader->dim(), a.dir, c->dim());
  }
  const std::uint32_t dim = c->dim();
  const std::uint64_t version_before = c->Stats().index_version;
  std::vector<float> rows(
      static_cast<std::size_t>(std::min(a.batch, std::max<std::uint64_t>(n, 1))) * dim);
  std::vector<VectorId> batch_ids;
  std::vector<std::string> batch_payloads;
  const auto t0 = std::chrono::steady_clock::now();
  {
    ProgressBar bar("upsert", n);
    for (std::uint64_t begin = 0; begin < n; begin += a.batch) {
      const std::uint64_t count = std::min(a.batch, n - begin);
      const std::span<float> out(rows.data(), static_cast<std::size_t>(count) * dim);
      STRATA_RETURN_IF_ERROR(reader->ReadRowsAsFloat(begin, count, out));
      std::span<const VectorId> id_span;
      if (ids.empty()) {
        batch_ids.resize(count);
        for (std::uint64_t i = 0; i < count; ++i) batch_ids[i] = a.id_offset + begin + i;
        id_span = batch_ids;
      } else {
        id_span = std::span<const VectorId>(ids).subspan(begin, count);
      }
      std::span<const std::string> payload_span;
      if (payloads) {
        STRATA_RETURN_IF_ERROR(payloads->Next(count, &batch_payloads));
        payload_span = batch_payloads;
      }
      Status s = c->Upsert(id_span, out, payload_span);
      if (!s.ok()) {
        return s.WithContext("upserting rows " + std::to_string(begin) + ".." +
                             std::to_string(begin + count - 1) + " of " + a.vectors + " (" +
                             std::to_string(begin) + " rows written before)");
      }
      bar.Add(count);
    }
  }
  const double write_seconds = SecondsSince(t0);
  const CollectionStats stats = c->Stats();
  STRATA_RETURN_IF_ERROR(CloseCollection(c, a.dir));
  const double seconds = SecondsSince(t0);  // including the close (log sync, running merge)
  std::printf("upserted %llu vectors into %s in %.2f s (%.0f inserts/s; %.2f s with the close)\n",
              U(n), a.dir.c_str(), write_seconds,
              write_seconds > 0 ? static_cast<double>(n) / write_seconds : 0.0, seconds);
  std::printf("  live %llu (indexed %llu, pending %llu), index version %llu", U(stats.live),
              U(stats.indexed), U(stats.pending), U(stats.index_version));
  if (version_before == 0 && stats.index_version != 0) {
    std::printf(" (first index built in %.2f s)", stats.first_build_seconds);
  }
  std::printf("\n");
  return Status::OK();
}

void AddUpsert(CLI::App* parent, CommandAction* action) {
  auto a = std::make_shared<UpsertArgs>();
  CLI::App* cmd = parent->add_subcommand("upsert", "Insert or replace vectors from a file");
  cmd->add_option("dir", a->dir, "Collection directory")->required();
  cmd->add_option("--vectors", a->vectors, "Vectors (.fbin .u8bin .i8bin .fvecs .bvecs .npy)")
      ->required();
  auto* ids = cmd->add_option("--ids", a->ids,
                              "Ids, one per vector: .ibin, .npy (int64/uint64/int32/uint32) or "
                              "text (one per line); default: row numbers");
  cmd->add_option("--id-offset", a->id_offset, "Without --ids: the id of row 0")
      ->capture_default_str()
      ->excludes(ids);
  cmd->add_option("--payloads", a->payloads,
                  "Payloads: a text file of one line per vector (JSON lines), stored as bytes");
  cmd->add_option("--batch", a->batch, "Vectors per Upsert call (each batch is atomic)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24));
  AddWriteFlags(cmd, &a->write);
  cmd->callback([a, action] { *action = [a] { return RunUpsert(*a); }; });
}

// ---------------------------------------------------------------------------
// delete
// ---------------------------------------------------------------------------

struct IdArgs {
  std::string ids_file;
  std::vector<VectorId> ids;
};

void AddIdFlags(CLI::App* cmd, IdArgs* a) {
  cmd->add_option("--id", a->ids, "Ids (repeatable; also space- or comma-separated)")
      ->delimiter(',');
  cmd->add_option("--ids", a->ids_file, "Ids file (.ibin, .npy or text, one per line)");
}

Result<std::vector<VectorId>> CollectIds(const IdArgs& a) {
  std::vector<VectorId> ids = a.ids;
  if (!a.ids_file.empty()) {
    STRATA_ASSIGN_OR_RETURN(std::vector<VectorId> more, ReadIdsFile(a.ids_file));
    ids.insert(ids.end(), more.begin(), more.end());
  }
  if (ids.empty()) return Status::InvalidArgument("no ids given (--id N or --ids FILE)");
  return ids;
}

struct DeleteArgs {
  std::string dir;
  IdArgs ids;
  WriteFlags write;
};

Status RunDelete(const DeleteArgs& a) {
  STRATA_ASSIGN_OR_RETURN(std::vector<VectorId> ids, CollectIds(a.ids));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  CollectionOptions o;
  STRATA_RETURN_IF_ERROR(ApplyWriteFlags(a.write, &o));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Collection> c, OpenExistingCollection(a.dir, o));
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t existed = 0;
  const std::size_t chunk = static_cast<std::size_t>(std::max<std::uint64_t>(o.max_batch, 1));
  for (std::size_t begin = 0; begin < ids.size(); begin += chunk) {
    const std::size_t count = std::min(chunk, ids.size() - begin);
    Result<std::uint64_t> r = c->Delete(std::span<const VectorId>(ids).subspan(begin, count));
    if (!r.ok()) {
      return r.status().WithContext("deleting from " + a.dir + " (" + std::to_string(existed) +
                                    " deleted before)");
    }
    existed += *r;
  }
  const double seconds = SecondsSince(t0);
  const std::uint64_t live = c->Count();
  STRATA_RETURN_IF_ERROR(CloseCollection(c, a.dir));
  std::printf("deleted %llu of %zu ids from %s in %.3f s (%llu absent); live %llu\n", U(existed),
              ids.size(), a.dir.c_str(), seconds, U(ids.size() - existed), U(live));
  return Status::OK();
}

void AddDelete(CLI::App* parent, CommandAction* action) {
  auto a = std::make_shared<DeleteArgs>();
  CLI::App* cmd = parent->add_subcommand("delete", "Delete vectors by id");
  cmd->add_option("dir", a->dir, "Collection directory")->required();
  AddIdFlags(cmd, &a->ids);
  AddWriteFlags(cmd, &a->write);
  cmd->callback([a, action] { *action = [a] { return RunDelete(*a); }; });
}

// ---------------------------------------------------------------------------
// get
// ---------------------------------------------------------------------------

struct GetArgs {
  std::string dir;
  IdArgs ids;
  bool json = false;
};

Status RunGet(const GetArgs& a) {
  STRATA_ASSIGN_OR_RETURN(std::vector<VectorId> ids, CollectIds(a.ids));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Collection> c,
                          OpenExistingCollection(a.dir, ReadOnlyOptions()));
  STRATA_ASSIGN_OR_RETURN(std::vector<StoredRecord> records, c->Get(ids));
  STRATA_RETURN_IF_ERROR(CloseCollection(c, a.dir));
  std::uint64_t missing = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const StoredRecord& r : records) {
    if (!r.found) ++missing;
    if (a.json) {
      nlohmann::json j = {{"id", r.id}, {"found", r.found}};
      if (r.found) {
        j["vector"] = VectorJson(r.vector);
        j["payload"] = r.payload.empty() ? nlohmann::json(nullptr) : PayloadJson(r.payload);
      }
      out.push_back(std::move(j));
    } else if (!r.found) {
      std::printf("id %llu: not found\n", U(r.id));
    } else {
      std::printf("id %llu\n  vector %s\n  payload %s\n", U(r.id), FormatVector(r.vector).c_str(),
                  r.payload.empty() ? "(none)" : r.payload.c_str());
    }
  }
  if (a.json) std::printf("%s\n", out.dump(2).c_str());
  if (missing > 0) {
    return Status::NotFound(std::to_string(missing) + " of " + std::to_string(records.size()) +
                            " ids not found in collection " + a.dir);
  }
  return Status::OK();
}

void AddGet(CLI::App* parent, CommandAction* action) {
  auto a = std::make_shared<GetArgs>();
  CLI::App* cmd = parent->add_subcommand(
      "get", "Print the stored vector and payload of ids (exit 1 if any is absent)");
  cmd->add_option("dir", a->dir, "Collection directory")->required();
  AddIdFlags(cmd, &a->ids);
  cmd->add_flag("--json", a->json, "Print a JSON array of {id, found, vector, payload}");
  cmd->callback([a, action] { *action = [a] { return RunGet(*a); }; });
}

// ---------------------------------------------------------------------------
// search
// ---------------------------------------------------------------------------

struct SearchArgs {
  std::string dir, queries, out, gt;
  SearchParams params;
  std::optional<std::uint32_t> L;
  GraphSearchFlags graph;
  OpenFlags open;
  bool with_payload = false, json = false;
  unsigned threads = 1;
  std::string filter;  // Qdrant filter JSON, or @FILE
  std::uint64_t exact_scan_limit = CollectionSearchParams{}.exact_scan_limit;
};

// The search knobs that applied: none in the flat phase (exact scan), L and W
// for a graph index, nprobe for IVF.
std::string KnobText(const CollectionStats& stats, const SearchParams& p) {
  if (stats.index_version == 0) return "exact scan";
  if (stats.index_type == "ivf") {
    return p.nprobe == 0 ? std::string("nprobe default") : "nprobe " + std::to_string(p.nprobe);
  }
  return "L=" + std::to_string(p.list_size) + " W=" + std::to_string(p.beam_width);
}

Status RunSearch(const SearchArgs& a) {
  CollectionSearchParams params;
  params.index = a.params;
  params.index.list_size = a.L.value_or(std::max<std::uint32_t>(50, a.params.k));
  STRATA_RETURN_IF_ERROR(ApplyGraphSearchFlags(a.graph, &params.index));
  params.with_payload = a.with_payload;
  STRATA_RETURN_IF_ERROR(params.index.Validate());
  std::optional<PayloadFilter> filter;
  if (!a.filter.empty()) {
    STRATA_ASSIGN_OR_RETURN(filter, ParseFilterArgument(a.filter));
    params.filter = &*filter;
  }
  params.exact_scan_limit = a.exact_scan_limit;
  STRATA_ASSIGN_OR_RETURN(VectorMatrix queries, ReadVectorsAsFloat(a.queries));
  std::optional<GroundTruth> gt;
  if (!a.gt.empty()) {
    STRATA_ASSIGN_OR_RETURN(gt, ReadGroundTruth(a.gt));
    if (gt->num_queries != queries.rows()) {
      return Status::InvalidArgument(a.gt + " holds " + std::to_string(gt->num_queries) +
                                     " queries, but " + a.queries + " holds " +
                                     std::to_string(queries.rows()));
    }
    if (gt->k < params.index.k) {
      return Status::InvalidArgument(a.gt + " holds " + std::to_string(gt->k) +
                                     " neighbours per query, fewer than --k " +
                                     std::to_string(params.index.k));
    }
  }
  CollectionOptions o = ReadOnlyOptions();
  STRATA_ASSIGN_OR_RETURN(o.open, ToOpenOptions(a.open));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Collection> c, OpenExistingCollection(a.dir, o));
  if (queries.dim() != c->dim()) return DimMismatch(a.queries, queries.dim(), a.dir, c->dim());
  const std::span<const float> qs = queries.values<float>();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<SearchHit>> hits;
  std::vector<QueryStats> query_stats(1);
  const bool single = queries.rows() == 1;
  if (single) {
    STRATA_ASSIGN_OR_RETURN(std::vector<SearchHit> h, c->Search(qs, params, &query_stats[0]));
    hits.push_back(std::move(h));
  } else {
    STRATA_ASSIGN_OR_RETURN(hits, c->SearchBatch(qs, params, a.threads, &query_stats));
  }
  double pages = 0, candidates = 0, payload_reads = 0;
  for (const QueryStats& q : query_stats) {
    pages += q.pages_read;
    candidates += q.filter_candidates;
    payload_reads += q.payload_reads;
  }
  const double nq = static_cast<double>(std::max<std::size_t>(1, query_stats.size()));
  const double seconds = SecondsSince(t0);
  const CollectionStats stats = c->Stats();
  STRATA_RETURN_IF_ERROR(CloseCollection(c, a.dir));

  const GroundTruth results = HitsToResults(hits, params.index.k);
  std::optional<double> recall;
  if (gt) {
    STRATA_ASSIGN_OR_RETURN(RecallReport rec, ComputeRecall(results, *gt, params.index.k));
    recall = rec.mean_recall;
  }
  if (!a.out.empty()) STRATA_RETURN_IF_ERROR(WriteGroundTruth(a.out, results));
  const double qps = seconds > 0 ? static_cast<double>(hits.size()) / seconds : 0.0;

  if (a.json) {
    nlohmann::json j = {{"num_queries", hits.size()},
                        {"k", params.index.k},
                        {"L", params.index.list_size},
                        {"beamwidth", params.index.beam_width},
                        {"nprobe", params.index.nprobe},
                        {"threads", a.threads},
                        {"seconds", seconds},
                        {"qps", qps},
                        {"live", stats.live},
                        {"index_version", stats.index_version},
                        {"mean_pages_read", pages / nq},
                        {"mean_filter_candidates", candidates / nq},
                        {"mean_payload_reads", payload_reads / nq}};
    if (recall) j["recall_at_k"] = *recall;
    if (single) j["hits"] = HitsJson(hits[0], a.with_payload);
    std::printf("%s\n", j.dump(2).c_str());
  } else if (single) {
    std::printf("%zu hits (k=%u, %s) in %.3f ms from %s (live %llu, index version %llu)\n",
                hits[0].size(), params.index.k, KnobText(stats, params.index).c_str(),
                seconds * 1e3, a.dir.c_str(), U(stats.live), U(stats.index_version));
    std::printf("%5s %20s %14s%s\n", "rank", "id", "distance", a.with_payload ? "  payload" : "");
    for (std::size_t i = 0; i < hits[0].size(); ++i) {
      const SearchHit& h = hits[0][i];
      std::printf("%5zu %20llu %14.6g%s%s\n", i + 1, U(h.id), static_cast<double>(h.distance),
                  a.with_payload ? "  " : "", a.with_payload ? h.payload.c_str() : "");
    }
    if (recall) std::printf("recall@%u %.4f\n", params.index.k, *recall);
  } else {
    std::printf("%zu queries, k=%u, %s, threads %u on %s (live %llu, index version %llu)\n",
                hits.size(), params.index.k, KnobText(stats, params.index).c_str(), a.threads,
                a.dir.c_str(), U(stats.live), U(stats.index_version));
    std::printf("  %.3f s, %.0f QPS", seconds, qps);
    if (recall) std::printf(", recall@%u %.4f", params.index.k, *recall);
    std::printf("\n");
  }
  if (!a.out.empty() && !a.json) std::printf("wrote %s\n", a.out.c_str());
  return Status::OK();
}

void AddSearch(CLI::App* parent, CommandAction* action) {
  auto a = std::make_shared<SearchArgs>();
  CLI::App* cmd = parent->add_subcommand("search", "Search a collection with a query file");
  cmd->add_option("dir", a->dir, "Collection directory")->required();
  cmd->add_option("--queries", a->queries, "Query vectors (any vector format)")->required();
  cmd->add_option("--k", a->params.k, "Neighbours per query")->capture_default_str();
  cmd->add_option("--L", a->L, "Graph: search list size (default max(50, k))");
  cmd->add_option("--beamwidth,-W", a->params.beam_width, "Graph: reads per round")
      ->capture_default_str();
  cmd->add_option("--nprobe", a->params.nprobe, "IVF: clusters probed (0 = index default)")
      ->capture_default_str();
  AddGraphSearchFlags(cmd, &a->graph);
  AddOpenFlags(cmd, &a->open);
  cmd->add_flag("--with-payload", a->with_payload, "Return each hit's payload");
  cmd->add_option("--filter", a->filter,
                  "Only points whose payload passes this Qdrant filter (JSON, or @FILE), e.g. "
                  "'{\"must\": [{\"key\": \"color\", \"match\": {\"value\": \"red\"}}]}'");
  cmd->add_option("--exact-scan-limit", a->exact_scan_limit,
                  "A filter the payload index bounds by at most this many candidates is answered "
                  "from those alone (graph: ranked by code, best L re-ranked; IVF: a bitmap, or "
                  "their stored vectors); 0 = never")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Write ids and distances (.ibin or .ivecs; ids < 2^32)");
  cmd->add_option("--gt", a->gt, "Ground truth, to report recall@k");
  cmd->add_option("--threads", a->threads, "Search threads for many queries (0 = all cores)")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the summary (and a single query's hits) as JSON");
  cmd->callback([a, action] { *action = [a] { return RunSearch(*a); }; });
}

// ---------------------------------------------------------------------------
// stats, merge
// ---------------------------------------------------------------------------

struct StatsArgs {
  std::string dir;
  bool json = false;
};

Status RunStats(const StatsArgs& a) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Collection> c,
                          OpenExistingCollection(a.dir, ReadOnlyOptions()));
  const CollectionStats stats = c->Stats();
  STRATA_RETURN_IF_ERROR(CloseCollection(c, a.dir));
  if (a.json) {
    std::printf("%s\n", CollectionStatsToJson(stats).dump(2).c_str());
  } else {
    PrintCollectionStats(a.dir, stats, stdout);
  }
  return Status::OK();
}

struct MergeArgs {
  std::string dir;
  bool json = false;
};

Status RunMerge(const MergeArgs& a) {
  CollectionOptions o = ReadOnlyOptions();  // no background merge: this one runs in the foreground
  o.merge_threads = std::max(1u, std::thread::hardware_concurrency());  // nothing else to serve
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Collection> c, OpenExistingCollection(a.dir, o));
  const CollectionStats before = c->Stats();
  const auto t0 = std::chrono::steady_clock::now();
  Status s = c->Merge();
  if (!s.ok()) return s.WithContext("merging collection " + a.dir);
  const double seconds = SecondsSince(t0);
  const CollectionStats after = c->Stats();
  STRATA_RETURN_IF_ERROR(CloseCollection(c, a.dir));
  if (a.json) {
    nlohmann::json j = {{"seconds", seconds},
                        {"before", CollectionStatsToJson(before)},
                        {"after", CollectionStatsToJson(after)}};
    std::printf("%s\n", j.dump(2).c_str());
    return Status::OK();
  }
  std::printf("before: ");
  PrintCollectionStats(a.dir, before, stdout);
  std::printf("after:  ");
  PrintCollectionStats(a.dir, after, stdout);
  if (after.index_version == before.index_version) {
    std::printf("merge: nothing to do (%.3f s)\n", seconds);
  } else {
    std::printf("merged %llu pending and %llu deleted into index version %llu in %.2f s\n",
                U(before.pending), U(before.deleted), U(after.index_version), seconds);
  }
  return Status::OK();
}

void AddStats(CLI::App* parent, CommandAction* action) {
  auto a = std::make_shared<StatsArgs>();
  CLI::App* cmd = parent->add_subcommand("stats", "Print a collection's counts, index and sizes");
  cmd->add_option("dir", a->dir, "Collection directory")->required();
  cmd->add_flag("--json", a->json, "Print as JSON");
  cmd->callback([a, action] { *action = [a] { return RunStats(*a); }; });
}

void AddMerge(CLI::App* parent, CommandAction* action) {
  auto a = std::make_shared<MergeArgs>();
  CLI::App* cmd = parent->add_subcommand(
      "merge", "Merge pending vectors and deletions into a new index version now");
  cmd->add_option("dir", a->dir, "Collection directory")->required();
  cmd->add_flag("--json", a->json, "Print the stats before and after as JSON");
  cmd->callback([a, action] { *action = [a] { return RunMerge(*a); }; });
}

}  // namespace

void AddCollectionCommand(CLI::App& root, CommandAction* action) {
  CLI::App* cmd = root.add_subcommand(
      "collection", "Create, update and search a collection (ids, payloads, upserts, deletes)");
  cmd->require_subcommand(1);
  AddCreate(cmd, action);
  AddUpsert(cmd, action);
  AddDelete(cmd, action);
  AddGet(cmd, action);
  AddSearch(cmd, action);
  AddStats(cmd, action);
  AddMerge(cmd, action);
}

}  // namespace strata::cli
