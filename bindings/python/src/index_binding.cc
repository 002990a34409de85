// strata.Index: opening and searching a static SSD index (graph or IVF) through
// the generic strata::Index / Searcher interface (include/strata/index.h).
//
// Searchers (each owns an I/O queue and buffers) are kept in a pool and reused
// across calls: setting one up per call would cost more than a query. A batch
// takes one searcher per thread and hands queries out one at a time, as
// strata::SearchBatch does (src/index/search_batch.cc), but reads the queries
// from the caller's array and writes the results straight into the returned
// arrays, so nothing is copied on the way. Results do not depend on the
// thread count.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "keywords.h"
#include "strata/index.h"

namespace strata::python {
namespace {

// A searcher and the widths it was created for (NewSearcher's max_params).
struct PooledSearcher {
  std::uint32_t beam_width = 0;
  std::uint32_t inflight = 0;
  std::unique_ptr<Searcher> searcher;
};

// RaBitQ-SSD's Q as strata::SearchBatch applies it: 16 reads in flight per IVF
// query up to 16 threads, 8 beyond (more threads already keep the device busy).
SearchParams ParamsForThreads(SearchParams p, unsigned threads) {
  if (p.inflight == 0 && threads > 16) p.inflight = 8;
  return p;
}

class PyIndex {
 public:
  PyIndex(std::string path, std::unique_ptr<Index> index)
      : path_(std::move(path)), dim_(index->dim()), index_(std::move(index)) {}

  static std::unique_ptr<PyIndex> Open(py::object path_obj, const py::kwargs& kwargs) {
    std::string path = ToPath(path_obj);
    OpenOptions options;
    ApplyOpenKeywords(kwargs, &options);
    std::unique_ptr<Index> index;
    Status status;
    {
      py::gil_scoped_release nogil;
      Result<std::unique_ptr<Index>> r = Index::Open(path, options);
      if (r.ok()) {
        index = std::move(*r);
      } else {
        status = r.status();
      }
    }
    RaiseIfError(status);
    return std::make_unique<PyIndex>(std::move(path), std::move(index));
  }

  py::tuple Search(py::object queries, std::int64_t k, const py::kwargs& kwargs) {
    const SearchKeywords kw = ParseSearchKeywords(kwargs, k);
    const FloatRows q = ToFloatRows(queries, dim_, "queries", true);
    SearchOutput out = MakeSearchOutput(q.rows, kw.params.k);
    if (q.rows == 0) return out.ToTuple();
    const std::span<const float> values = q.values();
    VectorId* ids = out.ids_data();
    float* distances = out.distances_data();
    Run([&](const Index& index) { return SearchRows(index, values, q.rows, kw, ids, distances); });
    return out.ToTuple();
  }

  void Close() {
    py::gil_scoped_release nogil;
    std::unique_lock<std::shared_mutex> lock(mu_);
    // Searchers before their index: a searcher must not outlive it.
    {
      std::lock_guard<std::mutex> pool_lock(pool_mu_);
      pool_.clear();
    }
    index_.reset();
  }

  // What the properties report; ValueError once closed.
  struct Facts {
    std::string type;
    std::uint32_t dim = 0;
    std::string metric, element_type, description;
    std::uint64_t num_vectors = 0, cached_nodes = 0, memory_bytes = 0, disk_bytes = 0;
  };
  Facts Info() {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (!index_) RaiseValueError("index " + path_ + " is closed");
    Facts f;
    f.type = std::string(index_->type());
    f.dim = index_->dim();
    f.metric = std::string(MetricName(index_->metric()));
    f.element_type = std::string(ElementTypeName(index_->element_type()));
    f.description = index_->Describe();
    f.num_vectors = index_->num_vectors();
    f.cached_nodes = index_->cached_nodes();
    f.memory_bytes = index_->memory_bytes();
    f.disk_bytes = index_->disk_bytes();
    return f;
  }

  bool closed() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return index_ == nullptr;
  }
  const std::string& path() const { return path_; }

 private:
  template <typename Fn>
  void Run(Fn&& fn) {
    Status status;
    bool open = true;
    {
      py::gil_scoped_release nogil;
      std::shared_lock<std::shared_mutex> lock(mu_);
      if (index_) {
        status = fn(*index_);
      } else {
        open = false;
      }
    }
    if (!open) RaiseValueError("index " + path_ + " is closed");
    RaiseIfError(status);
  }

  // A pooled searcher able to run `p`, or a new one. Called without the GIL.
  Result<PooledSearcher> Take(const Index& index, const SearchParams& p) {
    const std::uint32_t beam = std::max<std::uint32_t>(p.beam_width, 4);
    const std::uint32_t inflight = p.inflight == 0 ? 16 : p.inflight;
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      for (auto it = pool_.begin(); it != pool_.end(); ++it) {
        if (it->beam_width >= beam && it->inflight >= inflight) {
          PooledSearcher s = std::move(*it);
          pool_.erase(it);
          return Result<PooledSearcher>(std::move(s));
        }
      }
    }
    SearchParams max_params = p;
    max_params.beam_width = beam;
    max_params.inflight = inflight;
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Searcher> searcher, index.NewSearcher(max_params));
    return PooledSearcher{beam, inflight, std::move(searcher)};
  }

  void Give(PooledSearcher s) {
    std::lock_guard<std::mutex> lock(pool_mu_);
    pool_.push_back(std::move(s));
  }

  // Searches `rows` queries into ids / distances (rows * k each). Without the GIL.
  Status SearchRows(const Index& index, std::span<const float> values, std::size_t rows,
                    const SearchKeywords& kw, VectorId* ids, float* distances) {
    const std::uint32_t k = kw.params.k;
    const std::uint32_t dim = index.dim();
    unsigned threads =
        kw.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : kw.threads;
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, rows));
    const SearchParams params = ParamsForThreads(kw.params, threads);
    std::vector<PooledSearcher> searchers;
    for (unsigned t = 0; t < threads; ++t) {
      STRATA_ASSIGN_OR_RETURN(PooledSearcher s, Take(index, params));
      searchers.push_back(std::move(s));
    }
    std::vector<Status> errors(threads);
    std::atomic<std::size_t> next{0};
    auto work = [&](unsigned t) {
      QueryStats stats;  // not reported, but a searcher may not take null
      for (std::size_t q = next++; q < rows; q = next++) {
        Status s = searchers[t].searcher->Search(values.subspan(q * dim, dim), params,
                                                 std::span<VectorId>(ids + q * k, k),
                                                 std::span<float>(distances + q * k, k), &stats);
        if (!s.ok()) {
          errors[t] = s;
          return;
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (std::thread& th : pool) th.join();
    for (PooledSearcher& s : searchers) Give(std::move(s));
    for (const Status& s : errors) STRATA_RETURN_IF_ERROR(s);
    return Status::OK();
  }

  const std::string path_;
  const std::uint32_t dim_;
  mutable std::shared_mutex mu_;
  std::unique_ptr<Index> index_;  // GUARDED_BY(mu_); null once closed
  std::mutex pool_mu_;
  // GUARDED_BY(pool_mu_). Declared after index_, so destroyed before it.
  std::vector<PooledSearcher> pool_;
};

constexpr const char* kIndexDoc = R"doc(
A static SSD-resident index (graph or IVF) opened for search: strata::Index.

Index.open(path, **options) opens the index directory `path` (built by
strata.build_index or `strata build`). Options, under the CLI's names:
cache_nodes, cache_mib (graph node cache), cache_policy ("bfs" or
"frequency"), cache_warmup, io_engine ("auto", "uring", "aio", "pread"),
resident_codes, verify_checksums. An unknown keyword is a ValueError naming
it. Any number of Python threads may search one Index at once (the GIL is
released); close() waits for searches in flight. FileNotFoundError when the
directory holds no index, CorruptionError for damaged files.
)doc";

}  // namespace

void RegisterIndex(py::module_& m) {
  py::class_<PyIndex>(m, "Index", kIndexDoc)
      .def_static("open", &PyIndex::Open, py::arg("path"),
                  "Opens the index in directory `path`; see the class docstring for options.")
      .def("search", &PyIndex::Search, py::arg("queries"), py::arg("k") = 10,
           R"doc(The k nearest neighbours of each query.

queries: (nq, dim) array, or one query of shape (dim,) (results of shape (1, k));
C-contiguous float32 is read in place, anything else converted once.
Returns (ids, distances): uint64 and float32 arrays of shape (nq, k), nearest
first (row ids of the data the index was built from), strata.NO_ID and +inf
past the last hit. Distances are squared L2, -<q, x> for "ip", 1 - cos for
"cosine". Keyword parameters, under the `strata search` CLI's names: L
(list size, default max(50, k)), beamwidth, max_expansions, profile,
memgraph, memgraph_L, page_search, dynamic_width, min_beamwidth, pipelined
(graph); nprobe, pipeline, inflight, drain_alpha, fill_first (IVF); threads
(threads searching the batch, 0 = all cores, the default). An unknown keyword
is a ValueError naming it.)doc")
      .def("close", &PyIndex::Close,
           "Waits for searches in flight and releases the index. Idempotent.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__",
           [](PyIndex& i, const py::args&) {
             i.Close();
             return false;
           })
      .def(
          "__len__", [](PyIndex& i) { return i.Info().num_vectors; }, "Number of vectors.")
      .def_property_readonly(
          "type", [](PyIndex& i) { return i.Info().type; }, "\"graph\" or \"ivf\".")
      .def_property_readonly(
          "dim", [](PyIndex& i) { return i.Info().dim; }, "Vector dimension.")
      .def_property_readonly(
          "metric", [](PyIndex& i) { return i.Info().metric; }, "\"l2\", \"ip\" or \"cosine\".")
      .def_property_readonly(
          "element_type", [](PyIndex& i) { return i.Info().element_type; },
          "Element type of the stored vectors.")
      .def_property_readonly(
          "memory_bytes", [](PyIndex& i) { return i.Info().memory_bytes; },
          "RAM held for search, in bytes.")
      .def_property_readonly(
          "disk_bytes", [](PyIndex& i) { return i.Info().disk_bytes; },
          "Bytes of the index's files.")
      .def_property_readonly(
          "cached_nodes", [](PyIndex& i) { return i.Info().cached_nodes; },
          "Graph records served from the RAM node cache.")
      .def_property_readonly("path", &PyIndex::path, "The index directory.")
      .def_property_readonly("closed", &PyIndex::closed, "True after close().")
      .def(
          "describe", [](PyIndex& i) { return i.Info().description; },
          "One line such as \"graph: 1000 x 128 float32 l2, R=64, ...\".")
      .def("__repr__", [](PyIndex& i) {
        if (i.closed()) return "<strata.Index '" + i.path() + "' (closed)>";
        return "<strata.Index '" + i.path() + "' " + i.Info().description + ">";
      });
}

}  // namespace strata::python
