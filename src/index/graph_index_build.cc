// BuildGraphIndex: base file -> PQ codes + Vamana graph -> node file, PQ file,
// manifest (written last, so a directory only looks like an index once every
// file of it is complete and durable).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>

#include "base/stats.h"
#include "base/timer.h"
#include "format/blob_file.h"
#include "format/graph_node_file.h"
#include "format/manifest.h"
#include "graph/vamana_builder.h"
#include "index/index_files.h"
#include "kernels/distance.h"
#include "quant/pq/product_quantizer.h"
#include "strata/graph_index.h"

namespace strata {
namespace {

Status MakeDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::FromErrno("mkdir " + dir, errno);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(dir + " exists and is not a directory");
  }
  return Status::OK();
}

// Converts float row `row` back to the stored element type. Integer and half
// inputs were widened exactly on load, so this reproduces the input bytes.
void StoreVector(ElementType type, const float* row, std::size_t dim, std::byte* out) {
  switch (type) {
    case ElementType::kFloat32:
      std::memcpy(out, row, dim * sizeof(float));
      break;
    case ElementType::kFloat16:
      kernels::FloatToHalfN(row, reinterpret_cast<std::uint16_t*>(out), dim);
      break;
    case ElementType::kBFloat16:
      kernels::FloatToBFloat16N(row, reinterpret_cast<std::uint16_t*>(out), dim);
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < dim; ++i) {
        reinterpret_cast<std::uint8_t*>(out)[i] = static_cast<std::uint8_t>(std::lrint(row[i]));
      }
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < dim; ++i) {
        reinterpret_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(std::lrint(row[i]));
      }
      break;
  }
}

bool IsFloatType(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16;
}

}  // namespace

Status GraphBuildOptions::Validate() const {
  if (R < 4 || R > 1024) return Status::InvalidArgument("R must be in 4..1024");
  if (L < R / 2 || L > 10000) return Status::InvalidArgument("L must be in R/2..10000");
  if (!(alpha >= 1.0f && alpha <= 4.0f)) return Status::InvalidArgument("alpha must be in [1, 4]");
  if (pq_bytes > 512) return Status::InvalidArgument("pq_bytes must be at most 512");
  return Status::OK();
}

Result<GraphBuildReport> BuildGraphIndex(const std::string& base_path, const std::string& index_dir,
                                         const GraphBuildOptions& options,
                                         const BuildProgress& progress) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  const Timer total;
  auto report_progress = [&](const char* phase, double f) {
    if (progress) progress(phase, f);
  };
  GraphBuildReport report;

  // ---- load (as float32; cosine rows normalised) ----
  Timer phase;
  report_progress("load", 0.0);
  STRATA_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(base_path));
  const ElementType type = reader->element_type();
  const std::uint32_t dim = reader->dim();
  const std::uint64_t n = reader->rows();
  if (n >= 0xFFFFFFFFull) {
    return Status::NotSupported("graph index: more than 2^32 - 2 vectors in one shard");
  }
  STRATA_ASSIGN_OR_RETURN(VectorMatrix rows, reader->ReadAllAsFloat());
  std::span<float> values = rows.values<float>();
  // Graph and PQ work on unit vectors under cosine (so that cosine = IP);
  // integer records keep their original values (search uses the exact cosine).
  std::vector<float> normalised;
  std::span<const float> graph_rows = values;
  if (options.metric == Metric::kCosine) {
    float* target = values.data();
    if (!IsFloatType(type)) {
      normalised.assign(values.begin(), values.end());
      target = normalised.data();
      graph_rows = normalised;
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      if (!kernels::NormalizeInPlace(target + i * dim, dim)) {
        return Status::InvalidArgument(base_path + ": row " + std::to_string(i) +
                                       " is a zero vector, which has no cosine distance");
      }
    }
  }
  report.seconds_load = phase.ElapsedSeconds();
  report_progress("load", 1.0);

  // ---- PQ ----
  phase.Reset();
  report_progress("pq", 0.0);
  quant::PqOptions pq_opt;
  // Default code size: DiskANN's 32 bytes where dim allows, dim / 4 up to 96
  // bytes for high dimensions (measured: 12-byte codes at 48 dims lose a third
  // of recall@10 on normalised data; 32 bytes at 128 dims match DiskANN).
  pq_opt.m = options.pq_bytes ? options.pq_bytes
                              : std::max<std::uint32_t>(std::min<std::uint32_t>(dim, 32),
                                                        std::min<std::uint32_t>(dim / 4, 96));
  pq_opt.m = std::min<std::size_t>(pq_opt.m, dim);
  // Centring helps L2; for inner products the mean shifts every score equally
  // only under L2, so IP and cosine train uncentred (pitfall 1 of the notes).
  pq_opt.center = options.metric == Metric::kL2;
  pq_opt.seed = options.seed;
  pq_opt.threads = options.threads;
  STRATA_ASSIGN_OR_RETURN(quant::ProductQuantizer pq,
                          quant::ProductQuantizer::Train(graph_rows.data(), n, dim, pq_opt));
  std::vector<std::uint8_t> codes(n * pq.code_size());
  STRATA_RETURN_IF_ERROR(pq.Encode(graph_rows.data(), n, codes.data(), options.threads));
  report.pq_bytes = static_cast<std::uint32_t>(pq.code_size());
  report.seconds_pq = phase.ElapsedSeconds();
  report_progress("pq", 1.0);

  // ---- graph ----
  phase.Reset();
  graph::VamanaBuildOptions gopt;
  gopt.metric = options.metric;
  gopt.max_degree = options.R;
  gopt.search_list_size = options.L;
  gopt.alpha = options.alpha;
  gopt.num_threads = options.threads;
  gopt.seed = options.seed;
  STRATA_ASSIGN_OR_RETURN(graph::VamanaGraph g,
                          graph::BuildVamana(graph_rows, dim, gopt, [&](double f) {
                            report_progress("graph", f);
                          }));
  const graph::GraphStats gstats = g.Stats();
  report.average_degree = gstats.avg_degree;
  report.max_degree = gstats.max_degree;
  report.seconds_graph = phase.ElapsedSeconds();

  // ---- write ----
  phase.Reset();
  report_progress("write", 0.0);
  STRATA_RETURN_IF_ERROR(MakeDirectory(index_dir));
  // Drop a previous manifest first: until the new one is written the
  // directory must not claim to be a (mixed old/new) index.
  std::remove((index_dir + "/" + format::kManifestName).c_str());
  STRATA_ASSIGN_OR_RETURN(format::GraphLayout layout,
                          format::GraphLayout::Make(dim, type, options.R, n));
  const std::string nodes_path = index_dir + "/" + kGraphNodesFile;
  STRATA_ASSIGN_OR_RETURN(
      std::uint64_t nodes_bytes,
      format::WriteGraphNodeFile(
          nodes_path, layout,
          [&](std::uint64_t i, std::span<std::byte> vec, std::vector<VectorId>* nbrs) {
            // Float records are stored normalised under cosine; integer ones as given.
            StoreVector(type, values.data() + i * dim, dim, vec.data());
            for (graph::NodeId nb : g.Neighbors(static_cast<graph::NodeId>(i))) nbrs->push_back(nb);
            if ((i & 0xFFFF) == 0) report_progress("write", 0.9 * static_cast<double>(i) / n);
            return Status::OK();
          }));
  const std::vector<std::uint8_t> codebook = pq.Serialize();
  STRATA_ASSIGN_OR_RETURN(
      std::uint64_t pq_file_bytes,
      format::WriteBlobFile(index_dir + "/" + kPqFile, format::BlobKind::kPqCodes, 1,
                            {std::span<const std::uint8_t>(codebook),
                             std::span<const std::uint8_t>(codes)}));
  report.index_bytes = nodes_bytes + pq_file_bytes;

  format::Manifest m;
  m.index_type = "graph";
  m.metric = options.metric;
  m.element_type = type;
  m.dim = dim;
  m.num_vectors = n;
  m.parameters = {{"R", options.R},           {"L", options.L},
                  {"alpha", options.alpha},   {"pq_bytes", report.pq_bytes},
                  {"seed", options.seed},     {"entry_point", g.entry_point()},
                  {"layout", "packed"}};
  for (const char* name : {kGraphNodesFile, kPqFile}) {
    format::ManifestFile f{name, 0, 0};
    STRATA_RETURN_IF_ERROR(format::ChecksumFile(index_dir + "/" + name, &f.bytes, &f.checksum));
    m.files.push_back(f);
  }
  report.num_vectors = n;
  report.dim = dim;
  report.seconds_write = phase.ElapsedSeconds();
  report.seconds_total = total.ElapsedSeconds();
  report.peak_rss_bytes = PeakRssBytes();
  m.build = {{"seconds_total", report.seconds_total}, {"seconds_pq", report.seconds_pq},
             {"seconds_graph", report.seconds_graph}, {"seconds_write", report.seconds_write},
             {"average_degree", report.average_degree}, {"max_degree", report.max_degree},
             {"unreachable", gstats.unreachable},   {"peak_rss_bytes", report.peak_rss_bytes},
             {"threads", options.threads}};
  STRATA_RETURN_IF_ERROR(format::WriteManifest(index_dir, m));
  report_progress("write", 1.0);
  return report;
}

}  // namespace strata
