#include "server/collection_config.h"

#include <algorithm>
#include <string>

namespace strata::server {
namespace {

using json = nlohmann::json;

Status Bad(const std::string& key, const json& v, const char* want) {
  return Status::InvalidArgument("strata." + key + ": " + want + ", not " + v.dump());
}

Status Unsigned(const std::string& key, const json& v, std::uint64_t* out) {
  if (!v.is_number_unsigned()) return Bad(key, v, "an unsigned integer");
  *out = v.get<std::uint64_t>();
  return Status::OK();
}

Status Unsigned32(const std::string& key, const json& v, std::uint32_t* out) {
  std::uint64_t x = 0;
  STRATA_RETURN_IF_ERROR(Unsigned(key, v, &x));
  if (x > 0xffffffffull) return Bad(key, v, "an unsigned 32-bit integer");
  *out = static_cast<std::uint32_t>(x);
  return Status::OK();
}

Status Number(const std::string& key, const json& v, double* out) {
  if (!v.is_number()) return Bad(key, v, "a number");
  *out = v.get<double>();
  return Status::OK();
}

Status ApplyGraph(const json& g, GraphBuildOptions* o) {
  if (!g.is_object()) return Bad("graph", g, "an object");
  for (auto it = g.begin(); it != g.end(); ++it) {
    const std::string key = "graph." + it.key();
    const json& v = it.value();
    if (it.key() == "R") {
      STRATA_RETURN_IF_ERROR(Unsigned32(key, v, &o->R));
    } else if (it.key() == "L") {
      STRATA_RETURN_IF_ERROR(Unsigned32(key, v, &o->L));
    } else if (it.key() == "alpha") {
      double a = 0;
      STRATA_RETURN_IF_ERROR(Number(key, v, &a));
      o->alpha = static_cast<float>(a);
    } else if (it.key() == "pq_bytes") {
      STRATA_RETURN_IF_ERROR(Unsigned32(key, v, &o->pq_bytes));
    } else if (it.key() == "passes") {
      STRATA_RETURN_IF_ERROR(Unsigned32(key, v, &o->passes));
    } else {
      return Status::InvalidArgument("strata." + key + ": unknown option (R, L, alpha, pq_bytes, passes)");
    }
  }
  return Status::OK();
}

Status ApplyIvf(const json& g, IvfBuildOptions* o) {
  if (!g.is_object()) return Bad("ivf", g, "an object");
  for (auto it = g.begin(); it != g.end(); ++it) {
    const std::string key = "ivf." + it.key();
    const json& v = it.value();
    if (it.key() == "clusters") {
      STRATA_RETURN_IF_ERROR(Unsigned(key, v, &o->clusters));
    } else if (it.key() == "bits") {
      STRATA_RETURN_IF_ERROR(Unsigned32(key, v, &o->bits));
    } else if (it.key() == "prefix_bits") {
      STRATA_RETURN_IF_ERROR(Unsigned32(key, v, &o->prefix_bits));
    } else if (it.key() == "kmeans_iterations") {
      STRATA_RETURN_IF_ERROR(Unsigned32(key, v, &o->kmeans_iterations));
    } else if (it.key() == "filter_codes") {
      if (!v.is_boolean()) return Bad(key, v, "a boolean");
      o->filter_codes = v.get<bool>();
    } else {
      return Status::InvalidArgument(
          "strata." + key +
          ": unknown option (clusters, bits, prefix_bits, kmeans_iterations, filter_codes)");
    }
  }
  return Status::OK();
}

}  // namespace

Status ApplyStrataOptions(const json& s, CollectionOptions* o) {
  if (!s.is_object()) return Status::InvalidArgument("strata: must be an object");
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    if (k == "index") {
      if (!v.is_string() || (v != "graph" && v != "ivf")) return Bad(k, v, "\"graph\" or \"ivf\"");
      o->index_type = v.get<std::string>();
    } else if (k == "durability") {
      if (!v.is_string()) return Bad(k, v, "\"sync\" or \"async\"");
      Result<Durability> d = ParseDurability(v.get<std::string>());
      if (!d.ok()) return d.status().WithContext("strata.durability");
      o->durability = d.value();
    } else if (k == "update_mode") {
      if (!v.is_string()) return Bad(k, v, "\"buffered\" or \"in_place\"");
      Result<UpdateMode> m = ParseUpdateMode(v.get<std::string>());
      if (!m.ok()) return m.status().WithContext("strata.update_mode");
      o->update_mode = m.value();
    } else if (k == "flat_threshold") {
      STRATA_RETURN_IF_ERROR(Unsigned(k, v, &o->flat_threshold));
    } else if (k == "merge_pending_count") {
      STRATA_RETURN_IF_ERROR(Unsigned(k, v, &o->merge_pending_count));
    } else if (k == "merge_pending_ratio") {
      STRATA_RETURN_IF_ERROR(Number(k, v, &o->merge_pending_ratio));
    } else if (k == "memory_budget_bytes") {
      STRATA_RETURN_IF_ERROR(Unsigned(k, v, &o->memory_budget_bytes));
    } else if (k == "graph_label_field") {
      // A label-aware graph (CollectionOptions::graph_label_field) needs its
      // field indexed from the start; Qdrant's clients declare payload
      // indexes only after creating, so it is declared here: a name (an
      // integer field) or {"field": name, "type": "integer" | "keyword"}.
      constexpr const char* kWant =
          "a payload field name, or {\"field\": name, \"type\": \"integer\" or \"keyword\"}";
      std::string field;
      PayloadFieldType type = PayloadFieldType::kInteger;
      if (v.is_string()) {
        field = v.get<std::string>();
      } else if (v.is_object() && v.size() <= 2 && v.contains("field") && v["field"].is_string()) {
        field = v["field"].get<std::string>();
        if (v.size() == 2) {
          if (!v.contains("type") || !v["type"].is_string()) return Bad(k, v, kWant);
          const std::string t = v["type"].get<std::string>();
          if (t == "keyword") {
            type = PayloadFieldType::kKeyword;
          } else if (t != "integer") {
            return Bad(k, v, kWant);
          }
        }
      }
      if (field.empty()) return Bad(k, v, kWant);
      o->graph_label_field = field;
      const bool declared =
          std::any_of(o->payload_index.begin(), o->payload_index.end(),
                      [&](const PayloadFieldSpec& f) { return f.path == o->graph_label_field; });
      if (!declared) o->payload_index.push_back({o->graph_label_field, type});
    } else if (k == "graph") {
      STRATA_RETURN_IF_ERROR(ApplyGraph(v, &o->graph));
    } else if (k == "ivf") {
      STRATA_RETURN_IF_ERROR(ApplyIvf(v, &o->ivf));
    } else {
      return Status::InvalidArgument(
          "strata." + k +
          ": unknown option (index, update_mode, durability, flat_threshold, merge_pending_count, "
          "merge_pending_ratio, memory_budget_bytes, graph_label_field, graph, ivf)");
    }
  }
  return Status::OK();
}

json OpenOptionsJson(const CollectionOptions& o) {
  return json{{"durability", std::string(DurabilityName(o.durability))},
              {"flat_threshold", o.flat_threshold},
              {"merge_pending_count", o.merge_pending_count},
              {"merge_pending_ratio", o.merge_pending_ratio},
              {"memory_budget_bytes", o.memory_budget_bytes},
              {"max_batch", o.max_batch}};
}

Status ApplyOpenOptionsJson(const json& j, CollectionOptions* o) {
  if (!j.is_object()) return Status::Corruption("not a JSON object");
  json known = json::object();
  for (const char* k : {"durability", "flat_threshold", "merge_pending_count",
                        "merge_pending_ratio", "memory_budget_bytes"}) {
    if (j.contains(k)) known[k] = j[k];
  }
  STRATA_RETURN_IF_ERROR(ApplyStrataOptions(known, o));
  if (j.contains("max_batch") && j["max_batch"].is_number_unsigned()) {
    o->max_batch = j["max_batch"].get<std::uint64_t>();
  }
  return Status::OK();
}

}  // namespace strata::server
