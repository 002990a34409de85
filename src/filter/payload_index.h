// Payload indexes: the declared payload fields of a collection's points kept
// in RAM, so that a filter on them is decided without reading the stored
// payload, and so that a selective filter can list the points that may pass
// (the exact-scan fallback of filtered search).
//
// For each point and declared field the index keeps the field's values as
// the JSON evaluator sees them (filter_eval.cc): the values at the path with
// arrays flattened one level and nulls dropped, each as a typed 16-byte leaf
// (interned string, integer, float, bool or "other" for objects and nested
// arrays), plus whether a null was present. Every field condition but
// `nested` is decided from that exactly as on the JSON payload, so a filter
// gives the same answer with or without an index (tested).
//
// Keyword, integer and bool fields also keep inverted lists (value -> ids)
// for `match` conditions; these give the candidates of a selective filter
// and the estimate of how many points pass. Lists are appended to and
// cleaned lazily: a replaced or erased point's old entries stay until a
// list holds more stale entries than live ones, and enumeration re-checks
// every candidate, so a stale entry never makes a wrong answer.
//
// Thread-safety: Set and Erase from one writer at a time, concurrently with
// any number of readers (Matches, Candidates, Bind, Estimate). Points are
// sharded over 64 reader-writer locks held for one point's read or write;
// the intern table and the inverted lists have one lock of their own, held
// by readers only to bind a filter and to copy out candidates.
#ifndef STRATA_FILTER_PAYLOAD_INDEX_H_
#define STRATA_FILTER_PAYLOAD_INDEX_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "filter/filter_tree.h"
#include "strata/filter.h"
#include "strata/types.h"

namespace strata::filter {

// One value of a field of one point.
struct Leaf {
  enum Kind : std::uint8_t { kString, kInt, kUint, kFloat, kBool, kOther, kHeader };
  std::uint64_t bits = 0;  // intern id, int64, uint64 (> INT64_MAX), double, bool, header
  Kind kind = kOther;
};

// A filter prepared for one index: its string values resolved to intern ids
// once, so that a point's check compares integers.
class BoundFilter {
 public:
  const Node& root() const { return *root_; }

 private:
  friend class PayloadIndex;
  const Node* root_ = nullptr;
  // Intern id of every kString value of the tree, by the Value's address
  // (absent: the string is in no point's payload, so it matches nothing).
  std::unordered_map<const Value*, std::uint32_t> strings_;
  // The indexed field each field condition reads (-1: none), by node
  // address: a filter has few, so a linear search beats hashing.
  std::vector<std::pair<const Node*, int>> fields_;
  int FieldOf(const Node* n) const {
    for (const auto& [node, field] : fields_) {
      if (node == n) return field;
    }
    return -1;
  }
};

class PayloadIndex {
 public:
  explicit PayloadIndex(std::vector<PayloadFieldSpec> fields);

  const std::vector<PayloadFieldSpec>& fields() const { return fields_; }
  // Whether every condition of `root` reads only indexed fields and none is
  // `nested` (which reads relative paths): then Matches decides it.
  bool Covers(const Node& root) const;

  // Indexes `payload` (JSON text; empty or not an object: no fields) as the
  // point `id`'s, replacing what it had. With no fields declared, Set and
  // Erase keep nothing (has_id candidates still work).
  void Set(VectorId id, std::string_view payload);
  void Erase(VectorId id);

  BoundFilter Bind(const Node& root) const;
  // Whether point `id` passes (requires Covers(filter.root())). A point the
  // index does not hold is judged with no fields (as a missing payload).
  bool Matches(const BoundFilter& filter, VectorId id) const;
  // Keeps the ids of `ids` that pass (as Matches), in an unspecified order.
  // For many ids: grouped by shard, each shard locked once (a lock per id
  // was a quarter of a 10 %-selective search's CPU with 20k candidates).
  void RetainMatching(const BoundFilter& filter, std::vector<VectorId>* ids) const;

  // Ids that may pass `root` (a superset of those that do, sorted, each
  // once), when the filter's structure bounds them by inverted lists or
  // has_id and the bound is at most `limit`; nullopt otherwise. A
  // conjunction's are the bounding lists narrowed by its other single-value
  // matches (IntersectMustLists). `exact`, if given, is set when every
  // listed id passes (a conjunction of single-value matches on posted fields
  // whose lists hold no stale entry): no check of the ids is needed.
  std::optional<std::vector<VectorId>> Candidates(const Node& root, std::size_t limit,
                                                  bool* exact = nullptr) const;
  // An upper bound on how many points pass, from the same structure
  // (nullopt: no bound short of every point).
  std::optional<std::uint64_t> UpperBound(const Node& root) const;
  // Up to `n` of the ids of the lists that bound `root` (those Candidates
  // starts from), however many there are, spread evenly over them (possibly
  // repeated), and how many there are in all (UpperBound): a sample to
  // estimate how many pass and to start a filtered walk from. nullopt where
  // Candidates would have no bound.
  struct CandidateSample {
    std::vector<VectorId> ids;
    std::uint64_t total = 0;
  };
  std::optional<CandidateSample> SampleCandidates(const Node& root, std::size_t n) const;

  std::uint64_t points() const;
  std::size_t MemoryBytes() const;

  // Appends the integer values point `id` holds in the indexed field at
  // position `field` of fields() to `out` (nothing for a point not indexed
  // or a field out of range): the labels of a label-aware graph build.
  void AppendIntegers(VectorId id, std::size_t field, std::vector<std::int64_t>* out) const;
  // The same for string values (a label-aware graph on a keyword field).
  void AppendStrings(VectorId id, std::size_t field, std::vector<std::string>* out) const;

 private:
  struct Shard {
    mutable std::shared_mutex mu;
    // Per point: for each field in order, a kHeader leaf (bits: count |
    // has_null << 32) then its `count` leaves.
    std::unordered_map<VectorId, std::vector<Leaf>> rows;
  };
  struct Posting {
    std::vector<VectorId> ids;
    std::uint64_t stale = 0;  // entries no longer valid
    bool sorted = true;       // ids strictly increasing (appends in id order keep it)
  };
  // An inverted-list key: the normalised value (integral numbers as kInt,
  // large unsigned as kUint, strings by intern id, bools).
  struct Key {
    std::uint32_t field;
    Leaf::Kind kind;
    std::uint64_t bits;
    bool operator==(const Key& o) const {
      return field == o.field && kind == o.kind && bits == o.bits;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()(k.bits * 0x9E3779B97F4A7C15ull ^ (k.field << 8) ^ k.kind);
    }
  };

  static std::size_t ShardIndex(VectorId id) { return (id * 0x9E3779B97F4A7C15ull) >> 58; }
  Shard& ShardOf(VectorId id) const { return shards_[ShardIndex(id)]; }
  std::vector<Leaf> Extract(std::string_view payload);  // interns (writer only)
  // Point `id`'s leaves of `kind` in field `field` (under its shard's lock).
  std::vector<Leaf> LeavesOf(VectorId id, std::size_t field, Leaf::Kind kind) const;
  // Inverted-list keys of a row's posted fields.
  void PostedKeys(const std::vector<Leaf>& row, std::vector<Key>* out) const;
  std::optional<Key> KeyOf(std::uint32_t field, const Leaf& leaf) const;
  // The index of the field `path` reads, or -1.
  int FieldOf(const std::vector<std::string>& path) const;
  bool Evaluate(const BoundFilter& f, const Node& n, VectorId id,
                const std::vector<Leaf>* row) const;
  bool ValueEquals(const BoundFilter& f, const Value& v, const Leaf& leaf) const;
  // The keys `n` (a match value/any on a posted field) is the union of.
  bool MatchKeys(const Node& n, std::vector<Key>* keys) const;  // under lists_mu_
  std::optional<std::uint64_t> Bound(const Node& n) const;      // under lists_mu_
  // The bound of a disjunction (nullopt when empty or any part unbounded).
  std::optional<std::uint64_t> SumBounds(const std::vector<Node>& list) const;
  // The id lists whose union bounds the points passing `n` (their sizes sum
  // to Bound(n)); false where there is no bound.
  bool BoundingLists(const Node& n, std::vector<const std::vector<VectorId>*>* out) const;
  // Drops from `ids` (sorted, unique) those absent from the sorted list of
  // any other `must` match of `root` on one posted value: a conjunction's
  // candidates become the intersection of its lists, not the shortest list
  // (under lists_mu_). Still a superset: stale entries stay until checked.
  // Returns whether the result is exact (every id passes; see Candidates).
  bool IntersectMustLists(const Node& root, std::vector<VectorId>* ids) const;

  std::vector<PayloadFieldSpec> fields_;
  std::vector<std::vector<std::string>> paths_;  // fields_[i]'s split path
  std::vector<bool> posted_;                     // fields_[i] keeps inverted lists
  mutable std::array<Shard, 64> shards_;
  mutable std::shared_mutex lists_mu_;
  std::unordered_map<std::string, std::uint32_t> interned_;  // guarded by lists_mu_
  std::vector<const std::string*> intern_names_;              // by intern id; lists_mu_
  std::unordered_map<Key, Posting, KeyHash> postings_;       // guarded by lists_mu_
  std::uint64_t leaves_ = 0;                                 // guarded by lists_mu_
  std::uint64_t points_ = 0;                                 // guarded by lists_mu_
};

}  // namespace strata::filter

#endif  // STRATA_FILTER_PAYLOAD_INDEX_H_
