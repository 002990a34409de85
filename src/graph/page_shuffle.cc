#include "graph/page_shuffle.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "base/parallel.h"
#include "base/random.h"
#include "base/timer.h"

namespace strata::graph {
namespace {

// Node ids are uint32 and kEmptySlot is reserved, so at most 2^32 - 2 nodes.
constexpr std::uint64_t kMaxNodes = 0xFFFFFFFEull;

// Candidate pages a node keeps from the parallel scoring step for the
// sequential commit. Scoring against the block-start snapshot ranks pages by
// gain; a page can only lose gain (fill up) before the commit, so the best
// page at commit time is almost always among the first few. 8 covers the
// distinct neighbour pages of most nodes after the first round.
constexpr int kCandidates = 8;
// Pages a node tries to swap into per swap pass (its best-connected ones).
constexpr int kSwapPages = 2;

struct Candidate {
  std::uint32_t page = kEmptySlot;
  std::uint32_t count = 0;  // out- plus in-neighbours of the node in `page`
};

std::uint64_t CeilDiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// LDG's page score count * (1 - size / C), scaled by C to stay integral.
std::uint64_t Gain(std::uint32_t count, std::uint32_t size, std::uint32_t c) {
  return static_cast<std::uint64_t>(count) * (c - size);
}

// Whether page a (gain ga, the node's previous page iff prev_a) beats page b.
// Ties go to the node's previous page, then to the lower page id. Starling
// breaks ties by hash-map order; keeping the node where it was makes the
// rounds converge instead of shuffling equally good choices around (Vamana
// graphs on Gaussian mixtures, 4k and 30k nodes, C = 5: OR +3-6% after 8
// rounds), and the fixed order keeps
// the result independent of neighbour-list order.
bool Better(std::uint64_t ga, bool prev_a, std::uint32_t a, std::uint64_t gb, bool prev_b,
            std::uint32_t b) {
  if (ga != gb) return ga > gb;
  if (prev_a != prev_b) return prev_a;
  return a < b;
}

// Both graph types expose size() and Neighbors(i); the CSR view is already
// validated, FlatAdjacency needs its ids checked.
Status CheckIds(const FlatAdjacency& g) {
  const std::uint64_t n = g.size();
  for (NodeId u = 0; u < g.size(); ++u) {
    for (NodeId v : g.Neighbors(u)) {
      if (v >= n) {
        return Status::InvalidArgument("page shuffle: node " + std::to_string(u) +
                                       " has neighbour id " + std::to_string(v) +
                                       " >= n = " + std::to_string(n));
      }
    }
  }
  return Status::OK();
}
Status CheckIds(const CsrGraphView& g) { return g.Validate(); }

// In-neighbour lists in CSR form. A Vamana graph averages ~39 of 64 slots, so
// CSR (8 bytes per node + 4 per edge) is ~40% of a fixed-width array and far
// below n separate vectors. Filled in source order, so each list is sorted.
struct ReverseGraph {
  std::vector<std::uint64_t> offsets;  // n + 1
  std::vector<NodeId> ids;             // edges (self-loops dropped)

  std::span<const NodeId> Neighbors(std::uint64_t v) const {
    return {ids.data() + offsets[v], ids.data() + offsets[v + 1]};
  }
};

template <typename G>
ReverseGraph BuildReverse(const G& g) {
  const std::uint64_t n = g.size();
  ReverseGraph r;
  r.offsets.assign(n + 1, 0);
  for (std::uint64_t u = 0; u < n; ++u) {
    for (NodeId v : g.Neighbors(u)) {
      if (v != u) ++r.offsets[v + 1];
    }
  }
  for (std::uint64_t v = 0; v < n; ++v) r.offsets[v + 1] += r.offsets[v];
  r.ids.resize(r.offsets[n]);
  // Write cursors reuse the offsets array shifted by one, then shift back:
  // no second n-sized array.
  for (std::uint64_t u = 0; u < n; ++u) {
    for (NodeId v : g.Neighbors(u)) {
      if (v != u) r.ids[r.offsets[v]++] = static_cast<NodeId>(u);
    }
  }
  for (std::uint64_t v = n; v > 0; --v) r.offsets[v] = r.offsets[v - 1];
  r.offsets[0] = 0;
  return r;
}

// sum_u |N_out(u) ∩ B(u) \ {u}| as an exact integer (the OR numerator).
template <typename G>
std::uint64_t OverlapCount(const G& g, const std::uint32_t* page_of, unsigned threads) {
  std::atomic<std::uint64_t> total{0};
  ParallelForChunks(g.size(), threads, 16384, [&](std::size_t b, std::size_t e, unsigned) {
    std::uint64_t local = 0;
    for (std::size_t u = b; u < e; ++u) {
      const std::uint32_t pu = page_of[u];
      for (NodeId v : g.Neighbors(u)) local += (v != u && page_of[v] == pu);
    }
    total.fetch_add(local, std::memory_order_relaxed);
  });
  return total.load();
}

double RatioFromCount(std::uint64_t count, std::uint64_t n, std::uint32_t c) {
  if (n == 0 || c <= 1) return 0.0;
  return static_cast<double>(count) / (static_cast<double>(n) * static_cast<double>(c - 1));
}

// Builds the output from a node -> page map (every page holding at most C
// nodes): pages holding C nodes keep their relative order and come first,
// short pages follow; inside a page, nodes are in ascending id order.
PagePartition Finalize(const std::vector<std::uint32_t>& page_of, std::uint64_t num_pages,
                       std::uint32_t c) {
  const std::uint64_t n = page_of.size();
  std::vector<std::uint32_t> count(num_pages, 0);
  for (std::uint32_t p : page_of) ++count[p];
  std::vector<std::uint32_t> renumber(num_pages);
  std::uint32_t next = 0;
  for (std::uint64_t p = 0; p < num_pages; ++p) {
    if (count[p] == c) renumber[p] = next++;
  }
  for (std::uint64_t p = 0; p < num_pages; ++p) {
    if (count[p] != c) renumber[p] = next++;
  }
  PagePartition out;
  out.records_per_page = c;
  out.page_of.resize(n);
  out.slot_of.resize(n);
  out.members.assign(num_pages * c, kEmptySlot);
  std::fill(count.begin(), count.end(), 0);  // now: fill per new page id
  for (std::uint64_t u = 0; u < n; ++u) {
    const std::uint32_t p = renumber[page_of[u]];
    const std::uint32_t s = count[p]++;
    out.page_of[u] = p;
    out.slot_of[u] = s;
    out.members[static_cast<std::uint64_t>(p) * c + s] = static_cast<std::uint32_t>(u);
  }
  return out;
}

// The state shared by the fill and the LDG rounds.
template <typename G>
class Shuffler {
 public:
  Shuffler(const G& g, const ReverseGraph& rev, std::uint32_t c, unsigned threads)
      : g_(g),
        rev_(rev),
        n_(g.size()),
        c_(c),
        pages_(CeilDiv(n_, c)),
        threads_(threads),
        page_of_(n_, kEmptySlot),
        size_(pages_, 0),
        members_(pages_ * c, kEmptySlot) {}

  const std::vector<std::uint32_t>& page_of() const { return page_of_; }
  std::uint64_t free_pops() const { return free_pops_; }

  std::uint64_t WorkBytes() const {
    return 4 * (3 * n_ + 3 * pages_ + pages_ * c_) +  // maps, order, best copy, pages
           static_cast<std::uint64_t>(threads_) * 4 * pages_ +
           BlockSize() * kCandidates * sizeof(Candidate);
  }

  // Breadth-first fill in id order: every page but the last is full.
  void Fill() {
    std::uint64_t page = 0;
    std::uint32_t fill = 0;    // nodes in `page`
    std::uint32_t cursor = 0;  // next member of `page` whose neighbours to add
    auto place = [&](std::uint32_t u) {
      members_[page * c_ + fill] = u;
      page_of_[u] = static_cast<std::uint32_t>(page);
      ++size_[page];
      if (++fill == c_) {
        ++page;
        fill = 0;
        cursor = 0;
      }
    };
    for (std::uint64_t s = 0; s < n_; ++s) {
      if (page_of_[s] != kEmptySlot) continue;
      place(static_cast<std::uint32_t>(s));
      while (fill > 0 && cursor < fill) {
        const std::uint32_t u = members_[page * c_ + cursor++];
        for (NodeId v : g_.Neighbors(u)) {
          if (page_of_[v] != kEmptySlot) continue;
          place(v);
          if (fill == 0) break;  // page closed; the next page starts from the stream
        }
      }
    }
  }

  // One LDG round over the nodes in a random order drawn from `seed`.
  void RefineRound(std::uint64_t seed) {
    // Stream order: a fresh permutation per round (Fisher-Yates).
    order_.resize(n_);
    for (std::uint64_t i = 0; i < n_; ++i) order_[i] = static_cast<std::uint32_t>(i);
    Xoshiro256 rng(seed);
    for (std::uint64_t i = n_; i > 1; --i) std::swap(order_[i - 1], order_[rng.Below(i)]);

    // Empty every page but keep page_of_: unplaced neighbours keep voting for
    // their previous page.
    std::fill(size_.begin(), size_.end(), 0);
    std::fill(members_.begin(), members_.end(), kEmptySlot);
    queue_.resize(pages_);
    for (std::uint64_t p = 0; p < pages_; ++p) queue_[p] = static_cast<std::uint32_t>(p);
    q_head_ = 0;
    q_count_ = pages_;

    const std::uint64_t block = BlockSize();
    cand_.resize(block * kCandidates);
    EnsureScratch();
    for (std::uint64_t b = 0; b < n_; b += block) {
      const std::uint64_t e = std::min(n_, b + block);
      // Scoring reads page_of_ and size_ only; nothing writes them until the
      // commit loop below, so the threads see one consistent snapshot.
      ParallelForChunks(e - b, threads_, 64, [&](std::size_t lo, std::size_t hi, unsigned t) {
        for (std::size_t i = lo; i < hi; ++i) Score(order_[b + i], t, &cand_[i * kCandidates]);
      });
      for (std::uint64_t i = 0; i < e - b; ++i) {
        const std::uint32_t u = order_[b + i];
        if (!Commit(u, &cand_[i * kCandidates], /*may_defer=*/true)) deferred_.push_back(u);
      }
    }
    // Nodes that found no non-full page holding a neighbour are placed last,
    // re-scored against the finished pages. Taking a free-queue page the
    // moment they come up would spread them one per page over the pages that
    // the rest of the stream still wants (a 5-clique among 40 isolated nodes
    // then never shares a page). Sequential: usually a few percent of n.
    for (const std::uint32_t u : deferred_) {
      Candidate cand[kCandidates];
      Score(u, 0, cand);
      Commit(u, cand, /*may_defer=*/false);
    }
    deferred_.clear();
  }

  // Makes `page_of` (a valid placement, e.g. the best one seen) current.
  void Load(const std::vector<std::uint32_t>& page_of) {
    page_of_ = page_of;
    std::fill(size_.begin(), size_.end(), 0);
    std::fill(members_.begin(), members_.end(), kEmptySlot);
    for (std::uint64_t u = 0; u < n_; ++u) {
      const std::uint32_t p = page_of_[u];
      members_[static_cast<std::uint64_t>(p) * c_ + size_[p]++] = static_cast<std::uint32_t>(u);
    }
  }

  // One pass of pairwise swaps (Kernighan-Lin style hill climbing; not in
  // Starling). For each node u in id order: among the (at most
  // kSwapPages) pages q holding more of u's neighbours than u's own page p,
  // find the member w of q (or a free slot of q) whose exchange with u
  // raises the number of same-page directed edges the most,
  //   delta = W(u,q) + W(w,p) - W(u,p) - W(w,q) - 2 W(u,w),
  // W(x,P) = edges in either direction between x and the other nodes of P,
  // and apply it if delta > 0. Every applied swap strictly raises OR(G), page
  // sizes never change (a free-slot move only shifts which pages are short),
  // and LDG's restreaming, which cannot keep a page's good members together
  // once the page is emptied, cannot undo it. Requiring W(u,q) > W(u,p)
  // loses no improving swap: delta > 0 needs W(u,q) > W(u,p) or
  // W(w,p) > W(w,q), and the second case is found when w is the mover.
  // Sequential, so deterministic. Returns the number of swaps applied.
  std::uint64_t SwapPass() {
    EnsureScratch();
    Scratch& s = scratch_[0];
    std::uint64_t swaps = 0;
    std::array<std::pair<std::uint32_t, std::uint32_t>, kSwapPages> top{};  // (count, page)
    for (std::uint64_t uu = 0; uu < n_; ++uu) {
      const auto u = static_cast<std::uint32_t>(uu);
      const std::uint32_t p = page_of_[u];
      auto add = [&](NodeId v) {
        const std::uint32_t q = page_of_[v];
        if (s.count[q]++ == 0) s.touched.push_back(q);
      };
      for (NodeId v : g_.Neighbors(u)) {
        if (v != u) add(v);
      }
      for (NodeId v : rev_.Neighbors(u)) add(v);
      const std::uint32_t own = s.count[p];
      int k = 0;
      for (std::uint32_t q : s.touched) {
        const std::uint32_t cnt = s.count[q];
        if (q == p || cnt <= own) continue;
        // Keep the kSwapPages pages with most neighbours (ties: lower id).
        int pos = k;
        while (pos > 0 && (top[pos - 1].first < cnt ||
                           (top[pos - 1].first == cnt && top[pos - 1].second > q))) {
          --pos;
        }
        if (pos >= kSwapPages) continue;
        for (int j = std::min(k, kSwapPages - 1); j > pos; --j) top[j] = top[j - 1];
        top[pos] = {cnt, q};
        if (k < kSwapPages) ++k;
      }
      for (std::uint32_t q : s.touched) s.count[q] = 0;
      s.touched.clear();

      std::int64_t best_delta = 0;
      std::uint32_t best_q = kEmptySlot, best_slot = 0;
      for (int j = 0; j < k; ++j) {
        const std::uint32_t q = top[j].second;
        const auto wuq = static_cast<std::int64_t>(top[j].first);
        for (std::uint32_t slot = 0; slot < c_; ++slot) {
          const std::uint32_t w = members_[static_cast<std::uint64_t>(q) * c_ + slot];
          std::int64_t delta = wuq - own;  // a move into a free slot
          if (w != kEmptySlot) {
            std::int64_t wp = 0, wq = 0, uw = 0;
            auto weigh = [&](NodeId x) {
              if (x == w) return;
              uw += (x == u);
              const std::uint32_t px = page_of_[x];
              wp += (px == p);
              wq += (px == q);
            };
            for (NodeId x : g_.Neighbors(w)) weigh(x);
            for (NodeId x : rev_.Neighbors(w)) weigh(x);
            delta += wp - wq - 2 * uw;
          }
          if (delta > best_delta) {
            best_delta = delta;
            best_q = q;
            best_slot = slot;
          }
          if (w == kEmptySlot) break;  // used slots come first
        }
      }
      if (best_q == kEmptySlot) continue;
      // Apply: u takes w's slot in q; w (if any) takes u's slot in p.
      std::uint32_t* pm = &members_[static_cast<std::uint64_t>(p) * c_];
      std::uint32_t* qm = &members_[static_cast<std::uint64_t>(best_q) * c_];
      const std::uint32_t u_slot = static_cast<std::uint32_t>(std::find(pm, pm + size_[p], u) - pm);
      const std::uint32_t w = qm[best_slot];
      qm[best_slot] = u;
      page_of_[u] = best_q;
      if (w != kEmptySlot) {
        pm[u_slot] = w;
        page_of_[w] = p;
      } else {
        // A move: close the gap in p, grow q.
        pm[u_slot] = pm[size_[p] - 1];
        pm[size_[p] - 1] = kEmptySlot;
        --size_[p];
        ++size_[best_q];
      }
      ++swaps;
    }
    return swaps;
  }

 private:
  // Nodes scored per parallel step. Large enough to amortise the thread
  // start-up of ParallelForChunks, small next to n so that few nodes decide
  // on a stale view of nodes committed in the same block; a function of n
  // only, so the result does not depend on the thread count.
  std::uint64_t BlockSize() const { return std::clamp<std::uint64_t>(CeilDiv(n_, 256), 32, 4096); }

  void EnsureScratch() {
    if (scratch_.size() == threads_) return;
    scratch_.assign(threads_, {});
    for (auto& s : scratch_) s.count.assign(pages_, 0);
  }

  // Fills `out` (kCandidates entries) with u's best pages by gain at the
  // current sizes, best first (order of Better), so the choice does not
  // depend on neighbour order. Unused entries get page kEmptySlot.
  void Score(std::uint32_t u, unsigned t, Candidate* out) {
    Scratch& s = scratch_[t];
    auto add = [&](NodeId v) {
      const std::uint32_t p = page_of_[v];
      if (s.count[p]++ == 0) s.touched.push_back(p);
    };
    for (NodeId v : g_.Neighbors(u)) {
      if (v != u) add(v);
    }
    for (NodeId v : rev_.Neighbors(u)) add(v);

    const std::uint32_t prev = page_of_[u];
    std::array<std::uint64_t, kCandidates> gain{};
    int k = 0;
    for (std::uint32_t p : s.touched) {
      const std::uint32_t cnt = s.count[p];
      s.count[p] = 0;
      if (size_[p] >= c_) continue;
      const std::uint64_t g = Gain(cnt, size_[p], c_);
      // Insertion into the sorted top list, best first.
      int pos = k;
      while (pos > 0 &&
             Better(g, p == prev, p, gain[pos - 1], out[pos - 1].page == prev, out[pos - 1].page)) {
        --pos;
      }
      if (pos >= kCandidates) continue;
      const int last = std::min(k, kCandidates - 1);
      for (int j = last; j > pos; --j) {
        gain[j] = gain[j - 1];
        out[j] = out[j - 1];
      }
      gain[pos] = g;
      out[pos] = Candidate{p, cnt};
      if (k < kCandidates) ++k;
    }
    s.touched.clear();
    for (int j = k; j < kCandidates; ++j) out[j] = Candidate{};
  }

  // Places u into its best candidate page by gain at the current sizes, else
  // returns false if `may_defer`, else takes the first non-full page of the
  // free queue. Returns whether u was placed.
  bool Commit(std::uint32_t u, const Candidate* cand, bool may_defer) {
    const std::uint32_t prev = page_of_[u];
    std::uint32_t best = kEmptySlot;
    std::uint64_t best_gain = 0;
    for (int j = 0; j < kCandidates && cand[j].page != kEmptySlot; ++j) {
      const std::uint32_t p = cand[j].page;
      if (size_[p] >= c_) continue;
      const std::uint64_t g = Gain(cand[j].count, size_[p], c_);
      if (best == kEmptySlot || Better(g, p == prev, p, best_gain, best == prev, best)) {
        best = p;
        best_gain = g;
      }
    }
    bool from_queue = false;
    if (best == kEmptySlot) {
      if (may_defer) return false;
      // Every non-full page is in the queue exactly once (pages leave it only
      // when popped, and a popped page that is still non-full is pushed back),
      // and fewer than n <= pages * C nodes are placed, so a non-full page
      // is always found.
      ++free_pops_;
      for (;;) {
        assert(q_count_ > 0);
        const std::uint32_t p = queue_[q_head_];
        q_head_ = (q_head_ + 1) % pages_;
        --q_count_;
        if (size_[p] < c_) {
          best = p;
          break;
        }
      }
      from_queue = true;
    }
    members_[static_cast<std::uint64_t>(best) * c_ + size_[best]] = u;
    ++size_[best];
    page_of_[u] = best;
    if (from_queue && size_[best] < c_) {
      queue_[(q_head_ + q_count_) % pages_] = best;
      ++q_count_;
    }
    return true;
  }

  struct Scratch {
    std::vector<std::uint32_t> count;  // per page; all zero between nodes
    std::vector<std::uint32_t> touched;
  };

  const G& g_;
  const ReverseGraph& rev_;
  const std::uint64_t n_;
  const std::uint32_t c_;
  const std::uint64_t pages_;
  const unsigned threads_;
  std::vector<std::uint32_t> page_of_;  // n: current (or previous-round) page
  std::vector<std::uint32_t> size_;     // pages: nodes placed this round
  std::vector<std::uint32_t> members_;  // pages * C
  std::vector<std::uint32_t> order_;    // n: this round's stream order
  std::vector<std::uint32_t> queue_;    // ring buffer of page ids (free queue)
  std::uint64_t q_head_ = 0;
  std::uint64_t q_count_ = 0;
  std::vector<Candidate> cand_;          // block * kCandidates
  std::vector<std::uint32_t> deferred_;  // nodes to place at the end of the round
  std::vector<Scratch> scratch_;
  std::uint64_t free_pops_ = 0;
};

template <typename G>
Result<PagePartition> ShuffleImpl(const G& g, const PageShuffleOptions& options,
                                  PageShuffleReport* report,
                                  const PageShuffleProgressFn& progress) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  const std::uint64_t n = g.size();
  if (n > kMaxNodes) return Status::InvalidArgument("page shuffle: too many nodes for 32-bit ids");
  STRATA_RETURN_IF_ERROR(CheckIds(g));
  const std::uint32_t c = options.records_per_page;
  const unsigned threads = options.threads == 0 ? DefaultThreads() : options.threads;
  const Timer total;

  PageShuffleReport local;
  PageShuffleReport& rep = report != nullptr ? *report : local;
  rep = PageShuffleReport{};
  rep.num_pages = CeilDiv(n, c);
  auto finish_phase = [&](std::string name, double seconds, double ratio) {
    rep.phases.push_back(PageShufflePhase{std::move(name), seconds, ratio});
    if (progress) progress(rep.phases.back());
  };

  try {
    STRATA_ASSIGN_OR_RETURN(PagePartition identity, IdentityPartition(n, c));
    const std::uint64_t identity_count = OverlapCount(g, identity.page_of.data(), threads);
    rep.identity_overlap_ratio = RatioFromCount(identity_count, n, c);
    if (c == 1 || n <= 1) {
      // One node per page (or nothing to arrange): every partition is
      // equivalent, so return the id order itself.
      rep.final_overlap_ratio = rep.identity_overlap_ratio;
      rep.best_phase = "identity";
      rep.short_pages = rep.num_pages > 0 && n % c != 0 ? 1 : 0;
      rep.seconds_total = total.ElapsedSeconds();
      return identity;
    }
    identity = PagePartition{};  // release before the big arrays

    Timer phase;
    const ReverseGraph rev = BuildReverse(g);
    rep.edges = rev.ids.size();
    finish_phase("reverse", phase.ElapsedSeconds(), 0.0);

    Shuffler<G> shuffler(g, rev, c, threads);
    rep.work_bytes = 8 * (n + 1) + 4 * rev.ids.size() + shuffler.WorkBytes();
    phase.Reset();
    shuffler.Fill();
    double seconds = phase.ElapsedSeconds();
    std::uint64_t best_count = OverlapCount(g, shuffler.page_of().data(), threads);
    std::vector<std::uint32_t> best = shuffler.page_of();
    rep.best_phase = "fill";
    finish_phase("fill", seconds, RatioFromCount(best_count, n, c));

    for (int r = 0; r < options.refine_rounds; ++r) {
      phase.Reset();
      shuffler.RefineRound(MixSeed(options.seed, static_cast<std::uint64_t>(r)));
      seconds = phase.ElapsedSeconds();
      const std::uint64_t count = OverlapCount(g, shuffler.page_of().data(), threads);
      std::string name = "ldg" + std::to_string(r + 1);
      if (count > best_count) {
        best_count = count;
        best = shuffler.page_of();
        rep.best_phase = name;
      }
      finish_phase(std::move(name), seconds, RatioFromCount(count, n, c));
    }
    rep.free_queue_pops = shuffler.free_pops();

    if (options.swap_passes > 0) {
      shuffler.Load(best);
      for (int r = 0; r < options.swap_passes; ++r) {
        phase.Reset();
        const std::uint64_t swaps = shuffler.SwapPass();
        seconds = phase.ElapsedSeconds();
        const std::uint64_t count = OverlapCount(g, shuffler.page_of().data(), threads);
        std::string name = "swap" + std::to_string(r + 1);
        rep.swaps += swaps;
        if (count > best_count) {  // always, unless the pass found nothing
          best_count = count;
          best = shuffler.page_of();
          rep.best_phase = name;
        }
        finish_phase(std::move(name), seconds, RatioFromCount(count, n, c));
        if (swaps == 0) break;  // a local optimum: further passes change nothing
      }
    }

    PagePartition out = Finalize(best, rep.num_pages, c);
    for (std::uint64_t p = 0; p < rep.num_pages; ++p) {
      rep.short_pages += out.members[p * c + c - 1] == kEmptySlot;
    }
    rep.final_overlap_ratio = RatioFromCount(best_count, n, c);
    rep.seconds_total = total.ElapsedSeconds();
    return out;
  } catch (const std::bad_alloc&) {
    return Status::Aborted("page shuffle: out of memory for " + std::to_string(n) + " nodes");
  }
}

template <typename G>
Result<double> OverlapImpl(const G& g, const PagePartition& partition, unsigned threads) {
  const std::uint64_t n = g.size();
  if (partition.page_of.size() != n) {
    return Status::InvalidArgument("overlap ratio: partition covers " +
                                   std::to_string(partition.page_of.size()) + " nodes, graph has " +
                                   std::to_string(n));
  }
  if (partition.records_per_page == 0) {
    return Status::InvalidArgument("overlap ratio: records_per_page is 0");
  }
  STRATA_RETURN_IF_ERROR(CheckIds(g));
  if (threads == 0) threads = DefaultThreads();
  return RatioFromCount(OverlapCount(g, partition.page_of.data(), threads), n,
                        partition.records_per_page);
}

}  // namespace

Status CsrGraphView::Validate() const {
  if (offsets.empty()) return Status::InvalidArgument("csr graph: offsets must hold n + 1 entries");
  const std::uint64_t n = size();
  if (n > kMaxNodes) return Status::InvalidArgument("csr graph: too many nodes for 32-bit ids");
  if (offsets[0] != 0) return Status::InvalidArgument("csr graph: offsets[0] must be 0");
  for (std::uint64_t i = 0; i < n; ++i) {
    if (offsets[i + 1] < offsets[i]) {
      return Status::InvalidArgument("csr graph: offsets decrease at node " + std::to_string(i));
    }
  }
  if (offsets[n] != neighbors.size()) {
    return Status::InvalidArgument("csr graph: offsets[n] = " + std::to_string(offsets[n]) +
                                   " but " + std::to_string(neighbors.size()) + " neighbour ids");
  }
  for (std::uint64_t u = 0; u < n; ++u) {
    for (NodeId v : Neighbors(u)) {
      if (v >= n) {
        return Status::InvalidArgument("csr graph: node " + std::to_string(u) +
                                       " has neighbour id " + std::to_string(v) +
                                       " >= n = " + std::to_string(n));
      }
    }
  }
  return Status::OK();
}

Status PageShuffleOptions::Validate() const {
  if (records_per_page == 0) {
    return Status::InvalidArgument("page shuffle: records_per_page must be >= 1");
  }
  if (refine_rounds < 0 || refine_rounds > 256) {
    return Status::InvalidArgument("page shuffle: refine_rounds must be in [0, 256], got " +
                                   std::to_string(refine_rounds));
  }
  if (swap_passes < 0 || swap_passes > 256) {
    return Status::InvalidArgument("page shuffle: swap_passes must be in [0, 256], got " +
                                   std::to_string(swap_passes));
  }
  return Status::OK();
}

Result<PagePartition> ShufflePages(const CsrGraphView& graph, const PageShuffleOptions& options,
                                   PageShuffleReport* report,
                                   const PageShuffleProgressFn& progress) {
  return ShuffleImpl(graph, options, report, progress);
}

Result<PagePartition> ShufflePages(const FlatAdjacency& graph, const PageShuffleOptions& options,
                                   PageShuffleReport* report,
                                   const PageShuffleProgressFn& progress) {
  return ShuffleImpl(graph, options, report, progress);
}

Result<PagePartition> IdentityPartition(std::uint64_t n, std::uint32_t records_per_page) {
  if (records_per_page == 0) {
    return Status::InvalidArgument("identity partition: records_per_page must be >= 1");
  }
  if (n > kMaxNodes) return Status::InvalidArgument("identity partition: too many nodes");
  PagePartition out;
  out.records_per_page = records_per_page;
  out.page_of.resize(n);
  out.slot_of.resize(n);
  out.members.assign(CeilDiv(n, records_per_page) * records_per_page, kEmptySlot);
  for (std::uint64_t u = 0; u < n; ++u) {
    out.page_of[u] = static_cast<std::uint32_t>(u / records_per_page);
    out.slot_of[u] = static_cast<std::uint32_t>(u % records_per_page);
    out.members[u] = static_cast<std::uint32_t>(u);
  }
  return out;
}

Result<double> OverlapRatio(const CsrGraphView& graph, const PagePartition& partition,
                            unsigned threads) {
  return OverlapImpl(graph, partition, threads);
}

Result<double> OverlapRatio(const FlatAdjacency& graph, const PagePartition& partition,
                            unsigned threads) {
  return OverlapImpl(graph, partition, threads);
}

Status ValidatePartition(const PagePartition& partition, std::uint64_t n) {
  const std::uint32_t c = partition.records_per_page;
  if (c == 0) return Status::InvalidArgument("partition: records_per_page is 0");
  const std::uint64_t pages = CeilDiv(n, c);
  if (partition.members.size() != pages * c) {
    return Status::InvalidArgument(
        "partition: " + std::to_string(partition.members.size()) +
        " slots, expected ceil(n / C) * C = " + std::to_string(pages * c));
  }
  if (partition.page_of.size() != n || partition.slot_of.size() != n) {
    return Status::InvalidArgument(
        "partition: page_of / slot_of must hold n = " + std::to_string(n) + " entries");
  }
  // Each node's recorded place must hold it; then counting the used slots
  // proves there are no extra copies.
  for (std::uint64_t u = 0; u < n; ++u) {
    const std::uint32_t p = partition.page_of[u];
    const std::uint32_t s = partition.slot_of[u];
    if (p >= pages || s >= c) {
      return Status::InvalidArgument("partition: node " + std::to_string(u) +
                                     " maps outside the pages (page " + std::to_string(p) +
                                     ", slot " + std::to_string(s) + ")");
    }
    if (partition.members[static_cast<std::uint64_t>(p) * c + s] != u) {
      return Status::InvalidArgument("partition: node " + std::to_string(u) +
                                     " is not at its page " + std::to_string(p) + " slot " +
                                     std::to_string(s));
    }
  }
  std::uint64_t used = 0;
  for (std::uint64_t p = 0; p < pages; ++p) {
    bool seen_empty = false;
    for (std::uint32_t s = 0; s < c; ++s) {
      const std::uint32_t v = partition.members[p * c + s];
      if (v == kEmptySlot) {
        seen_empty = true;
        continue;
      }
      if (seen_empty) {
        return Status::InvalidArgument("partition: page " + std::to_string(p) +
                                       " has a used slot after an empty one");
      }
      if (v >= n) {
        return Status::InvalidArgument("partition: page " + std::to_string(p) +
                                       " holds invalid id " + std::to_string(v));
      }
      ++used;
    }
  }
  if (used != n) {
    return Status::InvalidArgument("partition: " + std::to_string(used) + " used slots for n = " +
                                   std::to_string(n) + " nodes (a node appears twice)");
  }
  return Status::OK();
}

}  // namespace strata::graph
