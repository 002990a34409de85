// MergeGraphIndex: old graph index + deletes + inserts -> a new graph index,
// through StreamingMerge and the build's writer, with the old PQ codebook.
#include "index/graph_index_merge.h"

#include <algorithm>
#include <vector>

#include "base/timer.h"
#include "format/blob_file.h"
#include "format/manifest.h"
#include "index/build_util.h"
#include "index/graph_index_write.h"
#include "index/graph_loader.h"
#include "index/index_files.h"
#include "quant/pq/product_quantizer.h"
#include "strata/labels.h"

namespace strata {
namespace {

// Retrain the codebook once the data is this many times what it was trained on.
constexpr std::uint64_t kRetrainGrowth = 4;

}  // namespace

Result<GraphBuildReport> MergeGraphIndex(const std::string& old_dir,
                                         std::span<const std::uint8_t> deleted,
                                         std::span<const float> new_rows,
                                         const std::string& index_dir,
                                         const GraphBuildOptions& options,
                                         graph::StreamingMergeReport* merge_report) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  const Timer total;
  GraphBuildReport report;
  Timer phase;
  STRATA_ASSIGN_OR_RETURN(format::Manifest m, format::ReadManifest(old_dir));
  if (m.index_type != "graph") {
    return Status::InvalidArgument(old_dir + " is not a graph index");
  }
  STRATA_RETURN_IF_ERROR(CheckMergeInputs(m, options.metric, deleted.size(), new_rows.size()));
  const std::uint32_t dim = m.dim;
  const std::uint64_t n_old = m.num_vectors;
  const std::uint32_t old_R = m.parameters.value("R", std::uint32_t{0});
  std::vector<float> old_values;
  STRATA_ASSIGN_OR_RETURN(graph::VamanaGraph old_graph,
                          LoadGraphFromIndex(old_dir, n_old, dim, m.metric, old_R, &old_values));
  STRATA_ASSIGN_OR_RETURN(format::BlobContents pq_blob,
                          format::ReadBlobFile(old_dir + "/" + kPqFile,
                                               format::BlobKind::kPqCodes, 1, 2));
  auto pq = quant::ProductQuantizer::Deserialize(pq_blob.sections[0]);
  if (!pq.ok()) return pq.status().WithContext(old_dir + "/" + kPqFile);
  pq_blob = format::BlobContents{};
  report.seconds_load = phase.ElapsedSeconds();

  // Records keep what a build would store (normalised floats under cosine,
  // integers as given); the graph works on unit rows under cosine.
  const ElementType type = m.element_type;
  const bool cosine = m.metric == Metric::kCosine;
  const std::uint64_t m_new = new_rows.size() / dim;
  std::vector<float> new_values(new_rows.begin(), new_rows.end());
  if (cosine && IsFloatType(type)) {
    STRATA_RETURN_IF_ERROR(NormalizeRowsForCosine(new_values.data(), m_new, dim, "new rows"));
  }
  std::vector<float> old_graph_rows, new_graph_rows;
  const bool separate = cosine && !IsFloatType(type);
  if (separate) {
    old_graph_rows = old_values;
    new_graph_rows = new_values;
    for (std::uint64_t r = 0; r < n_old; ++r) {
      if (deleted[r]) std::fill_n(old_graph_rows.data() + r * dim, dim, 1.0f / std::sqrt(dim));
    }
    STRATA_RETURN_IF_ERROR(NormalizeRowsForCosine(old_graph_rows.data(), n_old, dim, old_dir));
    STRATA_RETURN_IF_ERROR(NormalizeRowsForCosine(new_graph_rows.data(), m_new, dim, "new rows"));
  }

  phase.Reset();
  graph::StreamingMergeOptions mo;
  mo.metric = m.metric;
  mo.max_degree = options.R;
  mo.search_list_size = options.L;
  mo.alpha = options.alpha;
  mo.num_threads = options.threads;
  mo.seed = options.seed;
  mo.stop = options.stop;
  if (options.labels != nullptr) {
    // Label-aware merge: the labels are of the merged numbering.
    mo.labels = graph::NodeLabels{options.labels->offsets, options.labels->labels};
  }
  std::vector<float> merged_graph_rows;
  graph::StreamingMergeReport local_report;
  STRATA_ASSIGN_OR_RETURN(
      graph::VamanaGraph merged,
      graph::StreamingMerge(old_graph, separate ? old_graph_rows : old_values, deleted,
                            separate ? new_graph_rows : new_values, dim, mo, &merged_graph_rows,
                            merge_report ? merge_report : &local_report));
  report.seconds_graph = phase.ElapsedSeconds();
  const std::uint64_t n = merged.size();
  std::vector<float> merged_values;
  if (separate) {
    merged_values.reserve(n * dim);
    for (std::uint64_t r = 0; r < n_old; ++r) {
      if (!deleted[r]) {
        merged_values.insert(merged_values.end(), old_values.begin() + r * dim,
                             old_values.begin() + (r + 1) * dim);
      }
    }
    merged_values.insert(merged_values.end(), new_values.begin(), new_values.end());
  }
  std::vector<float>().swap(old_values);
  std::vector<float>().swap(old_graph_rows);

  // Codes with the old codebook: trained once, at the first build (DefraDB's
  // DISKANN), unless the data has since grown past kRetrainGrowth times what it
  // was trained on while that was below a full training sample. Measured
  // (bench/results/collection_merge_synth200k.md, live build): a codebook
  // trained on the first 2,000 vectors and kept for 200k cost 7-10 points of
  // recall@10 at L 10-20.
  phase.Reset();
  std::uint64_t trained = m.parameters.value("pq_trained_rows", n_old);
  const std::uint64_t full_sample = GraphQuantizerTrainRows(n, options);
  if (trained < full_sample && n >= kRetrainGrowth * trained) {
    STRATA_ASSIGN_OR_RETURN(*pq, TrainGraphQuantizer(merged_graph_rows.data(), n, dim, options));
    trained = full_sample;
  }
  std::vector<std::uint8_t> codes(n * pq->code_size());
  STRATA_RETURN_IF_ERROR(pq->Encode(merged_graph_rows.data(), n, codes.data(), options.threads));
  report.seconds_pq = phase.ElapsedSeconds();
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "graph index merge"));

  const std::span<const float> graph_rows(merged_graph_rows);
  const std::span<const float> values = separate ? std::span<const float>(merged_values) : graph_rows;
  GraphIndexContents contents{type, dim, n, values, graph_rows, &*pq, &codes, &merged, trained};
  STRATA_RETURN_IF_ERROR(WriteGraphIndex(contents, index_dir, options, nullptr, total, &report));
  return report;
}

}  // namespace strata
