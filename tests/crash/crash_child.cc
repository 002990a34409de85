// The child role of collection_crash_harness (crash_child.h): the writer
// loop, the concurrent reader and the pipe lines they write.
#include "crash_child.h"

#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "crash_common.h"
#include "crash_model.h"

namespace strata::crash {
namespace {

void WriteLine(int fd, std::string line) {
  line.push_back('\n');
  if (line.size() > PIPE_BUF) {
    // Not atomic on a pipe: a harness bug (batches are kept small for this).
    const char msg[] = "collection_crash_harness: protocol line over PIPE_BUF\n";
    (void)!::write(2, msg, sizeof msg - 1);
    _exit(6);
  }
  // One write(2): lines stay below PIPE_BUF, so the pipe takes each whole.
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      _exit(4);  // the parent is gone
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// A set of ids with O(1) insert, erase and uniform random pick.
class IdPool {
 public:
  bool Contains(VectorId id) const { return pos_.count(id) != 0; }
  std::size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  void Insert(VectorId id) {
    if (pos_.emplace(id, ids_.size()).second) ids_.push_back(id);
  }
  void Erase(VectorId id) {
    auto it = pos_.find(id);
    if (it == pos_.end()) return;
    const std::size_t i = it->second;
    ids_[i] = ids_.back();
    pos_[ids_[i]] = i;
    ids_.pop_back();
    pos_.erase(id);
  }
  VectorId Pick(std::mt19937_64& rng) const { return ids_[rng() % ids_.size()]; }

 private:
  std::vector<VectorId> ids_;
  std::unordered_map<VectorId, std::size_t> pos_;
};

// Searches concurrently with the writer: results must be well formed (sorted,
// finite, at most k, ids ever issued), also while merges switch versions;
// and calls Stats() now and then.
void ReaderLoop(const Collection& c, const std::atomic<bool>& stop,
                const std::atomic<std::uint64_t>& id_bound, std::uint64_t seed, int fd) {
  std::mt19937_64 rng(seed);
  const CollectionSearchParams params = MakeSearchParams();
  int reported = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    const std::vector<float> q = MakeVector(kQueryKeyBase + 1000000 + rng() % 100000, rng());
    auto r = c.Search(q, params);
    std::string bad;
    if (!r.ok()) {
      bad = "search failed: " + r.status().ToString();
    } else {
      const auto& hits = *r;
      if (hits.size() > kK) bad = "search returned " + std::to_string(hits.size()) + " hits";
      for (std::size_t i = 0; i < hits.size() && bad.empty(); ++i) {
        const SearchHit& h = hits[i];
        if (!std::isfinite(h.distance) || h.distance < -1e-4f) {
          bad = "hit " + std::to_string(h.id) + " has distance " + std::to_string(h.distance);
        } else if (i > 0 && h.distance < hits[i - 1].distance) {
          bad = "hits not sorted by distance";
        } else if (h.id == 0 || h.id >= id_bound.load(std::memory_order_acquire)) {
          bad = "hit with an id never written: " + std::to_string(h.id);
        }
      }
    }
    if (!bad.empty() && reported++ < 5) WriteLine(fd, "E 0 concurrent search: " + bad);
    // Stats() beside writes and merges (it walks the directory that merges
    // add versions to and remove them from).
    if (rng() % 4 == 0) (void)c.Stats();
    std::this_thread::sleep_for(std::chrono::microseconds(500 + rng() % 1500));
  }
}

}  // namespace

int RunChild(const ChildArgs& a) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 5;
  const int fd = a.fd;
  auto model_or = LoadModel(a.state);
  if (!model_or.ok()) {
    WriteLine(fd, "F 0 " + model_or.status().ToString());
    return 3;
  }
  Model& m = *model_or;
  IdPool live, dead;
  for (const auto& [id, v] : m.live) live.Insert(id);
  for (const auto& [id, v] : m.dead) dead.Insert(id);

  auto opened = Collection::Open(a.dir, MakeOptions(a.durability, a.update_mode));
  if (!opened.ok()) {
    WriteLine(fd, "F 0 open: " + opened.status().ToString());
    return 3;
  }
  std::unique_ptr<Collection> c = std::move(*opened);
  CollectionStats st = c->Stats();
  WriteLine(fd, "O " + std::to_string(st.index_version) + " " + std::to_string(c->Count()));
  if (c->Count() != live.size()) {
    WriteLine(fd, "E 0 Count() after open is " + std::to_string(c->Count()) + ", model has " +
                      std::to_string(live.size()) + " live ids");
  }
  bool indexed = st.index_version != 0;
  bool draining = false;
  std::size_t drain_target = 0;

  std::mt19937_64 rng(a.seed);
  if (a.drain >= 0 && live.size() > static_cast<std::size_t>(a.drain)) {
    draining = true;
    drain_target = static_cast<std::size_t>(a.drain);
  }
  std::atomic<std::uint64_t> id_bound{m.next_id};
  std::atomic<bool> stop{false};
  std::thread reader(ReaderLoop, std::cref(*c), std::cref(stop), std::cref(id_bound),
                     a.seed ^ 0x5eedull, fd);

  std::uint64_t batch = m.next_batch;
  std::uint64_t next_id = m.next_id;
  std::uint64_t last_version = st.index_version;
  bool last_merging = st.merging;
  const auto start = Clock::now();
  auto fail = [&](std::uint64_t n, const std::string& what, const Status& s) {
    WriteLine(fd, "F " + std::to_string(n) + " " + what + ": " + s.ToString());
    stop = true;
    reader.join();
    _exit(3);
  };
  for (std::uint64_t iter = 0;; ++iter) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > a.max_seconds) break;
    const std::uint64_t n = batch++;
    const std::string ns = std::to_string(n);
    const unsigned r = rng() % 100;
    const bool full = live.size() >= kMaxLive;
    // Now and then a drain: delete down to a few (or no) live vectors, then
    // merge, so that versions are rebuilt from few vectors, or none, and the
    // collection grows through the threshold again.
    if (!draining && live.size() > 500 && rng() % 2000 == 0) {
      draining = true;
      drain_target = rng() % 2 ? 0 : rng() % 200;
    }
    bool merge_now = false;
    if (draining && live.size() <= drain_target) {
      draining = false;
      merge_now = true;
    }
    // Explicit merges are rare once an index exists: each blocks the writer
    // for a whole build (~1 s at 5,000 vectors), and background merges run
    // all the time anyway. In the flat phase they are cheap and exercise
    // Merge() there (the first index below flat_threshold from 256 vectors
    // on, an OK no-op with fewer).
    if (merge_now || rng() % (indexed ? 500 : 50) == 0) {
      WriteLine(fd, "B " + ns + " M -");
      Status s = c->Merge();
      if (!s.ok()) fail(n, "Merge", s);
      WriteLine(fd, "M " + ns);
      indexed = c->Stats().index_version != 0;
    } else if (!live.empty() && (draining || r < 30 || (full && r < 60))) {
      // Delete a few live ids, sometimes with an id that never existed.
      std::size_t want = (rng() % 10 == 0) ? 33 + rng() % 68 : 1 + rng() % 32;
      // At most a third of the live ids, so the collection still grows
      // towards the threshold and the cap.
      want = draining ? std::min<std::size_t>(100, live.size() - drain_target)
                      : std::min(want, live.size() / 3 + 1);
      std::vector<VectorId> ids;
      std::unordered_set<VectorId> seen;
      while (ids.size() < want) {
        const VectorId id = live.Pick(rng);
        if (seen.insert(id).second) ids.push_back(id);
      }
      const std::uint64_t existed = ids.size();
      if (rng() % 10 == 0) ids.push_back(kAbsentIdBase + rng() % 1000000);
      std::string body;
      for (VectorId id : ids) {
        body += ' ';
        body += std::to_string(id);
      }
      WriteLine(fd, "B " + ns + " D -" + body);
      auto d = c->Delete(ids);
      if (!d.ok()) fail(n, "Delete", d.status());
      WriteLine(fd, "D " + ns + " " + std::to_string(*d) + body);
      for (VectorId id : ids) {
        if (live.Contains(id)) {
          live.Erase(id);
          dead.Insert(id);
        }
      }
      if (*d != existed) {
        WriteLine(fd, "E " + ns + " Delete returned " + std::to_string(*d) + ", " +
                          std::to_string(existed) + " of the ids existed");
      }
      // Read-your-writes: a Get after the delete returned must miss them all.
      auto g = c->Get(ids);
      if (!g.ok()) fail(n, "Get after Delete", g.status());
      for (const StoredRecord& rec : *g) {
        if (rec.found) {
          WriteLine(
              fd, "E " + ns + " Get after Delete returned found for id " + std::to_string(rec.id));
          break;
        }
      }
    } else {
      // Upsert: new ids, replacements of live ids and resurrections of deleted ones.
      const unsigned sr = rng() % 100;
      std::size_t want = sr < 70 ? 1 + rng() % 16 : sr < 95 ? 17 + rng() % 48 : 65 + rng() % 96;
      std::vector<VectorId> ids;
      std::unordered_set<VectorId> seen;
      std::size_t growth = 0;
      for (std::size_t tries = 0; ids.size() < want && tries < 4 * want; ++tries) {
        const unsigned k = rng() % 100;
        const bool room = live.size() + growth < kMaxLive;
        VectorId id;
        if (room && (k < 60 || live.empty())) {
          id = next_id++;
        } else if (k < 90 && !live.empty()) {
          id = live.Pick(rng);
        } else if (room && !dead.empty()) {
          id = dead.Pick(rng);
        } else if (!live.empty()) {
          id = live.Pick(rng);
        } else {
          break;
        }
        if (!seen.insert(id).second) continue;
        if (!live.Contains(id)) ++growth;
        ids.push_back(id);
      }
      if (ids.empty()) continue;
      id_bound.store(next_id, std::memory_order_release);
      const bool crosses =
          !indexed && live.size() < kFlatThreshold && live.size() + growth >= kFlatThreshold;
      std::vector<float> vectors;
      std::vector<std::string> payloads;
      std::string body;
      for (VectorId id : ids) {
        const std::vector<float> v = MakeVector(id, n);
        vectors.insert(vectors.end(), v.begin(), v.end());
        payloads.push_back(MakePayload(id, n));
        body += ' ';
        body += std::to_string(id);
        body += ':';
        body += ns;
      }
      WriteLine(fd, "B " + ns + " U " + (crosses ? "T" : "-") + body);
      Status s = c->Upsert(ids, vectors, payloads);
      if (!s.ok()) fail(n, "Upsert", s);
      WriteLine(fd, "U " + ns + body);
      for (VectorId id : ids) {
        dead.Erase(id);
        live.Insert(id);
      }
      if (crosses) indexed = true;
      auto g = c->Get(ids);
      if (!g.ok()) fail(n, "Get after Upsert", g.status());
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const StoredRecord& rec = (*g)[i];
        if (!rec.found || !SameBits(rec.vector, MakeVector(ids[i], n)) ||
            rec.payload != payloads[i]) {
          WriteLine(fd, "E " + ns + " Get after Upsert: id " + std::to_string(ids[i]) +
                            (rec.found ? " has another vector or payload" : " not found"));
          break;
        }
      }
    }
    if (iter % 4 == 0) {
      st = c->Stats();
      if (st.index_version != last_version || st.merging != last_merging) {
        last_version = st.index_version;
        last_merging = st.merging;
        indexed = st.index_version != 0;
        WriteLine(fd, "V " + std::to_string(st.index_version) + " " + (st.merging ? "1" : "0") +
                          " " + std::to_string(st.merges) + " " + std::to_string(st.pending) + " " +
                          std::to_string(st.live));
      }
    }
  }
  stop = true;
  reader.join();
  Status s = c->Close();
  if (!s.ok()) {
    WriteLine(fd, "F " + std::to_string(batch) + " Close: " + s.ToString());
    return 3;
  }
  WriteLine(fd, "C");
  return 0;
}

}  // namespace strata::crash
