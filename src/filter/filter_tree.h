// The parsed form of a PayloadFilter (include/strata/filter.h): a tree of
// nodes, evaluated against one payload by filter_eval.cc. Internal to the
// filter module and the evaluators built on it.
#ifndef STRATA_FILTER_FILTER_TREE_H_
#define STRATA_FILTER_FILTER_TREE_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strata/types.h"

namespace strata::filter {

// A value a field condition compares with.
struct Value {
  enum class Kind { kString, kInteger, kBool };
  Kind kind = Kind::kString;
  std::string text;       // kString
  std::int64_t integer = 0;  // kInteger
  bool boolean = false;   // kBool
  // Whether a stored JSON value equals this one (see filter.h for the rules).
  bool Equals(const nlohmann::json& stored) const;
};

// range / values_count bounds; unset ones do not bind.
struct Bounds {
  std::optional<double> gt, gte, lt, lte;
  bool Contains(double x) const {
    return (!gt || x > *gt) && (!gte || x >= *gte) && (!lt || x < *lt) && (!lte || x <= *lte);
  }
};

enum class NodeKind {
  kFilter,       // must / should / must_not / min_should
  kMatchValue,   // values[0]
  kMatchAny,     // values
  kMatchExcept,  // values
  kRange,        // bounds
  kValuesCount,  // bounds
  kIsEmpty,
  kIsNull,
  kHasId,        // ids (sorted)
  kNested,       // path, children[0]: the filter for each element
};

struct Node {
  NodeKind kind = NodeKind::kFilter;
  // kFilter: the clauses; kNested: must[0] is the element filter.
  std::vector<Node> must, should, must_not, min_should;
  std::uint64_t min_count = 0;  // min_should's; 0 when absent
  // Field conditions and kNested: the path, split at dots ("a[]" -> "a").
  std::string key;
  std::vector<std::string> path;
  std::vector<Value> values;
  Bounds bounds;
  std::vector<VectorId> ids;
  // The root only: every payload path the filter reads (sorted, unique).
  std::vector<std::string> fields;
};

// Every JSON value at `path` under `root` (arrays on the way are entered
// element by element), nulls included, arrays not yet flattened.
void Resolve(const nlohmann::json& root, const std::vector<std::string>& path,
             std::vector<const nlohmann::json*>* out);

// A filter node's clauses combined: every `must` holds, no `must_not`
// does, some `should` does (when any), at least min_count of `min_should`.
// `holds(child)` decides one child; shared by the JSON evaluator and the
// payload index's.
template <typename Holds>
bool CombineClauses(const Node& n, Holds&& holds) {
  for (const Node& c : n.must) {
    if (!holds(c)) return false;
  }
  for (const Node& c : n.must_not) {
    if (holds(c)) return false;
  }
  if (!n.should.empty()) {
    bool any = false;
    for (const Node& c : n.should) {
      if (holds(c)) {
        any = true;
        break;
      }
    }
    if (!any) return false;
  }
  if (n.min_count > 0) {
    std::uint64_t passed = 0;
    for (const Node& c : n.min_should) {
      if (holds(c) && ++passed >= n.min_count) break;
    }
    if (passed < n.min_count) return false;
  }
  return true;
}

// Whether `node` holds for the point `id` with `payload` (null: none, or
// not an object).
bool Evaluate(const Node& node, VectorId id, const nlohmann::json* payload);

}  // namespace strata::filter

#endif  // STRATA_FILTER_FILTER_TREE_H_
