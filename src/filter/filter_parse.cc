// Parsing Qdrant filter JSON into the filter tree, with errors that name the
// path of the bad part ("filter.must[1].match: ...").
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "filter/filter_tree.h"
#include "strata/filter.h"

namespace strata {
namespace filter {
namespace {

using nlohmann::json;

Status Bad(const std::string& where, const std::string& what) {
  return Status::InvalidArgument(where + ": " + what);
}

// Rejects keys of `obj` outside `allowed`, naming the first.
Status OnlyKeys(const json& obj, const std::string& where,
                std::initializer_list<const char*> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::none_of(allowed.begin(), allowed.end(),
                     [&](const char* a) { return it.key() == a; })) {
      return Bad(where, "unknown key '" + it.key() + "'");
    }
  }
  return Status::OK();
}

Status ParsePath(const json& key, const std::string& where, Node* n) {
  if (!key.is_string() || key.get_ref<const std::string&>().empty()) {
    return Bad(where + ".key", "must be a non-empty string");
  }
  n->key = key.get<std::string>();
  std::string part;
  auto flush = [&]() -> Status {
    if (part.size() >= 2 && part.compare(part.size() - 2, 2, "[]") == 0) part.resize(part.size() - 2);
    if (part.empty() || part.find_first_of("[]") != std::string::npos) {
      return Bad(where + ".key", "'" + n->key + "' is not a dotted path (a.b, a[].b)");
    }
    n->path.push_back(part);
    part.clear();
    return Status::OK();
  };
  for (char c : n->key) {
    if (c == '.') {
      STRATA_RETURN_IF_ERROR(flush());
    } else {
      part += c;
    }
  }
  return flush();
}

Result<Value> ParseValue(const json& v, const std::string& where) {
  Value out;
  if (v.is_string()) {
    out.kind = Value::Kind::kString;
    out.text = v.get<std::string>();
  } else if (v.is_boolean()) {
    out.kind = Value::Kind::kBool;
    out.boolean = v.get<bool>();
  } else if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return Bad(where, "integer out of the int64 range");
    }
    out.kind = Value::Kind::kInteger;
    out.integer = static_cast<std::int64_t>(v.get<std::uint64_t>());
  } else if (v.is_number_integer()) {
    out.kind = Value::Kind::kInteger;
    out.integer = v.get<std::int64_t>();
  } else {
    return Bad(where, "must be a string, an integer or a boolean (got " +
                          std::string(v.type_name()) + ")");
  }
  return out;
}

Status ParseValueList(const json& v, const std::string& where, Node* n) {
  if (!v.is_array()) return Bad(where, "must be a list of strings or of integers");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    STRATA_ASSIGN_OR_RETURN(Value value, ParseValue(v[i], at));
    if (value.kind == Value::Kind::kBool) return Bad(at, "must be a string or an integer");
    if (!n->values.empty() && n->values[0].kind != value.kind) {
      return Bad(at, "mixes strings and integers in one list");
    }
    n->values.push_back(std::move(value));
  }
  return Status::OK();
}

Status ParseMatch(const json& m, const std::string& where, Node* n) {
  if (!m.is_object() || m.size() != 1) {
    return Bad(where, "must be an object with one of value, any, except");
  }
  const std::string key = m.begin().key();
  const json& v = m.begin().value();
  if (key == "value") {
    n->kind = NodeKind::kMatchValue;
    STRATA_ASSIGN_OR_RETURN(Value value, ParseValue(v, where + ".value"));
    n->values.push_back(std::move(value));
    return Status::OK();
  }
  if (key == "any" || key == "except") {
    n->kind = key == "any" ? NodeKind::kMatchAny : NodeKind::kMatchExcept;
    return ParseValueList(v, where + "." + key, n);
  }
  if (key == "text" || key == "text_any" || key == "phrase" || key == "prefix") {
    return Bad(where, "full-text match '" + key + "' is not supported");
  }
  return Bad(where, "unknown key '" + key + "' (value, any, except)");
}

Status ParseBounds(const json& r, const std::string& where, bool counts, Bounds* b) {
  if (!r.is_object()) return Bad(where, "must be an object of gt, gte, lt, lte");
  STRATA_RETURN_IF_ERROR(OnlyKeys(r, where, {"gt", "gte", "lt", "lte"}));
  for (auto it = r.begin(); it != r.end(); ++it) {
    if (it->is_null()) continue;
    if (it->is_string()) return Bad(where + "." + it.key(), "datetime ranges are not supported");
    if (!it->is_number() || !std::isfinite(it->get<double>())) {
      return Bad(where + "." + it.key(), "must be a finite number");
    }
    if (counts && (!it->is_number_integer() || it->get<std::int64_t>() < 0)) {
      return Bad(where + "." + it.key(), "must be a count (an integer >= 0)");
    }
    const double x = it->get<double>();
    if (it.key() == "gt") b->gt = x;
    if (it.key() == "gte") b->gte = x;
    if (it.key() == "lt") b->lt = x;
    if (it.key() == "lte") b->lte = x;
  }
  return Status::OK();
}

Status ParseFilter(const json& f, const std::string& where, bool nested, Node* out);

Status ParseFieldCondition(const json& c, const std::string& where, Node* n) {
  STRATA_RETURN_IF_ERROR(
      OnlyKeys(c, where, {"key", "match", "range", "values_count", "geo_bounding_box",
                          "geo_radius", "geo_polygon", "is_empty", "is_null"}));
  STRATA_RETURN_IF_ERROR(ParsePath(c["key"], where, n));
  int kinds = 0;
  for (const char* k : {"match", "range", "values_count", "geo_bounding_box", "geo_radius",
                        "geo_polygon", "is_empty", "is_null"}) {
    if (c.contains(k) && !c[k].is_null()) ++kinds;
  }
  if (kinds != 1) {
    return Bad(where, "a field condition takes exactly one of match, range, values_count");
  }
  if (c.contains("match") && !c["match"].is_null()) return ParseMatch(c["match"], where + ".match", n);
  if (c.contains("range") && !c["range"].is_null()) {
    n->kind = NodeKind::kRange;
    return ParseBounds(c["range"], where + ".range", false, &n->bounds);
  }
  if (c.contains("values_count") && !c["values_count"].is_null()) {
    n->kind = NodeKind::kValuesCount;
    return ParseBounds(c["values_count"], where + ".values_count", true, &n->bounds);
  }
  if (c.contains("is_empty") || c.contains("is_null")) {
    const char* k = c.contains("is_empty") ? "is_empty" : "is_null";
    if (!c[k].is_boolean() || !c[k].get<bool>()) return Bad(where + "." + k, "must be true");
    n->kind = c.contains("is_empty") ? NodeKind::kIsEmpty : NodeKind::kIsNull;
    return Status::OK();
  }
  return Bad(where, "geo conditions are not supported");
}

// {"key": PATH} of is_empty / is_null.
Status ParseKeyOnly(const json& v, const std::string& where, Node* n) {
  if (!v.is_object()) return Bad(where, "must be an object {\"key\": PATH}");
  STRATA_RETURN_IF_ERROR(OnlyKeys(v, where, {"key"}));
  if (!v.contains("key")) return Bad(where, "needs \"key\"");
  return ParsePath(v["key"], where, n);
}

Status ParseCondition(const json& c, const std::string& where, bool nested, Node* n) {
  if (!c.is_object()) return Bad(where, "a condition must be an object");
  if (c.contains("key")) return ParseFieldCondition(c, where, n);
  if (c.contains("is_empty")) {
    STRATA_RETURN_IF_ERROR(OnlyKeys(c, where, {"is_empty"}));
    n->kind = NodeKind::kIsEmpty;
    return ParseKeyOnly(c["is_empty"], where + ".is_empty", n);
  }
  if (c.contains("is_null")) {
    STRATA_RETURN_IF_ERROR(OnlyKeys(c, where, {"is_null"}));
    n->kind = NodeKind::kIsNull;
    return ParseKeyOnly(c["is_null"], where + ".is_null", n);
  }
  if (c.contains("has_id")) {
    STRATA_RETURN_IF_ERROR(OnlyKeys(c, where, {"has_id"}));
    if (nested) return Bad(where, "has_id is not allowed inside nested");
    const json& ids = c["has_id"];
    if (!ids.is_array()) return Bad(where + ".has_id", "must be a list of ids");
    n->kind = NodeKind::kHasId;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::string at = where + ".has_id[" + std::to_string(i) + "]";
      if (ids[i].is_string()) return Bad(at, "string (UUID) ids are not supported: ids are integers");
      if (!ids[i].is_number_unsigned() && !(ids[i].is_number_integer() && ids[i].get<std::int64_t>() >= 0)) {
        return Bad(at, "must be an integer id >= 0");
      }
      n->ids.push_back(ids[i].get<std::uint64_t>());
    }
    std::sort(n->ids.begin(), n->ids.end());
    n->ids.erase(std::unique(n->ids.begin(), n->ids.end()), n->ids.end());
    return Status::OK();
  }
  if (c.contains("nested")) {
    STRATA_RETURN_IF_ERROR(OnlyKeys(c, where, {"nested"}));
    const json& v = c["nested"];
    const std::string at = where + ".nested";
    if (!v.is_object() || !v.contains("key") || !v.contains("filter")) {
      return Bad(at, "must be {\"key\": PATH, \"filter\": FILTER}");
    }
    STRATA_RETURN_IF_ERROR(OnlyKeys(v, at, {"key", "filter"}));
    n->kind = NodeKind::kNested;
    STRATA_RETURN_IF_ERROR(ParsePath(v["key"], at, n));
    n->must.emplace_back();
    return ParseFilter(v["filter"], at + ".filter", /*nested=*/true, &n->must[0]);
  }
  if (c.contains("has_vector")) return Bad(where, "has_vector is not supported (one unnamed vector)");
  for (const char* k : {"must", "should", "must_not", "min_should"}) {
    if (c.contains(k)) return ParseFilter(c, where, nested, n);
  }
  if (c.empty()) return Bad(where, "an empty condition");
  return Bad(where, "unknown condition with key '" + c.begin().key() + "'");
}

// One condition or a list of them.
Status ParseClause(const json& v, const std::string& where, bool nested, std::vector<Node>* out) {
  if (v.is_null()) return Status::OK();
  if (v.is_object()) {
    out->emplace_back();
    return ParseCondition(v, where, nested, &out->back());
  }
  if (!v.is_array()) return Bad(where, "must be a condition or a list of conditions");
  for (std::size_t i = 0; i < v.size(); ++i) {
    out->emplace_back();
    STRATA_RETURN_IF_ERROR(
        ParseCondition(v[i], where + "[" + std::to_string(i) + "]", nested, &out->back()));
  }
  return Status::OK();
}

Status ParseFilter(const json& f, const std::string& where, bool nested, Node* out) {
  if (!f.is_object()) return Bad(where, "a filter must be an object");
  STRATA_RETURN_IF_ERROR(OnlyKeys(f, where, {"must", "should", "must_not", "min_should"}));
  out->kind = NodeKind::kFilter;
  if (f.contains("must")) STRATA_RETURN_IF_ERROR(ParseClause(f["must"], where + ".must", nested, &out->must));
  if (f.contains("should")) {
    STRATA_RETURN_IF_ERROR(ParseClause(f["should"], where + ".should", nested, &out->should));
  }
  if (f.contains("must_not")) {
    STRATA_RETURN_IF_ERROR(ParseClause(f["must_not"], where + ".must_not", nested, &out->must_not));
  }
  if (f.contains("min_should") && !f["min_should"].is_null()) {
    const json& m = f["min_should"];
    const std::string at = where + ".min_should";
    if (!m.is_object() || !m.contains("conditions") || !m.contains("min_count")) {
      return Bad(at, "must be {\"conditions\": [...], \"min_count\": n}");
    }
    STRATA_RETURN_IF_ERROR(OnlyKeys(m, at, {"conditions", "min_count"}));
    if (!m["min_count"].is_number_unsigned() || m["min_count"].get<std::uint64_t>() == 0) {
      return Bad(at + ".min_count", "must be an integer >= 1");
    }
    out->min_count = m["min_count"].get<std::uint64_t>();
    STRATA_RETURN_IF_ERROR(ParseClause(m["conditions"], at + ".conditions", nested, &out->min_should));
  }
  return Status::OK();
}

// The paths read under `n`, with `prefix` (a nested condition's key).
void CollectFields(const Node& n, const std::string& prefix, std::set<std::string>* out) {
  if (n.kind == NodeKind::kHasId) return;
  if (n.kind != NodeKind::kFilter) out->insert(prefix + n.key);
  const std::string inner = n.kind == NodeKind::kNested ? prefix + n.key + "[]." : prefix;
  for (const auto* list : {&n.must, &n.should, &n.must_not, &n.min_should}) {
    for (const Node& c : *list) CollectFields(c, inner, out);
  }
}

}  // namespace
}  // namespace filter

Result<PayloadFilter> PayloadFilter::Parse(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("filter: not valid JSON");
  auto root = std::make_shared<filter::Node>();
  STRATA_RETURN_IF_ERROR(filter::ParseFilter(j, "filter", /*nested=*/false, root.get()));
  std::set<std::string> fields;
  filter::CollectFields(*root, "", &fields);
  root->fields.assign(fields.begin(), fields.end());
  return PayloadFilter(std::move(root));
}

}  // namespace strata
