// IvfIndex: opening an IVF index directory (RAM blob + records file, checked
// against the manifest and each other) and per-thread searchers over the
// shared read-only data.
#include "strata/ivf_index.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "format/ivf_ram_file.h"
#include "format/manifest.h"
#include "index/ivf_files.h"
#include "search/ivf_search.h"

namespace strata {

struct IvfIndex::Impl {
  search::IvfIndexData data;
  format::Manifest manifest;
  OpenOptions options;
};

namespace {

// The IVF index's Searcher: one search context (I/O queue, buffers, scratch).
class IvfSearcher final : public Searcher {
 public:
  // `keep_alive` owns the index data the context reads: a searcher stays
  // valid after its Index is destroyed.
  IvfSearcher(std::shared_ptr<const void> keep_alive, std::unique_ptr<search::IvfSearchContext> context)
      : keep_alive_(std::move(keep_alive)), context_(std::move(context)) {}
  Status Search(std::span<const float> query, const SearchParams& params, std::span<VectorId> ids,
                std::span<float> distances, QueryStats* stats) override {
    return context_->Search(query, params, ids, distances, stats);
  }
  std::string_view engine_name() const override { return IoEngineName(context_->engine()); }

 private:
  std::shared_ptr<const void> keep_alive_;  // destroyed after context_
  std::unique_ptr<search::IvfSearchContext> context_;
};

}  // namespace

IvfIndex::IvfIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

bool IvfIndex::distances_exact() const { return impl_->data.rerank == ivf::RerankKind::kRaw; }
bool IvfIndex::ranks_restricted() const { return true; }
IvfIndex::~IvfIndex() = default;

Status LoadIvfIndexData(const std::string& dir, bool verify_checksums, format::Manifest* manifest,
                        search::IvfIndexData* data) {
  STRATA_ASSIGN_OR_RETURN(*manifest, format::ReadManifest(dir));
  const format::Manifest& m = *manifest;
  if (m.index_type != "ivf") {
    return Status::InvalidArgument(dir + " holds a '" + m.index_type + "' index, not an IVF index");
  }
  if (verify_checksums) STRATA_RETURN_IF_ERROR(format::VerifyManifestFiles(dir, m));
  auto corrupt = [&](const std::string& what) { return Status::Corruption(dir + ": " + what); };
  search::IvfIndexData& d = *data;
  d.metric = m.metric;
  d.dim = m.dim;
  const nlohmann::json& p = m.parameters;
  if (!p.contains("rerank") || !p["rerank"].is_string() || !p.contains("default_nprobe") ||
      !p["default_nprobe"].is_number_unsigned()) {
    return corrupt("manifest lacks IVF parameters");
  }
  if (!ivf::ParseRerankKind(p["rerank"].get<std::string>(), &d.rerank).ok()) {
    return corrupt("unknown rerank kind in manifest");
  }
  STRATA_ASSIGN_OR_RETURN(format::IvfRamParts parts,
                          format::ReadIvfRamFile(dir + "/" + kIvfRamFile));
  auto qz = quant::rabitq::RabitqQuantizer::Deserialize(parts.quantizer);
  if (!qz.ok()) return qz.status().WithContext(dir + "/" + kIvfRamFile);
  d.quantizer.emplace(std::move(*qz));
  if (d.quantizer->dim() != m.dim || d.quantizer->options().metric != m.metric) {
    return corrupt("quantizer does not match the manifest");
  }
  const std::size_t C = parts.cluster_sizes.size();
  if (C == 0 || parts.centroids.size() != C * m.dim || parts.ids.size() != m.num_vectors) {
    return corrupt("cluster tables do not match the manifest");
  }
  d.cluster_offsets.assign(C + 1, 0);
  d.block_offsets.assign(C + 1, 0);
  for (std::size_t c = 0; c < C; ++c) {
    d.cluster_offsets[c + 1] = d.cluster_offsets[c] + parts.cluster_sizes[c];
    d.block_offsets[c + 1] =
        d.block_offsets[c] +
        (parts.cluster_sizes[c] + quant::rabitq::kBatchSize - 1) / quant::rabitq::kBatchSize;
  }
  if (d.cluster_offsets.back() != m.num_vectors ||
      parts.ram_blocks.size() != d.block_offsets.back() * d.quantizer->layout().ram_batch_bytes()) {
    return corrupt("cluster sizes or RAM blocks do not match the manifest");
  }
  if (!parts.listed_codes.empty() &&
      parts.listed_codes.size() != m.num_vectors * d.quantizer->layout().listed_code_bytes()) {
    return corrupt("listed codes do not match the manifest");
  }
  // The ids are a permutation of the rows; its inverse serves restricted
  // searches.
  constexpr std::uint32_t kUnset = 0xFFFFFFFFu;
  d.position_of.assign(m.num_vectors, kUnset);
  for (std::size_t pos = 0; pos < parts.ids.size(); ++pos) {
    const std::uint32_t id = parts.ids[pos];
    if (id >= m.num_vectors) return corrupt("id out of range");
    if (d.position_of[id] != kUnset) return corrupt("id " + std::to_string(id) + " stored twice");
    d.position_of[id] = static_cast<std::uint32_t>(pos);
  }
  d.centroids = std::move(parts.centroids);
  d.ids = std::move(parts.ids);
  d.ram_blocks = std::move(parts.ram_blocks);
  d.listed_codes = std::move(parts.listed_codes);
  auto coarse = ivf::CoarseQuantizer::Deserialize(parts.coarse, d.centroids.data(), C, m.dim);
  if (!coarse.ok()) return coarse.status().WithContext(dir + "/" + kIvfRamFile);
  d.coarse.emplace(std::move(*coarse));
  STRATA_ASSIGN_OR_RETURN(
      d.records, format::IvfRecordsFile::Open(dir + "/" + kIvfRecordsFile, parts.cluster_sizes));
  if (d.records.packing().record_bytes() != ivf::RecordBytes(*d.quantizer, d.rerank)) {
    return corrupt("record size does not match the quantizer");
  }
  d.default_nprobe = std::clamp<std::uint32_t>(p["default_nprobe"].get<std::uint32_t>(), 1,
                                               static_cast<std::uint32_t>(C));
  return Status::OK();
}

Result<std::unique_ptr<IvfIndex>> IvfIndex::Open(const std::string& dir,
                                                 const OpenOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  STRATA_RETURN_IF_ERROR(
      LoadIvfIndexData(dir, options.verify_checksums, &impl->manifest, &impl->data));
  return std::unique_ptr<IvfIndex>(new IvfIndex(std::move(impl)));
}

std::uint32_t IvfIndex::dim() const { return impl_->data.dim; }
Metric IvfIndex::metric() const { return impl_->data.metric; }
ElementType IvfIndex::element_type() const { return impl_->manifest.element_type; }
std::uint64_t IvfIndex::num_vectors() const { return impl_->data.num_vectors(); }
std::size_t IvfIndex::memory_bytes() const { return impl_->data.MemoryBytes(); }

std::uint64_t IvfIndex::disk_bytes() const {
  std::uint64_t total = 0;
  for (const format::ManifestFile& f : impl_->manifest.files) total += f.bytes;
  return total;
}

std::string IvfIndex::Describe() const {
  const search::IvfIndexData& d = impl_->data;
  const auto& qz = *d.quantizer;
  const auto& pk = d.records.packing();
  std::string s =
      "ivf: " + std::to_string(d.num_vectors()) + " x " + std::to_string(d.dim) + " " +
      std::string(ElementTypeName(element_type())) + " " + std::string(MetricName(d.metric)) +
      ", C=" + std::to_string(d.num_clusters()) + ", D_m=" + std::to_string(qz.prefix_dim()) + "/" +
      std::to_string(qz.padded_dim()) + ", B=" + std::to_string(qz.ex_bits() + 1) + ", rerank " +
      ivf::RerankKindName(d.rerank) + ", record " + std::to_string(pk.record_bytes()) + " B, ";
  s += pk.pages_per_unit() == 1 ? std::to_string(pk.records_per_unit()) + " records/page"
                                : std::to_string(pk.pages_per_unit()) + " pages/record";
  s += ", coarse " + std::string(ivf::CoarseKindName(d.coarse->kind())) + ", nprobe " +
       std::to_string(d.default_nprobe);
  return s;
}

Result<std::unique_ptr<Searcher>> IvfIndex::NewSearcher(const SearchParams& max_params) const {
  const std::uint32_t inflight =
      max_params.inflight ? max_params.inflight : search::IvfSearchContext::kDefaultInflight;
  if (inflight > 256) return Status::InvalidArgument("inflight must be in 1..256");
  IoQueueOptions io;
  io.engine = impl_->options.io_engine;
  STRATA_ASSIGN_OR_RETURN(auto context,
                          search::IvfSearchContext::Create(impl_->data, io, inflight));
  return std::unique_ptr<Searcher>(new IvfSearcher(impl_, std::move(context)));
}

}  // namespace strata
