// The data generator, options and small helpers both roles of
// collection_crash_harness share (crash_common.h).
#include "crash_common.h"

#include <cstdlib>
#include <cstring>

namespace strata::crash {

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<float> MakeVector(VectorId id, std::uint64_t ver) {
  std::vector<float> v(kDim);
  std::uint64_t h = Mix(Mix(id) ^ (ver * 0x100000001b3ull));
  for (std::uint32_t j = 0; j < kDim; ++j) {
    h = Mix(h + j);
    v[j] = static_cast<float>(static_cast<std::int64_t>(h >> 40) - (1 << 23)) /
           static_cast<float>(1 << 23);
  }
  return v;
}

std::string MakePayload(VectorId id, std::uint64_t ver) {
  const std::uint64_t h = Mix(id ^ Mix(ver ^ 0xabcdefull));
  if (h % 16 == 0) return "";
  std::string s = "id=" + std::to_string(id) + ";v=" + std::to_string(ver) + ";";
  const std::size_t n = (h >> 8) % 200;
  for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + Mix(h + i) % 26));
  if (h % 7 == 0) {
    s.push_back('\0');
    s.push_back('\xff');
  }
  return s;
}

float L2(const float* a, const float* b) {
  float s = 0;
  for (std::uint32_t j = 0; j < kDim; ++j) {
    const float d = a[j] - b[j];
    s += d * d;
  }
  return s;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

CollectionOptions MakeOptions(Durability durability, UpdateMode update_mode) {
  CollectionOptions o;
  o.dim = kDim;
  o.metric = Metric::kL2;
  o.durability = durability;
  o.update_mode = update_mode;
  o.in_place_threads = 2;  // (buffered collections ignore it)
  if (update_mode == UpdateMode::kInPlace) {
    // A small edge-page cache, every cached page hot: kills also land
    // inside inserts that rewrite cached pages whole.
    o.open.cache_mib = 1;
    o.in_place_hot_page_heat = 1;
    // Compaction in every gap between the writer's batches: kills also
    // land inside compactions (the default waits for writes to pause).
    o.in_place_compaction_pause_ms = 0;
  }
  if (const char* t = std::getenv("STRATA_CRASH_APPLIERS")) o.in_place_threads = std::atoi(t);
  o.flat_threshold = kFlatThreshold;
  o.merge_pending_count = kMergePendingCount;
  o.merge_threads = 1;
  // A small graph keeps every merge (a new version over <= 5,000 vectors)
  // short on 2 cores; the layout and code switches stay the default profile.
  o.graph.R = 32;
  o.graph.L = 64;
  o.graph.threads = 1;
  // Plain PQ codes: OPQ's rotation training made a merge of 4,800 x 16
  // vectors take 5.4 s instead of 1.1 s, so far fewer version switches per
  // round. Crash safety does not depend on the code type.
  o.graph.opq_iterations = 0;
  return o;
}

CollectionSearchParams MakeSearchParams() {
  CollectionSearchParams p;
  p.index.k = kK;
  p.index.list_size = kListSize;
  return p;
}

std::string JoinIds(const std::vector<VectorId>& ids, std::size_t max) {
  std::string s;
  for (std::size_t i = 0; i < ids.size() && i < max; ++i) {
    if (i) s += ' ';
    s += std::to_string(ids[i]);
  }
  if (ids.size() > max) s += " ... (" + std::to_string(ids.size()) + " in all)";
  return s;
}

std::vector<std::vector<float>> FixedQueries() {
  std::vector<std::vector<float>> q;
  for (int i = 0; i < kRecallQueries; ++i) q.push_back(MakeVector(kQueryKeyBase + i, 0));
  return q;
}

std::vector<float> Flatten(const std::vector<std::vector<float>>& rows) {
  std::vector<float> f;
  for (const auto& r : rows) f.insert(f.end(), r.begin(), r.end());
  return f;
}

}  // namespace strata::crash
