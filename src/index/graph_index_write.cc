// WriteGraphIndex: placement (page shuffle or id order), MemGraph and the
// files of a graph index (node file, PQ file, entry file, manifest), written
// into a staging directory that replaces `index_dir` only once complete
// (BuildAside). Shared by BuildGraphIndex and MergeGraphIndex.
#include "index/graph_index_write.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/stats.h"
#include "format/blob_file.h"
#include "format/graph_node_file.h"
#include "format/manifest.h"
#include "graph/page_shuffle.h"
#include "index/build_util.h"
#include "index/index_files.h"
#include "quant/pq/sample.h"
#include "search/mem_graph.h"

namespace strata {
namespace {

// The node -> slot placement of the written file: identity (packed), or the
// page shuffle's pages laid out one after another (slot = page * C + position).
struct SlotOrder {
  std::vector<std::uint32_t> row_of;   // num_slots: slot -> row, graph::kEmptySlot if empty
  std::vector<std::uint32_t> slot_of;  // n: row -> slot
};

SlotOrder OrderFromPartition(const graph::PagePartition& p) {
  SlotOrder o;
  o.row_of = p.members;
  o.slot_of.resize(p.num_nodes());
  for (std::uint64_t i = 0; i < p.num_nodes(); ++i) {
    o.slot_of[i] = p.page_of[i] * p.records_per_page + p.slot_of[i];
  }
  return o;
}

// Builds the MemGraph: a Vamana graph over a uniform sample of the rows.
Result<search::MemGraph> BuildMemGraph(std::span<const float> rows, std::uint64_t n,
                                       std::uint32_t dim, const GraphBuildOptions& options,
                                       const SlotOrder& order) {
  const auto m = static_cast<std::size_t>(
      std::max<double>(1.0, std::round(options.mem_graph_ratio * static_cast<double>(n))));
  std::vector<std::size_t> sample = quant::SampleRows(n, std::min<std::size_t>(m, n),
                                                      options.seed ^ 0x6d656d67ull);
  std::sort(sample.begin(), sample.end());
  std::vector<float> vectors(sample.size() * dim);
  std::vector<std::uint32_t> slots(sample.size());
  for (std::size_t i = 0; i < sample.size(); ++i) {
    std::copy_n(rows.data() + sample[i] * dim, dim, vectors.data() + i * dim);
    slots[i] = order.slot_of[sample[i]];
  }
  graph::VamanaBuildOptions gopt;
  gopt.metric = options.metric;
  gopt.max_degree = options.mem_graph_R;
  gopt.search_list_size = std::max(options.mem_graph_L, options.mem_graph_R);
  gopt.alpha = options.alpha;
  gopt.num_threads = options.threads;
  gopt.seed = options.seed;
  gopt.stop = options.stop;
  STRATA_ASSIGN_OR_RETURN(graph::VamanaGraph g, graph::BuildVamana(vectors, dim, gopt));
  auto adjacency = graph::FlatAdjacency::Create(sample.size(), options.mem_graph_R);
  if (!adjacency.ok()) return adjacency.status();
  for (graph::NodeId i = 0; i < g.size(); ++i) adjacency->Set(i, g.Neighbors(i));
  return search::MemGraph::Create(dim, options.metric, std::move(vectors), std::move(*adjacency),
                                  g.entry_point(), std::move(slots));
}

}  // namespace

Status WriteGraphIndex(const GraphIndexContents& contents, const std::string& index_dir,
                       const GraphBuildOptions& options, const BuildProgress& progress,
                       const Timer& total, GraphBuildReport* report_out) {
  auto report_progress = [&](const char* phase, double f) {
    if (progress) progress(phase, f);
  };
  GraphBuildReport& report = *report_out;
  const ElementType type = contents.type;
  const std::uint32_t dim = contents.dim;
  const std::uint64_t n = contents.n;
  const std::span<const float> values = contents.values;
  const std::span<const float> graph_rows = contents.graph_rows;
  const quant::ProductQuantizer& pq = *contents.pq;
  std::vector<std::uint8_t>& codes = *contents.codes;
  const graph::VamanaGraph& g = *contents.graph;
  const graph::GraphStats gstats = g.Stats();
  report.average_degree = gstats.avg_degree;
  report.max_degree = gstats.max_degree;
  report.pq_bytes = static_cast<std::uint32_t>(pq.code_size());
  Timer phase;
  // ---- placement: page shuffle or id order ----
  phase.Reset();
  const bool want_codes_inline = options.all_in_storage;
  STRATA_ASSIGN_OR_RETURN(
      format::GraphLayout probe,
      format::GraphLayout::Make(format::GraphLayoutSpec{
          dim, type, options.R, n, 0, options.page_shuffle,
          want_codes_inline ? static_cast<std::uint32_t>(pq.code_size()) : 0}));
  const std::uint32_t per_page = probe.records_per_page();
  report.records_per_page = per_page;
  SlotOrder order;
  {
    STRATA_ASSIGN_OR_RETURN(graph::PagePartition identity, graph::IdentityPartition(n, per_page));
    STRATA_ASSIGN_OR_RETURN(report.overlap_before,
                            graph::OverlapRatio(g.adjacency(), identity, options.threads));
    if (options.page_shuffle && per_page > 1) {
      report_progress("shuffle", 0.0);
      graph::PageShuffleOptions sopt;
      sopt.records_per_page = per_page;
      sopt.refine_rounds = static_cast<int>(options.shuffle_rounds);
      sopt.swap_passes = static_cast<int>(options.shuffle_swaps);
      sopt.seed = options.seed;
      sopt.threads = options.threads;
      graph::PageShuffleReport srep;
      STRATA_ASSIGN_OR_RETURN(graph::PagePartition part,
                              graph::ShufflePages(g.adjacency(), sopt, &srep));
      report.overlap_after = srep.final_overlap_ratio;
      order = OrderFromPartition(part);
      report_progress("shuffle", 1.0);
    } else {
      report.overlap_after = report.overlap_before;
      order = OrderFromPartition(identity);
      order.row_of.resize(n);  // packed: slot = row, no empty slots
    }
  }
  const std::uint64_t num_slots = order.row_of.size();
  report.empty_slots = num_slots - n;
  report.seconds_shuffle = phase.ElapsedSeconds();
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "graph index write"));

  // ---- MemGraph ----
  phase.Reset();
  search::MemGraph mem_graph;
  if (options.mem_graph_ratio > 0) {
    report_progress("memgraph", 0.0);
    STRATA_ASSIGN_OR_RETURN(mem_graph, BuildMemGraph(graph_rows, n, dim, options, order));
    report.mem_graph_nodes = mem_graph.size();
    report_progress("memgraph", 1.0);
  }
  report.seconds_mem_graph = phase.ElapsedSeconds();
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "graph index write"));

  // ---- write ----
  phase.Reset();
  report_progress("write", 0.0);
  // Every file goes into a staging directory that replaces `index_dir` only
  // once complete: a failure from here on leaves a previous index intact.
  // (A `reuse_graph` naming `index_dir` was read above, before the switch.)
  auto write_files = [&](const std::string& dir) -> Status {
    const bool shuffled = options.page_shuffle && per_page > 1;
    STRATA_ASSIGN_OR_RETURN(
        format::GraphLayout layout,
        format::GraphLayout::Make(format::GraphLayoutSpec{
            dim, type, options.R, n, num_slots, shuffled,
            want_codes_inline ? static_cast<std::uint32_t>(pq.code_size()) : 0}));
    const std::size_t code_size = pq.code_size();
    const std::string nodes_path = dir + "/" + kGraphNodesFile;
    STRATA_ASSIGN_OR_RETURN(
        std::uint64_t nodes_bytes,
        format::WriteGraphNodeFile(
            nodes_path, layout, [&](std::uint64_t slot, format::NodeContent* c) {
              const std::uint32_t row = order.row_of[slot];
              if (row == graph::kEmptySlot) {
                c->empty = true;
                return Status::OK();
              }
              // Float records are stored normalised under cosine; integer ones as given.
              StoreVector(type, values.data() + static_cast<std::size_t>(row) * dim, dim,
                          c->vector.data());
              c->external_id = row;
              for (graph::NodeId nb : g.Neighbors(row)) {
                c->neighbours.push_back(order.slot_of[nb]);
                if (want_codes_inline) {
                  const std::uint8_t* code =
                      codes.data() + static_cast<std::size_t>(nb) * code_size;
                  c->codes.insert(c->codes.end(), code, code + code_size);
                }
              }
              if ((slot & 0xFFFF) == 0)
                report_progress("write", 0.9 * static_cast<double>(slot) / num_slots);
              return Status::OK();
            }));
    // PQ codes in slot order (empty slots zero), so search indexes them by slot.
    std::vector<std::uint8_t> slot_codes(num_slots * code_size, 0);
    for (std::uint64_t row = 0; row < n; ++row) {
      std::copy_n(codes.data() + row * code_size, code_size,
                  slot_codes.data() + static_cast<std::size_t>(order.slot_of[row]) * code_size);
    }
    std::vector<std::uint8_t>().swap(codes);
    const std::vector<std::uint8_t> codebook = pq.Serialize();
    STRATA_ASSIGN_OR_RETURN(
        std::uint64_t pq_file_bytes,
        format::WriteBlobFile(
            dir + "/" + kPqFile, format::BlobKind::kPqCodes, 1,
            {std::span<const std::uint8_t>(codebook), std::span<const std::uint8_t>(slot_codes)}));
    // Entry file: the medoid's PQ code and the MemGraph with its samples' codes
    // (what search needs in RAM even when the codes stay on SSD).
    const std::uint32_t entry_slot = order.slot_of[g.entry_point()];
    std::vector<std::vector<std::uint8_t>> entry_sections;
    if (!mem_graph.empty()) {
      entry_sections = mem_graph.Serialize();
      std::vector<std::uint8_t> sample_codes;
      for (std::uint32_t slot : mem_graph.slots()) {
        const std::uint8_t* code = slot_codes.data() + static_cast<std::size_t>(slot) * code_size;
        sample_codes.insert(sample_codes.end(), code, code + code_size);
      }
      entry_sections.push_back(std::move(sample_codes));
    }
    entry_sections.emplace_back(
        slot_codes.begin() + static_cast<std::size_t>(entry_slot) * code_size,
        slot_codes.begin() + static_cast<std::size_t>(entry_slot + 1) * code_size);
    std::vector<std::span<const std::uint8_t>> entry_spans(entry_sections.begin(),
                                                           entry_sections.end());
    STRATA_ASSIGN_OR_RETURN(
        std::uint64_t entry_file_bytes,
        format::WriteBlobFile(dir + "/" + kEntryFile, format::BlobKind::kMemGraph, 1, entry_spans));
    report.index_bytes = nodes_bytes + pq_file_bytes + entry_file_bytes;
    std::vector<const char*> files = {kGraphNodesFile, kPqFile, kEntryFile};
    if (shuffled) {
      std::vector<std::uint8_t> row_slots(n * 4);
      for (std::uint64_t row = 0; row < n; ++row) {
        const std::uint32_t slot = order.slot_of[row];
        for (int b = 0; b < 4; ++b) row_slots[row * 4 + b] = static_cast<std::uint8_t>(slot >> (8 * b));
      }
      STRATA_ASSIGN_OR_RETURN(
          std::uint64_t rows_bytes,
          format::WriteBlobFile(dir + "/" + kRowSlotsFile, format::BlobKind::kRowSlots, 1,
                                {std::span<const std::uint8_t>(row_slots)}));
      report.index_bytes += rows_bytes;
      files.push_back(kRowSlotsFile);
    }
    if (!g.label_start_points().empty()) {
      std::vector<std::uint8_t> starts;
      starts.reserve(g.label_start_points().size() * 4);
      for (const graph::NodeId row : g.label_start_points()) {
        for (int b = 0; b < 4; ++b) starts.push_back(static_cast<std::uint8_t>(row >> (8 * b)));
      }
      STRATA_ASSIGN_OR_RETURN(
          std::uint64_t starts_bytes,
          format::WriteBlobFile(dir + "/" + kLabelStartsFile, format::BlobKind::kLabelStarts, 1,
                                {std::span<const std::uint8_t>(starts)}));
      report.index_bytes += starts_bytes;
      files.push_back(kLabelStartsFile);
    }

    format::Manifest m;
    m.index_type = "graph";
    m.metric = options.metric;
    m.element_type = type;
    m.dim = dim;
    m.num_vectors = n;
    m.parameters = {{"R", options.R},
                    {"L", options.L},
                    {"alpha", options.alpha},
                    {"pq_bytes", report.pq_bytes},
                    {"passes", options.passes},
                    {"seed", options.seed},
                    {"entry_point", entry_slot},
                    {"layout", shuffled ? "shuffled" : "packed"},
                    {"all_in_storage", want_codes_inline},
                    {"opq_iterations", options.opq_iterations},
                    {"mem_graph_nodes", mem_graph.size()},
                    {"mem_graph_R", options.mem_graph_R},
                    {"shuffle_rounds", options.shuffle_rounds},
                    {"shuffle_swaps", options.shuffle_swaps},
                    {"pq_trained_rows", contents.pq_trained_rows}};
    for (const char* name : files) {
      format::ManifestFile f{name, 0, 0};
      STRATA_RETURN_IF_ERROR(format::ChecksumFile(dir + "/" + name, &f.bytes, &f.checksum));
      m.files.push_back(f);
    }
    report.num_vectors = n;
    report.dim = dim;
    report.seconds_write = phase.ElapsedSeconds();
    report.seconds_total = total.ElapsedSeconds();
    report.peak_rss_bytes = PeakRssBytes();
    m.build = {{"seconds_total", report.seconds_total},
               {"seconds_pq", report.seconds_pq},
               {"seconds_graph", report.seconds_graph},
               {"seconds_write", report.seconds_write},
               {"average_degree", report.average_degree},
               {"max_degree", report.max_degree},
               {"unreachable", gstats.unreachable},
               {"peak_rss_bytes", report.peak_rss_bytes},
               {"seconds_shuffle", report.seconds_shuffle},
               {"seconds_mem_graph", report.seconds_mem_graph},
               {"overlap_ratio_id_order", report.overlap_before},
               {"overlap_ratio", report.overlap_after},
               {"empty_slots", report.empty_slots},
               {"threads", options.threads}};
    return format::WriteManifest(dir, m);
  };
  STRATA_RETURN_IF_ERROR(BuildAside(index_dir, write_files));
  report_progress("write", 1.0);
  return Status::OK();
}

}  // namespace strata
