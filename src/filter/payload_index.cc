#include "filter/payload_index.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <span>

#include "base/sorted_lookup.h"

namespace strata {

Result<PayloadFieldType> ParsePayloadFieldType(std::string_view name) {
  if (name == "keyword") return PayloadFieldType::kKeyword;
  if (name == "integer") return PayloadFieldType::kInteger;
  if (name == "float") return PayloadFieldType::kFloat;
  if (name == "bool") return PayloadFieldType::kBool;
  return Status::InvalidArgument("payload index: unknown field type '" + std::string(name) +
                                 "' (keyword, integer, float or bool)");
}

std::string_view PayloadFieldTypeName(PayloadFieldType t) {
  switch (t) {
    case PayloadFieldType::kKeyword:
      return "keyword";
    case PayloadFieldType::kInteger:
      return "integer";
    case PayloadFieldType::kFloat:
      return "float";
    case PayloadFieldType::kBool:
      return "bool";
  }
  return "keyword";
}

namespace {

// Splits a dotted path as filter keys are split (filter_parse.cc): "a[]"
// parts lose their brackets; empty parts and stray brackets are errors.
bool SplitPath(std::string_view path, std::vector<std::string>* out) {
  out->clear();
  std::string part;
  auto flush = [&]() {
    if (part.size() >= 2 && part.compare(part.size() - 2, 2, "[]") == 0) part.resize(part.size() - 2);
    if (part.empty() || part.find_first_of("[]") != std::string::npos) return false;
    out->push_back(part);
    part.clear();
    return true;
  };
  for (char c : path) {
    if (c == '.') {
      if (!flush()) return false;
    } else {
      part += c;
    }
  }
  return flush();
}

}  // namespace

Status CheckPayloadPath(std::string_view path) {
  std::vector<std::string> parts;
  if (!SplitPath(path, &parts)) {
    return Status::InvalidArgument("payload index: '" + std::string(path) +
                                   "' is not a dotted path (a.b, a[].b)");
  }
  return Status::OK();
}

}  // namespace strata

namespace strata::filter {
namespace {

using nlohmann::json;

constexpr std::uint64_t kNullBit = 1ull << 32;

std::uint32_t HeaderCount(const Leaf& h) { return static_cast<std::uint32_t>(h.bits); }
bool HeaderNull(const Leaf& h) { return (h.bits & kNullBit) != 0; }

// The span of field `field`'s leaves in `row` and its header.
const Leaf* FieldLeaves(const std::vector<Leaf>& row, std::size_t field, const Leaf** header) {
  std::size_t at = 0;
  for (std::size_t f = 0; f < field; ++f) at += 1 + HeaderCount(row[at]);
  *header = &row[at];
  return row.data() + at + 1;
}

bool ToDouble(const Leaf& l, double* out) {
  switch (l.kind) {
    case Leaf::kInt:
      *out = static_cast<double>(static_cast<std::int64_t>(l.bits));
      return true;
    case Leaf::kUint:
      *out = static_cast<double>(l.bits);
      return true;
    case Leaf::kFloat:
      *out = std::bit_cast<double>(l.bits);
      return true;
    default:
      return false;
  }
}

}  // namespace

PayloadIndex::PayloadIndex(std::vector<PayloadFieldSpec> fields) : fields_(std::move(fields)) {
  for (const PayloadFieldSpec& f : fields_) {
    std::vector<std::string> parts;
    SplitPath(f.path, &parts);  // checked by the caller (CheckPayloadPath)
    paths_.push_back(std::move(parts));
    posted_.push_back(f.type != PayloadFieldType::kFloat);
  }
}

int PayloadIndex::FieldOf(const std::vector<std::string>& path) const {
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    if (paths_[i] == path) return static_cast<int>(i);
  }
  return -1;
}

bool PayloadIndex::Covers(const Node& n) const {
  switch (n.kind) {
    case NodeKind::kFilter:
      for (const auto* list : {&n.must, &n.should, &n.must_not, &n.min_should}) {
        for (const Node& c : *list) {
          if (!Covers(c)) return false;
        }
      }
      return true;
    case NodeKind::kHasId:
      return true;
    case NodeKind::kNested:
      return false;
    default:
      return FieldOf(n.path) >= 0;
  }
}

std::vector<Leaf> PayloadIndex::Extract(std::string_view payload) {
  std::vector<Leaf> row;
  json doc;
  if (!payload.empty()) {
    doc = json::parse(payload.begin(), payload.end(), nullptr, /*allow_exceptions=*/false);
  }
  const bool object = !doc.is_discarded() && doc.is_object();
  std::vector<const json*> raw;
  for (std::size_t f = 0; f < fields_.size(); ++f) {
    const std::size_t header = row.size();
    row.push_back(Leaf{0, Leaf::kHeader});
    raw.clear();
    if (object) Resolve(doc, paths_[f], &raw);
    bool has_null = false;
    std::uint32_t count = 0;
    auto add = [&](const json& v) {
      Leaf l;
      if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        auto [it, fresh] = interned_.try_emplace(s, static_cast<std::uint32_t>(interned_.size()));
        if (fresh) intern_names_.push_back(&it->first);  // map nodes never move
        l = {it->second, Leaf::kString};
      } else if (v.is_boolean()) {
        l = {v.get<bool>() ? 1u : 0u, Leaf::kBool};
      } else if (v.is_number_unsigned()) {
        const std::uint64_t u = v.get<std::uint64_t>();
        l = {u, u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    ? Leaf::kInt
                    : Leaf::kUint};
      } else if (v.is_number_integer()) {
        l = {static_cast<std::uint64_t>(v.get<std::int64_t>()), Leaf::kInt};
      } else if (v.is_number_float()) {
        l = {std::bit_cast<std::uint64_t>(v.get<double>()), Leaf::kFloat};
      } else {
        l = {0, Leaf::kOther};
      }
      row.push_back(l);
      ++count;
    };
    for (const json* v : raw) {
      if (v->is_null()) {
        has_null = true;
      } else if (v->is_array()) {
        for (const json& e : *v) {
          if (!e.is_null()) add(e);
        }
      } else {
        add(*v);
      }
    }
    row[header].bits = count | (has_null ? kNullBit : 0);
  }
  row.shrink_to_fit();
  return row;
}

std::optional<PayloadIndex::Key> PayloadIndex::KeyOf(std::uint32_t field, const Leaf& l) const {
  switch (l.kind) {
    case Leaf::kString:
    case Leaf::kInt:
    case Leaf::kUint:
    case Leaf::kBool:
      return Key{field, l.kind, l.bits};
    case Leaf::kFloat: {
      // An integral float equals the integer match value (Value::Equals).
      const double d = std::bit_cast<double>(l.bits);
      if (std::floor(d) == d && d >= -9.2e18 && d <= 9.2e18) {
        return Key{field, Leaf::kInt, static_cast<std::uint64_t>(static_cast<std::int64_t>(d))};
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

void PayloadIndex::PostedKeys(const std::vector<Leaf>& row, std::vector<Key>* out) const {
  out->clear();
  std::size_t at = 0;
  for (std::uint32_t f = 0; f < fields_.size() && at < row.size(); ++f) {
    const std::uint32_t count = HeaderCount(row[at]);
    if (posted_[f]) {
      for (std::uint32_t i = 0; i < count; ++i) {
        if (auto k = KeyOf(f, row[at + 1 + i])) out->push_back(*k);
      }
    }
    at += 1 + count;
  }
  auto less = [](const Key& a, const Key& b) {
    return std::tie(a.field, a.kind, a.bits) < std::tie(b.field, b.kind, b.bits);
  };
  std::sort(out->begin(), out->end(), less);
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

void PayloadIndex::Set(VectorId id, std::string_view payload) {
  if (fields_.empty()) return;  // nothing to keep per point
  std::unique_lock<std::shared_mutex> lists(lists_mu_);
  std::vector<Leaf> row = Extract(payload);
  std::vector<Key> added;
  PostedKeys(row, &added);
  std::vector<Key> removed;
  const std::uint64_t new_leaves = row.size();
  {
    Shard& s = ShardOf(id);
    std::unique_lock<std::shared_mutex> lock(s.mu);
    auto [it, fresh] = s.rows.try_emplace(id);
    if (!fresh) {
      PostedKeys(it->second, &removed);
      leaves_ -= it->second.size();
    } else {
      ++points_;
    }
    it->second = std::move(row);
  }
  leaves_ += new_leaves;
  // Keys in both lists keep their entry.
  std::vector<Key> gone, fresh_keys;
  for (const Key& k : removed) {
    if (std::find(added.begin(), added.end(), k) == added.end()) gone.push_back(k);
  }
  for (const Key& k : added) {
    if (std::find(removed.begin(), removed.end(), k) == removed.end()) fresh_keys.push_back(k);
  }
  for (const Key& k : fresh_keys) {
    Posting& p = postings_[k];
    if (!p.ids.empty() && id <= p.ids.back()) p.sorted = false;
    p.ids.push_back(id);
  }
  for (const Key& k : gone) {
    auto it = postings_.find(k);
    if (it == postings_.end()) continue;
    Posting& p = it->second;
    if (++p.stale * 2 <= p.ids.size() || p.stale < 16) continue;
    // More stale entries than live: keep the ids whose row still has the key.
    std::sort(p.ids.begin(), p.ids.end());
    p.ids.erase(std::unique(p.ids.begin(), p.ids.end()), p.ids.end());
    std::vector<Key> keys;
    std::erase_if(p.ids, [&](VectorId x) {
      Shard& s = ShardOf(x);
      std::shared_lock<std::shared_mutex> lock(s.mu);
      auto r = s.rows.find(x);
      if (r == s.rows.end()) return true;
      PostedKeys(r->second, &keys);
      return std::find(keys.begin(), keys.end(), k) == keys.end();
    });
    p.stale = 0;
    p.sorted = true;
    if (p.ids.empty()) {
      postings_.erase(it);
    } else {
      p.ids.shrink_to_fit();
    }
  }
}

void PayloadIndex::Erase(VectorId id) {
  if (fields_.empty()) return;
  std::unique_lock<std::shared_mutex> lists(lists_mu_);
  std::vector<Key> removed;
  {
    Shard& s = ShardOf(id);
    std::unique_lock<std::shared_mutex> lock(s.mu);
    auto it = s.rows.find(id);
    if (it == s.rows.end()) return;
    PostedKeys(it->second, &removed);
    leaves_ -= it->second.size();
    s.rows.erase(it);
    --points_;
  }
  for (const Key& k : removed) {
    auto it = postings_.find(k);
    if (it != postings_.end()) ++it->second.stale;
  }
}

BoundFilter PayloadIndex::Bind(const Node& root) const {
  BoundFilter out;
  out.root_ = &root;
  std::shared_lock<std::shared_mutex> lists(lists_mu_);
  std::vector<const Node*> stack{&root};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->kind != NodeKind::kFilter && n->kind != NodeKind::kHasId) {
      out.fields_.emplace_back(n, FieldOf(n->path));
    }
    for (const Value& v : n->values) {
      if (v.kind != Value::Kind::kString) continue;
      auto it = interned_.find(v.text);
      if (it != interned_.end()) out.strings_.emplace(&v, it->second);
    }
    for (const auto* list : {&n->must, &n->should, &n->must_not, &n->min_should}) {
      for (const Node& c : *list) stack.push_back(&c);
    }
  }
  return out;
}

bool PayloadIndex::ValueEquals(const BoundFilter& f, const Value& v, const Leaf& l) const {
  switch (v.kind) {
    case Value::Kind::kString: {
      if (l.kind != Leaf::kString) return false;
      auto it = f.strings_.find(&v);
      return it != f.strings_.end() && it->second == l.bits;
    }
    case Value::Kind::kBool:
      return l.kind == Leaf::kBool && (l.bits != 0) == v.boolean;
    case Value::Kind::kInteger:
      if (l.kind == Leaf::kInt) return static_cast<std::int64_t>(l.bits) == v.integer;
      if (l.kind == Leaf::kFloat) {
        const double d = std::bit_cast<double>(l.bits);
        return std::floor(d) == d && d == static_cast<double>(v.integer);
      }
      return false;  // kUint is above every int64
  }
  return false;
}

// Mirrors filter::Evaluate (filter_eval.cc) on the indexed leaves.
bool PayloadIndex::Evaluate(const BoundFilter& f, const Node& n, VectorId id,
                            const std::vector<Leaf>* row) const {
  switch (n.kind) {
    case NodeKind::kFilter:
      return CombineClauses(n, [&](const Node& c) { return Evaluate(f, c, id, row); });
    case NodeKind::kHasId:
      return std::binary_search(n.ids.begin(), n.ids.end(), id);
    default:
      break;
  }
  const Leaf empty_header{0, Leaf::kHeader};
  const Leaf* header = &empty_header;
  const Leaf* leaves = nullptr;
  const int field = f.FieldOf(&n);
  if (row != nullptr && field >= 0) leaves = FieldLeaves(*row, static_cast<std::size_t>(field), &header);
  const std::uint32_t count = HeaderCount(*header);
  auto any_equals = [&](const Leaf& l) {
    return std::any_of(n.values.begin(), n.values.end(),
                       [&](const Value& v) { return ValueEquals(f, v, l); });
  };
  switch (n.kind) {
    case NodeKind::kIsNull:
      return HeaderNull(*header);
    case NodeKind::kIsEmpty:
      return count == 0;
    case NodeKind::kValuesCount:
      return n.bounds.Contains(static_cast<double>(count));
    case NodeKind::kMatchValue:
    case NodeKind::kMatchAny:
      for (std::uint32_t i = 0; i < count; ++i) {
        if (any_equals(leaves[i])) return true;
      }
      return false;
    case NodeKind::kMatchExcept:
      if (count == 0) return true;
      for (std::uint32_t i = 0; i < count; ++i) {
        if (!any_equals(leaves[i])) return true;
      }
      return false;
    case NodeKind::kRange:
      for (std::uint32_t i = 0; i < count; ++i) {
        double d;
        if (ToDouble(leaves[i], &d) && n.bounds.Contains(d)) return true;
      }
      return false;
    default:
      return false;  // kNested: not covered
  }
}

std::vector<Leaf> PayloadIndex::LeavesOf(VectorId id, std::size_t field, Leaf::Kind kind) const {
  std::vector<Leaf> out;
  if (field >= fields_.size()) return out;
  const Shard& s = ShardOf(id);
  std::shared_lock<std::shared_mutex> lock(s.mu);
  auto it = s.rows.find(id);
  if (it == s.rows.end()) return out;
  const Leaf* header = nullptr;
  const Leaf* leaves = FieldLeaves(it->second, field, &header);
  const std::uint32_t count = HeaderCount(*header);
  for (std::uint32_t i = 0; i < count; ++i) {
    if (leaves[i].kind == kind) out.push_back(leaves[i]);
  }
  return out;
}

void PayloadIndex::AppendIntegers(VectorId id, std::size_t field,
                                  std::vector<std::int64_t>* out) const {
  for (const Leaf& l : LeavesOf(id, field, Leaf::kInt)) out->push_back(static_cast<std::int64_t>(l.bits));
}

void PayloadIndex::AppendStrings(VectorId id, std::size_t field,
                                 std::vector<std::string>* out) const {
  const std::vector<Leaf> interned = LeavesOf(id, field, Leaf::kString);
  if (interned.empty()) return;
  // Names after the shard's lock is let go (LeavesOf): Set takes lists_mu_ first.
  std::shared_lock<std::shared_mutex> lists(lists_mu_);
  for (const Leaf& l : interned) out->push_back(*intern_names_[l.bits]);
}

bool PayloadIndex::Matches(const BoundFilter& filter, VectorId id) const {
  Shard& s = ShardOf(id);
  std::shared_lock<std::shared_mutex> lock(s.mu);
  auto it = s.rows.find(id);
  return Evaluate(filter, filter.root(), id, it == s.rows.end() ? nullptr : &it->second);
}

void PayloadIndex::RetainMatching(const BoundFilter& filter, std::vector<VectorId>* ids) const {
  constexpr std::size_t kFew = 64;  // below this, grouping costs more than it saves
  if (ids->size() < kFew) {
    std::erase_if(*ids, [&](VectorId id) { return !Matches(filter, id); });
    return;
  }
  // Counting sort by shard.
  std::array<std::size_t, std::tuple_size_v<decltype(shards_)> + 1> start{};
  for (VectorId id : *ids) ++start[ShardIndex(id) + 1];
  for (std::size_t s = 1; s < start.size(); ++s) start[s] += start[s - 1];
  std::vector<VectorId> grouped(ids->size());
  auto next = start;
  for (VectorId id : *ids) grouped[next[ShardIndex(id)]++] = id;
  ids->clear();
  for (std::size_t s = 0; s + 1 < start.size(); ++s) {
    if (start[s] == start[s + 1]) continue;
    const Shard& shard = shards_[s];
    std::shared_lock<std::shared_mutex> lock(shard.mu);
    for (std::size_t i = start[s]; i < start[s + 1]; ++i) {
      const VectorId id = grouped[i];
      auto it = shard.rows.find(id);
      if (Evaluate(filter, filter.root(), id, it == shard.rows.end() ? nullptr : &it->second)) {
        ids->push_back(id);
      }
    }
  }
}

bool PayloadIndex::MatchKeys(const Node& n, std::vector<Key>* keys) const {
  if (n.kind != NodeKind::kMatchValue && n.kind != NodeKind::kMatchAny) return false;
  const int field = FieldOf(n.path);
  if (field < 0 || !posted_[static_cast<std::size_t>(field)]) return false;
  const auto f = static_cast<std::uint32_t>(field);
  keys->clear();
  for (const Value& v : n.values) {
    switch (v.kind) {
      case Value::Kind::kString: {
        auto it = interned_.find(v.text);
        if (it != interned_.end()) keys->push_back(Key{f, Leaf::kString, it->second});
        break;
      }
      case Value::Kind::kInteger:
        keys->push_back(Key{f, Leaf::kInt, static_cast<std::uint64_t>(v.integer)});
        break;
      case Value::Kind::kBool:
        keys->push_back(Key{f, Leaf::kBool, v.boolean ? 1u : 0u});
        break;
    }
  }
  return true;
}

namespace {

// Which part of a filter node bounds its passing points (see Bound).
enum class Via { kNone, kMust, kShould, kMinShould };

}  // namespace

std::optional<std::uint64_t> PayloadIndex::Bound(const Node& n) const {
  if (n.kind == NodeKind::kHasId) return n.ids.size();
  std::vector<Key> keys;
  if (MatchKeys(n, &keys)) {
    std::uint64_t total = 0;
    for (const Key& k : keys) {
      auto it = postings_.find(k);
      if (it != postings_.end()) total += it->second.ids.size();
    }
    return total;
  }
  if (n.kind != NodeKind::kFilter) return std::nullopt;
  std::optional<std::uint64_t> best;
  auto consider = [&](std::optional<std::uint64_t> b) {
    if (b && (!best || *b < *best)) best = b;
  };
  // A conjunction passes no more points than its most selective part; a
  // disjunction no more than all its parts together.
  for (const Node& c : n.must) consider(Bound(c));
  consider(SumBounds(n.should));
  if (n.min_count > 0) consider(SumBounds(n.min_should));
  return best;
}

std::optional<std::uint64_t> PayloadIndex::SumBounds(const std::vector<Node>& list) const {
  if (list.empty()) return std::nullopt;
  std::uint64_t total = 0;
  for (const Node& c : list) {
    auto b = Bound(c);
    if (!b) return std::nullopt;
    total += *b;
  }
  return total;
}

bool PayloadIndex::BoundingLists(const Node& n,
                                 std::vector<const std::vector<VectorId>*>* out) const {
  if (n.kind == NodeKind::kHasId) {
    out->push_back(&n.ids);
    return true;
  }
  std::vector<Key> keys;
  if (MatchKeys(n, &keys)) {
    for (const Key& k : keys) {
      auto it = postings_.find(k);
      if (it != postings_.end()) out->push_back(&it->second.ids);
    }
    return true;
  }
  if (n.kind != NodeKind::kFilter) return false;
  const auto target = Bound(n);
  if (!target) return false;
  // The lists of the part that gave the bound.
  for (const Node& c : n.must) {
    auto b = Bound(c);
    if (b && *b == *target) return BoundingLists(c, out);
  }
  const bool by_should = SumBounds(n.should) == target;
  for (const Node& c : by_should ? n.should : n.min_should) {
    if (!BoundingLists(c, out)) return false;
  }
  return true;
}

std::optional<std::vector<VectorId>> PayloadIndex::Candidates(const Node& root,
                                                               std::size_t limit,
                                                               bool* exact) const {
  std::vector<VectorId> out;
  bool all_pass = false;
  {
    std::shared_lock<std::shared_mutex> lock(lists_mu_);
    const auto bound = Bound(root);
    if (!bound || *bound > limit) return std::nullopt;
    std::vector<const std::vector<VectorId>*> lists;
    if (!BoundingLists(root, &lists)) return std::nullopt;
    for (const auto* list : lists) out.insert(out.end(), list->begin(), list->end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    all_pass = IntersectMustLists(root, &out);
  }
  if (exact != nullptr) *exact = all_pass;
  return out;
}

bool PayloadIndex::IntersectMustLists(const Node& root, std::vector<VectorId>* ids) const {
  if (root.kind != NodeKind::kFilter) return ids->empty();
  // Exact while every condition is a single-value match whose list is
  // exactly the points with that value (sorted, so unique; nothing stale).
  bool exact = root.should.empty() && root.must_not.empty() && root.min_should.empty();
  std::vector<Key> keys;
  for (const Node& c : root.must) {
    if (ids->empty()) return true;
    if (!MatchKeys(c, &keys)) {
      exact = false;
      continue;
    }
    if (keys.empty()) {  // a value no point has: nothing passes
      ids->clear();
      return true;
    }
    if (keys.size() != 1) {  // a union of lists: left to the check
      exact = false;
      continue;
    }
    auto it = postings_.find(keys[0]);
    if (it == postings_.end()) {
      ids->clear();
      return true;
    }
    const Posting& p = it->second;
    if (!p.sorted || p.stale != 0) exact = false;
    if (!p.sorted) continue;
    // Candidates kept where the sorted list has them, found by galloping
    // forward (a long list of a common value against few candidates costs
    // a few probes per candidate, not a walk of the list).
    std::size_t kept = 0;
    ForEachFoundAscending(
        p.ids.begin(), p.ids.end(), std::span<const std::uint64_t>(*ids),
        [](VectorId e) { return e; }, [&](auto at) { (*ids)[kept++] = *at; });
    ids->resize(kept);
  }
  return exact || ids->empty();
}

std::optional<PayloadIndex::CandidateSample> PayloadIndex::SampleCandidates(const Node& root,
                                                                            std::size_t n) const {
  std::shared_lock<std::shared_mutex> lock(lists_mu_);
  std::vector<const std::vector<VectorId>*> lists;
  if (!BoundingLists(root, &lists)) return std::nullopt;
  CandidateSample sample;
  for (const auto* list : lists) sample.total += list->size();
  const std::uint64_t take = std::min<std::uint64_t>(n, sample.total);
  sample.ids.reserve(take);
  // The i-th pick is entry i * total / take of the lists laid end to end.
  std::size_t list = 0;
  std::uint64_t before = 0;  // entries in lists[0, list)
  for (std::uint64_t i = 0; i < take; ++i) {
    const std::uint64_t at = i * sample.total / take;
    while (at >= before + lists[list]->size()) before += lists[list++]->size();
    sample.ids.push_back((*lists[list])[at - before]);
  }
  return sample;
}

std::optional<std::uint64_t> PayloadIndex::UpperBound(const Node& root) const {
  std::shared_lock<std::shared_mutex> lists(lists_mu_);
  return Bound(root);
}

std::uint64_t PayloadIndex::points() const {
  std::shared_lock<std::shared_mutex> lists(lists_mu_);
  return points_;
}

std::size_t PayloadIndex::MemoryBytes() const {
  std::shared_lock<std::shared_mutex> lists(lists_mu_);
  // Hash-map nodes (key, vector header, next pointer) and buckets, the
  // leaves, a malloc header per row; the lists' ids; interned strings.
  std::size_t bytes = points_ * (8 + sizeof(std::vector<Leaf>) + 8 + 8 + 16) + leaves_ * sizeof(Leaf);
  for (const auto& [k, p] : postings_) bytes += p.ids.capacity() * sizeof(VectorId) + 64;
  for (const auto& [s, id] : interned_) bytes += s.capacity() + 48 + sizeof(const std::string*);
  return bytes;
}

}  // namespace strata::filter
