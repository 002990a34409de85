// Payload filters in Qdrant's filter language: the one filter language of the
// collection, the Python module and the server (which speaks Qdrant's API).
//
//   {"must": [{"key": "tags", "match": {"any": ["red", "blue"]}},
//             {"key": "price", "range": {"lt": 50}}],
//    "must_not": [{"has_id": [7, 9]}]}
//
// A filter is `must` (all), `should` (at least one, when any are given),
// `must_not` (none) and `min_should` ({"conditions": [...], "min_count": n});
// each takes one condition or a list. A condition is one of:
//   - a field condition {"key": PATH, ...} with exactly one of
//       "match": {"value": V} (V a string, integer or boolean),
//                {"any": [V...]}, {"except": [V...]}
//       "range": {"gt"|"gte"|"lt"|"lte": number, ...}
//       "values_count": {"gt"|"gte"|"lt"|"lte": count, ...}
//   - {"is_empty": {"key": PATH}}  (missing, null or [])
//   - {"is_null": {"key": PATH}}   (present and null)
//   - {"has_id": [id...]}          (64-bit integer ids)
//   - {"nested": {"key": PATH, "filter": FILTER}}: some object of the array
//     at PATH passes FILTER on its own fields
//   - a filter object, nested.
// PATH is dotted ("metadata.source"); "a[].b" (or "a.b" where a is an array)
// reaches into every element of an array. A field holding an array matches
// when any element does (match value/any, range), `except` when some
// element is outside the list or the field has no values, `values_count`
// counts the elements. Nulls are no value. Integers compare with integral
// numbers of either JSON kind; strings with strings; booleans with booleans.
// Full-text, geo, datetime ranges and UUID ids are not supported:
// InvalidArgument naming them.
//
// A payload that is not a JSON object has no fields: only has_id and
// conditions that hold on missing fields (is_empty, except, values_count
// below 1, must_not ...) can pass for it.
#ifndef STRATA_FILTER_H_
#define STRATA_FILTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

namespace filter {
struct Node;  // the parsed condition tree (src/filter/filter_tree.h)
}

// A payload field indexed for filtering (CollectionOptions::payload_index):
// its dotted path and what it holds. Keyword, integer and bool fields keep
// inverted lists (value -> points) besides the per-point values, so that
// `match` conditions on them can list the points that pass; float fields
// keep the values only (range conditions are decided per point).
enum class PayloadFieldType : std::uint8_t { kKeyword, kInteger, kFloat, kBool };
struct PayloadFieldSpec {
  std::string path;  // "tags", "metadata.source", "items[].sku"
  PayloadFieldType type = PayloadFieldType::kKeyword;
  bool operator==(const PayloadFieldSpec&) const = default;
};
// "keyword", "integer", "float", "bool" (Qdrant's schema names).
Result<PayloadFieldType> ParsePayloadFieldType(std::string_view name);
std::string_view PayloadFieldTypeName(PayloadFieldType t);
// InvalidArgument unless `path` is a dotted path (as a filter key takes).
Status CheckPayloadPath(std::string_view path);

class PayloadFilter {
 public:
  // The filter that passes everything.
  PayloadFilter();
  // Parses Qdrant filter JSON. InvalidArgument with the path of the bad
  // part, e.g. "filter.must[1].match: unknown key 'valu'".
  static Result<PayloadFilter> Parse(std::string_view json);

  // Whether the point `id` with `payload` (JSON text; empty: none) passes.
  // Thread-safe (a filter is immutable).
  bool Matches(VectorId id, std::string_view payload) const;

  // True for the filter that passes everything (no conditions).
  bool empty() const;
  // The payload paths the filter reads (sorted, without duplicates).
  const std::vector<std::string>& fields() const;
  // Whether a payload is needed to decide (false: ids only, e.g. has_id).
  bool reads_payload() const { return !fields().empty(); }

  // Internal: the tree, for the evaluators that use payload indexes.
  const filter::Node& root() const { return *root_; }

 private:
  explicit PayloadFilter(std::shared_ptr<const filter::Node> root);
  std::shared_ptr<const filter::Node> root_;
};

}  // namespace strata

#endif  // STRATA_FILTER_H_
