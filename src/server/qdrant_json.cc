#include "server/qdrant_json.h"

#include <cctype>
#include <cmath>
#include <limits>

#include "strata/status.h"

namespace strata::server {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The 32 hex digits of a UUID (36-char dashed or 32-char plain form).
std::optional<std::string> UuidHex(const std::string& s) {
  std::string hex;
  if (s.size() == 36) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      const bool dash_pos = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash_pos) {
        if (s[i] != '-') return std::nullopt;
        continue;
      }
      hex.push_back(s[i]);
    }
  } else if (s.size() == 32) {
    hex = s;
  } else {
    return std::nullopt;
  }
  for (char& c : hex) {
    if (HexValue(c) < 0) return std::nullopt;
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return hex;
}

Status CheckDepth(const json& j, std::uint32_t depth, std::uint32_t max_depth) {
  if (depth > max_depth) {
    return Status::InvalidArgument("filter: nested deeper than " + std::to_string(max_depth) +
                                   " levels");
  }
  if (j.is_object() || j.is_array()) {
    for (const auto& v : j) STRATA_RETURN_IF_ERROR(CheckDepth(v, depth + 1, max_depth));
  }
  return Status::OK();
}

// Rewrites has_id lists in place (anywhere in the tree).
Status RewriteHasId(json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "has_id" && it.value().is_array()) {
        for (auto& id : it.value()) {
          if (!id.is_string()) continue;
          Result<PointId> p = ParsePointId(id);
          if (!p.ok()) return p.status().WithContext("filter.has_id");
          id = p.value().id;
        }
      } else {
        STRATA_RETURN_IF_ERROR(RewriteHasId(it.value()));
      }
    }
  } else if (j.is_array()) {
    for (auto& v : j) STRATA_RETURN_IF_ERROR(RewriteHasId(v));
  }
  return Status::OK();
}

}  // namespace

Status CheckJsonDepth(std::string_view text, std::uint32_t max_depth) {
  std::uint64_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) {
        return Status::InvalidArgument("request body nests deeper than " +
                                       std::to_string(max_depth) + " levels");
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return Status::OK();
}

Result<float> FloatOf(const json& j, const char* what) {
  if (!j.is_number()) return Status::InvalidArgument(std::string(what) + " must be a number");
  const double d = j.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) {
    return Status::InvalidArgument(std::string(what) + ": " + j.dump() +
                                   " is outside the range of a 32-bit float");
  }
  return static_cast<float>(d);
}

bool IsUnsigned(const json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
}

Result<PointId> ParsePointId(const json& j) {
  PointId out;
  if (IsUnsigned(j)) {
    out.id = j.get<std::uint64_t>();
    return out;
  }
  if (j.is_number_integer()) {
    return Status::InvalidArgument("point id must be an unsigned integer or a UUID, got " +
                                   j.dump());
  }
  if (j.is_string()) {
    const std::optional<std::string> hex = UuidHex(j.get<std::string>());
    if (!hex) {
      return Status::InvalidArgument("point id '" + j.get<std::string>() + "' is not a valid UUID");
    }
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the 16 bytes
    for (std::size_t i = 0; i < 32; i += 2) {
      const auto byte = static_cast<std::uint8_t>(HexValue((*hex)[i]) * 16 + HexValue((*hex)[i + 1]));
      h = (h ^ byte) * 1099511628211ull;
    }
    out.id = h;
    out.uuid = hex->substr(0, 8) + "-" + hex->substr(8, 4) + "-" + hex->substr(12, 4) + "-" +
               hex->substr(16, 4) + "-" + hex->substr(20);
    return out;
  }
  return Status::InvalidArgument("point id must be an unsigned integer or a UUID, got " + j.dump());
}

json PointIdJson(VectorId id, const std::string& payload) {
  // Cheap pre-check: only payloads that mention the key are parsed.
  if (payload.find(kUuidKey) != std::string::npos) {
    const json p = json::parse(payload, nullptr, false);
    if (p.is_object() && p.contains(kUuidKey) && p[kUuidKey].is_string()) return p[kUuidKey];
  }
  return id;
}

Result<Metric> MetricFromQdrant(const std::string& distance) {
  if (distance == "Cosine") return Metric::kCosine;
  if (distance == "Euclid") return Metric::kL2;
  if (distance == "Dot") return Metric::kInnerProduct;
  return Status::InvalidArgument("vectors.distance: '" + distance +
                                 "' is not supported (Cosine, Euclid or Dot)");
}

std::string QdrantDistanceName(Metric metric) {
  switch (metric) {
    case Metric::kCosine: return "Cosine";
    case Metric::kInnerProduct: return "Dot";
    case Metric::kL2: return "Euclid";
  }
  return "Euclid";
}

float ScoreFromDistance(Metric metric, float distance) {
  switch (metric) {
    case Metric::kCosine: return 1.0f - distance;
    case Metric::kInnerProduct: return -distance;
    case Metric::kL2: return std::sqrt(std::max(distance, 0.0f));
  }
  return distance;
}

bool PassesThreshold(Metric metric, float score, float threshold) {
  return metric == Metric::kL2 ? score <= threshold : score >= threshold;
}

bool WantsPayload(const json& with_payload) {
  if (with_payload.is_null()) return false;
  if (with_payload.is_boolean()) return with_payload.get<bool>();
  return with_payload.is_array() || with_payload.is_object();
}

Result<json> ProjectPayload(const json& with_payload, const std::string& payload) {
  if (!WantsPayload(with_payload)) return json(nullptr);
  json p = payload.empty() ? json::object() : json::parse(payload, nullptr, false);
  if (!p.is_object()) p = json::object();
  p.erase(kUuidKey);
  if (with_payload.is_boolean()) return p;
  json include = with_payload.is_array() ? with_payload : with_payload.value("include", json());
  json exclude = with_payload.is_object() ? with_payload.value("exclude", json()) : json();
  if (!include.is_null() && !include.is_array()) {
    return Status::InvalidArgument("with_payload.include must be a list of keys");
  }
  if (!exclude.is_null() && !exclude.is_array()) {
    return Status::InvalidArgument("with_payload.exclude must be a list of keys");
  }
  json out = json::object();
  if (include.is_array()) {
    for (const auto& k : include) {
      if (!k.is_string()) return Status::InvalidArgument("with_payload keys must be strings");
      const std::string key = k.get<std::string>();
      if (p.contains(key)) out[key] = p[key];
    }
  } else {
    out = p;
  }
  if (exclude.is_array()) {
    for (const auto& k : exclude) {
      if (k.is_string()) out.erase(k.get<std::string>());
    }
  }
  return out;
}

Result<std::string> StoredPayload(const json& payload, const PointId& id) {
  if (!payload.is_null() && !payload.is_object()) {
    return Status::InvalidArgument("payload must be a JSON object");
  }
  if (!id.uuid) return payload.is_null() ? std::string() : payload.dump();
  json p = payload.is_null() ? json::object() : payload;
  p[kUuidKey] = *id.uuid;
  return p.dump();
}

Result<std::string> PrepareFilter(const json& filter, std::uint32_t max_depth) {
  if (filter.is_null()) return std::string();
  if (!filter.is_object()) return Status::InvalidArgument("filter must be a JSON object");
  STRATA_RETURN_IF_ERROR(CheckDepth(filter, 0, max_depth));
  json copy = filter;
  STRATA_RETURN_IF_ERROR(RewriteHasId(copy));
  return copy.dump();
}

json OkBody(json result, double seconds) {
  return json{{"result", std::move(result)}, {"status", "ok"}, {"time", seconds}};
}

json ErrorBody(const std::string& message, double seconds) {
  return json{{"status", {{"error", message}}}, {"time", seconds}};
}

}  // namespace strata::server
