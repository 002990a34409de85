// CollectionOptions: parsing, validation, and the stored creation options
// (JSON in RocksDB, so a reopen uses exactly what the collection was created
// with).
#include <nlohmann/json.hpp>

#include "collection/collection_impl.h"

namespace strata {

Result<Durability> ParseDurability(std::string_view name) {
  if (name == "sync") return Durability::kSync;
  if (name == "async") return Durability::kAsync;
  return Status::InvalidArgument("unknown durability '" + std::string(name) +
                                 "' (expected sync or async)");
}
std::string_view DurabilityName(Durability d) { return d == Durability::kSync ? "sync" : "async"; }

Result<UpdateMode> ParseUpdateMode(std::string_view name) {
  if (name == "buffered") return UpdateMode::kBuffered;
  if (name == "in_place") return UpdateMode::kInPlace;
  return Status::InvalidArgument("unknown update mode '" + std::string(name) +
                                 "' (expected buffered or in_place)");
}
std::string_view UpdateModeName(UpdateMode m) {
  return m == UpdateMode::kBuffered ? "buffered" : "in_place";
}

GraphBuildOptions CollectionOptions::DefaultGraphBuildOptions() {
  GraphBuildOptions o;
  (void)ApplyBuildProfile("default", &o);
  return o;
}

IvfBuildOptions CollectionOptions::DefaultIvfBuildOptions() {
  IvfBuildOptions o;
  o.filter_codes = true;
  return o;
}

Status CollectionOptions::Validate() const {
  if (dim > kMaxDatasetDimension) {
    return Status::InvalidArgument("dim " + std::to_string(dim) + " exceeds the maximum " +
                                   std::to_string(kMaxDatasetDimension));
  }
  if (index_type && *index_type != "graph" && *index_type != "ivf") {
    return Status::InvalidArgument("index type '" + *index_type + "' (expected graph or ivf)");
  }
  if (!graph_label_field.empty() && index_type && *index_type != "graph") {
    return Status::InvalidArgument("graph_label_field needs a graph index");
  }
  if (update_mode == UpdateMode::kInPlace) {
    if (index_type && *index_type != "graph") {
      return Status::InvalidArgument("update_mode in_place needs a graph index");
    }
    if (element_type && *element_type != ElementType::kFloat32 &&
        *element_type != ElementType::kBFloat16) {
      return Status::InvalidArgument(
          "update_mode in_place stores float32 vectors (element type float32 or bfloat16)");
    }
  }
  if (in_place_threads == 0 || in_place_threads > 64) {
    return Status::InvalidArgument("in_place_threads must be in 1..64");
  }
  if (in_place_L < 8 || in_place_L > 4096) {
    return Status::InvalidArgument("in_place_L must be in 8..4096");
  }
  if (in_place_back_edges > 4096) {
    return Status::InvalidArgument("in_place_back_edges must be at most 4096 (0: every out-neighbour)");
  }
  if (in_place_compaction_pause_ms > 3'600'000) {
    return Status::InvalidArgument("in_place_compaction_pause_ms must be at most 3600000 (an hour)");
  }
  if (!(in_place_rebuild_dead_ratio > 0.0 && in_place_rebuild_dead_ratio <= 1.0)) {
    return Status::InvalidArgument("in_place_rebuild_dead_ratio must be in (0, 1]");
  }
  if (flat_threshold == 0) return Status::InvalidArgument("flat_threshold must be at least 1");
  if (merge_pending_count == 0) {
    return Status::InvalidArgument("merge_pending_count must be at least 1");
  }
  if (!(merge_pending_ratio >= 0.0 && merge_pending_ratio <= 100.0)) {
    return Status::InvalidArgument("merge_pending_ratio must be in [0, 100]");
  }
  if (durability == Durability::kAsync && sync_interval_ms == 0) {
    return Status::InvalidArgument("sync_interval_ms must be at least 1 for async durability");
  }
  if (merge_threads == 0) return Status::InvalidArgument("merge_threads must be at least 1");
  for (unsigned cpu : background_cpus) {
    if (cpu >= 1024) {
      return Status::InvalidArgument("background_cpus: CPU " + std::to_string(cpu) +
                                     " is past the largest CPU number 1023");
    }
  }
  if (max_batch == 0) return Status::InvalidArgument("max_batch must be at least 1");
  if (train_sample_bytes == 0) return Status::InvalidArgument("train_sample_bytes must be > 0");
  STRATA_RETURN_IF_ERROR(graph.Validate());
  STRATA_RETURN_IF_ERROR(ivf.Validate());
  return Status::OK();
}

std::string StoredOptionsToJson(const StoredCollectionOptions& o) {
  nlohmann::json g = {
      {"R", o.graph.R},
      {"L", o.graph.L},
      {"alpha", o.graph.alpha},
      {"passes", o.graph.passes},
      {"pq_bytes", o.graph.pq_bytes},
      {"opq_iterations", o.graph.opq_iterations},
      {"mem_graph_ratio", o.graph.mem_graph_ratio},
      {"mem_graph_R", o.graph.mem_graph_R},
      {"mem_graph_L", o.graph.mem_graph_L},
      {"page_shuffle", o.graph.page_shuffle},
      {"shuffle_rounds", o.graph.shuffle_rounds},
      {"shuffle_swaps", o.graph.shuffle_swaps},
      {"all_in_storage", o.graph.all_in_storage},
      {"seed", o.graph.seed},
  };
  nlohmann::json v = {
      {"clusters", o.ivf.clusters},     {"prefix_bits", o.ivf.prefix_bits},
      {"bits", o.ivf.bits},             {"rerank", o.ivf.rerank},
      {"coarse", o.ivf.coarse},         {"page_order", o.ivf.page_order},
      {"kmeans_iterations", o.ivf.kmeans_iterations}, {"seed", o.ivf.seed},
      {"filter_codes", o.ivf.filter_codes},
  };
  nlohmann::json j = {
      {"format_version", 1},
      {"dim", o.dim},
      {"metric", std::string(MetricName(o.metric))},
      {"element_type", std::string(ElementTypeName(o.element_type))},
      {"index_type", o.index_type},
      {"graph_label_field", o.graph_label_field},
      {"update_mode", std::string(UpdateModeName(o.update_mode))},
      {"graph", g},
      {"ivf", v},
  };
  return j.dump();
}

Result<StoredCollectionOptions> StoredOptionsFromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Corruption("collection: stored options are not valid JSON");
  }
  try {
    if (j.at("format_version").get<int>() != 1) {
      return Status::NotSupported("collection: options format version " +
                                  std::to_string(j.at("format_version").get<int>()));
    }
    StoredCollectionOptions o;
    o.dim = j.at("dim").get<std::uint32_t>();
    STRATA_ASSIGN_OR_RETURN(o.metric, ParseMetric(j.at("metric").get<std::string>()));
    STRATA_ASSIGN_OR_RETURN(o.element_type,
                            ParseElementType(j.at("element_type").get<std::string>()));
    o.index_type = j.at("index_type").get<std::string>();
    o.graph_label_field = j.value("graph_label_field", std::string());  // absent before 2026-12
    STRATA_ASSIGN_OR_RETURN(o.update_mode,
                            ParseUpdateMode(j.value("update_mode", std::string("buffered"))));
    const auto& g = j.at("graph");
    o.graph.R = g.at("R");
    o.graph.L = g.at("L");
    o.graph.alpha = g.at("alpha");
    o.graph.passes = g.at("passes");
    o.graph.pq_bytes = g.at("pq_bytes");
    o.graph.opq_iterations = g.at("opq_iterations");
    o.graph.mem_graph_ratio = g.at("mem_graph_ratio");
    o.graph.mem_graph_R = g.at("mem_graph_R");
    o.graph.mem_graph_L = g.at("mem_graph_L");
    o.graph.page_shuffle = g.at("page_shuffle");
    o.graph.shuffle_rounds = g.at("shuffle_rounds");
    o.graph.shuffle_swaps = g.at("shuffle_swaps");
    o.graph.all_in_storage = g.at("all_in_storage");
    o.graph.seed = g.at("seed");
    const auto& v = j.at("ivf");
    o.ivf.clusters = v.at("clusters");
    o.ivf.prefix_bits = v.at("prefix_bits");
    o.ivf.bits = v.at("bits");
    o.ivf.rerank = v.at("rerank").get<std::string>();
    o.ivf.coarse = v.at("coarse").get<std::string>();
    o.ivf.page_order = v.at("page_order").get<std::string>();
    o.ivf.kmeans_iterations = v.at("kmeans_iterations");
    o.ivf.seed = v.at("seed");
    o.ivf.filter_codes = v.value("filter_codes", false);  // absent before 2026-12-07
    o.graph.metric = o.metric;
    o.ivf.metric = o.metric;
    return o;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("collection: stored options: ") + e.what());
  }
}

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::OK();
  const std::string msg = what + ": " + s.ToString();
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsNotSupported()) return Status::NotSupported(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  if (s.IsBusy() || s.IsTryAgain()) return Status::Busy(msg);
  return Status::IOError(msg);
}

}  // namespace strata
