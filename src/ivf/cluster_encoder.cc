#include "ivf/cluster_encoder.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include "base/parallel.h"

namespace strata::ivf {

using quant::rabitq::kBatchSize;

Status ParseRerankKind(const std::string& name, RerankKind* out) {
  if (name == "excode") {
    *out = RerankKind::kExCode;
  } else if (name == "raw") {
    *out = RerankKind::kRaw;
  } else {
    return Status::InvalidArgument("rerank '" + name + "' (known: excode, raw)");
  }
  return Status::OK();
}

const char* RerankKindName(RerankKind kind) { return kind == RerankKind::kRaw ? "raw" : "excode"; }

std::size_t RecordBytes(const quant::rabitq::RabitqQuantizer& quantizer, RerankKind rerank) {
  return rerank == RerankKind::kRaw ? quantizer.dim() * sizeof(float)
                                    : quantizer.layout().ssd_record_bytes();
}

Result<EncodedClusters> EncodeClusters(const quant::rabitq::RabitqQuantizer& quantizer,
                                       const float* data, const IvfClustering& clustering,
                                       RerankKind rerank, unsigned threads,
                                       bool listed_codes) {
  const std::size_t k = clustering.num_clusters;
  const std::size_t d = clustering.dim;
  if (d != quantizer.dim() || clustering.offsets.size() != k + 1) {
    return Status::InvalidArgument("encode: clustering does not match the quantizer");
  }
  const auto& layout = quantizer.layout();
  EncodedClusters out;
  out.block_offsets.assign(k + 1, 0);
  for (std::size_t c = 0; c < k; ++c) {
    out.block_offsets[c + 1] =
        out.block_offsets[c] + (clustering.size(c) + kBatchSize - 1) / kBatchSize;
  }
  out.ram_blocks.assign(out.block_offsets.back() * layout.ram_batch_bytes(), 0);
  const std::size_t rec = layout.ssd_record_bytes();
  if (rerank == RerankKind::kExCode) out.records.assign(clustering.order.size() * rec, 0);
  const std::size_t listed_bytes = layout.listed_code_bytes();
  if (listed_codes) out.listed_codes.assign(clustering.order.size() * listed_bytes, 0);

  // Parallel over clusters, each encoded single-threaded: clusters are small
  // (~1,000 rows) and many, so this keeps every core busy without nesting.
  std::mutex mu;
  Status first_error;
  std::atomic<bool> failed{false};
  const unsigned nthreads = threads == 0 ? DefaultThreads() : threads;
  std::vector<std::vector<float>> rows(nthreads);
  ParallelForChunks(k, nthreads, 1, [&](std::size_t begin, std::size_t end, unsigned t) {
    for (std::size_t c = begin; c < end && !failed.load(std::memory_order_relaxed); ++c) {
      const std::uint64_t first = clustering.offsets[c];
      const std::uint64_t n = clustering.size(c);
      if (n == 0) continue;
      rows[t].resize(n * d);
      for (std::uint64_t i = 0; i < n; ++i) {
        std::copy_n(data + static_cast<std::size_t>(clustering.order[first + i]) * d, d,
                    rows[t].data() + i * d);
      }
      Status st = quantizer.EncodeCluster(
          rows[t].data(), n, clustering.centroids.data() + c * d,
          out.ram_blocks.data() + out.block_offsets[c] * layout.ram_batch_bytes(),
          rerank == RerankKind::kExCode ? out.records.data() + first * rec : nullptr, 1,
          listed_codes ? out.listed_codes.data() + first * listed_bytes : nullptr);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.exchange(true)) first_error = st.WithContext("cluster " + std::to_string(c));
      }
    }
  });
  if (failed.load()) return first_error;
  return out;
}

}  // namespace strata::ivf
