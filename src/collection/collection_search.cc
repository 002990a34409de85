// Collection search: the SSD index (tombstones checked inside the walk)
// and an exact scan of the pending set, both at one snapshot, merged by
// exact distance.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <thread>

#include "collection/collection_impl.h"
#include "collection/store_keys.h"
#include "kernels/distance.h"

namespace strata {
namespace {

using Hit = std::pair<float, VectorId>;  // distance, user id

// A payload filter's test of one user id, for one query: decided on the
// payload index when it covers the filter, else on the record read from
// RocksDB, each id decided once.
class PayloadTest {
 public:
  PayloadTest(const Collection::Impl& m, const PayloadFilter& filter,
              const filter::PayloadIndex& index)
      : m_(m), filter_(filter), index_(index), covered_(index.Covers(filter.root())) {
    if (covered_) bound_.emplace(index.Bind(filter.root()));
  }
  // Whether the test needs no stored payload.
  bool in_ram() const { return covered_ || !filter_.reads_payload(); }
  bool operator()(VectorId id) {
    if (!filter_.reads_payload()) return filter_.Matches(id, {});
    if (covered_) return index_.Matches(*bound_, id);
    auto [it, fresh] = decided_.try_emplace(id, false);
    if (!fresh) return it->second;
    std::string value;
    ++payload_reads_;
    if (m_.db->Get(ReadOptions(), collection::IdKey(collection::kVectorPrefix, id), &value).ok()) {
      auto rec = collection::DecodeRecord(value, m_.vector_bytes);
      if (rec.ok()) it->second = filter_.Matches(id, rec->payload);
    }
    return it->second;  // a record gone since the snapshot: deleted, not returned
  }
  // Keeps the ids that pass, in an unspecified order (for in_ram() tests:
  // the payload index checks many ids at a time).
  void Retain(std::vector<VectorId>* ids) {
    if (covered_ && filter_.reads_payload()) {
      index_.RetainMatching(*bound_, ids);
    } else {
      std::erase_if(*ids, [&](VectorId id) { return !(*this)(id); });
    }
  }
  // The test on a record already read (the exact scan's), when it needs
  // the payload (!in_ram()).
  bool OnRecord(VectorId id, std::string_view payload) {
    ++payload_reads_;
    return filter_.Matches(id, payload);
  }
  std::uint32_t payload_reads() const { return payload_reads_; }

 private:
  static rocksdb::ReadOptions ReadOptions() {
    rocksdb::ReadOptions ro;
    ro.fill_cache = true;
    return ro;
  }
  const Collection::Impl& m_;
  const PayloadFilter& filter_;
  const filter::PayloadIndex& index_;
  const bool covered_;
  std::optional<filter::BoundFilter> bound_;
  std::unordered_map<VectorId, bool> decided_;
  std::uint32_t payload_reads_ = 0;
};

// The filter's candidates, when the payload index bounds them
// (CollectionSearchParams::exact_scan_limit): the ids that pass (`exact`)
// when the payload index decides the filter, else a superset.
struct FilterCandidates {
  std::vector<VectorId> ids;
  bool exact = false;
};

// How a filtered search goes: the exact scan of `candidates`, or a walk
// widened for the fraction of points that pass and started among
// `entry_ids` (passing points, when a sample found some).
struct FilterPlan {
  std::optional<FilterCandidates> candidates;
  float fraction = 1.0f;
  std::vector<VectorId> entry_ids;
};

// Sampled ids of the payload index's candidates checked per query: a few
// microseconds in RAM, enough to tell a filter that passes 1 % of its
// candidates from one that passes them all.
constexpr std::size_t kCandidateSample = 256;
// A filter the sample estimates at most exact_scan_limit points pass is
// listed and checked whole when its candidates number at most this many
// times the limit (an AND of common values): checking them in RAM costs
// less than a walk that few points pass.
constexpr std::uint64_t kCheckWholeFactor = 4;

// The exact-scan fallback for an index that cannot rank a restricted set
// (a graph without codes in RAM): the k nearest of the candidates that pass, by exact distance on
// their stored vectors (every live point has a record, so this is exact).
Status ScanStoredRecords(const Collection::Impl& m, std::span<const float> query,
                         const FilterCandidates& candidates, PayloadTest* test,
                         std::vector<Hit>* hits, QueryStats* qs) {
  const std::vector<VectorId>& ids = candidates.ids;
  std::vector<std::string> values;
  const std::vector<rocksdb::Status> st = m.GetRecords(ids, &values);
  const kernels::ErasedDistanceFn fn =
      kernels::GetDistanceFn(m.stored.metric, ElementType::kFloat32);
  std::vector<float> row(m.stored.dim);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (st[i].IsNotFound()) continue;  // deleted (or a stale list entry)
    STRATA_RETURN_IF_ERROR(FromRocks(st[i], "search: reading record " + std::to_string(ids[i])));
    STRATA_ASSIGN_OR_RETURN(auto rec, collection::DecodeRecord(values[i], m.vector_bytes));
    if (!candidates.exact && !test->OnRecord(ids[i], rec.payload)) continue;
    m.LoadFloat(reinterpret_cast<const std::byte*>(rec.vector.data()), row.data());
    hits->emplace_back(fn(query.data(), row.data(), m.stored.dim), ids[i]);
    ++qs->full_distances;
  }
  return Status::OK();
}

// The index's live-slot test and a payload test together, by slot.
// With `bits` (one per slot: the slots of the filter's candidates), a slot
// outside them is rejected without a lookup, and one inside is accepted
// without one when `bits_exact` (the candidates were checked already).
class FilteredSlots final : public IdFilter {
 public:
  FilteredSlots(const collection::IndexVersion& v, std::uint64_t snapshot, PayloadTest* test,
                const std::vector<std::uint64_t>* bits, bool bits_exact)
      : version_(v), live_(v, snapshot), test_(test), bits_(bits), bits_exact_(bits_exact) {}
  bool Accept(std::uint64_t slot) const override {
    if (!live_.Accept(slot)) return false;
    if (bits_ != nullptr) {
      if (((*bits_)[slot >> 6] >> (slot & 63) & 1) == 0) return false;
      if (bits_exact_) return true;
    }
    return (*test_)(version_.user_id(slot));
  }

 private:
  const collection::IndexVersion& version_;
  collection::LiveSlotFilter live_;
  PayloadTest* test_;
  const std::vector<std::uint64_t>* bits_;
  bool bits_exact_;
};

// Below this many candidates a version that cannot rank a restricted set
// (a graph without codes in RAM) has their stored vectors read instead of
// walking: each read costs about 10 us (RocksDB, 200k x 128 on 2 cores), a
// filtered walk a few ms (bench/results/filter_collection_synth200k_ivf.md).
constexpr std::size_t kStoredScanMax = 256;
// An index ranking a restricted set by estimates (IVF) pays a random RAM
// access per candidate; past this many candidates its bitmap walk is
// faster (synth 1M, 2 threads: 927 candidates 602-707 QPS ranked vs 225
// walked; 9,163: 146 vs 249; bench/results/filter_synth1m_2026-12-03.md).
constexpr std::size_t kEstimatedRankMax = 4096;

// A version at most this many of whose rows are live, and at most
// kFewLiveShare of them, has its live rows ranked exactly (FewLiveRows)
// instead of walked: a drain that deleted 4,931 rows down to 34 in place
// left a graph whose walk, widened to its cap by the live share, found 36 %
// of the 10 nearest (a crash-test round, verified before the rebuild that
// returns such a collection to the flat phase).
constexpr std::uint64_t kFewLiveRows = 1024;
constexpr double kFewLiveShare = 0.05;

// The rows of `v` live at `snapshot`, when they are few (above); false
// (and `rows` untouched) otherwise. Listing them visits every row once,
// which only a version nearly all dead pays.
bool FewLiveRows(const collection::IndexVersion& v, std::uint64_t snapshot,
                 std::vector<std::uint64_t>* rows) {
  const std::uint64_t size = v.size();
  const std::uint64_t dead = std::min(v.dead_count(), size);
  const std::uint64_t live = size - dead;
  if (dead == 0 || live > kFewLiveRows ||
      static_cast<double>(live) > kFewLiveShare * static_cast<double>(size)) {
    return false;
  }
  for (std::uint64_t r = 0; r < size; ++r) {
    if (v.LiveAt(r, snapshot)) rows->push_back(r);
  }
  return true;
}

// Exact distances for hits whose index distance is an estimate (IVF with
// ex-code re-ranking): the stored vectors from RocksDB. A record rewritten
// after the snapshot keeps its estimate (its snapshot copy is gone). Hits
// past the k-th estimate (a restricted scan's extra k) are re-ranked only
// while their estimate, less twice the largest error the first k showed,
// could still beat the k-th exact distance; the others are dropped as
// unlikely to be among the k nearest. Under kMeasuredErrorMin first hits
// the largest error is too thin a sample, and all are re-ranked. Each
// RocksDB read costs a 4 KiB block read (about 15 us: 8 % of a 0.1 % IVF
// query's time with 2k read).
Status ExactDistances(const Collection::Impl& m, std::uint64_t snapshot,
                      std::span<const float> query, std::size_t k, std::vector<Hit>* hits) {
  if (hits->empty()) return Status::OK();
  std::sort(hits->begin(), hits->end());  // by estimate
  const kernels::ErasedDistanceFn fn =
      kernels::GetDistanceFn(m.stored.metric, ElementType::kFloat32);
  std::vector<float> row(m.stored.dim);
  float largest_error = 0.0f;
  std::vector<float> exact;  // of the re-ranked hits, for the k-th
  auto rerank = [&](std::size_t begin, std::size_t end) -> Status {
    std::vector<VectorId> ids;
    for (std::size_t i = begin; i < end; ++i) ids.push_back((*hits)[i].second);
    std::vector<std::string> values;
    const std::vector<rocksdb::Status> st = m.GetRecords(ids, &values);
    for (std::size_t i = begin; i < end; ++i) {
      if (!st[i - begin].ok()) continue;
      STRATA_ASSIGN_OR_RETURN(auto rec,
                              collection::DecodeRecord(values[i - begin], m.vector_bytes));
      if (rec.seq > snapshot) continue;
      m.LoadFloat(reinterpret_cast<const std::byte*>(rec.vector.data()), row.data());
      const float d = fn(query.data(), row.data(), m.stored.dim);
      largest_error = std::max(largest_error, std::abs(d - (*hits)[i].first));
      (*hits)[i].first = d;
      exact.push_back(d);
    }
    return Status::OK();
  };
  constexpr std::size_t kMeasuredErrorMin = 8;
  const std::size_t first = std::min(k, hits->size());
  STRATA_RETURN_IF_ERROR(rerank(0, first));
  if (first < hits->size()) {
    std::size_t end = hits->size();
    if (exact.size() >= k && k >= kMeasuredErrorMin) {
      std::nth_element(exact.begin(), exact.begin() + static_cast<std::ptrdiff_t>(k - 1),
                       exact.end());
      const float kth = exact[k - 1];
      end = first;
      while (end < hits->size() && (*hits)[end].first - 2.0f * largest_error < kth) ++end;
    }
    STRATA_RETURN_IF_ERROR(rerank(first, end));
    hits->resize(end);
  }
  std::sort(hits->begin(), hits->end());
  return Status::OK();
}

// Decides how a filtered search goes (FilterPlan). Candidates within the
// limit are listed (and checked in RAM when the payload index decides the
// filter). Otherwise, when it decides it, a sample of the candidates
// estimates how many pass: few (an AND of common values) and the candidates
// are listed and checked whole for the exact scan; more and the walk gets
// the estimated fraction and the sample's passing points as entry points.
void PlanFilter(const Collection::Impl& m, const PayloadFilter& filter, std::uint64_t limit,
                const filter::PayloadIndex& index, PayloadTest* test, FilterPlan* plan) {
  const double live = static_cast<double>(std::max<std::uint64_t>(1, m.live.load()));
  auto list_exact = [&](std::uint64_t bound) {
    bool all_pass = false;
    auto ids = index.Candidates(filter.root(), bound, &all_pass);
    if (!ids) return;
    plan->candidates.emplace();
    plan->candidates->ids = std::move(*ids);
    if (all_pass || test->in_ram()) {
      if (!all_pass) test->Retain(&plan->candidates->ids);
      plan->candidates->exact = true;
    }
    // An index that walks with them as a bitmap widens for their share.
    plan->fraction = static_cast<float>(
        std::clamp(static_cast<double>(plan->candidates->ids.size()) / live, 1e-6, 1.0));
  };
  if (limit > 0) {
    list_exact(limit);
    if (plan->candidates) return;
  }
  if (!test->in_ram()) {
    // Checking a sample would read stored payloads: the bound alone.
    if (auto bound = index.UpperBound(filter.root())) {
      plan->fraction = static_cast<float>(std::clamp(*bound / live, 1e-6, 1.0));
    }
    return;
  }
  auto sample = index.SampleCandidates(filter.root(), kCandidateSample);
  if (!sample) return;  // nothing bounds it: an unwidened walk
  if (sample->total == 0) {
    plan->fraction = static_cast<float>(1e-6);
    return;
  }
  std::sort(sample->ids.begin(), sample->ids.end());
  sample->ids.erase(std::unique(sample->ids.begin(), sample->ids.end()), sample->ids.end());
  const std::size_t drawn = sample->ids.size();
  test->Retain(&sample->ids);
  // Half a pass where none did: an estimate, not zero.
  const double passing =
      (static_cast<double>(sample->ids.size()) + (sample->ids.empty() ? 0.5 : 0.0)) *
      static_cast<double>(sample->total) / static_cast<double>(drawn);
  if (limit > 0 && passing <= static_cast<double>(limit) &&
      sample->total <= kCheckWholeFactor * limit) {
    list_exact(sample->total);
    if (plan->candidates) return;
  }
  plan->fraction = static_cast<float>(std::clamp(passing / live, 1e-6, 1.0));
  plan->entry_ids = std::move(sample->ids);
}

// A label-aware graph version (CollectionOptions::graph_label_field): the
// start rows of the label values the filter's top-level `must` matches on
// the label field, from which a walk the filter steers begins. Empty when
// the filter matches none (or none the version has a start row for).
std::vector<std::uint64_t> LabelEntryRows(const Collection::Impl& m, const PayloadFilter& filter,
                                          const collection::IndexVersion& v) {
  std::vector<std::uint64_t> rows;
  const std::span<const std::uint32_t> starts = v.index().label_start_rows();
  const filter::Node& root = filter.root();
  if (starts.empty() || root.kind != filter::NodeKind::kFilter) return rows;
  const bool keyword = m.graph_label_keyword;
  for (const filter::Node& c : root.must) {
    if (c.kind != filter::NodeKind::kMatchValue || c.key != m.stored.graph_label_field ||
        c.values.empty()) {
      continue;
    }
    std::int64_t label = -1;
    if (keyword && c.values[0].kind == filter::Value::Kind::kString) {
      if (auto found = m.graph_keywords.Find(c.values[0].text)) label = *found;
    } else if (!keyword && c.values[0].kind == filter::Value::Kind::kInteger) {
      label = c.values[0].integer;
    }
    if (label < 0 || static_cast<std::uint64_t>(label) >= starts.size()) continue;
    if (starts[label] != Index::kNoLabelStart) rows.push_back(starts[label]);
  }
  return rows;
}

// The SSD index's part of a search: tombstones (and the filter, when given)
// checked inside the walk.
Status SearchIndex(const Collection::Impl& m, const CollectionSnapshot& snap,
                   std::span<const float> query, const CollectionSearchParams& params,
                   PayloadTest* test, const FilterPlan& plan, std::vector<Hit>* hits,
                   QueryStats* qs) {
  const collection::IndexVersion& v = *snap.state->version;
  const std::uint32_t k = params.index.k;
  SearchParams p = params.index;
  p.filter_fraction = plan.fraction;
  if (v.dead_count() > 0) {
    // Dead rows stay in the index until the next merge (buffered) or
    // rebuild (in place): they route the walk but fill the list, which is
    // widened by the live share as for a filter that few pass.
    const double live = 1.0 - static_cast<double>(v.dead_count()) / static_cast<double>(v.size());
    p.filter_fraction = static_cast<float>(std::max(1e-3, p.filter_fraction * live));
  }
  p.list_size = std::max(p.list_size, k);
  const FilterCandidates* candidates = plan.candidates ? &*plan.candidates : nullptr;
  std::vector<std::uint64_t> entry_rows;
  if (candidates == nullptr && test != nullptr && test->in_ram() && params.filter != nullptr) {
    // A label-aware graph walks only passing points, from the matched
    // labels' start rows: no widening, no sampled entries.
    entry_rows = LabelEntryRows(m, *params.filter, v);
    if (!entry_rows.empty()) {
      p.filter_steers_walk = true;
      p.filter_fraction = 1.0f;
    }
  }
  if (entry_rows.empty()) v.AppendSlotsOf(plan.entry_ids, &entry_rows);
  if (!entry_rows.empty()) p.entry_rows = &entry_rows;
  // The filter's candidates as index rows: an index able to rank a
  // restricted set ranks only those; others walk. Either way their bitmap
  // answers the filter for every row the search meets (a walk's nodes, a
  // graph page's mates) at a bit test, without a payload lookup where the
  // candidates were checked already.
  std::vector<std::uint64_t> rows;
  const bool few_live = FewLiveRows(v, snap.seq, &rows);
  const auto ranks = [&v](std::size_t n) {
    return v.index().ranks_restricted() && (v.index().distances_exact() || n <= kEstimatedRankMax);
  };
  if (few_live && !ranks(rows.size())) {
    // No ranking of a restricted set (the decoupled graph walks always):
    // the live rows' stored vectors, exact, the filter checked on each.
    FilterCandidates live_ids;
    live_ids.exact = test == nullptr;
    for (std::uint64_t r : rows) live_ids.ids.push_back(v.user_id(r));
    return ScanStoredRecords(m, query, live_ids, test, hits, qs);
  }
  if (few_live || candidates != nullptr) {
    if (!few_live) v.AppendSlotsOf(candidates->ids, &rows);
    if (ranks(rows.size())) {
      p.restrict_to = &rows;
      p.filter_fraction = 1.0f;  // every row it ranks passes
      // An index ranking by estimates (IVF's extended codes) returns 2k,
      // pruned at the k-th, of which the k nearest by exact distance are
      // kept (ExactDistances): the rows past the k-th are those met on the way, and absorb
      // the estimate's swaps near it (in low dimensions, where the extended
      // code is coarse) without reads of their own. Pruning at the 2k-th
      // read 60 pages instead of 43 at 0.1 % on synth 1M.
      if (!v.index().distances_exact()) {
        p.k = std::min(2 * k, SearchParams::kMaxK);
        p.prune_rank = std::min(k, p.k);
      }
    }
  }
  STRATA_ASSIGN_OR_RETURN(auto pooled, v.Acquire(p));
  std::vector<std::uint64_t>& bits = pooled.row_bits;
  // The live rows ranked need no bitmap: the live-slot test answers them.
  if (few_live) candidates = nullptr;
  if (candidates != nullptr) {
    bits.resize((v.size() + 63) / 64);  // zero when pooled; grows once
    for (std::uint64_t r : rows) bits[r >> 6] |= 1ull << (r & 63);
  }
  collection::LiveSlotFilter live(v, snap.seq);
  std::optional<FilteredSlots> filtered_slots;
  if (test != nullptr) {
    filtered_slots.emplace(v, snap.seq, test, candidates != nullptr ? &bits : nullptr,
                           candidates != nullptr && candidates->exact);
  }
  p.filter = test != nullptr ? static_cast<const IdFilter*>(&*filtered_slots) : &live;
  std::vector<VectorId> ids(p.k);
  std::vector<float> dist(p.k);
  Status st = pooled.searcher->Search(query, p, ids, dist, qs);
  if (candidates != nullptr) {
    for (std::uint64_t r : rows) bits[r >> 6] = 0;  // back to all zero for the pool
  }
  v.Release(std::move(pooled));
  STRATA_RETURN_IF_ERROR(st);
  std::vector<Hit> found;
  for (std::uint32_t i = 0; i < p.k; ++i) {
    if (ids[i] == kInvalidVectorId) break;
    found.emplace_back(dist[i], v.user_id(ids[i]));
  }
  if (!v.index().distances_exact()) {
    STRATA_RETURN_IF_ERROR(ExactDistances(m, snap.seq, query, k, &found));
  }
  hits->insert(hits->end(), found.begin(), found.end());
  return Status::OK();
}

// Pending entries: the graphed prefix by a walk of the pending graph, the
// rest by an exact scan. A walk at list size L over out-degree R computes
// about L * R distances, with a visited set and random access besides: a
// set of at most 2 * L * R entries is scanned whole instead: exact, and
// no more distances than the walk would compute.
void SearchPending(const CollectionSnapshot& snap, std::span<const float> query,
                   const CollectionSearchParams& params, const collection::IdPredicate* accept,
                   std::vector<Hit>* hits) {
  const std::uint32_t k = params.index.k;
  std::vector<Hit> pending;
  const std::uint32_t pending_L = std::max<std::uint32_t>(params.index.list_size, 64);
  const std::uint64_t scan_whole = 2ull * pending_L * collection::PendingGraph::Options{}.R;
  std::uint32_t walked = 0;
  if (snap.state->pending->size() > scan_whole) {
    walked = snap.state->pending_graph->Search(query.data(), snap.seq, k, pending_L, &pending,
                                               accept);
    hits->insert(hits->end(), pending.begin(), pending.end());
  }
  snap.state->pending->Scan(query.data(), snap.seq, k, &pending, walked, accept);
  hits->insert(hits->end(), pending.begin(), pending.end());
}

Status SearchOne(const Collection::Impl& m, const CollectionSnapshot& snap,
                 std::span<const float> query, const CollectionSearchParams& params,
                 std::vector<SearchHit>* out, QueryStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint32_t k = params.index.k;
  QueryStats qs;
  std::vector<Hit> hits;
  const bool filtered = params.filter != nullptr && !params.filter->empty();
  std::optional<PayloadTest> test;
  collection::IdPredicate accept;
  // The exact-scan fallback (CollectionSearchParams::exact_scan_limit) when
  // the payload index bounds the passing points by few candidates; else a
  // walk, widened and seeded by what a sample of the candidates says.
  FilterPlan plan;
  std::uint32_t listed = 0;
  if (filtered) {
    test.emplace(m, *params.filter, *snap.payload_index);
    accept = [&test](VectorId id) { return (*test)(id); };
    PlanFilter(m, *params.filter, params.exact_scan_limit, *snap.payload_index, &*test, &plan);
    if (plan.candidates) listed = static_cast<std::uint32_t>(plan.candidates->ids.size());
  }
  const collection::IndexVersion* version = snap.state->version.get();
  if (plan.candidates && version != nullptr && !version->index().ranks_restricted() &&
      plan.candidates->ids.size() <= kStoredScanMax) {
    // No ranking by codes, few candidates: their stored vectors, exact.
    STRATA_RETURN_IF_ERROR(ScanStoredRecords(m, query, *plan.candidates, &*test, &hits, &qs));
  } else {
    // The graph ranks the candidates by code and reads the best from SSD;
    // the pending list (and the flat phase) is scanned exactly anyway. The
    // list first: an in-place applier publishes an entry in the graph before
    // it leaves the list, so a search misses it in neither (and may meet
    // it in both: duplicates are dropped below).
    SearchPending(snap, query, params, filtered ? &accept : nullptr, &hits);
    if (version != nullptr) {
      STRATA_RETURN_IF_ERROR(
          SearchIndex(m, snap, query, params, test ? &*test : nullptr, plan, &hits, &qs));
    }
  }
  qs.filter_candidates = listed;
  std::sort(hits.begin(), hits.end());
  if (m.in_place()) {
    // Keep each id's nearest copy (the two copies' distances may differ in
    // the last bits: the graph holds the normalised vector under cosine).
    std::size_t kept = 0;
    for (std::size_t i = 0; i < hits.size() && kept < k; ++i) {
      bool seen = false;
      for (std::size_t j = 0; j < kept && !seen; ++j) seen = hits[j].second == hits[i].second;
      if (!seen) hits[kept++] = hits[i];
    }
    hits.resize(kept);
  }
  if (hits.size() > k) hits.resize(k);
  out->clear();
  out->reserve(hits.size());
  for (const Hit& h : hits) out->push_back(SearchHit{h.second, h.first, {}});
  if (params.with_payload && !out->empty()) {
    std::vector<VectorId> ids;
    for (const SearchHit& h : *out) ids.push_back(h.id);
    std::vector<std::string> values;
    const std::vector<rocksdb::Status> st = m.GetRecords(ids, &values);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!st[i].ok()) continue;  // deleted since the snapshot: no payload
      STRATA_ASSIGN_OR_RETURN(auto rec, collection::DecodeRecord(values[i], m.vector_bytes));
      (*out)[i].payload.assign(rec.payload);
    }
  }
  if (test) qs.payload_reads = test->payload_reads();
  if (stats != nullptr) {
    *stats = qs;
    stats->latency_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  return Status::OK();
}

Status CheckQuery(const Collection::Impl& m, std::span<const float> query,
                  const CollectionSearchParams& params) {
  if (query.size() != m.stored.dim) {
    return Status::InvalidArgument("search: query has " + std::to_string(query.size()) +
                                   " values, the collection's dim is " +
                                   std::to_string(m.stored.dim));
  }
  bool zero = true;
  for (float x : query) {
    if (!std::isfinite(x)) return Status::InvalidArgument("search: query holds NaN or Inf");
    zero = zero && x == 0.0f;
  }
  if (zero && m.stored.metric == Metric::kCosine) {
    // In every phase alike (the flat scan, the pending set, the index).
    return Status::InvalidArgument("search: a zero query vector has no cosine distance");
  }
  if (params.index.k == 0) return Status::InvalidArgument("search: k must be at least 1");
  SearchParams p = params.index;
  p.list_size = std::max(p.list_size, p.k);
  return p.Validate();
}

}  // namespace

Result<std::vector<SearchHit>> Collection::Search(std::span<const float> query,
                                                  const CollectionSearchParams& params,
                                                  QueryStats* stats) const {
  STRATA_RETURN_IF_ERROR(CheckQuery(*impl_, query, params));
  const CollectionSnapshot snap = impl_->Snapshot();
  std::vector<SearchHit> out;
  STRATA_RETURN_IF_ERROR(SearchOne(*impl_, snap, query, params, &out, stats));
  return out;
}

Result<std::vector<std::vector<SearchHit>>> Collection::SearchBatch(
    std::span<const float> queries, const CollectionSearchParams& params, unsigned threads,
    std::vector<QueryStats>* stats) const {
  const std::uint32_t dim = impl_->stored.dim;
  if (queries.empty() || queries.size() % dim != 0) {
    return Status::InvalidArgument("search: " + std::to_string(queries.size()) +
                                   " values is not a whole number of queries of dim " +
                                   std::to_string(dim));
  }
  const std::size_t n = queries.size() / dim;
  for (std::size_t q = 0; q < n; ++q) {
    STRATA_RETURN_IF_ERROR(CheckQuery(*impl_, queries.subspan(q * dim, dim), params));
  }
  const CollectionSnapshot snap = impl_->Snapshot();
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  std::vector<std::vector<SearchHit>> out(n);
  if (stats != nullptr) stats->assign(n, QueryStats{});
  std::vector<Status> errors(threads);
  std::atomic<std::size_t> next{0};
  auto work = [&](unsigned t) {
    for (std::size_t q = next++; q < n; q = next++) {
      Status st = SearchOne(*impl_, snap, queries.subspan(q * dim, dim), params, &out[q],
                            stats != nullptr ? &(*stats)[q] : nullptr);
      if (!st.ok()) {
        errors[t] = st;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  for (const Status& st : errors) STRATA_RETURN_IF_ERROR(st);
  return out;
}

}  // namespace strata
