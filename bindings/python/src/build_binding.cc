// strata.build_index: builds a graph or IVF index (BuildGraphIndex /
// BuildIvfIndex, include/strata/graph_index.h and ivf_index.h) from a vector
// file or from an array in memory, with the parameters of `strata build`.
//
// The builders read their input from a file (they sample, stream and reread
// it in row ranges), so an array is first written to a temporary file beside
// the index directory and removed once the build is done.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "keywords.h"
#include "strata/dataset.h"
#include "strata/graph_index.h"
#include "strata/ivf_index.h"
#include "strata/progress.h"

namespace strata::python {
namespace {

namespace fs = std::filesystem;

// One bar per build phase, as `strata build` draws them: on stderr, and only
// when it is a terminal (strata::ProgressBar decides).
class PhaseProgress {
 public:
  void operator()(const char* phase, double fraction) {
    std::lock_guard<std::mutex> lock(mu_);
    if (phase_ != phase) {
      if (bar_) bar_->Finish();
      phase_ = phase;
      bar_ = std::make_unique<ProgressBar>("build: " + phase_, kSteps, 0.5);
      last_ = 0;
    }
    if (fraction > last_) {
      bar_->Add(static_cast<std::uint64_t>((fraction - last_) * kSteps));
      last_ = static_cast<double>(static_cast<std::uint64_t>(fraction * kSteps)) / kSteps;
    }
  }
  void Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (bar_) bar_->Finish();
  }

 private:
  static constexpr std::uint64_t kSteps = 1000;
  std::mutex mu_;
  std::unique_ptr<ProgressBar> bar_;
  std::string phase_;
  double last_ = 0;
};

// Rows of an array in memory, as the build's input file will hold them:
// uint8 and int8 arrays keep their type (.u8bin / .i8bin, as `strata build`
// takes them), anything else becomes float32 (.fbin).
struct ArrayInput {
  py::array array;  // keeps `data` alive
  const void* data = nullptr;
  ElementType type = ElementType::kFloat32;
  std::uint64_t rows = 0;
  std::uint32_t dim = 0;
};

template <typename T>
bool TakeIntegerArray(py::handle obj, ElementType type, ArrayInput* in) {
  if (!py::isinstance<py::array>(obj) || !py::isinstance<py::array_t<T>>(obj)) return false;
  auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(obj);
  if (!a || a.ndim() != 2) return false;  // the float path reports the shape error
  in->type = type;
  in->rows = static_cast<std::uint64_t>(a.shape(0));
  in->dim = static_cast<std::uint32_t>(a.shape(1));
  in->data = a.data();
  in->array = std::move(a);
  return true;
}

ArrayInput ToArrayInput(py::handle obj) {
  ArrayInput in;
  if (TakeIntegerArray<std::uint8_t>(obj, ElementType::kUint8, &in)) return in;
  if (TakeIntegerArray<std::int8_t>(obj, ElementType::kInt8, &in)) return in;
  FloatRows rows = ToFloatRows(obj, 0, "data", false);
  in.rows = rows.rows;
  in.dim = rows.dim;
  in.data = rows.values().data();
  in.array = std::move(rows.array);
  return in;
}

// The temporary input file of one build; removed when this goes away.
class TempInput {
 public:
  TempInput() = default;
  TempInput(const TempInput&) = delete;
  TempInput& operator=(const TempInput&) = delete;
  ~TempInput() {
    std::error_code ec;
    if (!path_.empty()) fs::remove(path_, ec);
  }

  // Writes `in` to "<index_dir>.input-<pid>-<n>.<ext>". Without the GIL.
  Status Write(const std::string& index_dir, const ArrayInput& in) {
    static std::atomic<unsigned> counter{0};
    fs::path dir = fs::path(index_dir).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();
    std::error_code ec;
    if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
    const char* ext = in.type == ElementType::kUint8  ? ".u8bin"
                      : in.type == ElementType::kInt8 ? ".i8bin"
                                                      : ".fbin";
    const std::string path = dir.string() + ".input-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter++) + ext;
    DatasetWriteOptions options;
    options.sync = false;  // scratch: read back at once, removed after the build
    STRATA_ASSIGN_OR_RETURN(auto writer, DatasetWriter::Create(path, in.type, in.dim, options));
    STRATA_RETURN_IF_ERROR(writer->AppendRaw(in.data, in.rows));
    STRATA_RETURN_IF_ERROR(writer->Finish());
    path_ = path;
    return Status::OK();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

py::dict GraphReport(const GraphBuildReport& r) {
  py::dict d;
  d["type"] = "graph";
  d["num_vectors"] = r.num_vectors;
  d["dim"] = r.dim;
  d["pq_bytes"] = r.pq_bytes;
  d["seconds_total"] = r.seconds_total;
  d["seconds_load"] = r.seconds_load;
  d["seconds_pq"] = r.seconds_pq;
  d["seconds_graph"] = r.seconds_graph;
  d["seconds_write"] = r.seconds_write;
  d["seconds_mem_graph"] = r.seconds_mem_graph;
  d["seconds_shuffle"] = r.seconds_shuffle;
  d["average_degree"] = r.average_degree;
  d["max_degree"] = r.max_degree;
  d["mem_graph_nodes"] = r.mem_graph_nodes;
  d["overlap_before"] = r.overlap_before;
  d["overlap_after"] = r.overlap_after;
  d["records_per_page"] = r.records_per_page;
  d["empty_slots"] = r.empty_slots;
  d["index_bytes"] = r.index_bytes;
  d["peak_rss_bytes"] = r.peak_rss_bytes;
  return d;
}

py::dict IvfReport(const IvfBuildReport& r) {
  py::dict d;
  d["type"] = "ivf";
  d["num_vectors"] = r.num_vectors;
  d["dim"] = r.dim;
  d["clusters"] = r.clusters;
  d["prefix_bits"] = r.prefix_bits;
  d["record_bytes"] = r.record_bytes;
  d["records_per_page"] = r.records_per_page;
  d["ram_bytes_per_vector"] = r.ram_bytes_per_vector;
  d["seconds_total"] = r.seconds_total;
  d["seconds_load"] = r.seconds_load;
  d["seconds_cluster"] = r.seconds_cluster;
  d["seconds_encode"] = r.seconds_encode;
  d["seconds_write"] = r.seconds_write;
  d["index_bytes"] = r.index_bytes;
  d["peak_rss_bytes"] = r.peak_rss_bytes;
  return d;
}

py::dict BuildIndex(py::object data, py::object path_obj, const std::string& type,
                    const std::string& metric_name, const py::kwargs& kwargs) {
  const std::string path = ToPath(path_obj);
  const Metric metric = ValueOrRaise(ParseMetric(metric_name));
  GraphBuildOptions graph;
  IvfBuildOptions ivf;
  if (type == "graph") {
    // `strata build` starts from the "default" profile too; a `profile`
    // keyword replaces it.
    RaiseIfError(ApplyBuildProfile("default", &graph));
    ApplyGraphBuildKeywords(kwargs, /*for_collection=*/false, &graph);
    graph.metric = metric;
    RaiseIfError(graph.Validate());
  } else if (type == "ivf") {
    ApplyIvfBuildKeywords(kwargs, /*for_collection=*/false, &ivf);
    ivf.metric = metric;
    RaiseIfError(ivf.Validate());
  } else {
    RaiseValueError("index type '" + type + "' (available: graph, ivf)");
  }
  const bool from_file =
      PyUnicode_Check(data.ptr()) || PyObject_HasAttrString(data.ptr(), "__fspath__");
  std::string input = from_file ? ToPath(data) : std::string();
  ArrayInput array;
  if (!from_file) array = ToArrayInput(data);

  Status status;
  GraphBuildReport graph_report;
  IvfBuildReport ivf_report;
  {
    py::gil_scoped_release nogil;
    TempInput temp;
    if (!from_file) {
      status = temp.Write(path, array);
      input = temp.path();
    }
    if (status.ok()) {
      PhaseProgress bar;
      auto progress = [&bar](const char* phase, double fraction) { bar(phase, fraction); };
      if (type == "graph") {
        Result<GraphBuildReport> r = BuildGraphIndex(input, path, graph, progress);
        if (r.ok())
          graph_report = *r;
        else
          status = r.status();
      } else {
        Result<IvfBuildReport> r = BuildIvfIndex(input, path, ivf, progress);
        if (r.ok())
          ivf_report = *r;
        else
          status = r.status();
      }
      bar.Finish();
    }
  }
  RaiseIfError(status);
  py::dict report = type == "graph" ? GraphReport(graph_report) : IvfReport(ivf_report);
  report["path"] = path;
  report["metric"] = std::string(MetricName(metric));
  return report;
}

}  // namespace

void RegisterBuild(py::module_& m) {
  m.def("build_index", &BuildIndex, py::arg("data"), py::arg("path"), py::arg("type") = "graph",
        py::arg("metric") = "l2",
        R"doc(Builds an SSD-resident index in directory `path`; returns the build report (dict).

data: a 2-D array (n, dim), or the path of a vector file in a format `strata
  build` reads (.fbin .u8bin .i8bin .fvecs .bvecs .npy). uint8 and int8 arrays
  are indexed as such, anything else as float32. An array is written to a
  temporary file beside `path` first (the builders read their input from a
  file), so the build needs that much free disk space.
type: "graph" (DiskANN/Vamana) or "ivf" (IVF with Split-RaBitQ codes).
metric: "l2", "ip" or "cosine".
Parameters, under `strata build`'s names:
  graph: R, L, alpha, passes, pq_bytes, pq_train_rows, profile ("default" or
    "baseline"), opq, memgraph_ratio, memgraph_R, memgraph_L, shuffle,
    shuffle_rounds, shuffle_swaps, all_in_storage, reuse_graph, threads, seed;
  ivf: clusters, prefix_bits, bits, rerank ("excode" or "raw"), coarse ("irq"
    or "flat"), page_order ("locality" or "centroid"), kmeans_iterations,
    filter_codes (2-bit codes in RAM for exact filtered scans), threads, seed.
A parameter of the other type, or an unknown one, is a ValueError naming it;
so are NaN or Inf rows and zero vectors under cosine. An existing index in
`path` is replaced only once the new one is complete. The GIL is released
during the build; a progress bar is drawn on stderr when it is a terminal.
Open the result with strata.Index.open(path).)doc");
}

}  // namespace strata::python
