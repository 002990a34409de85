#include "search_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "strata/io.h"

namespace strata::cli {
namespace {

bool IsIvf(const Index& index) { return index.type() == "ivf"; }

}  // namespace

void AddGraphSearchFlags(CLI::App* cmd, GraphSearchFlags* f) {
  cmd->add_option("--profile", f->profile,
                  "Graph search profile: baseline (DiskANN's beam search) or default")
      ->capture_default_str();
  cmd->add_option("--memgraph", f->mem_graph, "Graph: start from the in-RAM navigation graph");
  cmd->add_option("--memgraph-L", f->mem_graph_L, "Graph: MemGraph walk list size (0 = auto)");
  cmd->add_option("--page-search", f->page_search, "Graph: expand every record of fetched pages");
  cmd->add_option("--dynamic-width", f->dynamic_width,
                  "Graph: start narrow, widen to W once converging");
  cmd->add_option("--min-beamwidth", f->min_beam_width, "Graph: starting width of dynamic width");
  cmd->add_option("--pipelined", f->pipelined,
                  "Graph: issue reads as soon as any completes (PipeANN)");
  cmd->add_option("--rerank-group", f->rerank_group,
                  "Graph, decoupled layout: vectors re-ranked per group until one leaves the "
                  "top-k unchanged (0 = re-rank the whole list)")
      ->check(CLI::Range(0u, SearchParams::kMaxRerankGroup));
}

Status ApplyGraphSearchFlags(const GraphSearchFlags& f, SearchParams* p) {
  STRATA_RETURN_IF_ERROR(ApplySearchProfile(f.profile, p));
  if (f.mem_graph) p->mem_graph = *f.mem_graph;
  if (f.mem_graph_L) p->mem_graph_L = *f.mem_graph_L;
  if (f.page_search) p->page_search = *f.page_search;
  if (f.dynamic_width) p->dynamic_width = *f.dynamic_width;
  if (f.min_beam_width) p->min_beam_width = *f.min_beam_width;
  if (f.pipelined) p->pipelined = *f.pipelined;
  if (f.rerank_group) p->rerank_group = *f.rerank_group;
  return Status::OK();
}

void AddOpenFlags(CLI::App* cmd, OpenFlags* f) {
  cmd->add_option("--cache-nodes", f->cache_nodes, "Graph: nodes cached in RAM (0 = none)")
      ->capture_default_str();
  cmd->add_option("--cache-mib", f->cache_mib, "Graph: node cache size in MiB (overrides --cache-nodes)");
  cmd->add_option("--cache-policy", f->cache_policy,
                  "Graph: bfs (nearest the entry) or frequency (warm-up queries)")
      ->capture_default_str();
  cmd->add_option("--cache-warmup", f->warmup_queries, "Graph: warm-up queries of the frequency cache")
      ->capture_default_str();
  cmd->add_flag("--resident-codes", f->resident_codes,
                "All-in-storage indexes: keep the PQ codes in RAM anyway");
  cmd->add_option("--io-engine", f->engine, "auto, uring, aio or pread")->capture_default_str();
  cmd->add_option("--decoupled", f->decoupled,
                  "Graph: search the decoupled layout `strata decouple` wrote in this directory");
  cmd->add_option("--edge-cache-policy", f->edge_cache_policy,
                  "Graph, decoupled layout: hot edge-page cache (sized by --cache-mib): navis, "
                  "lru, clock or lfu")
      ->capture_default_str();
}

Result<OpenOptions> ToOpenOptions(const OpenFlags& f) {
  OpenOptions o;
  o.cache_nodes = f.cache_nodes;
  o.cache_mib = f.cache_mib;
  o.cache_warmup_queries = f.warmup_queries;
  o.resident_codes = f.resident_codes;
  o.decoupled_dir = f.decoupled;
  static const std::pair<const char*, EdgeCachePolicy> kPolicies[] = {
      {"navis", EdgeCachePolicy::kNavis}, {"lru", EdgeCachePolicy::kLru},
      {"clock", EdgeCachePolicy::kClock}, {"lfu", EdgeCachePolicy::kLfu}};
  auto policy = std::find_if(std::begin(kPolicies), std::end(kPolicies),
                             [&](const auto& p) { return f.edge_cache_policy == p.first; });
  if (policy == std::end(kPolicies)) {
    return Status::InvalidArgument("unknown edge cache policy '" + f.edge_cache_policy +
                                   "' (navis, lru, clock, lfu)");
  }
  o.edge_cache_policy = policy->second;
  if (f.cache_policy == "bfs") {
    o.cache_policy = CachePolicy::kBfs;
  } else if (f.cache_policy == "frequency") {
    o.cache_policy = CachePolicy::kFrequency;
  } else {
    return Status::InvalidArgument("unknown cache policy '" + f.cache_policy + "' (bfs, frequency)");
  }
  STRATA_ASSIGN_OR_RETURN(o.io_engine, ParseIoEngine(f.engine));
  return o;
}

void AddLabelFlags(CLI::App* cmd, LabelFlags* flags) {
  cmd->add_option("--base-labels", flags->base_labels,
                  "Labels of the indexed vectors (DiskANN label file or .spmat), for "
                  "--query-labels");
  cmd->add_option("--query-labels", flags->query_labels,
                  "Labels per query (same formats): results carry all of their query's labels "
                  "(checked inside the search); needs --base-labels");
  cmd->add_option("--exact-scan-limit", flags->exact_scan_limit,
                  "Graph: a query that at most this many vectors pass ranks just those by their "
                  "codes and re-ranks the best L exactly, instead of walking (-1: max(4096, "
                  "rows/20); 0: never)")
      ->check(CLI::Range(std::int64_t{-1}, std::numeric_limits<std::int64_t>::max()));
}

Result<std::unique_ptr<QueryLabelFilters>> QueryLabelFilters::Load(const LabelFlags& flags,
                                                                   const Index& index,
                                                                   std::size_t num_queries) {
  const std::uint64_t index_rows = index.num_vectors();
  auto out = std::unique_ptr<QueryLabelFilters>(new QueryLabelFilters());
  if (flags.base_labels.empty() && flags.query_labels.empty()) return out;
  if (flags.base_labels.empty() || flags.query_labels.empty()) {
    return Status::InvalidArgument("--base-labels and --query-labels go together");
  }
  STRATA_ASSIGN_OR_RETURN(out->base_, ReadLabels(flags.base_labels));
  STRATA_ASSIGN_OR_RETURN(out->queries_, ReadLabels(flags.query_labels));
  if (out->base_.rows() != index_rows) {
    return Status::InvalidArgument("--base-labels: " + flags.base_labels + " has " +
                                   std::to_string(out->base_.rows()) + " rows, the index " +
                                   std::to_string(index_rows) + " vectors");
  }
  if (out->queries_.rows() != num_queries) {
    return Status::InvalidArgument("--query-labels: " + flags.query_labels + " has " +
                                   std::to_string(out->queries_.rows()) + " rows, the queries " +
                                   std::to_string(num_queries));
  }
  out->filters_.reserve(num_queries);
  for (std::size_t q = 0; q < num_queries; ++q) {
    out->filters_.emplace_back(out->base_, out->queries_.row(q));
  }
  const std::uint64_t limit = flags.exact_scan_limit >= 0
                                  ? static_cast<std::uint64_t>(flags.exact_scan_limit)
                                  : std::max<std::uint64_t>(4096, index_rows / 20);
  out->passing_.resize(num_queries);
  out->fraction_.assign(num_queries, 1.0f);
  out->entry_rows_.resize(num_queries);
  out->steered_.assign(num_queries, false);
  const std::span<const std::uint32_t> starts = index.label_start_rows();
  const auto inverted = InvertLabels(out->base_);
  const double rows_total = static_cast<double>(std::max<std::uint64_t>(1, index_rows));
  // Listing costs the rarest label's rows: bounded at 20x the limit (and at
  // 20x 4096 when the scan is off, for the fraction and the entry rows).
  const std::uint64_t list_bound = 20 * std::max<std::uint64_t>(limit, 4096);
  for (std::size_t q = 0; q < num_queries; ++q) {
    const auto required = out->queries_.row(q);
    std::size_t rarest = index_rows;
    for (std::uint32_t l : required) rarest = std::min(rarest, l < inverted.size() ? inverted[l].size() : 0);
    auto rows = RowsWithAll(out->base_, inverted, required, list_bound);
    const std::size_t passing = rows ? rows->size() : rarest;
    out->fraction_[q] = static_cast<float>(std::clamp(passing / rows_total, 1e-6, 1.0));
    if (!rows) continue;
    if (rows->size() <= limit) {
      out->passing_[q] = std::move(rows);
    } else if (starts.empty()) {
      out->entry_rows_[q] = SampleEntryRows(*rows);
    }
  }
  // A graph built with these labels: walks start at the queried labels'
  // start rows and stay among passing rows.
  for (std::size_t q = 0; q < num_queries && !starts.empty(); ++q) {
    if (out->passing_[q]) continue;
    for (std::uint32_t l : out->queries_.row(q)) {
      if (l < starts.size() && starts[l] != Index::kNoLabelStart) {
        out->entry_rows_[q].push_back(starts[l]);
      }
    }
    out->steered_[q] = !out->entry_rows_[q].empty();
  }
  return out;
}

QueryParamsFn QueryLabelFilters::params_of() const {
  if (filters_.empty()) return nullptr;
  return [this](std::size_t q, SearchParams* p) {
    p->filter = &filters_[q];
    if (passing_[q]) {
      p->restrict_to = &*passing_[q];  // every row it ranks passes: no widening
    } else if (steered_[q]) {
      p->entry_rows = &entry_rows_[q];  // the walk holds passing rows only: no widening
      p->filter_steers_walk = true;
    } else {
      p->filter_fraction = fraction_[q];
      if (!entry_rows_[q].empty()) p->entry_rows = &entry_rows_[q];
    }
  };
}

std::size_t QueryLabelFilters::restricted_queries() const {
  return static_cast<std::size_t>(
      std::count_if(passing_.begin(), passing_.end(), [](const auto& p) { return p.has_value(); }));
}

Result<BatchSearchResult> RunBatch(const Index& index, const VectorMatrix& queries,
                                   const GroundTruth* gt, ReportRow* row,
                                   const QueryParamsFn& params_of) {
  STRATA_ASSIGN_OR_RETURN(BatchSearchResult r,
                          SearchBatch(index, queries, row->params, row->threads, params_of));
  row->summary = Summarize(r.stats, r.seconds);
  if (gt != nullptr) {
    STRATA_ASSIGN_OR_RETURN(RecallReport rec, ComputeRecall(r.results, *gt, row->params.k));
    row->recall = rec.mean_recall;
  }
  return r;
}

nlohmann::json RowToJson(const ReportRow& row, const Index& index) {
  const SearchSummary& s = row.summary;
  nlohmann::json j = {{"index_type", index.type()},
                      {"k", row.params.k},
                      {"threads", row.threads},
                      {"num_queries", s.num_queries},
                      {"qps", s.qps},
                      {"mean_latency_us", s.mean_latency_us},
                      {"p50_latency_us", s.p50_latency_us},
                      {"p99_latency_us", s.p99_latency_us},
                      {"mean_pages_read", s.mean_pages_read},
                      {"mean_reads", s.mean_reads},
                      {"mean_hops", s.mean_hops},
                      {"mean_io_wait_us", s.mean_io_wait_us},
                      {"io_wait_share", s.io_wait_share},
                      {"cache_nodes", index.cached_nodes()},
                      {"index_memory_bytes", index.memory_bytes()},
                      {"index_disk_bytes", index.disk_bytes()}};
  if (IsIvf(index)) {
    j["nprobe"] = row.params.nprobe;
    j["pipeline"] = IvfPipelineName(row.params.pipeline);
    j["inflight"] = row.params.inflight;
    j["drain_alpha"] = row.params.drain_alpha;
    j["fill_first"] = row.params.fill_first;
    j["mean_clusters_probed"] = s.mean_clusters_probed;
    j["mean_survivors"] = s.mean_survivors;
    j["mean_pages_dropped"] = s.mean_pages_dropped;
    j["mean_wasted_reads"] = s.mean_wasted_reads;
    j["mean_reranked"] = s.mean_reranked;
    j["drain_share"] = s.drain_share;
  } else {
    j["L"] = row.params.list_size;
    j["beamwidth"] = row.params.beam_width;
    j["mem_graph"] = row.params.mem_graph;
    j["page_search"] = row.params.page_search;
    j["dynamic_width"] = row.params.dynamic_width;
    j["min_beamwidth"] = row.params.min_beam_width;
    j["pipelined"] = row.params.pipelined;
    j["mean_page_records"] = s.mean_page_records;
    j["mean_expanded"] = s.mean_expanded;
    j["mean_cache_hits"] = s.mean_cache_hits;
    j["mean_full_distances"] = s.mean_full_distances;
    j["mean_pq_distances"] = s.mean_pq_distances;
  }
  if (row.recall) j["recall_at_k"] = *row.recall;
  return j;
}

void PrintRowHeader(const Index& index) {
  if (IsIvf(index)) {
    std::printf("%6s %10s %3s %8s %9s %9s %9s %9s %8s %8s %7s %8s %9s %7s %6s\n", "nprobe",
                "pipeline", "T", "recall", "QPS", "mean_us", "p50_us", "p99_us", "pages/q",
                "dropped", "wasted", "reranked", "survivors", "io_wait", "drain");
  } else {
    std::printf("%6s %4s %3s %8s %9s %9s %9s %9s %8s %7s %7s\n", "L", "W", "T", "recall", "QPS",
                "mean_us", "p50_us", "p99_us", "pages/q", "hops", "io_wait");
  }
}

void PrintRow(const Index& index, const ReportRow& row) {
  const SearchSummary& s = row.summary;
  const double recall = row.recall.value_or(-1.0);
  if (IsIvf(index)) {
    std::printf("%6u %10s %3u %8.4f %9.0f %9.0f %9.0f %9.0f %8.1f %8.1f %7.1f %8.1f %9.1f %6.0f%% "
                "%5.0f%%\n",
                row.params.nprobe, IvfPipelineName(row.params.pipeline), row.threads, recall,
                s.qps, s.mean_latency_us, s.p50_latency_us, s.p99_latency_us, s.mean_pages_read,
                s.mean_pages_dropped, s.mean_wasted_reads, s.mean_reranked, s.mean_survivors,
                100.0 * s.io_wait_share, 100.0 * s.drain_share);
  } else {
    std::printf("%6u %4u %3u %8.4f %9.0f %9.0f %9.0f %9.0f %8.1f %7.1f %6.0f%%\n",
                row.params.list_size, row.params.beam_width, row.threads, recall, s.qps,
                s.mean_latency_us, s.p50_latency_us, s.p99_latency_us, s.mean_pages_read,
                s.mean_hops, 100.0 * s.io_wait_share);
  }
  std::fflush(stdout);
}

std::string CsvHeader() {
  return "index_type,k,L,beamwidth,nprobe,pipeline,threads,recall,qps,mean_latency_us,"
         "p50_latency_us,p99_latency_us,mean_pages_read,mean_hops,io_wait_share,cache_nodes,"
         "mean_pages_dropped,mean_wasted_reads,mean_reranked,mean_survivors,drain_share,"
         "index_memory_bytes\n";
}

std::string CsvRow(const ReportRow& r, const Index& index) {
  const SearchSummary& s = r.summary;
  std::ostringstream f;
  f << index.type() << ',' << r.params.k << ',' << r.params.list_size << ','
    << r.params.beam_width << ',' << r.params.nprobe << ',' << IvfPipelineName(r.params.pipeline)
    << ',' << r.threads << ',' << r.recall.value_or(-1.0) << ',' << s.qps << ','
    << s.mean_latency_us << ',' << s.p50_latency_us << ',' << s.p99_latency_us << ','
    << s.mean_pages_read << ',' << s.mean_hops << ',' << s.io_wait_share << ','
    << index.cached_nodes() << ',' << s.mean_pages_dropped << ',' << s.mean_wasted_reads << ','
    << s.mean_reranked << ',' << s.mean_survivors << ',' << s.drain_share << ','
    << index.memory_bytes() << '\n';
  return f.str();
}

}  // namespace strata::cli
