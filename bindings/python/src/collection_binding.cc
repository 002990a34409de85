// strata.Collection: the Python face of strata::Collection
// (include/strata/collection.h), which does the work; this file converts
// arguments and results, keeps the default-id counter, and makes close()
// safe against calls in flight on other Python threads.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "keywords.h"
#include "strata/collection.h"
#include "strata/filter.h"

namespace strata::python {
namespace {

// Payloads as the library stores them (byte strings): bytes-like objects as
// they are, str as its UTF-8 text, dict and list as compact JSON text
// (json.dumps), None as no payload. One entry per vector.
std::vector<std::string> ToPayloads(py::handle payloads, std::size_t n) {
  std::vector<std::string> out;
  if (payloads.is_none()) return out;
  PyObject* p = payloads.ptr();
  if (PyUnicode_Check(p) || PyBytes_Check(p) || PyByteArray_Check(p) || PyDict_Check(p) ||
      !PySequence_Check(p)) {
    RaiseTypeError(
        "payloads must be a list with one payload per vector (bytes, str, dict, "
        "list or None), not " +
        std::string(Py_TYPE(p)->tp_name));
  }
  const auto seq = py::reinterpret_borrow<py::sequence>(payloads);
  if (seq.size() != n) {
    RaiseValueError("payloads has " + std::to_string(seq.size()) + " entries for " +
                    std::to_string(n) + " vectors");
  }
  py::object dumps;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    py::object item = seq[i];
    PyObject* o = item.ptr();
    if (item.is_none()) {
      out.emplace_back();
    } else if (PyBytes_Check(o)) {
      out.emplace_back(PyBytes_AS_STRING(o), static_cast<std::size_t>(PyBytes_GET_SIZE(o)));
    } else if (PyByteArray_Check(o) || PyMemoryView_Check(o)) {
      const auto b = py::reinterpret_steal<py::object>(PyBytes_FromObject(o));
      if (!b) throw py::error_already_set();
      out.emplace_back(PyBytes_AS_STRING(b.ptr()),
                       static_cast<std::size_t>(PyBytes_GET_SIZE(b.ptr())));
    } else if (PyUnicode_Check(o)) {
      out.push_back(item.cast<std::string>());
    } else if (PyDict_Check(o) || PyList_Check(o)) {
      if (!dumps) dumps = py::module_::import("json").attr("dumps");
      out.push_back(dumps(item, py::arg("separators") = py::make_tuple(",", ":"),
                          py::arg("ensure_ascii") = false)
                        .cast<std::string>());
    } else {
      RaiseTypeError("payload " + std::to_string(i) +
                     " must be bytes, str, dict, list or None, not " + Py_TYPE(o)->tp_name);
    }
  }
  return out;
}

// labels= of add(): per vector a sequence of non-negative ints (or a 2-D
// integer array, a row per vector), stored as the payload field "labels"
// ({"labels": [3, 17]}), the form filters and the filter track use. Without
// payloads the JSON is written here, no dicts built; with payloads each must
// be a dict without a "labels" key, or None.
std::vector<std::string> ToLabelPayloads(py::handle labels, py::handle payloads, std::size_t n) {
  PyObject* l = labels.ptr();
  if (PyUnicode_Check(l) || PyBytes_Check(l) || PyDict_Check(l) || !PySequence_Check(l)) {
    RaiseTypeError("labels must be a list with one sequence of ints per vector, not " +
                   std::string(Py_TYPE(l)->tp_name));
  }
  const auto rows = py::reinterpret_borrow<py::sequence>(labels);
  if (rows.size() != n) {
    RaiseValueError("labels has " + std::to_string(rows.size()) + " entries for " +
                    std::to_string(n) + " vectors");
  }
  std::vector<std::string> out(n);
  std::vector<std::uint64_t> row_labels;
  for (std::size_t i = 0; i < n; ++i) {
    py::object row = rows[i];
    const py::array any = py::array::ensure(row);
    if (!any || (any.size() > 0 && any.dtype().kind() != 'i' && any.dtype().kind() != 'u') ||
        any.ndim() > 1) {
      PyErr_Clear();
      RaiseTypeError("labels[" + std::to_string(i) + "] must be a sequence of ints");
    }
    const IdArray values = ToIds(any, "labels");
    out[i] = "{\"labels\":[";
    const auto v = values.values();
    for (std::size_t j = 0; j < v.size(); ++j) {
      if (j > 0) out[i] += ',';
      out[i] += std::to_string(v[j]);
    }
    out[i] += "]}";
  }
  if (payloads.is_none()) return out;
  const std::vector<std::string> given = ToPayloads(payloads, n);
  const auto seq = py::reinterpret_borrow<py::sequence>(payloads);
  for (std::size_t i = 0; i < n; ++i) {
    py::object item = seq[i];
    if (item.is_none()) continue;
    if (!PyDict_Check(item.ptr())) {
      RaiseTypeError("with labels=, payload " + std::to_string(i) + " must be a dict or None");
    }
    if (item.contains("labels")) {
      RaiseValueError("payload " + std::to_string(i) +
                      " has a 'labels' key and labels= was given too");
    }
    // given[i] is the dict's compact JSON "{...}": splice the labels in.
    const std::string& json = given[i];
    const std::string list = out[i].substr(1, out[i].size() - 2);  // "labels":[...]
    out[i] = json == "{}" ? "{" + list + "}" : json.substr(0, json.size() - 1) + "," + list + "}";
  }
  return out;
}

// A search's payload filter: Qdrant filter JSON as a str, or a dict (sent
// through json.dumps); None: no filter. ValueError naming the bad part.
std::optional<PayloadFilter> ToFilter(py::handle filter) {
  if (filter.is_none()) return std::nullopt;
  std::string text;
  if (PyUnicode_Check(filter.ptr())) {
    text = filter.cast<std::string>();
  } else if (PyDict_Check(filter.ptr())) {
    text = py::module_::import("json").attr("dumps")(filter).cast<std::string>();
  } else {
    RaiseTypeError("filter must be a dict or a JSON str (Qdrant's filter language), not " +
                   std::string(Py_TYPE(filter.ptr())->tp_name));
  }
  return ValueOrRaise(PayloadFilter::Parse(text));
}

class PyCollection {
 public:
  PyCollection(py::object path, py::object dim, py::object metric, py::object index,
               const py::kwargs& kwargs)
      : path_(ToPath(path)) {
    CollectionOptions options;
    ApplyCollectionKeywords(kwargs, &options);
    if (!dim.is_none()) {
      options.dim = ToU32(dim, "dim");
      if (options.dim == 0) RaiseValueError("dim must be at least 1");
    }
    if (!metric.is_none()) options.metric = ValueOrRaise(ParseMetric(ToStr(metric, "metric")));
    if (!index.is_none()) options.index_type = ToStr(index, "index");
    std::unique_ptr<Collection> opened;
    Status status;
    {
      py::gil_scoped_release nogil;
      Result<std::unique_ptr<Collection>> r = Collection::Open(path_, options);
      if (r.ok()) {
        opened = std::move(*r);
      } else {
        status = r.status();
      }
    }
    RaiseIfError(status);
    dim_ = opened->dim();
    metric_ = opened->metric();
    collection_ = std::move(opened);
  }

  py::array Add(py::object vectors, py::object ids, py::object payloads, py::object labels) {
    const FloatRows rows = ToFloatRows(vectors, dim_, "vectors", true);
    const std::size_t n = rows.rows;
    IdArray id_array;
    if (ids.is_none()) {
      id_array.array = U64Array(static_cast<py::ssize_t>(n));
      VectorId first = 0;
      {
        std::lock_guard<std::mutex> lock(id_mu_);
        if (n > kInvalidVectorId - next_id_) {
          RaiseValueError("default ids would reach strata.NO_ID; pass ids explicitly");
        }
        first = next_id_;
        next_id_ += n;
      }
      std::iota(id_array.array.mutable_data(), id_array.array.mutable_data() + n, first);
    } else {
      id_array = ToIds(ids, "ids");
      const std::span<const VectorId> given = id_array.values();
      if (given.size() != n) {
        RaiseValueError("ids has " + std::to_string(given.size()) + " entries for " +
                        std::to_string(n) + " vectors");
      }
      if (n > 0) {
        const VectorId largest = *std::max_element(given.begin(), given.end());
        if (largest == kInvalidVectorId) {
          RaiseValueError("id 2**64 - 1 is strata.NO_ID, the empty-slot marker of searches");
        }
        std::lock_guard<std::mutex> lock(id_mu_);
        next_id_ = std::max(next_id_, largest + 1);
      }
    }
    const std::vector<std::string> payload_strings =
        labels.is_none() ? ToPayloads(payloads, n) : ToLabelPayloads(labels, payloads, n);
    const std::span<const VectorId> id_span = id_array.values();
    const std::span<const float> values = rows.values();
    Run([&](Collection& c) { return c.Upsert(id_span, values, payload_strings); });
    return id_array.array;
  }

  std::uint64_t Delete(py::object ids) {
    const IdArray id_array = ToIds(ids, "ids");
    const std::span<const VectorId> id_span = id_array.values();
    std::uint64_t existed = 0;
    Run([&](Collection& c) {
      Result<std::uint64_t> r = c.Delete(id_span);
      if (!r.ok()) return r.status();
      existed = *r;
      return Status::OK();
    });
    return existed;
  }

  py::tuple Get(py::object ids) {
    const IdArray id_array = ToIds(ids, "ids");
    const std::span<const VectorId> id_span = id_array.values();
    std::vector<StoredRecord> records;
    Run([&](Collection& c) {
      if (id_span.empty()) return Status::OK();
      Result<std::vector<StoredRecord>> r = c.Get(id_span);
      if (!r.ok()) return r.status();
      records = std::move(*r);
      return Status::OK();
    });
    const std::size_t n = records.size();
    py::array_t<float> vectors({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(dim_)});
    float* out = vectors.mutable_data();
    py::list payloads(n);
    for (std::size_t i = 0; i < n; ++i) {
      float* row = out + i * dim_;
      if (records[i].found && records[i].vector.size() == dim_) {
        std::copy(records[i].vector.begin(), records[i].vector.end(), row);
        payloads[i] = py::bytes(records[i].payload);
      } else {
        std::fill_n(row, dim_, std::numeric_limits<float>::quiet_NaN());
        payloads[i] = py::none();
      }
    }
    return py::make_tuple(vectors, payloads);
  }

  bool Contains(py::object id) {
    if (!PyIndex_Check(id.ptr()) || PyBool_Check(id.ptr())) return false;
    py::tuple got = Get(id);
    return !got[1].cast<py::list>()[0].is_none();
  }

  py::tuple Search(py::object queries, std::int64_t k, py::object filter,
                   py::object exact_scan_limit, bool return_stats, const py::kwargs& kwargs) {
    const SearchKeywords kw = ParseSearchKeywords(kwargs, k);
    const FloatRows q = ToFloatRows(queries, dim_, "queries", true);
    const std::optional<PayloadFilter> payload_filter = ToFilter(filter);
    SearchOutput out = MakeSearchOutput(q.rows, kw.params.k);
    if (q.rows == 0) return out.ToTuple();
    CollectionSearchParams params;
    params.index = kw.params;
    if (payload_filter) params.filter = &*payload_filter;
    if (!exact_scan_limit.is_none()) {
      const std::int64_t limit = exact_scan_limit.cast<std::int64_t>();
      if (limit < 0) RaiseValueError("exact_scan_limit must be >= 0");
      params.exact_scan_limit = static_cast<std::uint64_t>(limit);
    }
    const std::span<const float> values = q.values();
    VectorId* ids = out.ids_data();
    float* distances = out.distances_data();
    const std::uint32_t kk = kw.params.k;
    auto write = [&](std::size_t row, const std::vector<SearchHit>& hits) {
      const std::size_t m = std::min<std::size_t>(hits.size(), kk);
      for (std::size_t j = 0; j < m; ++j) {
        ids[row * kk + j] = hits[j].id;
        distances[row * kk + j] = hits[j].distance;
      }
    };
    std::vector<QueryStats> stats;
    Run([&](Collection& c) {
      if (q.rows == 1) {
        stats.resize(1);
        Result<std::vector<SearchHit>> r = c.Search(values, params, &stats[0]);
        if (!r.ok()) return r.status();
        write(0, *r);
        return Status::OK();
      }
      Result<std::vector<std::vector<SearchHit>>> r =
          c.SearchBatch(values, params, kw.threads, &stats);
      if (!r.ok()) return r.status();
      for (std::size_t row = 0; row < r->size(); ++row) write(row, (*r)[row]);
      return Status::OK();
    });
    if (!return_stats) return out.ToTuple();
    return py::make_tuple(out.ToTuple()[0], out.ToTuple()[1], StatsArrays(stats));
  }

  // Per-query counters as numpy arrays, one per QueryStats field a caller
  // benchmarking filters and I/O needs.
  static py::dict StatsArrays(const std::vector<QueryStats>& stats) {
    py::dict d;
    auto column = [&](const char* name, auto get) {
      py::array_t<double> a(static_cast<py::ssize_t>(stats.size()));
      double* p = a.mutable_data();
      for (std::size_t i = 0; i < stats.size(); ++i) p[i] = static_cast<double>(get(stats[i]));
      d[name] = a;
    };
    column("latency_us", [](const QueryStats& s) { return s.latency_us; });
    column("pages_read", [](const QueryStats& s) { return s.pages_read; });
    column("io_wait_us", [](const QueryStats& s) { return s.io_wait_us; });
    column("reads", [](const QueryStats& s) { return s.reads; });
    column("full_distances", [](const QueryStats& s) { return s.full_distances; });
    column("filter_candidates", [](const QueryStats& s) { return s.filter_candidates; });
    column("payload_reads", [](const QueryStats& s) { return s.payload_reads; });
    return d;
  }

  std::uint64_t Len() {
    std::uint64_t n = 0;
    Run([&](Collection& c) {
      n = c.Count();
      return Status::OK();
    });
    return n;
  }

  py::dict Stats() {
    CollectionStats s;
    Run([&](Collection& c) {
      s = c.Stats();
      return Status::OK();
    });
    py::dict d;
    d["dim"] = s.dim;
    d["metric"] = std::string(MetricName(s.metric));
    d["element_type"] = std::string(ElementTypeName(s.element_type));
    d["index_type"] = s.index_type;
    d["graph_label_field"] = s.graph_label_field;
    d["live"] = s.live;
    d["indexed"] = s.indexed;
    d["pending"] = s.pending;
    d["deleted"] = s.deleted;
    d["index_version"] = s.index_version;
    d["merges"] = s.merges;
    d["streaming_merges"] = s.streaming_merges;
    d["update_mode"] = std::string(UpdateModeName(s.update_mode));
    d["in_place_inserts"] = s.in_place_inserts;
    d["in_place_repairs"] = s.in_place_repairs;
    d["in_place_repairs_queued"] = s.in_place_repairs_queued;
    d["in_place_compactions"] = s.in_place_compactions;
    d["in_place_hot_pages_rewritten"] = s.in_place_hot_pages_rewritten;
    d["in_place_insert_bytes_written"] = s.in_place_insert_bytes_written;
    d["in_place_upkeep_bytes_written"] = s.in_place_upkeep_bytes_written;
    d["in_place_insert_lists_changed"] = s.in_place_insert_lists_changed;
    d["in_place_edge_pages"] = s.in_place_edge_pages;
    d["in_place_live_edge_pages"] = s.in_place_live_edge_pages;
    d["merging"] = s.merging;
    d["last_merge_seconds"] = s.last_merge_seconds;
    d["first_build_seconds"] = s.first_build_seconds;
    d["ram_bytes"] = s.ram_bytes;
    d["pending_ram_bytes"] = s.pending_ram_bytes;
    d["cached_nodes"] = s.cached_nodes;
    d["disk_bytes"] = s.disk_bytes;
    d["last_sequence"] = s.last_sequence;
    d["log_syncs"] = s.log_syncs;
    d["index_description"] = s.index_description;
    py::dict fields;
    for (const PayloadFieldSpec& f : s.payload_fields) {
      fields[py::str(f.path)] = std::string(PayloadFieldTypeName(f.type));
    }
    d["payload_index"] = fields;
    d["payload_index_bytes"] = s.payload_index_bytes;
    return d;
  }

  void CreatePayloadIndex(const std::string& field, const std::string& type) {
    PayloadFieldSpec f;
    f.path = field;
    RaiseIfError(CheckPayloadPath(f.path));
    f.type = ValueOrRaise(ParsePayloadFieldType(type));
    Run([&](Collection& c) { return c.CreatePayloadIndex(f); });
  }

  void Flush() {
    Run([](Collection& c) { return c.Flush(); });
  }
  void Merge() {
    Run([](Collection& c) { return c.Merge(); });
  }
  void WaitForMerge() {
    Run([](Collection& c) { return c.WaitForMerge(); });
  }

  void Close(bool stop_merges) {
    Status status;
    {
      py::gil_scoped_release nogil;
      if (stop_merges) {
        // First, under the shared lock: a merge() in flight on another
        // thread holds it until its merge ends, which this makes quick.
        std::shared_lock<std::shared_mutex> lock(mu_);
        if (collection_) collection_->StopMerges();
      }
      // Exclusive: waits for the calls other threads have in flight.
      std::unique_lock<std::shared_mutex> lock(mu_);
      if (collection_) {
        status = collection_->Close();
        collection_.reset();
      }
    }
    RaiseIfError(status);
  }

  bool closed() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return collection_ == nullptr;
  }
  const std::string& path() const { return path_; }
  std::uint32_t dim() const { return dim_; }
  std::string metric() const { return std::string(MetricName(metric_)); }

  std::string Repr() {
    if (closed()) return "<strata.Collection '" + path_ + "' (closed)>";
    return "<strata.Collection '" + path_ + "' dim=" + std::to_string(dim_) +
           " metric=" + metric() + " live=" + std::to_string(Len()) + ">";
  }

 private:
  // Runs fn(collection) -> Status with the GIL released, under the shared
  // lock that Close() takes exclusively, then raises its error. `fn` must
  // not touch Python objects: everything it reads was converted before.
  template <typename Fn>
  void Run(Fn&& fn) {
    Status status;
    bool open = true;
    {
      py::gil_scoped_release nogil;
      std::shared_lock<std::shared_mutex> lock(mu_);
      if (collection_) {
        status = fn(*collection_);
      } else {
        open = false;
      }
    }
    if (!open) RaiseValueError("collection " + path_ + " is closed");
    RaiseIfError(status);
  }

  const std::string path_;
  std::uint32_t dim_ = 0;
  Metric metric_ = Metric::kL2;
  mutable std::shared_mutex mu_;
  std::unique_ptr<Collection> collection_;  // GUARDED_BY(mu_); null once closed
  std::mutex id_mu_;
  VectorId next_id_ = 0;  // GUARDED_BY(id_mu_): one past the largest id this object added
};

constexpr const char* kCollectionDoc = R"doc(
A crash-safe store of vectors under 64-bit ids, with payloads, that takes
upserts and deletes while it serves searches (strata::Collection).

Collection(path, dim=None, metric=None, index=None, **options) opens the
collection in directory `path`, creating it when missing (dim required then).
Below `flat_threshold` (1,024) live vectors a search is an exact scan; the
add() that crosses it trains and builds the first SSD index before it
returns; later writes go to a pending list that background merges fold into
new index versions.

dim, metric ("l2", "ip" or "cosine"; default "l2") and index ("graph" or
"ivf"; default "graph") are stored at creation; when opening an existing
collection, leave them out or give the stored values (another value is a
ValueError). Options, under the C++ CollectionOptions field names:
  element_type ("float32", "float16", "bfloat16", "uint8", "int8"; stored),
  graph / ivf (dicts of build parameters under strata.build_index's names;
  stored), open (dict of strata.Index.open's options), durability ("async":
  survives kill -9, default; "sync": survives power loss), sync_interval_ms,
  create_if_missing, error_if_exists, update_mode ("buffered" or "in_place":
  writes applied to the SSD graph itself; stored), in_place_threads
  (applier threads; default 4),
  in_place_L (position seeking's list size), in_place_back_edges
  (back-edges an insert adds, to its nearest out-neighbours; 0: every
  one), in_place_compaction (keep
  edge pages full; default True), in_place_compaction_pause_ms (how long
  writes must pause before compaction packs the pages fully; default 1000),
  in_place_rebuild_dead_ratio, flat_threshold,
  train_sample_bytes, merge_pending_count, merge_pending_ratio,
  merge_pending_bytes, background_merge, streaming_merge, merge_threads,
  memory_budget_bytes, max_payload_bytes, max_batch, payload_index (a dict
  of payload field path -> "keyword", "integer", "float" or "bool": fields
  indexed in RAM for filtering; stored, and added to on reopen),
  graph_label_field (an "integer" or "keyword" field of payload_index, e.g.
  the "labels" that add(labels=) fills: the graph is built label-aware over it and
  searches whose filter must-matches its values walk only passing points;
  unfiltered searches lose recall; stored).
An unknown keyword is a ValueError naming it.

Distances are squared L2, -<q, x> for "ip", 1 - cos for "cosine"; smaller
is nearer. Any number of Python threads may use one Collection at once
(each call releases the GIL); close() waits for calls in flight. Errors:
ValueError for bad arguments, OSError for I/O failures, CorruptionError for
damaged files, RuntimeError otherwise (e.g. the directory is open in another
process).
)doc";

}  // namespace

void RegisterCollection(py::module_& m) {
  py::class_<PyCollection>(m, "Collection", kCollectionDoc)
      .def(py::init([](py::object path, py::object dim, py::object metric, py::object index,
                       const py::kwargs& kwargs) {
             return std::make_unique<PyCollection>(path, dim, metric, index, kwargs);
           }),
           py::arg("path"), py::arg("dim") = py::none(), py::arg("metric") = py::none(),
           py::arg("index") = py::none())
      .def("add", &PyCollection::Add, py::arg("vectors"), py::arg("ids") = py::none(),
           py::arg("payloads") = py::none(), py::arg("labels") = py::none(),
           R"doc(Inserts or replaces vectors (upsert); returns their ids (uint64 array).

vectors: (n, dim) array, or one vector of shape (dim,); C-contiguous float32
  is read in place, other dtypes and layouts are converted once.
ids: n non-negative ints; default: a running counter that starts after the
  largest id this object has added (0 for a new object: on a collection
  reopened with data in it, pass ids explicitly or you overwrite ids 0, 1, ...).
payloads: None, or a list of n entries, each bytes (stored as given), str
  (stored as its UTF-8 text), dict or list (stored as compact JSON text,
  json.dumps), or None (no payload; so is an empty bytes or str).
labels: None, or a list of n sequences of non-negative ints (or a 2-D int
  array): stored as the payload field "labels" ({"labels": [3, 17]}) without
  building dicts; filter on it with {"key": "labels", "match": {"value": 3}}.
  With payloads too, each payload must be a dict without "labels", or None.
The batch is atomic (all or nothing, also across a crash) and visible to every
search that starts after add() returns. At most max_batch vectors per call.
ValueError for a wrong dimension, NaN or Inf, a zero vector under cosine,
duplicate ids in the batch, an oversized payload, or id strata.NO_ID.)doc")
      .def("delete", &PyCollection::Delete, py::arg("ids"),
           "Deletes the given ids (an int or a sequence); returns how many existed.\n"
           "Atomic. ValueError for an empty batch or duplicate ids.")
      .def("get", &PyCollection::Get, py::arg("ids"),
           R"doc(The stored vectors and payloads of ids (an int or a sequence).

Returns (vectors, payloads): a float32 array of shape (n, dim) (the stored
element type widened; NaN rows for ids not present) and a list of n payloads,
each bytes (b"" when the vector has none) or None for an id not present.)doc")
      .def("__contains__", &PyCollection::Contains, py::arg("id"), "True if `id` is stored.")
      .def("search", &PyCollection::Search, py::arg("queries"), py::arg("k") = 10,
           py::arg("filter") = py::none(), py::arg("exact_scan_limit") = py::none(),
           py::arg("return_stats") = false,
           R"doc(The k nearest live vectors of each query.

filter: only vectors whose payload passes it, in Qdrant's filter language, as
a dict or a JSON str, e.g. {"must": [{"key": "color", "match": {"value":
"red"}}]} (include/strata/filter.h lists the conditions). It is checked
inside the search: in RAM when every field it reads is indexed
(payload_index=, create_payload_index), else on the stored payloads (slower).
When the indexed fields (or has_id) bound the passing vectors by at most
exact_scan_limit candidates (default 16384; 0 = never), the search is an
exact scan of those instead: exact results however selective the filter.
return_stats: also return a dict of per-query float64 arrays: latency_us,
pages_read (4 KiB SSD pages), reads, io_wait_us (blocked on SSD reads),
full_distances, filter_candidates (the
exact scan's; 0 when the index was walked), payload_reads (stored payloads
read to decide the filter).

queries: (nq, dim) array, or one query of shape (dim,) (results of shape (1, k)).
Returns (ids, distances): uint64 and float32 arrays of shape (nq, k), nearest
first; where fewer than k vectors are found the row ends with strata.NO_ID and
+inf. Every query of one call sees the same snapshot of the collection.
Keyword parameters, under the `strata search` CLI's names: L (list size,
default max(50, k)), beamwidth, max_expansions, profile ("default" or
"baseline"), memgraph, memgraph_L, page_search, dynamic_width, min_beamwidth,
pipelined (graph index); nprobe, pipeline, inflight, drain_alpha, fill_first
(IVF index); threads (for nq > 1: threads searching the batch, 0 = all cores,
the default). In the flat phase the search is exact and ignores them.)doc")
      .def("__len__", &PyCollection::Len, "Number of live vectors.")
      .def("stats", &PyCollection::Stats,
           "The collection's counters (strata::CollectionStats) as a dict: dim, metric,\n"
           "element_type, index_type, graph_label_field, live, indexed, pending, deleted, index_version,\n"
           "merges, streaming_merges, merging, last_merge_seconds, first_build_seconds,\n"
           "ram_bytes, pending_ram_bytes, cached_nodes, disk_bytes, last_sequence,\n"
           "log_syncs, index_description, payload_index (dict field -> type),\n"
           "payload_index_bytes.")
      .def("create_payload_index", &PyCollection::CreatePayloadIndex, py::arg("field"),
           py::arg("type") = "keyword",
           R"doc(Indexes payload field `field` (a dotted path, e.g. "metadata.source") for
filtering, from the payloads already stored; durable. type: "keyword",
"integer", "float" or "bool". Filters on indexed fields are decided in RAM,
and match conditions on keyword/integer/bool fields bound the candidates of
the exact-scan fallback. ValueError for a field already indexed with another
type or a bad path.)doc")
      .def("flush", &PyCollection::Flush,
           "Fsyncs the write-ahead log: every write acknowledged so far survives power loss.")
      .def("merge", &PyCollection::Merge,
           "Merges the pending vectors and deletions into a new index version now and\n"
           "waits for it (builds the first index below the threshold once the collection\n"
           "holds 256 vectors). Does nothing when there is nothing to merge.")
      .def("wait_for_merge", &PyCollection::WaitForMerge,
           "Waits for a running background merge and raises its error, if any.")
      .def("close", &PyCollection::Close, py::arg("stop_merges") = false,
           "Waits for a running merge and for calls in flight on other threads, syncs the\n"
           "log and releases the directory. Idempotent; any other call after it is a\n"
           "ValueError. Also done by `with` and when the object is garbage collected.\n"
           "stop_merges=True abandons a running merge instead of waiting for it (within\n"
           "about a second): nothing is lost, what it would have merged stays pending and\n"
           "is merged after the next open.")
      .def("__enter__",
           [](py::object self) {
             if (self.cast<PyCollection&>().closed()) {
               RaiseValueError("collection " + self.cast<PyCollection&>().path() + " is closed");
             }
             return self;
           })
      .def("__exit__",
           [](PyCollection& c, const py::args&) {
             c.Close(false);
             return false;
           })
      .def_property_readonly("path", &PyCollection::path, "The collection's directory.")
      .def_property_readonly("dim", &PyCollection::dim, "Vector dimension.")
      .def_property_readonly("metric", &PyCollection::metric, "\"l2\", \"ip\" or \"cosine\".")
      .def_property_readonly("closed", &PyCollection::closed, "True after close().")
      .def("__repr__", &PyCollection::Repr);
}

}  // namespace strata::python
