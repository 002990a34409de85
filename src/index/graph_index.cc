// GraphIndex: opening a graph index directory, loading its node cache, and
// per-thread searchers over the shared read-only data.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>

#include "base/aligned_buffer.h"
#include "base/parallel.h"
#include "base/timer.h"
#include "format/blob_file.h"
#include "format/manifest.h"
#include "index/graph_index_impl.h"
#include "index/index_files.h"
#include "index/node_cache_loader.h"
#include "search/decoupled_search.h"
#include "search/graph_search.h"
#include "strata/graph_index.h"

namespace strata {

namespace {

// A graph index's Searcher: one search context (I/O queue, buffers,
// scratch) over the node file (GraphSearchContext) or the decoupled layout
// (DecoupledSearchContext).
template <typename Context>
class ContextSearcher final : public Searcher {
 public:
  // `keep_alive` owns the index data the context reads: a searcher stays
  // valid after its Index is destroyed.
  ContextSearcher(std::shared_ptr<const void> keep_alive, std::unique_ptr<Context> context)
      : keep_alive_(std::move(keep_alive)), context_(std::move(context)) {}
  Status Search(std::span<const float> query, const SearchParams& params,
                std::span<VectorId> ids, std::span<float> distances, QueryStats* stats) override {
    return context_->Search(query, params, ids, distances, stats);
  }
  std::string_view engine_name() const override { return IoEngineName(context_->engine()); }

 private:
  std::shared_ptr<const void> keep_alive_;  // destroyed after context_
  std::unique_ptr<Context> context_;
};

// Opens OpenOptions::decoupled_dir's layout for `d` (whose rows it maps
// through row_of_slot, built here for page-shuffled indexes).
Status OpenDecoupled(const std::string& dir, const OpenOptions& options, search::GraphIndexData* d,
                     std::optional<search::DecoupledGraphData>* out) {
  if (!d->resident_codes()) {
    return Status::InvalidArgument(dir + ": the decoupled layout needs the PQ codes in RAM "
                                   "(--resident-codes for all-in-storage indexes)");
  }
  if (options.cache_nodes != 0) {
    return Status::InvalidArgument(
        "the node cache serves the node file; the decoupled layout's cache is sized by cache_mib");
  }
  if (!d->rows_mappable()) {
    return Status::NotSupported(dir + ": its slots cannot be mapped to rows");
  }
  if (!d->slot_of_row.empty() && d->row_of_slot.empty()) {
    d->row_of_slot.assign(d->num_slots(), Index::kNoLabelStart);
    for (std::size_t r = 0; r < d->slot_of_row.size(); ++r) {
      d->row_of_slot[d->slot_of_row[r]] = static_cast<std::uint32_t>(r);
    }
  }
  STRATA_ASSIGN_OR_RETURN(search::DecoupledGraphData layout,
                          search::DecoupledGraphData::Open(options.decoupled_dir, *d,
                                                           options.decoupled_grown));
  if (options.cache_mib != 0) {
    const std::size_t pages = options.cache_mib * (std::size_t{1} << 20) / format::kSector;
    layout.cache = std::make_unique<search::EdgePageCache>(pages, options.edge_cache_policy);
  }
  out->emplace(std::move(layout));
  return Status::OK();
}

// Reads kLabelStartsFile into d->label_start_rows and, for page-shuffled
// layouts, builds d->row_of_slot (needs slot_of_row loaded first).
Status LoadLabelStarts(const std::string& dir, search::GraphIndexData* d) {
  const std::string path = dir + "/" + kLabelStartsFile;
  STRATA_ASSIGN_OR_RETURN(format::BlobContents blob,
                          format::ReadBlobFile(path, format::BlobKind::kLabelStarts, 1, 1));
  const std::vector<std::uint8_t>& bytes = blob.sections[0];
  if (bytes.size() % 4 != 0) return Status::Corruption(path + ": size is not a multiple of 4");
  d->label_start_rows.resize(bytes.size() / 4);
  for (std::size_t l = 0; l < d->label_start_rows.size(); ++l) {
    std::uint32_t row = 0;
    for (int b = 0; b < 4; ++b) row |= static_cast<std::uint32_t>(bytes[l * 4 + b]) << (8 * b);
    if (row != Index::kNoLabelStart && row >= d->num_nodes()) {
      return Status::Corruption(path + ": start row out of range");
    }
    d->label_start_rows[l] = row;
  }
  if (!d->slot_of_row.empty()) {
    d->row_of_slot.assign(d->num_slots(), Index::kNoLabelStart);
    for (std::size_t r = 0; r < d->slot_of_row.size(); ++r) {
      d->row_of_slot[d->slot_of_row[r]] = static_cast<std::uint32_t>(r);
    }
  } else if (d->nodes.layout().external_ids && d->num_slots() != d->num_nodes()) {
    return Status::Corruption(path + ": a label graph's rows cannot be mapped to slots");
  }
  return Status::OK();
}

}  // namespace

GraphIndex::GraphIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GraphIndex::~GraphIndex() = default;

Result<std::unique_ptr<GraphIndex>> GraphIndex::Open(const std::string& dir,
                                                     const OpenOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  STRATA_ASSIGN_OR_RETURN(impl->manifest, format::ReadManifest(dir));
  const format::Manifest& m = impl->manifest;
  if (m.index_type != "graph") {
    return Status::InvalidArgument(dir + " holds a '" + m.index_type + "' index, not a graph index");
  }
  if (options.verify_checksums) STRATA_RETURN_IF_ERROR(format::VerifyManifestFiles(dir, m));
  search::GraphIndexData& d = impl->data;
  d.metric = m.metric;
  STRATA_ASSIGN_OR_RETURN(d.nodes, format::GraphNodeFile::Open(dir + "/" + kGraphNodesFile));
  const format::GraphLayout& layout = d.nodes.layout();
  if (layout.dim != m.dim || layout.num_nodes != m.num_vectors ||
      layout.element_type != m.element_type) {
    return Status::Corruption(dir + ": node file does not match the manifest");
  }
  if (layout.num_slots >= 0xFFFFFFFFull) {
    return Status::NotSupported(dir + ": search supports up to 2^32 - 2 nodes per index shard");
  }
  STRATA_ASSIGN_OR_RETURN(format::BlobContents pq_blob,
                          format::ReadBlobFile(dir + "/" + kPqFile, format::BlobKind::kPqCodes, 1, 2));
  auto pq = quant::ProductQuantizer::Deserialize(pq_blob.sections[0]);
  if (!pq.ok()) return pq.status().WithContext(dir + "/" + kPqFile);
  d.pq = std::move(*pq);
  const std::size_t code_size = d.pq.code_size();
  if (d.pq.dim() != m.dim || pq_blob.sections[1].size() != layout.num_slots * code_size ||
      (layout.code_bytes != 0 && layout.code_bytes != code_size)) {
    return Status::Corruption(dir + "/" + kPqFile + ": PQ shape does not match the index");
  }
  // All-in-storage indexes read neighbours' codes from the records unless the
  // caller asks for resident codes.
  if (layout.code_bytes == 0 || options.resident_codes) {
    d.pq_codes = std::move(pq_blob.sections[1]);
  }
  pq_blob = format::BlobContents{};
  if (!m.parameters.contains("entry_point") || !m.parameters["entry_point"].is_number_unsigned() ||
      m.parameters["entry_point"].get<std::uint64_t>() >= layout.num_slots) {
    return Status::Corruption(dir + ": manifest has no valid entry_point");
  }
  d.entry_point = m.parameters["entry_point"].get<std::uint32_t>();
  STRATA_ASSIGN_OR_RETURN(format::BlobContents entry,
                          format::ReadBlobFile(dir + "/" + kEntryFile,
                                               format::BlobKind::kMemGraph, 1, 0));
  if (entry.sections.size() != 1 && entry.sections.size() != 6) {
    return Status::Corruption(dir + "/" + kEntryFile + ": unexpected section count");
  }
  d.entry_code = std::move(entry.sections.back());
  if (d.entry_code.size() != code_size) {
    return Status::Corruption(dir + "/" + kEntryFile + ": entry code size");
  }
  if (entry.sections.size() == 6) {
    d.mem_graph_codes = std::move(entry.sections[4]);
    entry.sections.resize(4);
    auto mg = search::MemGraph::Deserialize(entry.sections);
    if (!mg.ok()) return mg.status().WithContext(dir + "/" + kEntryFile);
    d.mem_graph = std::move(*mg);
    if (d.mem_graph.dim() != layout.dim ||
        d.mem_graph_codes.size() != d.mem_graph.size() * code_size) {
      return Status::Corruption(dir + "/" + kEntryFile + ": MemGraph does not match the index");
    }
    for (std::uint32_t slot : d.mem_graph.slots()) {
      if (slot >= layout.num_slots) {
        return Status::Corruption(dir + "/" + kEntryFile + ": MemGraph slot out of range");
      }
    }
  }
  const bool has_row_slots =
      std::any_of(m.files.begin(), m.files.end(),
                  [](const format::ManifestFile& f) { return f.name == kRowSlotsFile; });
  if (has_row_slots) {
    STRATA_ASSIGN_OR_RETURN(format::BlobContents rows,
                            format::ReadBlobFile(dir + "/" + kRowSlotsFile,
                                                 format::BlobKind::kRowSlots, 1, 1));
    const std::vector<std::uint8_t>& bytes = rows.sections[0];
    if (bytes.size() != layout.num_nodes * 4) {
      return Status::Corruption(dir + "/" + kRowSlotsFile + ": size does not match the index");
    }
    d.slot_of_row.resize(layout.num_nodes);
    for (std::size_t r = 0; r < d.slot_of_row.size(); ++r) {
      std::uint32_t slot = 0;
      for (int b = 0; b < 4; ++b) slot |= static_cast<std::uint32_t>(bytes[r * 4 + b]) << (8 * b);
      if (slot >= layout.num_slots) {
        return Status::Corruption(dir + "/" + kRowSlotsFile + ": slot out of range");
      }
      d.slot_of_row[r] = slot;
    }
  }
  const bool has_label_starts =
      std::any_of(m.files.begin(), m.files.end(),
                  [](const format::ManifestFile& f) { return f.name == kLabelStartsFile; });
  if (has_label_starts) STRATA_RETURN_IF_ERROR(LoadLabelStarts(dir, &d));
  if (!options.decoupled_dir.empty()) {
    STRATA_RETURN_IF_ERROR(OpenDecoupled(dir, options, &d, &impl->decoupled));
  } else {
    STRATA_RETURN_IF_ERROR(LoadNodeCache(&d, options));
  }
  return std::unique_ptr<GraphIndex>(new GraphIndex(std::move(impl)));
}

std::span<const std::uint32_t> GraphIndex::label_start_rows() const {
  return impl_->data.label_start_rows;
}

std::uint32_t GraphIndex::dim() const { return impl_->data.dim(); }
Metric GraphIndex::metric() const { return impl_->data.metric; }
ElementType GraphIndex::element_type() const { return impl_->data.nodes.layout().element_type; }
std::uint64_t GraphIndex::num_vectors() const { return impl_->data.num_nodes(); }
std::uint64_t GraphIndex::cached_nodes() const { return impl_->data.cache.size(); }
bool GraphIndex::ranks_restricted() const {
  // The decoupled search always walks (SearchParams::restrict_to unused).
  return !impl_->decoupled && impl_->data.resident_codes() && impl_->data.rows_mappable();
}
std::size_t GraphIndex::memory_bytes() const {
  return impl_->data.MemoryBytes() + (impl_->decoupled ? impl_->decoupled->MemoryBytes() : 0);
}

std::string GraphIndex::Describe() const {
  const format::GraphLayout& l = impl_->data.nodes.layout();
  std::string s = "graph: " + std::to_string(l.num_nodes) + " x " + std::to_string(l.dim) + " " +
                  std::string(ElementTypeName(l.element_type)) + " " +
                  std::string(MetricName(impl_->data.metric)) + ", R=" +
                  std::to_string(l.max_degree) + ", record " + std::to_string(l.record_bytes) +
                  " B, ";
  s += l.records_per_sector ? std::to_string(l.records_per_sector) + " records/sector"
                            : std::to_string(l.sectors_per_record) + " sectors/record";
  s += ", pq " + std::to_string(impl_->data.pq.code_size()) + " B";
  if (!impl_->data.pq.rotation().empty()) s += " (OPQ)";
  if (l.external_ids) s += ", shuffled";
  if (l.code_bytes) s += impl_->data.resident_codes() ? ", all-in-storage (codes resident)"
                                                      : ", all-in-storage";
  const search::GraphIndexData& d = impl_->data;
  if (!d.mem_graph.empty()) s += ", memgraph " + std::to_string(d.mem_graph.size()) + " nodes";
  char ram[160];
  std::snprintf(ram, sizeof ram, "; RAM: codes %.1f MiB, memgraph %.2f MiB, cache %.1f MiB",
                static_cast<double>(d.pq_codes.capacity()) / (1 << 20),
                static_cast<double>(d.mem_graph.MemoryBytes() + d.mem_graph_codes.capacity()) /
                    (1 << 20),
                static_cast<double>(d.cache.MemoryBytes()) / (1 << 20));
  s += ram;
  if (impl_->decoupled) {
    const search::DecoupledGraphData& dl = *impl_->decoupled;
    std::snprintf(ram, sizeof ram,
                  "; decoupled: %llu edge pages (%.1f lists/page), vectors %u/sector, "
                  "indirection %.1f MiB",
                  static_cast<unsigned long long>(dl.edges.num_pages()),
                  static_cast<double>(dl.edges.num_vertices()) /
                      static_cast<double>(std::max<std::uint64_t>(1, dl.edges.num_pages())),
                  dl.vectors.layout().vectors_per_sector,
                  static_cast<double>(dl.where.capacity() * sizeof(format::EdgeLocation)) /
                      (1 << 20));
    s += ram;
    if (dl.cache) {
      static constexpr const char* kPolicy[] = {"navis", "lru", "clock", "lfu"};
      std::snprintf(ram, sizeof ram, ", edge cache %zu pages (%s)", dl.cache->capacity(),
                    kPolicy[static_cast<int>(impl_->options.edge_cache_policy)]);
      s += ram;
    }
  }
  return s;
}

std::uint64_t GraphIndex::disk_bytes() const {
  std::uint64_t total = 0;
  if (impl_->decoupled) {
    // Searches read the decoupled files and the codes, not the node file.
    for (const format::ManifestFile& f : impl_->manifest.files) {
      if (f.name != kGraphNodesFile) total += f.bytes;
    }
    return total + impl_->decoupled->DiskBytes();
  }
  for (const format::ManifestFile& f : impl_->manifest.files) total += f.bytes;
  return total;
}

Result<std::unique_ptr<Searcher>> GraphIndex::NewSearcher(const SearchParams& max_params) const {
  const std::uint32_t max_beam_width = max_params.beam_width;
  if (max_beam_width == 0 || max_beam_width > 128) {
    return Status::InvalidArgument("max beam width must be in 1..128");
  }
  IoQueueOptions io;
  io.engine = impl_->options.io_engine;
  io.queue_depth = std::max<std::uint32_t>(max_beam_width, 8);
  if (impl_->decoupled) {
    STRATA_ASSIGN_OR_RETURN(auto context, search::DecoupledSearchContext::Create(
                                              impl_->data, *impl_->decoupled, io, max_beam_width));
    return std::unique_ptr<Searcher>(
        new ContextSearcher<search::DecoupledSearchContext>(impl_, std::move(context)));
  }
  STRATA_ASSIGN_OR_RETURN(auto context,
                          search::GraphSearchContext::Create(impl_->data, io, max_beam_width));
  return std::unique_ptr<Searcher>(
      new ContextSearcher<search::GraphSearchContext>(impl_, std::move(context)));
}

}  // namespace strata
