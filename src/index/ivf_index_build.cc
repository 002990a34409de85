// BuildIvfIndex: base file -> clusters (two-level k-means, fast assignment,
// members in page groups of nearby vectors or by distance to their centroid)
// -> Split-RaBitQ codes (RAM prefix blocks + SSD records) and the IRQ coarse
// quantizer -> records file, RAM blob, manifest, written into a staging
// directory that replaces `index_dir` only once complete (WriteIvfIndex).

#include <algorithm>
#include <cstring>
#include <string>

#include "base/timer.h"
#include "format/ivf_ram_file.h"
#include "format/ivf_records_file.h"
#include "index/build_util.h"
#include "index/ivf_files.h"
#include "index/ivf_index_write.h"
#include "ivf/cluster_encoder.h"
#include "ivf/clustering.h"
#include "ivf/coarse_quantizer.h"
#include "kernels/distance.h"
#include "quant/rabitq/rotator.h"
#include "strata/ivf_index.h"

namespace strata {

std::uint32_t DefaultIvfNprobe(std::uint64_t clusters) {
  // ~3 % of the clusters, at least 8 (where there are 8): a starting point
  // that `strata bench` sweeps around.
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(clusters, std::max<std::uint64_t>(8, clusters / 32)));
}

Status IvfBuildOptions::Validate() const {
  if (metric != Metric::kL2 && metric != Metric::kInnerProduct && metric != Metric::kCosine) {
    return Status::InvalidArgument("metric must be l2, ip or cosine");
  }
  if (clusters > 0xFFFFFFFEull) return Status::InvalidArgument("clusters must be below 2^32 - 1");
  if (prefix_bits % 64 != 0 || prefix_bits > 4096) {
    return Status::InvalidArgument(
        "prefix bits (D_m) must be a multiple of 64 up to the padded dim");
  }
  if (bits < 1 || bits > 9) return Status::InvalidArgument("bits (B) must be in 1..9");
  ivf::RerankKind r;
  STRATA_RETURN_IF_ERROR(ivf::ParseRerankKind(rerank, &r));
  ivf::CoarseKind c;
  STRATA_RETURN_IF_ERROR(ivf::ParseCoarseKind(coarse, &c));
  if (page_order != "locality" && page_order != "centroid") {
    return Status::InvalidArgument("page order must be locality or centroid, not '" +
                                   page_order + "'");
  }
  if (kmeans_iterations > 1000) return Status::InvalidArgument("kmeans iterations must be <= 1000");
  return Status::OK();
}

Result<IvfBuildReport> BuildIvfIndex(const std::string& base_path, const std::string& index_dir,
                                     const IvfBuildOptions& options,
                                     const BuildProgress& progress) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  ivf::RerankKind rerank;
  STRATA_RETURN_IF_ERROR(ivf::ParseRerankKind(options.rerank, &rerank));
  ivf::CoarseKind coarse_kind;
  STRATA_RETURN_IF_ERROR(ivf::ParseCoarseKind(options.coarse, &coarse_kind));
  const Timer total;
  auto report_progress = [&](const char* phase, double f) {
    if (progress) progress(phase, f);
  };
  IvfBuildReport report;

  // ---- load (as float32; cosine rows normalised) ----
  Timer phase;
  report_progress("load", 0.0);
  STRATA_ASSIGN_OR_RETURN(BuildRows loaded, LoadBuildRows(base_path, "ivf index"));
  const ElementType type = loaded.type;
  const std::uint32_t dim = loaded.dim;
  const std::uint64_t n = loaded.n;
  const std::size_t padded = quant::rabitq::PaddedDim(dim);
  if (options.prefix_bits > padded) {
    return Status::InvalidArgument("prefix bits (D_m) " + std::to_string(options.prefix_bits) +
                                   " exceed the padded dimension " + std::to_string(padded));
  }
  std::span<float> values = loaded.matrix.values<float>();
  if (options.metric == Metric::kCosine) {
    STRATA_RETURN_IF_ERROR(NormalizeRowsForCosine(values.data(), n, dim, base_path));
  }
  report.seconds_load = phase.ElapsedSeconds();
  report_progress("load", 1.0);
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "ivf index build"));

  // ---- clusters ----
  phase.Reset();
  report_progress("cluster", 0.0);
  quant::rabitq::RabitqOptions qopt;
  qopt.dim = dim;
  qopt.metric = options.metric;
  // Raw records re-rank exactly: no ex-code to compute.
  qopt.total_bits = rerank == ivf::RerankKind::kRaw ? 1 : options.bits;
  qopt.prefix_dim = options.prefix_bits;
  qopt.seed = options.seed ^ 0x5261426974510001ull;
  STRATA_ASSIGN_OR_RETURN(quant::rabitq::RabitqQuantizer quantizer,
                          quant::rabitq::RabitqQuantizer::Create(qopt));
  const std::size_t record_bytes = ivf::RecordBytes(quantizer, rerank);
  STRATA_ASSIGN_OR_RETURN(ivf::PagePacking packing,
                          ivf::PagePacking::Make(record_bytes, format::kSectorPayload));
  ivf::IvfClusteringOptions copt;
  copt.clusters = options.clusters;
  copt.iterations = static_cast<int>(options.kmeans_iterations);
  copt.seed = options.seed;
  copt.threads = options.threads;
  if (options.page_order == "locality") copt.page_group = packing.records_per_unit();
  STRATA_ASSIGN_OR_RETURN(ivf::IvfClustering clustering,
                          ivf::ClusterVectors(values.data(), n, dim, copt));
  const std::size_t C = clustering.num_clusters;
  report.seconds_cluster = phase.ElapsedSeconds();
  report_progress("cluster", 1.0);
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "ivf index build"));

  // ---- encode ----
  phase.Reset();
  report_progress("encode", 0.0);
  STRATA_ASSIGN_OR_RETURN(
      ivf::EncodedClusters encoded,
      ivf::EncodeClusters(quantizer, values.data(), clustering, rerank, options.threads,
                          options.filter_codes));
  report_progress("encode", 0.7);
  STRATA_ASSIGN_OR_RETURN(
      ivf::CoarseQuantizer coarse,
      ivf::CoarseQuantizer::Build(clustering.centroids.data(), C, dim, options.metric, coarse_kind,
                                  options.seed, options.threads));
  report.seconds_encode = phase.ElapsedSeconds();
  report_progress("encode", 1.0);
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "ivf index build"));

  // ---- write ----
  std::vector<std::uint64_t> sizes(C);
  for (std::size_t c = 0; c < C; ++c) sizes[c] = clustering.size(c);
  format::IvfRamParts parts;
  quantizer.Serialize(&parts.quantizer);
  coarse.Serialize(&parts.coarse);
  parts.centroids = std::move(clustering.centroids);
  parts.cluster_sizes = std::move(sizes);
  parts.ids = clustering.order;
  parts.ram_blocks = std::move(encoded.ram_blocks);
  parts.listed_codes = std::move(encoded.listed_codes);
  IvfIndexContents contents;
  contents.type = type;
  contents.dim = dim;
  contents.n = n;
  contents.quantizer = &quantizer;
  contents.rerank = rerank;
  contents.coarse = coarse_kind;
  contents.packing = packing;
  contents.parts = &parts;
  contents.records = [&](std::uint64_t pos, std::uint8_t* out) {
    if (rerank == ivf::RerankKind::kRaw) {
      std::memcpy(out, values.data() + static_cast<std::size_t>(clustering.order[pos]) * dim,
                  record_bytes);
    } else {
      std::memcpy(out, encoded.records.data() + pos * record_bytes, record_bytes);
    }
    return Status::OK();
  };
  contents.seed = options.seed;
  // What later merges split against (ivf_index_merge.h).
  contents.target_cluster_size = std::max<std::uint64_t>(1, (n + C - 1) / C);
  STRATA_RETURN_IF_ERROR(WriteIvfIndex(contents, index_dir, options, progress, total, &report));
  return report;
}

}  // namespace strata
