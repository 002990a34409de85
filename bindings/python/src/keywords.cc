#include "keywords.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "errors.h"
#include "strata/io.h"

namespace strata::python {
namespace {

std::string TypeName(py::handle v) { return Py_TYPE(v.ptr())->tp_name; }

bool IsBool(py::handle v) { return PyBool_Check(v.ptr()) || TypeName(v) == "numpy.bool_"; }

// One keyword: its name, the C++ field's name when that differs (or null),
// and how it sets the target. `first` entries (profiles) run before the rest.
template <typename T>
struct Keyword {
  const char* name;
  const char* alias;
  void (*apply)(T& target, py::handle value, const char* name);
  bool first = false;
};

}  // namespace

std::uint64_t ToU64(py::handle v, const char* name) {
  // __index__ accepts Python and numpy integers and nothing float-like; a bool
  // has __index__ too but is a switch, not a count.
  if (IsBool(v) || !PyIndex_Check(v.ptr())) {
    RaiseTypeError(std::string(name) + " must be an int, not " + TypeName(v));
  }
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!index) throw py::error_already_set();
  const unsigned long long x = PyLong_AsUnsignedLongLong(index.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    RaiseValueError(std::string(name) + " must be in [0, 2**64), got " +
                    std::string(py::str(index)));
  }
  return x;
}

std::uint32_t ToU32(py::handle v, const char* name) {
  const std::uint64_t x = ToU64(v, name);
  if (x > std::numeric_limits<std::uint32_t>::max()) {
    RaiseValueError(std::string(name) + " must be in [0, 2**32), got " + std::to_string(x));
  }
  return static_cast<std::uint32_t>(x);
}

double ToF64(py::handle v, const char* name) {
  if (IsBool(v) || PyUnicode_Check(v.ptr()) || PyBytes_Check(v.ptr())) {
    RaiseTypeError(std::string(name) + " must be a number, not " + TypeName(v));
  }
  const double x = PyFloat_AsDouble(v.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    RaiseTypeError(std::string(name) + " must be a number, not " + TypeName(v));
  }
  if (!std::isfinite(x)) RaiseValueError(std::string(name) + " must be finite");
  return x;
}

bool ToBool(py::handle v, const char* name) {
  if (!IsBool(v)) RaiseTypeError(std::string(name) + " must be True or False, not " + TypeName(v));
  return PyObject_IsTrue(v.ptr()) == 1;
}

std::string ToStr(py::handle v, const char* name) {
  if (!PyUnicode_Check(v.ptr())) {
    RaiseTypeError(std::string(name) + " must be a str, not " + TypeName(v));
  }
  return v.cast<std::string>();
}

py::dict ToDict(py::handle v, const char* name) {
  if (!PyDict_Check(v.ptr())) {
    RaiseTypeError(std::string(name) + " must be a dict of keyword arguments, not " + TypeName(v));
  }
  return py::reinterpret_borrow<py::dict>(v);
}

namespace {

template <typename T>
bool Excluded(const Keyword<T>& k, std::span<const char* const> excluded) {
  return std::any_of(excluded.begin(), excluded.end(),
                     [&](const char* e) { return std::string_view(e) == k.name; });
}

// Applies every item of `kwargs` through `table`; see keywords.h.
template <typename T>
void ApplyTable(const py::dict& kwargs, std::span<const Keyword<T>> table, const char* what,
                T& target, std::span<const char* const> excluded = {}) {
  struct Item {
    const Keyword<T>* keyword;
    std::string key;
    py::handle value;
  };
  std::vector<Item> items;
  for (auto [key_obj, value] : kwargs) {
    const std::string key = py::str(key_obj);
    const Keyword<T>* found = nullptr;
    for (const Keyword<T>& k : table) {
      if ((key == k.name || (k.alias != nullptr && key == k.alias)) && !Excluded(k, excluded)) {
        found = &k;
      }
    }
    if (found == nullptr) {
      std::string known;
      for (const Keyword<T>& k : table) {
        if (Excluded(k, excluded)) continue;
        known += (known.empty() ? "" : ", ") + std::string(k.name);
      }
      RaiseValueError("unknown keyword argument '" + key + "' for " + what + " (known: " + known +
                      ")");
    }
    for (const Item& seen : items) {
      if (seen.keyword == found) {
        RaiseValueError("keyword arguments '" + seen.key + "' and '" + key + "' for " + what +
                        " set the same parameter");
      }
    }
    items.push_back({found, key, value});
  }
  std::stable_partition(items.begin(), items.end(), [](const Item& i) { return i.keyword->first; });
  for (const Item& i : items) i.keyword->apply(target, i.value, i.key.c_str());
}

// ---- graph build ----

const Keyword<GraphBuildOptions> kGraphBuild[] = {
    {"profile", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) {
       RaiseIfError(ApplyBuildProfile(ToStr(v, n), &o));
     },
     true},
    {"R", nullptr, [](GraphBuildOptions& o, py::handle v, const char* n) { o.R = ToU32(v, n); }},
    {"L", nullptr, [](GraphBuildOptions& o, py::handle v, const char* n) { o.L = ToU32(v, n); }},
    {"alpha", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) {
       o.alpha = static_cast<float>(ToF64(v, n));
     }},
    {"passes", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.passes = ToU32(v, n); }},
    {"pq_bytes", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.pq_bytes = ToU32(v, n); }},
    {"pq_train_rows", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.pq_train_rows = ToU64(v, n); }},
    {"opq", "opq_iterations",
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.opq_iterations = ToU32(v, n); }},
    {"memgraph_ratio", "mem_graph_ratio",
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.mem_graph_ratio = ToF64(v, n); }},
    {"memgraph_R", "mem_graph_R",
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.mem_graph_R = ToU32(v, n); }},
    {"memgraph_L", "mem_graph_L",
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.mem_graph_L = ToU32(v, n); }},
    {"shuffle", "page_shuffle",
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.page_shuffle = ToBool(v, n); }},
    {"shuffle_rounds", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.shuffle_rounds = ToU32(v, n); }},
    {"shuffle_swaps", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.shuffle_swaps = ToU32(v, n); }},
    {"all_in_storage", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.all_in_storage = ToBool(v, n); }},
    {"reuse_graph", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.reuse_graph = ToStr(v, n); }},
    {"threads", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.threads = ToU32(v, n); }},
    {"seed", nullptr,
     [](GraphBuildOptions& o, py::handle v, const char* n) { o.seed = ToU64(v, n); }},
};

// ---- IVF build ----

const Keyword<IvfBuildOptions> kIvfBuild[] = {
    {"clusters", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.clusters = ToU64(v, n); }},
    {"prefix_bits", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.prefix_bits = ToU32(v, n); }},
    {"bits", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.bits = ToU32(v, n); }},
    {"rerank", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.rerank = ToStr(v, n); }},
    {"coarse", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.coarse = ToStr(v, n); }},
    {"page_order", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.page_order = ToStr(v, n); }},
    {"kmeans_iterations", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.kmeans_iterations = ToU32(v, n); }},
    {"filter_codes", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.filter_codes = ToBool(v, n); }},
    {"threads", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.threads = ToU32(v, n); }},
    {"seed", nullptr,
     [](IvfBuildOptions& o, py::handle v, const char* n) { o.seed = ToU64(v, n); }},
};

// ---- open ----

const Keyword<OpenOptions> kOpen[] = {
    {"cache_nodes", nullptr,
     [](OpenOptions& o, py::handle v, const char* n) { o.cache_nodes = ToU64(v, n); }},
    {"cache_mib", nullptr,
     [](OpenOptions& o, py::handle v, const char* n) { o.cache_mib = ToU64(v, n); }},
    {"cache_policy", nullptr,
     [](OpenOptions& o, py::handle v, const char* n) {
       const std::string p = ToStr(v, n);
       if (p == "bfs") {
         o.cache_policy = CachePolicy::kBfs;
       } else if (p == "frequency") {
         o.cache_policy = CachePolicy::kFrequency;
       } else {
         RaiseValueError("unknown cache policy '" + p + "' (bfs, frequency)");
       }
     }},
    {"cache_warmup", "cache_warmup_queries",
     [](OpenOptions& o, py::handle v, const char* n) { o.cache_warmup_queries = ToU32(v, n); }},
    {"io_engine", nullptr,
     [](OpenOptions& o, py::handle v, const char* n) {
       o.io_engine = ValueOrRaise(ParseIoEngine(ToStr(v, n)));
     }},
    {"resident_codes", nullptr,
     [](OpenOptions& o, py::handle v, const char* n) { o.resident_codes = ToBool(v, n); }},
    {"verify_checksums", nullptr,
     [](OpenOptions& o, py::handle v, const char* n) { o.verify_checksums = ToBool(v, n); }},
};

// ---- search ----

struct SearchTarget {
  SearchKeywords out;
  bool list_size_given = false;
};

const Keyword<SearchTarget> kSearch[] = {
    {"profile", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) {
       RaiseIfError(ApplySearchProfile(ToStr(v, n), &t.out.params));
     },
     true},
    {"L", "list_size",
     [](SearchTarget& t, py::handle v, const char* n) {
       t.out.params.list_size = ToU32(v, n);
       t.list_size_given = true;
     }},
    {"beamwidth", "beam_width",
     [](SearchTarget& t, py::handle v, const char* n) { t.out.params.beam_width = ToU32(v, n); }},
    {"max_expansions", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) {
       t.out.params.max_expansions = ToU32(v, n);
     }},
    {"memgraph", "mem_graph",
     [](SearchTarget& t, py::handle v, const char* n) { t.out.params.mem_graph = ToBool(v, n); }},
    {"memgraph_L", "mem_graph_L",
     [](SearchTarget& t, py::handle v, const char* n) { t.out.params.mem_graph_L = ToU32(v, n); }},
    {"page_search", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) { t.out.params.page_search = ToBool(v, n); }},
    {"dynamic_width", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) {
       t.out.params.dynamic_width = ToBool(v, n);
     }},
    {"min_beamwidth", "min_beam_width",
     [](SearchTarget& t, py::handle v, const char* n) {
       t.out.params.min_beam_width = ToU32(v, n);
     }},
    {"pipelined", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) { t.out.params.pipelined = ToBool(v, n); }},
    {"nprobe", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) { t.out.params.nprobe = ToU32(v, n); }},
    {"pipeline", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) {
       RaiseIfError(ParseIvfPipeline(ToStr(v, n), &t.out.params.pipeline));
     }},
    {"inflight", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) { t.out.params.inflight = ToU32(v, n); }},
    {"drain_alpha", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) {
       t.out.params.drain_alpha = static_cast<float>(ToF64(v, n));
     }},
    {"fill_first", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) { t.out.params.fill_first = ToBool(v, n); }},
    {"threads", nullptr,
     [](SearchTarget& t, py::handle v, const char* n) { t.out.threads = ToU32(v, n); }},
};

// ---- collection ----

const Keyword<CollectionOptions> kCollection[] = {
    {"element_type", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.element_type = ValueOrRaise(ParseElementType(ToStr(v, n)));
     }},
    {"create_if_missing", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.create_if_missing = ToBool(v, n); }},
    {"error_if_exists", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.error_if_exists = ToBool(v, n); }},
    {"durability", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.durability = ValueOrRaise(ParseDurability(ToStr(v, n)));
     }},
    {"sync_interval_ms", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.sync_interval_ms = ToU32(v, n); }},
    {"update_mode", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.update_mode = ValueOrRaise(ParseUpdateMode(ToStr(v, n)));
     }},
    {"in_place_threads", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.in_place_threads = ToU32(v, n); }},
    {"in_place_compaction", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.in_place_compaction = ToBool(v, n); }},
    {"in_place_compaction_pause_ms", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.in_place_compaction_pause_ms = ToU32(v, n);
     }},
    {"in_place_hot_page_heat", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.in_place_hot_page_heat = ToU32(v, n); }},
    {"in_place_back_edges", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.in_place_back_edges = ToU32(v, n); }},
    {"in_place_L", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.in_place_L = ToU32(v, n); }},
    {"in_place_rebuild_dead_ratio", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.in_place_rebuild_dead_ratio = ToF64(v, n);
     }},
    {"flat_threshold", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.flat_threshold = ToU64(v, n); }},
    {"train_sample_bytes", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.train_sample_bytes = ToU64(v, n); }},
    {"merge_pending_count", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.merge_pending_count = ToU64(v, n);
     }},
    {"merge_pending_ratio", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.merge_pending_ratio = ToF64(v, n);
     }},
    {"merge_pending_bytes", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.merge_pending_bytes = ToU64(v, n);
     }},
    {"background_merge", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.background_merge = ToBool(v, n); }},
    {"streaming_merge", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.streaming_merge = ToBool(v, n); }},
    {"merge_threads", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.merge_threads = ToU32(v, n); }},
    {"memory_budget_bytes", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       o.memory_budget_bytes = ToU64(v, n);
     }},
    {"max_payload_bytes", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.max_payload_bytes = ToU32(v, n); }},
    {"max_batch", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.max_batch = ToU64(v, n); }},
    {"graph_label_field", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) { o.graph_label_field = ToStr(v, n); }},
    {"payload_index", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       // {"tags": "keyword", "price": "float"}
       for (auto [key, type] : ToDict(v, n)) {
         if (!py::isinstance<py::str>(key) || !py::isinstance<py::str>(type)) {
           RaiseValueError(std::string(n) + ": expected a dict of field path -> type name strings");
         }
         PayloadFieldSpec f;
         f.path = key.cast<std::string>();
         RaiseIfError(CheckPayloadPath(f.path));
         f.type = ValueOrRaise(ParsePayloadFieldType(type.cast<std::string>()));
         o.payload_index.push_back(std::move(f));
       }
     }},
    {"graph", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       ApplyGraphBuildKeywords(ToDict(v, n), /*for_collection=*/true, &o.graph);
     }},
    {"ivf", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       ApplyIvfBuildKeywords(ToDict(v, n), /*for_collection=*/true, &o.ivf);
     }},
    {"open", nullptr,
     [](CollectionOptions& o, py::handle v, const char* n) {
       ApplyOpenKeywords(ToDict(v, n), &o.open);
     }},
};

// What a collection sets itself in its build options.
constexpr const char* kCollectionSets[] = {"threads", "reuse_graph"};

}  // namespace

void ApplyGraphBuildKeywords(const py::dict& kwargs, bool for_collection,
                             GraphBuildOptions* options) {
  ApplyTable<GraphBuildOptions>(kwargs, kGraphBuild, "a graph index build", *options,
                                for_collection ? std::span<const char* const>(kCollectionSets)
                                               : std::span<const char* const>());
}

void ApplyIvfBuildKeywords(const py::dict& kwargs, bool for_collection, IvfBuildOptions* options) {
  ApplyTable<IvfBuildOptions>(kwargs, kIvfBuild, "an IVF index build", *options,
                              for_collection ? std::span<const char* const>(kCollectionSets)
                                             : std::span<const char* const>());
}

void ApplyOpenKeywords(const py::dict& kwargs, OpenOptions* options) {
  ApplyTable<OpenOptions>(kwargs, kOpen, "opening an index", *options);
}

SearchKeywords ParseSearchKeywords(const py::dict& kwargs, std::int64_t k) {
  if (k < 1 || k > std::numeric_limits<std::uint32_t>::max()) {
    RaiseValueError("k must be in [1, 2**32), got " + std::to_string(k));
  }
  SearchTarget t;
  t.out.params.k = static_cast<std::uint32_t>(k);
  ApplyTable<SearchTarget>(kwargs, kSearch, "search", t);
  if (!t.list_size_given) {
    t.out.params.list_size = std::max<std::uint32_t>(t.out.params.list_size, t.out.params.k);
  }
  RaiseIfError(t.out.params.Validate());
  return t.out;
}

void ApplyCollectionKeywords(const py::dict& kwargs, CollectionOptions* options) {
  ApplyTable<CollectionOptions>(kwargs, kCollection, "Collection", *options);
}

}  // namespace strata::python
