// kill -9 crash harness for the Collection (include/strata/collection.h),
// after rocksdb's db_crashtest.py and its expected-state oracle: a child
// process writes to a collection as fast as it can and reports every write
// the collection acknowledged on a pipe; the parent kills it with SIGKILL at
// a random moment, reopens the collection itself and checks it against the
// model built from the acknowledgements. State accumulates across kills.
//
//   parent: collection_crash_harness --dir DIR --kills N [--seed S]
//                                    [--durability async|sync] [--fresh-every K]
//   child:  collection_crash_harness --child DIR --state FILE --seed S --fd N
//                                    [--durability async|sync]
//
// Child -> parent protocol: one line per write(2) (atomic on a pipe: every
// line is shorter than PIPE_BUF), never buffered, so a line the parent reads
// was written before the kill:
//   O <index_version> <count>            collection opened
//   B <n> U <flag> id:ver ...            intent: upsert batch n is about to be issued
//   B <n> D <flag> id ...                intent: delete batch n
//   B <n> M <flag>                       intent: explicit Merge() (flag T: the batch
//                                        crosses flat_threshold: the first build)
//   U <n> id:ver ...                     upsert batch n returned OK
//   D <n> <existed> id ...               delete batch n returned OK (`existed` deleted)
//   M <n>                                Merge() returned OK
//   V <version> <merging> <merges> <pending> <live>   Stats() changed
//   E <n> <message>                      a contract violation the child saw
//   F <n> <message>                      a call failed (the child then exits 3)
// A version is the number of the batch that wrote it, so (id, version) keys
// the vector and the payload and the parent recomputes both bit for bit.
// Batch numbers are never reused: the parent passes the next free one in the
// state file and counts every intent it read.
//
// What the parent checks after each kill (the Collection's contract):
//   - every acknowledged upsert is there with its exact vector and payload;
//   - no acknowledged delete comes back, in Get or in Search;
//   - the batch in flight (intent, no ack) is applied entirely or not at all;
//   - Count() is the model's live count (for the in-flight batch's outcome);
//   - searching for stored vectors finds them at distance ~0, every hit is a
//     live id at its exact distance, and recall@10 against brute force over
//     the model is >= 0.9.
// At the end it compares recall with a clean build of the same live set.
// The child also runs a search thread beside its writes (results must stay
// well formed while merges switch versions) and reads its own writes back.
//
// Kill plans, drawn per round: a log-uniform time (5 ms .. 1.5 s from the
// spawn, so some kills land before or during the child's Open), the k-th
// intent plus 0..3 ms (a write in flight), a merge (a background merge seen
// running in Stats(), or an explicit Merge() call, plus a delay), and while
// the collection has no index yet, the batch that crosses flat_threshold
// plus 0..200 ms (the first training build). After a failed round the
// parent rewrites the diverging ids so that later rounds start from the
// model again; the collection is kept for inspection.
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "strata/collection.h"

extern char** environ;

namespace strata {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Shared configuration and the deterministic data generator.

constexpr std::uint32_t kDim = 16;
constexpr std::uint64_t kFlatThreshold = 256;
constexpr std::uint64_t kMergePendingCount = 300;
constexpr std::size_t kMaxLive = 5000;
constexpr std::uint32_t kK = 10;
constexpr std::uint32_t kListSize = 64;
constexpr int kChildFd = 100;                          // the pipe's write end in the child
constexpr VectorId kAbsentIdBase = VectorId{1} << 50;  // ids never upserted
constexpr VectorId kQueryKeyBase = VectorId{1} << 52;  // keys of the fixed queries
constexpr int kRecallQueries = 200;
constexpr double kRecallBar = 0.9;
constexpr char kMarker[] = ".collection_crash_harness";

std::uint64_t Mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The vector of `id` as written by batch `ver`: kDim floats in [-1, 1), each a
// multiple of 2^-23 (exact in float32).
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

// The payload of `id` written by batch `ver`: empty one time in 16 (no
// payload), otherwise a readable prefix and up to 200 filler bytes, binary
// (NUL, 0xff) one time in 7.
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

CollectionOptions MakeOptions(Durability durability) {
  CollectionOptions o;
  o.dim = kDim;
  o.metric = Metric::kL2;
  o.durability = durability;
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

std::string JoinIds(const std::vector<VectorId>& ids, std::size_t max = 8) {
  std::string s;
  for (std::size_t i = 0; i < ids.size() && i < max; ++i) {
    if (i) s += ' ';
    s += std::to_string(ids[i]);
  }
  if (ids.size() > max) s += " ... (" + std::to_string(ids.size()) + " in all)";
  return s;
}

// ---------------------------------------------------------------------------
// The model: what the acknowledged writes say the collection holds.

struct Model {
  std::uint64_t next_id = 1;                  // the next never-used id
  std::uint64_t next_batch = 1;               // the next never-used batch number
  std::map<VectorId, std::uint64_t> live;     // id -> version (batch that wrote it)
  std::map<VectorId, std::uint64_t> dead;     // deleted id -> its version before the delete
  std::map<VectorId, std::uint64_t> dead_in;  // deleted id -> batch that deleted it
};

Status SaveModel(const Model& m, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << m.next_id << ' ' << m.next_batch << '\n';
    for (const auto& [id, ver] : m.live) out << "L " << id << ' ' << ver << '\n';
    for (const auto& [id, ver] : m.dead) out << "X " << id << ' ' << ver << '\n';
    if (!out) return Status::IOError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status::IOError("rename " + tmp + ": " + ec.message());
  return Status::OK();
}

Result<Model> LoadModel(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read state file " + path);
  Model m;
  if (!(in >> m.next_id >> m.next_batch)) return Status::Corruption("bad state file " + path);
  std::string tag;
  VectorId id;
  std::uint64_t ver;
  while (in >> tag >> id >> ver) {
    if (tag == "L") {
      m.live[id] = ver;
    } else if (tag == "X") {
      m.dead[id] = ver;
    } else {
      return Status::Corruption("bad state file line tag " + tag);
    }
  }
  return m;
}

// ---------------------------------------------------------------------------
// Child role.

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

struct ChildArgs {
  std::string dir;
  std::string state;
  std::uint64_t seed = 1;
  int fd = 1;
  Durability durability = Durability::kAsync;
  double max_seconds = 60;
  // Start with a drain down to this many live ids (the parent asks every
  // 10th round; -1 = no).
  long drain = -1;
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

  auto opened = Collection::Open(a.dir, MakeOptions(a.durability));
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

// ---------------------------------------------------------------------------
// Parent role.

struct Batch {
  std::uint64_t no = 0;
  char kind = 0;  // 'U', 'D', 'M'
  bool crosses = false;
  std::vector<std::pair<VectorId, std::uint64_t>> items;  // (id, version); version 0 for D
};

// Parses "B n K flag items..." (intent) or "K n [existed] items..." (ack).
bool ParseBatch(const std::string& line, bool intent, Batch* b, std::uint64_t* existed) {
  std::istringstream in(line);
  std::string tag, kind;
  in >> tag >> b->no;
  if (intent) {
    std::string flag;
    in >> kind >> flag;
    b->crosses = flag == "T";
  } else {
    kind = tag;
    if (kind == "D") in >> *existed;
  }
  if (!in || kind.size() != 1) return false;
  b->kind = kind[0];
  std::string item;
  while (in >> item) {
    if (b->kind == 'U') {
      const auto colon = item.find(':');
      if (colon == std::string::npos) return false;
      b->items.emplace_back(std::stoull(item.substr(0, colon)),
                            std::stoull(item.substr(colon + 1)));
    } else {
      b->items.emplace_back(std::stoull(item), 0);
    }
  }
  return true;
}

void ApplyBatch(Model* m, const Batch& b) {
  for (const auto& [id, ver] : b.items) {
    if (b.kind == 'U') {
      m->live[id] = ver;
      m->dead.erase(id);
      m->dead_in.erase(id);
      m->next_id = std::max(m->next_id, id < kAbsentIdBase ? id + 1 : m->next_id);
    } else if (b.kind == 'D') {
      auto it = m->live.find(id);
      if (it == m->live.end()) continue;
      m->dead[id] = it->second;
      m->dead_in[id] = b.no;
      m->live.erase(it);
    }
  }
}

enum class KillPlan { kTime, kAtIntent, kDuringMerge, kFirstBuild };

const char* KillPlanName(KillPlan p) {
  switch (p) {
    case KillPlan::kTime:
      return "time";
    case KillPlan::kAtIntent:
      return "intent";
    case KillPlan::kDuringMerge:
      return "merge";
    case KillPlan::kFirstBuild:
      return "first-build";
  }
  return "?";
}

struct ParentArgs {
  std::string dir;
  int kills = 20;
  std::uint64_t seed = 1;
  Durability durability = Durability::kAsync;
  int fresh_every = 0;
  double min_delay_ms = 5;
  double max_delay_ms = 1500;
  bool keep = false;
};

// Problems of one round, grouped so that a systematic loss prints compactly.
class Problems {
 public:
  void Add(const std::string& category, const std::string& example) {
    auto& [count, examples] = groups_[category];
    ++count;
    if (examples.size() < 5) examples.push_back(example);
  }
  bool empty() const { return groups_.empty(); }
  std::string ToString() const {
    std::string s;
    for (const auto& [category, g] : groups_) {
      s += "    " + category + ": " + std::to_string(g.first) + "\n";
      for (const auto& e : g.second) s += "      " + e + "\n";
    }
    return s;
  }

 private:
  std::map<std::string, std::pair<std::size_t, std::vector<std::string>>> groups_;
};

// What one round saw on the pipe.
struct ChildRun {
  bool opened = false;
  std::uint64_t acked = 0;
  std::optional<Batch> in_flight;
  std::uint64_t max_batch = 0;
  std::uint64_t index_version = 0;
  bool merging = false;
  std::uint64_t merges_seen = 0;
  std::vector<std::string> errors;   // E lines
  std::vector<std::string> failure;  // F lines
  bool closed = false;
  std::string last_line;
};

std::string Describe(const Batch& b) {
  std::string s = std::string(1, b.kind) + " batch " + std::to_string(b.no);
  if (b.kind != 'M') s += " (" + std::to_string(b.items.size()) + " ids)";
  return s;
}

double Recall(const std::vector<std::vector<SearchHit>>& results,
              const std::vector<std::vector<float>>& queries, const Model& m) {
  std::vector<std::pair<VectorId, std::vector<float>>> base;
  base.reserve(m.live.size());
  for (const auto& [id, ver] : m.live) base.emplace_back(id, MakeVector(id, ver));
  double hit = 0, total = 0;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    std::vector<std::pair<float, VectorId>> d;
    d.reserve(base.size());
    for (const auto& [id, v] : base) d.emplace_back(L2(queries[q].data(), v.data()), id);
    const std::size_t k = std::min<std::size_t>(kK, d.size());
    std::partial_sort(d.begin(), d.begin() + k, d.end());
    std::unordered_set<VectorId> gt;
    for (std::size_t i = 0; i < k; ++i) gt.insert(d[i].second);
    for (const SearchHit& h : results[q]) hit += gt.count(h.id);
    total += k;
  }
  return total == 0 ? 1.0 : hit / total;
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

// Checks the reopened collection against the model and resolves the batch in
// flight by what it finds. Returns recall@10 (or -1 if it could not search).
double Verify(Collection& c, Model* m, const std::optional<Batch>& in_flight, std::mt19937_64& rng,
              Problems* p, std::string* outcome) {
  std::unordered_map<VectorId, std::size_t> flight;  // id -> index in in_flight->items
  if (in_flight && in_flight->kind != 'M') {
    for (std::size_t i = 0; i < in_flight->items.size(); ++i) flight[in_flight->items[i].first] = i;
  }
  std::vector<VectorId> ids;
  for (const auto& [id, ver] : m->live) ids.push_back(id);
  for (const auto& [id, ver] : m->dead) ids.push_back(id);
  for (const auto& [id, i] : flight) {
    if (!m->live.count(id) && !m->dead.count(id)) ids.push_back(id);
  }
  std::unordered_map<VectorId, StoredRecord> got;
  for (std::size_t off = 0; off < ids.size(); off += 2048) {
    const std::size_t n = std::min<std::size_t>(2048, ids.size() - off);
    auto g = c.Get(std::span<const VectorId>(ids.data() + off, n));
    if (!g.ok()) {
      p->Add("Get failed", g.status().ToString());
      return -1;
    }
    if (g->size() != n) {
      p->Add("Get returned a wrong number of records",
             std::to_string(g->size()) + " for " + std::to_string(n) + " ids");
      return -1;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if ((*g)[i].found && (*g)[i].id != ids[off + i]) {
        p->Add("Get returned a record under another id",
               "asked " + std::to_string(ids[off + i]) + ", got " + std::to_string((*g)[i].id));
      }
      got[ids[off + i]] = std::move((*g)[i]);
    }
  }
  auto matches = [&](VectorId id, std::uint64_t ver) {
    const StoredRecord& r = got[id];
    return r.found && SameBits(r.vector, MakeVector(id, ver)) && r.payload == MakePayload(id, ver);
  };
  // What an observed record is, for messages.
  auto what = [&](VectorId id) -> std::string {
    const StoredRecord& r = got[id];
    if (!r.found) return "absent";
    if (auto it = m->dead.find(id); it != m->dead.end() && matches(id, it->second)) {
      return "its pre-delete version " + std::to_string(it->second);
    }
    if (in_flight && in_flight->kind == 'U' && flight.count(id) && matches(id, in_flight->no)) {
      return "the in-flight version " + std::to_string(in_flight->no);
    }
    if (auto it = m->live.find(id); it != m->live.end()) {
      if (SameBits(r.vector, MakeVector(id, it->second))) return "the right vector, wrong payload";
      if (r.payload == MakePayload(id, it->second)) return "the right payload, wrong vector";
    }
    return "an unknown vector (" + std::to_string(r.vector.size()) + " floats)";
  };

  for (const auto& [id, ver] : m->live) {
    if (flight.count(id)) continue;
    if (matches(id, ver)) continue;
    if (!got[id].found) {
      p->Add("acknowledged upsert lost",
             "id " + std::to_string(id) + " version " + std::to_string(ver) + " not found");
    } else {
      p->Add("acknowledged upsert has wrong contents",
             "id " + std::to_string(id) + " expected version " + std::to_string(ver) + ", got " +
                 what(id));
    }
  }
  for (const auto& [id, ver] : m->dead) {
    if (flight.count(id)) continue;
    if (got[id].found) {
      p->Add("acknowledged delete came back (Get)",
             "id " + std::to_string(id) + " deleted in batch " +
                 std::to_string(m->dead_in.count(id) ? m->dead_in[id] : 0) + " is back with " +
                 what(id));
    }
  }

  // The batch in flight: every id at the new state, or every id at the old one.
  *outcome = "none";
  if (in_flight && in_flight->kind == 'M') *outcome = "merge";
  if (!flight.empty()) {
    std::size_t n_new = 0, n_old = 0, n_both = 0;
    std::vector<VectorId> neither, at_new, at_old;
    for (const auto& [id, ver] : in_flight->items) {
      const StoredRecord& r = got[id];
      bool is_new, is_old;
      auto lit = m->live.find(id);
      if (lit != m->live.end()) {
        is_old = matches(id, lit->second);
      } else {
        is_old = !r.found;
      }
      is_new = in_flight->kind == 'U' ? matches(id, ver) : !r.found;
      if (is_new && is_old) {
        ++n_both;
      } else if (is_new) {
        ++n_new;
        at_new.push_back(id);
      } else if (is_old) {
        ++n_old;
        at_old.push_back(id);
      } else {
        neither.push_back(id);
      }
    }
    const std::string name = Describe(*in_flight);
    if (!neither.empty()) {
      p->Add("in-flight batch left ids in neither state",
             name + ": ids " + JoinIds(neither) + " (e.g. id " + std::to_string(neither[0]) +
                 " is " + what(neither[0]) + ")");
    }
    if (n_new > 0 && n_old > 0) {
      p->Add("in-flight batch applied partially (not atomic)",
             name + ": " + std::to_string(n_new) + " ids applied (" + JoinIds(at_new, 4) + "), " +
                 std::to_string(n_old) + " not (" + JoinIds(at_old, 4) + ")");
    }
    if (n_new > 0 && n_old == 0 && neither.empty()) {
      ApplyBatch(m, *in_flight);
      *outcome = "applied";
    } else if (n_new == 0) {
      *outcome = n_both == in_flight->items.size() ? "no-op" : "not applied";
    } else {
      *outcome = "partial";
      // Keep the model at the old state; the repair below brings the
      // collection back to it.
    }
  }

  const std::uint64_t count = c.Count();
  if (count != m->live.size()) {
    p->Add("Count() differs from the model", "Count() " + std::to_string(count) + ", model " +
                                                 std::to_string(m->live.size()) +
                                                 " live ids (in-flight batch " + *outcome + ")");
  }
  const CollectionStats st = c.Stats();
  if (st.live != count) {
    p->Add("Stats().live differs from Count()",
           std::to_string(st.live) + " vs " + std::to_string(count));
  }
  // Every live vector is in exactly one place: a live slot of the current
  // version or the pending list.
  if (st.indexed < st.deleted || st.indexed - st.deleted + st.pending != st.live) {
    p->Add("Stats() counts do not add up (live != indexed - deleted + pending)",
           "live " + std::to_string(st.live) + ", indexed " + std::to_string(st.indexed) +
               ", deleted " + std::to_string(st.deleted) + ", pending " +
               std::to_string(st.pending) + " (merging " + (st.merging ? "yes" : "no") + ")");
  }

  // Searches: the resolved model is the truth now.
  CollectionSearchParams params = MakeSearchParams();
  CollectionSearchParams params_payload = params;
  params_payload.with_payload = true;
  bool with_payload = true;  // the single searches ask for payloads, SearchBatch does not
  auto check_hits = [&](const std::vector<SearchHit>& hits, const float* q, const char* what_q) {
    for (std::size_t i = 0; i < hits.size(); ++i) {
      const SearchHit& h = hits[i];
      auto it = m->live.find(h.id);
      if (it == m->live.end()) {
        if (m->dead.count(h.id)) {
          p->Add("acknowledged delete came back (Search)",
                 std::string(what_q) + " returned deleted id " + std::to_string(h.id) +
                     " (deleted in batch " +
                     std::to_string(m->dead_in.count(h.id) ? m->dead_in[h.id] : 0) + ")");
        } else {
          p->Add("Search returned an id that was never live", std::to_string(h.id));
        }
        continue;
      }
      const float exact = L2(q, MakeVector(h.id, it->second).data());
      if (std::fabs(h.distance - exact) > 1e-3f * std::max(1.0f, exact)) {
        p->Add("Search distance is not the exact distance of the stored vector",
               std::string(what_q) + ": id " + std::to_string(h.id) + " distance " +
                   std::to_string(h.distance) + ", exact " + std::to_string(exact));
      }
      if (i > 0 && h.distance < hits[i - 1].distance) {
        p->Add("Search hits not sorted", what_q);
      }
      if (with_payload && h.payload != MakePayload(h.id, it->second)) {
        p->Add("Search returned a wrong payload", std::string(what_q) + ": id " +
                                                      std::to_string(h.id) + " version " +
                                                      std::to_string(it->second));
      }
    }
  };
  std::vector<VectorId> live_ids;
  for (const auto& [id, ver] : m->live) live_ids.push_back(id);
  std::vector<VectorId> dead_ids;
  for (const auto& [id, ver] : m->dead) dead_ids.push_back(id);
  // Stored vectors find themselves; the in-flight ids always among them.
  std::vector<VectorId> probe;
  for (const auto& [id, i] : flight) {
    if (m->live.count(id)) probe.push_back(id);
  }
  for (int i = 0; i < 20 && !live_ids.empty(); ++i)
    probe.push_back(live_ids[rng() % live_ids.size()]);
  for (VectorId id : probe) {
    const std::vector<float> q = MakeVector(id, m->live[id]);
    auto r = c.Search(q, params_payload);
    if (!r.ok()) {
      p->Add("Search failed", r.status().ToString());
      return -1;
    }
    check_hits(*r, q.data(), "self-search");
    bool found = false;
    for (const SearchHit& h : *r) found |= h.id == id && h.distance <= 1e-5f;
    if (!found) {
      p->Add("stored vector not found by searching for itself",
             "id " + std::to_string(id) + " version " + std::to_string(m->live[id]) +
                 (r->empty() ? " (no hits)"
                             : " (top hit " + std::to_string((*r)[0].id) + " at " +
                                   std::to_string((*r)[0].distance) + ")"));
    }
  }
  // Deleted vectors: their own vector must not bring them back.
  std::vector<VectorId> dead_probe;
  for (const auto& [id, i] : flight) {
    if (m->dead.count(id)) dead_probe.push_back(id);
  }
  for (int i = 0; i < 20 && !dead_ids.empty(); ++i) {
    dead_probe.push_back(dead_ids[rng() % dead_ids.size()]);
  }
  for (VectorId id : dead_probe) {
    const std::vector<float> q = MakeVector(id, m->dead[id]);
    auto r = c.Search(q, params_payload);
    if (!r.ok()) {
      p->Add("Search failed", r.status().ToString());
      return -1;
    }
    check_hits(*r, q.data(), "deleted-vector search");
  }
  // Recall on the fixed queries, all through SearchBatch (one snapshot).
  with_payload = false;
  const auto queries = FixedQueries();
  auto rb = c.SearchBatch(Flatten(queries), params, 2);
  if (!rb.ok()) {
    p->Add("SearchBatch failed", rb.status().ToString());
    return -1;
  }
  if (rb->size() != queries.size()) {
    p->Add("SearchBatch returned a wrong number of results", std::to_string(rb->size()));
    return -1;
  }
  for (std::size_t q = 0; q < queries.size(); ++q) check_hits((*rb)[q], queries[q].data(), "query");
  const double recall = Recall(*rb, queries, *m);
  if (recall < kRecallBar) {
    p->Add("recall@10 below the bar",
           std::to_string(recall) + " < " + std::to_string(kRecallBar) + " over " +
               std::to_string(m->live.size()) + " live vectors, index version " +
               std::to_string(st.index_version) + ", pending " + std::to_string(st.pending));
  }
  return recall;
}

// After a failed round: rewrites the ids whose state differs from the model
// so that later rounds test from a known state again.
// `extra`: ids outside the model that may exist (the in-flight batch's new ids).
Status Repair(Collection& c, const Model& m, const std::optional<Batch>& in_flight) {
  std::vector<VectorId> ids;
  for (const auto& [id, ver] : m.live) ids.push_back(id);
  for (const auto& [id, ver] : m.dead) ids.push_back(id);
  if (in_flight) {
    for (const auto& [id, ver] : in_flight->items) {
      if (!m.live.count(id) && !m.dead.count(id)) ids.push_back(id);
    }
  }
  std::vector<VectorId> up, del;
  std::vector<float> vecs;
  std::vector<std::string> pay;
  for (std::size_t off = 0; off < ids.size(); off += 2048) {
    const std::size_t n = std::min<std::size_t>(2048, ids.size() - off);
    STRATA_ASSIGN_OR_RETURN(auto g, c.Get(std::span<const VectorId>(ids.data() + off, n)));
    for (std::size_t i = 0; i < n; ++i) {
      const VectorId id = ids[off + i];
      auto it = m.live.find(id);
      if (it == m.live.end()) {
        if (g[i].found) del.push_back(id);
      } else if (!g[i].found || !SameBits(g[i].vector, MakeVector(id, it->second)) ||
                 g[i].payload != MakePayload(id, it->second)) {
        up.push_back(id);
        const auto v = MakeVector(id, it->second);
        vecs.insert(vecs.end(), v.begin(), v.end());
        pay.push_back(MakePayload(id, it->second));
      }
    }
  }
  if (!up.empty()) STRATA_RETURN_IF_ERROR(c.Upsert(up, vecs, pay));
  if (!del.empty()) {
    auto d = c.Delete(del);
    if (!d.ok()) return d.status();
  }
  std::printf("    repaired: %zu ids rewritten, %zu deleted\n", up.size(), del.size());
  return c.Flush();
}

// Reads complete lines from `fd` into `lines`; false at EOF.
bool ReadLines(int fd, std::string* buf, std::vector<std::string>* lines) {
  char tmp[65536];
  const ssize_t n = ::read(fd, tmp, sizeof tmp);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  buf->append(tmp, static_cast<std::size_t>(n));
  std::size_t start = 0, nl;
  while ((nl = buf->find('\n', start)) != std::string::npos) {
    lines->push_back(buf->substr(start, nl - start));
    start = nl + 1;
  }
  buf->erase(0, start);
  return true;
}

class Harness {
 public:
  explicit Harness(ParentArgs a) : a_(std::move(a)), rng_(a_.seed) {}

  int Run() {
    if (Status s = Prepare(); !s.ok()) {
      std::fprintf(stderr, "collection_crash_harness: %s\n", s.ToString().c_str());
      return 2;
    }
    std::printf(
        "collection_crash_harness: dir %s, %d kills, seed %llu, durability %s, dim %u, "
        "flat_threshold %llu, merge_pending_count %llu, live cap %zu\n",
        a_.dir.c_str(), a_.kills, static_cast<unsigned long long>(a_.seed),
        std::string(DurabilityName(a_.durability)).c_str(), kDim,
        static_cast<unsigned long long>(kFlatThreshold),
        static_cast<unsigned long long>(kMergePendingCount), kMaxLive);
    std::fflush(stdout);
    int passed = 0, failed = 0;
    bool fatal = false;
    for (int round = 1; round <= a_.kills; ++round) {
      if (fatal) {
        ++failed;
        std::printf("round %d/%d: SKIPPED (the collection no longer opens)\n", round, a_.kills);
        continue;
      }
      if (a_.fresh_every > 0 && round > 1 && (round - 1) % a_.fresh_every == 0) StartFresh();
      const RoundResult r = RunRound(round);
      if (r.ok) {
        ++passed;
      } else {
        ++failed;
        fatal = r.fatal;
      }
      std::fflush(stdout);
    }
    if (!fatal && failed == 0) CompareWithCleanBuild(&failed, &passed);
    if (failed == 0 && !a_.keep) {
      std::error_code ec;
      fs::remove_all(a_.dir, ec);
    } else if (failed > 0) {
      std::printf("collections kept for inspection in %s\n", a_.dir.c_str());
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
  }

 private:
  struct RoundResult {
    bool ok = true;
    bool fatal = false;
  };

  std::string coll_dir() const { return a_.dir + "/coll" + std::to_string(generation_); }
  std::string state_path() const { return a_.dir + "/model.txt"; }

  Status Prepare() {
    std::error_code ec;
    if (fs::exists(a_.dir)) {
      const bool ours = fs::exists(a_.dir + "/" + kMarker);
      if (!ours && !fs::is_empty(a_.dir, ec)) {
        return Status::InvalidArgument("--dir " + a_.dir +
                                       " exists, is not empty and was not made by this harness");
      }
      fs::remove_all(a_.dir, ec);
    }
    fs::create_directories(a_.dir, ec);
    if (ec) return Status::IOError("mkdir " + a_.dir + ": " + ec.message());
    std::ofstream(a_.dir + "/" + kMarker) << "collection_crash_harness scratch directory\n";
    return Status::OK();
  }

  void StartFresh() {
    ++generation_;
    const std::uint64_t next_batch = model_.next_batch;
    model_ = Model{};
    model_.next_batch = next_batch;  // batch numbers stay unique across collections
    indexed_ = false;
    std::printf("-- fresh collection %s\n", coll_dir().c_str());
  }

  KillPlan ChoosePlan() {
    const unsigned r = rng_() % 100;
    if (!indexed_ && model_.live.size() < kFlatThreshold && r < 75) return KillPlan::kFirstBuild;
    if (r < 45) return KillPlan::kTime;
    if (r < 70) return KillPlan::kAtIntent;
    return KillPlan::kDuringMerge;
  }

  double LogUniformMs(double lo, double hi) {
    std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
    return std::exp(u(rng_));
  }

  RoundResult RunRound(int round) {
    RoundResult result;
    const std::uint64_t child_seed = Mix(a_.seed * 1000003 + round);
    if (Status s = SaveModel(model_, state_path()); !s.ok()) {
      std::printf("round %d/%d: FAILED: %s\n", round, a_.kills, s.ToString().c_str());
      return {false, true};
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      std::printf("round %d/%d: FAILED: pipe: %s\n", round, a_.kills, std::strerror(errno));
      return {false, true};
    }
    std::vector<std::string> args = {"/proc/self/exe",
                                     "--child",
                                     coll_dir(),
                                     "--state",
                                     state_path(),
                                     "--seed",
                                     std::to_string(child_seed),
                                     "--fd",
                                     std::to_string(kChildFd),
                                     "--durability",
                                     std::string(DurabilityName(a_.durability))};
    // Every 10th round the child starts with a drain (see RunChild), so
    // that even a short run rebuilds versions from few vectors (rounds 20,
    // 40, ...) or none (rounds 10, 30, ...).
    const bool drain = round % 10 == 0;
    if (drain) {
      args.push_back("--drain");
      args.push_back(std::to_string(round % 20 == 10 ? 0 : 1 + rng_() % 199));
    }
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], kChildFd);
    pid_t pid = -1;
    const auto t0 = Clock::now();
    const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      std::printf("round %d/%d: FAILED: posix_spawn: %s\n", round, a_.kills, std::strerror(rc));
      return {false, true};
    }

    // The kill plan: a time, or an event plus a short delay.
    // A drain round is killed around the Merge() that ends the drain.
    KillPlan plan = ChoosePlan();
    if (drain) plan = KillPlan::kDuringMerge;
    const double delay_ms = LogUniformMs(a_.min_delay_ms, a_.max_delay_ms);
    Clock::time_point deadline = t0 + std::chrono::microseconds(static_cast<long>(delay_ms * 1e3));
    const std::uint64_t intent_target = 1 + rng_() % 150;
    std::uint64_t intents = 0;
    bool triggered = plan == KillPlan::kTime;
    if (!triggered) deadline = t0 + std::chrono::milliseconds(2500);  // fallback
    std::string trigger = plan == KillPlan::kTime ? "t=" + std::to_string(delay_ms) + "ms" : "";

    ChildRun run;
    std::string buf;
    std::vector<std::string> lines;
    auto consume = [&](bool live) {
      for (const std::string& line : lines) {
        run.last_line = line;
        if (line.empty()) continue;
        const char tag = line[0];
        if (tag == 'O') {
          run.opened = true;
          std::istringstream in(line.substr(1));
          in >> run.index_version;
          indexed_ = run.index_version != 0;
        } else if (tag == 'B') {
          Batch b;
          if (!ParseBatch(line, true, &b, nullptr)) {
            run.errors.push_back("unparsable line: " + line);
            continue;
          }
          if (b.no < model_.next_batch || b.no <= run.max_batch) {
            run.errors.push_back("harness bug: batch number reused: " + line.substr(0, 40));
          }
          run.max_batch = std::max(run.max_batch, b.no);
          for (const auto& [id, ver] : b.items) {
            if (id < kAbsentIdBase) model_.next_id = std::max(model_.next_id, id + 1);
          }
          if (run.in_flight) {
            run.errors.push_back("intent for batch " + std::to_string(b.no) + " while batch " +
                                 std::to_string(run.in_flight->no) + " was not acknowledged");
          }
          ++intents;
          if (live && !triggered) {
            const bool fire = (plan == KillPlan::kAtIntent && intents == intent_target) ||
                              (plan == KillPlan::kFirstBuild && b.crosses) ||
                              (plan == KillPlan::kDuringMerge && b.kind == 'M');
            if (fire) {
              triggered = true;
              const double extra_ms = plan == KillPlan::kFirstBuild    ? (rng_() % 200000) / 1e3
                                      : plan == KillPlan::kDuringMerge ? (rng_() % 100000) / 1e3
                                                                       : (rng_() % 3000) / 1e3;
              deadline =
                  Clock::now() + std::chrono::microseconds(static_cast<long>(extra_ms * 1e3));
              trigger =
                  std::string(plan == KillPlan::kAtIntent     ? "intent #" + std::to_string(intents)
                              : plan == KillPlan::kFirstBuild ? "threshold batch"
                                                              : "Merge() call") +
                  " +" + std::to_string(extra_ms) + "ms";
            }
          }
          run.in_flight = std::move(b);
        } else if (tag == 'U' || tag == 'D' || tag == 'M') {
          Batch b;
          std::uint64_t existed = 0;
          if (!ParseBatch(line, false, &b, &existed)) {
            run.errors.push_back("unparsable line: " + line);
            continue;
          }
          if (!run.in_flight || run.in_flight->no != b.no) {
            run.errors.push_back("acknowledgement without intent: " + line.substr(0, 40));
          }
          if (b.crosses || (run.in_flight && run.in_flight->crosses)) indexed_ = true;
          run.in_flight.reset();
          ApplyBatch(&model_, b);
          ++run.acked;
        } else if (tag == 'V') {
          std::istringstream in(line.substr(1));
          int merging = 0;
          in >> run.index_version >> merging;
          indexed_ = run.index_version != 0;
          if (merging) ++run.merges_seen;
          run.merging = merging != 0;
          if (live && !triggered && plan == KillPlan::kDuringMerge && merging) {
            triggered = true;
            const double extra_ms = (rng_() % 300000) / 1e3;
            deadline = Clock::now() + std::chrono::microseconds(static_cast<long>(extra_ms * 1e3));
            trigger = "background merge +" + std::to_string(extra_ms) + "ms";
          }
        } else if (tag == 'E') {
          run.errors.push_back(line.substr(2));
        } else if (tag == 'F') {
          run.failure.push_back(line.substr(2));
        } else if (tag == 'C') {
          run.closed = true;
        } else {
          run.errors.push_back("unknown line: " + line.substr(0, 60));
        }
      }
      lines.clear();
    };

    bool eof = false;
    while (!eof) {
      const auto now = Clock::now();
      if (now >= deadline) break;
      const int wait_ms =
          static_cast<int>(
              std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) +
          1;
      pollfd pfd{fds[0], POLLIN, 0};
      const int pr = ::poll(&pfd, 1, std::min(wait_ms, 50));
      if (pr > 0) {
        eof = !ReadLines(fds[0], &buf, &lines);
        consume(true);
      }
    }
    if (!triggered) trigger = std::string(KillPlanName(plan)) + " (no event; fallback at 2.5 s)";
    if (drain) trigger += ", drain round";
    const double killed_at_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!eof) ::kill(pid, SIGKILL);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    while (ReadLines(fds[0], &buf, &lines)) consume(false);
    consume(false);
    ::close(fds[0]);
    model_.next_batch = std::max(model_.next_batch, run.max_batch + 1);

    Problems problems;
    const bool by_us = WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL && !eof;
    if (!by_us && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && run.closed)) {
      problems.Add("child died on its own",
                   WIFSIGNALED(wstatus) ? "signal " + std::to_string(WTERMSIG(wstatus)) + " (" +
                                              strsignal(WTERMSIG(wstatus)) + ")"
                                        : "exit status " + std::to_string(WEXITSTATUS(wstatus)));
    }
    for (const auto& f : run.failure) problems.Add("a write or open failed in the child", f);
    for (const auto& e : run.errors) problems.Add("the child saw a contract violation", e);

    // Reopen and verify.
    const auto t1 = Clock::now();
    auto opened = Collection::Open(coll_dir(), MakeOptions(a_.durability));
    const double open_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
    std::string in_flight_desc = run.in_flight ? Describe(*run.in_flight) : "none";
    if (!opened.ok()) {
      problems.Add("reopen after kill failed", opened.status().ToString());
      PrintRound(round, false, plan, trigger, killed_at_ms, run, in_flight_desc, "?", open_ms, -1,
                 nullptr);
      std::printf("%s", problems.ToString().c_str());
      return {false, true};
    }
    std::unique_ptr<Collection> c = std::move(*opened);
    std::string outcome;
    const double recall = Verify(*c, &model_, run.in_flight, rng_, &problems, &outcome);
    // A merge that reopening started (or recovery's first build) must not
    // fail: nothing in this harness is out of the ordinary.
    if (Status s = c->WaitForMerge(); !s.ok()) {
      problems.Add("a merge after reopening failed (WaitForMerge)", s.ToString());
    }
    const CollectionStats st = c->Stats();
    indexed_ = st.index_version != 0;
    const bool ok = problems.empty();
    PrintRound(round, ok, plan, trigger, killed_at_ms, run, in_flight_desc, outcome, open_ms,
               recall, &st);
    if (!ok) {
      std::printf("%s", problems.ToString().c_str());
      std::printf(
          "    reproduce: collection_crash_harness --dir DIR --kills %d --seed %llu "
          "--durability %s --fresh-every %d (round %d, child seed %llu; kill timing "
          "varies)\n",
          a_.kills, static_cast<unsigned long long>(a_.seed),
          std::string(DurabilityName(a_.durability)).c_str(), a_.fresh_every, round,
          static_cast<unsigned long long>(child_seed));
      result.ok = false;
      // Bring the collection back to the model so that later rounds test
      // from a known state (a loss that recurs is then a new loss).
      if (Status s = Repair(*c, model_, run.in_flight); !s.ok()) {
        std::printf("    repair failed: %s\n", s.ToString().c_str());
      }
    }
    if (Status s = c->Close(); !s.ok()) {
      std::printf("    Close failed: %s\n", s.ToString().c_str());
      result.ok = false;
    }
    c.reset();
    return result;
  }

  void PrintRound(int round, bool ok, KillPlan plan, const std::string& trigger, double killed_ms,
                  const ChildRun& run, const std::string& in_flight, const std::string& outcome,
                  double open_ms, double recall, const CollectionStats* st) {
    std::printf(
        "round %d/%d: %s kill[%s %s] at %.0f ms, %s, %llu acked, in flight: %s -> %s; "
        "reopen %.0f ms: live %zu",
        round, a_.kills, ok ? "OK" : "FAILED", KillPlanName(plan), trigger.c_str(), killed_ms,
        run.opened ? "opened" : "not opened", static_cast<unsigned long long>(run.acked),
        in_flight.c_str(), outcome.c_str(), open_ms, model_.live.size());
    if (st) {
      std::printf(" (indexed %llu, deleted %llu, pending %llu, version %llu%s)",
                  static_cast<unsigned long long>(st->indexed),
                  static_cast<unsigned long long>(st->deleted),
                  static_cast<unsigned long long>(st->pending),
                  static_cast<unsigned long long>(st->index_version),
                  st->merging ? ", merging" : "");
    }
    if (recall >= 0) std::printf(", recall@10 %.3f", recall);
    std::printf("\n");
  }

  // The issue's bar: recall within a point of a clean build of the same live
  // set. Both are merged first, so both search one SSD index version.
  void CompareWithCleanBuild(int* failed, int* passed) {
    if (model_.live.size() < kFlatThreshold) return;
    const auto queries = FixedQueries();
    const CollectionSearchParams params = MakeSearchParams();
    auto recall_of = [&](const std::string& dir, bool load, double* recall,
                         std::uint64_t* version) -> Status {
      STRATA_ASSIGN_OR_RETURN(auto c, Collection::Open(dir, MakeOptions(a_.durability)));
      if (load) {
        std::vector<VectorId> ids;
        std::vector<float> vecs;
        std::vector<std::string> pay;
        for (const auto& [id, ver] : model_.live) {
          ids.push_back(id);
          const auto v = MakeVector(id, ver);
          vecs.insert(vecs.end(), v.begin(), v.end());
          pay.push_back(MakePayload(id, ver));
        }
        STRATA_RETURN_IF_ERROR(c->Upsert(ids, vecs, pay));
      }
      STRATA_RETURN_IF_ERROR(c->WaitForMerge());
      STRATA_RETURN_IF_ERROR(c->Merge());
      STRATA_ASSIGN_OR_RETURN(auto res, c->SearchBatch(Flatten(queries), params, 2));
      *recall = Recall(res, queries, model_);
      *version = c->Stats().index_version;
      return c->Close();
    };
    double crash_recall = 0, clean_recall = 0;
    std::uint64_t crash_version = 0, clean_version = 0;
    Status s = recall_of(coll_dir(), false, &crash_recall, &crash_version);
    if (s.ok()) s = recall_of(a_.dir + "/clean", true, &clean_recall, &clean_version);
    const bool ok = s.ok() && crash_recall >= clean_recall - 0.01;
    std::printf(
        "clean-build comparison: %s: after a final merge, crash-built recall@10 %.3f "
        "(version %llu), clean build %.3f (version %llu), %zu live vectors%s%s\n",
        ok ? "OK" : "FAILED", crash_recall, static_cast<unsigned long long>(crash_version),
        clean_recall, static_cast<unsigned long long>(clean_version), model_.live.size(),
        s.ok() ? "" : ": ", s.ok() ? "" : s.ToString().c_str());
    if (!ok) {
      ++*failed;
      --*passed;  // counted against the last round: N rounds in the summary
    }
  }

  ParentArgs a_;
  std::mt19937_64 rng_;
  Model model_;
  int generation_ = 0;
  bool indexed_ = false;  // the current collection has (or may have) an SSD index
};

// ---------------------------------------------------------------------------

void Usage() {
  std::fprintf(stderr,
               "usage: collection_crash_harness --dir DIR --kills N [--seed S] "
               "[--durability async|sync] [--fresh-every K] [--min-delay-ms MS] "
               "[--max-delay-ms MS] [--keep]\n"
               "       collection_crash_harness --child DIR --state FILE --seed S [--fd N] "
               "[--durability async|sync] [--max-seconds S] [--drain LIVE]\n");
}

int Main(int argc, char** argv) {
  std::string child_dir, dir, state, durability = "async";
  ParentArgs pa;
  ChildArgs ca;
  bool child = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "collection_crash_harness: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (arg == "--child") {
        child = true;
        ca.dir = value();
      } else if (arg == "--state") {
        ca.state = value();
      } else if (arg == "--fd") {
        ca.fd = std::stoi(value());
      } else if (arg == "--drain") {
        ca.drain = std::stol(value());
      } else if (arg == "--max-seconds") {
        ca.max_seconds = std::stod(value());
      } else if (arg == "--dir") {
        pa.dir = value();
      } else if (arg == "--kills") {
        pa.kills = std::stoi(value());
      } else if (arg == "--seed") {
        pa.seed = ca.seed = std::stoull(value());
      } else if (arg == "--durability") {
        durability = value();
      } else if (arg == "--fresh-every") {
        pa.fresh_every = std::stoi(value());
      } else if (arg == "--min-delay-ms") {
        pa.min_delay_ms = std::stod(value());
      } else if (arg == "--max-delay-ms") {
        pa.max_delay_ms = std::stod(value());
      } else if (arg == "--keep") {
        pa.keep = true;
      } else if (arg == "--help" || arg == "-h") {
        Usage();
        return 0;
      } else {
        std::fprintf(stderr, "collection_crash_harness: unknown option %s\n", arg.c_str());
        Usage();
        return 2;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "collection_crash_harness: bad value for %s\n", arg.c_str());
      return 2;
    }
  }
  auto d = ParseDurability(durability);
  if (!d.ok()) {
    std::fprintf(stderr, "collection_crash_harness: %s\n", d.status().ToString().c_str());
    return 2;
  }
  pa.durability = ca.durability = *d;
  if (child) {
    if (ca.state.empty()) {
      Usage();
      return 2;
    }
    return RunChild(ca);
  }
  if (pa.dir.empty() || pa.kills < 1 || pa.min_delay_ms <= 0 || pa.max_delay_ms < pa.min_delay_ms) {
    Usage();
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  pa.dir = fs::absolute(pa.dir).string();
  return Harness(pa).Run();
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) { return strata::Main(argc, argv); }
