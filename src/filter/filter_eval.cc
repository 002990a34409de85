// Evaluating a filter tree against one point's payload, and PayloadFilter's
// public entry points over it.
#include <algorithm>
#include <cmath>

#include "filter/filter_tree.h"
#include "strata/filter.h"

namespace strata::filter {
namespace {

using nlohmann::json;

// The values of a field: the resolved values with arrays flattened one
// level and nulls dropped (a null is no value).
std::vector<const json*> Leaves(const std::vector<const json*>& raw) {
  std::vector<const json*> out;
  for (const json* v : raw) {
    if (v->is_array()) {
      for (const json& e : *v) {
        if (!e.is_null()) out.push_back(&e);
      }
    } else if (!v->is_null()) {
      out.push_back(v);
    }
  }
  return out;
}

bool AnyEquals(const std::vector<Value>& values, const json& stored) {
  return std::any_of(values.begin(), values.end(),
                     [&](const Value& v) { return v.Equals(stored); });
}

bool EvaluateFilter(const Node& n, VectorId id, const json* payload) {
  return CombineClauses(n, [&](const Node& c) { return Evaluate(c, id, payload); });
}

}  // namespace

bool Value::Equals(const json& stored) const {
  switch (kind) {
    case Kind::kString:
      return stored.is_string() && stored.get_ref<const std::string&>() == text;
    case Kind::kBool:
      return stored.is_boolean() && stored.get<bool>() == boolean;
    case Kind::kInteger:
      if (stored.is_number_unsigned()) {
        return integer >= 0 && stored.get<std::uint64_t>() == static_cast<std::uint64_t>(integer);
      }
      if (stored.is_number_integer()) return stored.get<std::int64_t>() == integer;
      if (stored.is_number_float()) {
        const double d = stored.get<double>();
        return std::floor(d) == d && d == static_cast<double>(integer);
      }
      return false;
  }
  return false;
}

void Resolve(const json& root, const std::vector<std::string>& path,
             std::vector<const json*>* out) {
  // Depth-first over the path; an array on the way is entered element by
  // element (the explicit "a[]" and the implicit "a" alike).
  struct Frame {
    const json* value;
    std::size_t step;
  };
  std::vector<Frame> stack{{&root, 0}};
  while (!stack.empty()) {
    const Frame f = stack.back();
    stack.pop_back();
    if (f.step == path.size()) {
      out->push_back(f.value);
      continue;
    }
    if (f.value->is_array()) {
      for (auto it = f.value->rbegin(); it != f.value->rend(); ++it) stack.push_back({&*it, f.step});
    } else if (f.value->is_object()) {
      auto it = f.value->find(path[f.step]);
      if (it != f.value->end()) stack.push_back({&*it, f.step + 1});
    }
  }
}

bool Evaluate(const Node& n, VectorId id, const json* payload) {
  switch (n.kind) {
    case NodeKind::kFilter:
      return EvaluateFilter(n, id, payload);
    case NodeKind::kHasId:
      return std::binary_search(n.ids.begin(), n.ids.end(), id);
    default:
      break;
  }
  std::vector<const json*> raw;
  if (payload != nullptr) Resolve(*payload, n.path, &raw);
  switch (n.kind) {
    case NodeKind::kIsNull:
      return std::any_of(raw.begin(), raw.end(), [](const json* v) { return v->is_null(); });
    case NodeKind::kIsEmpty:
      return Leaves(raw).empty();
    case NodeKind::kValuesCount:
      return n.bounds.Contains(static_cast<double>(Leaves(raw).size()));
    case NodeKind::kMatchValue:
    case NodeKind::kMatchAny: {
      for (const json* v : Leaves(raw)) {
        if (AnyEquals(n.values, *v)) return true;
      }
      return false;
    }
    case NodeKind::kMatchExcept: {
      const std::vector<const json*> leaves = Leaves(raw);
      if (leaves.empty()) return true;  // no value is in the list
      for (const json* v : leaves) {
        if (!AnyEquals(n.values, *v)) return true;
      }
      return false;
    }
    case NodeKind::kRange: {
      for (const json* v : Leaves(raw)) {
        if (v->is_number() && n.bounds.Contains(v->get<double>())) return true;
      }
      return false;
    }
    case NodeKind::kNested: {
      for (const json* v : Leaves(raw)) {
        if (v->is_object() && EvaluateFilter(n.must[0], id, v)) return true;
      }
      return false;
    }
    default:
      return false;
  }
}

}  // namespace strata::filter

namespace strata {

PayloadFilter::PayloadFilter() : root_(std::make_shared<filter::Node>()) {}
PayloadFilter::PayloadFilter(std::shared_ptr<const filter::Node> root) : root_(std::move(root)) {}

bool PayloadFilter::empty() const {
  const filter::Node& n = *root_;
  return n.kind == filter::NodeKind::kFilter && n.must.empty() && n.should.empty() &&
         n.must_not.empty() && n.min_count == 0;
}

const std::vector<std::string>& PayloadFilter::fields() const { return root_->fields; }

bool PayloadFilter::Matches(VectorId id, std::string_view payload) const {
  if (!reads_payload()) return filter::Evaluate(*root_, id, nullptr);
  nlohmann::json doc = nlohmann::json::parse(payload.begin(), payload.end(), nullptr,
                                             /*allow_exceptions=*/false);
  const bool object = !doc.is_discarded() && doc.is_object();
  return filter::Evaluate(*root_, id, object ? &doc : nullptr);
}

}  // namespace strata
