// Verification after a kill and repair of a diverging collection
// (crash_verify.h).
#include "crash_verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "crash_common.h"

namespace strata::crash {

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
  // The ids to search for by their own vector: the in-flight ones in `set`,
  // then 20 drawn from `pool` (repeats allowed).
  auto probes = [&](const std::map<VectorId, std::uint64_t>& set,
                    const std::vector<VectorId>& pool) {
    std::vector<VectorId> out;
    for (const auto& [id, i] : flight) {
      if (set.count(id)) out.push_back(id);
    }
    for (int i = 0; i < 20 && !pool.empty(); ++i) out.push_back(pool[rng() % pool.size()]);
    return out;
  };
  // Searches for the vector `id` had at version `ver` and checks the hits;
  // nullopt (the failure noted) if the search failed.
  auto own_search = [&](VectorId id, std::uint64_t ver,
                        const char* what_q) -> std::optional<std::vector<SearchHit>> {
    const std::vector<float> q = MakeVector(id, ver);
    auto r = c.Search(q, params_payload);
    if (!r.ok()) {
      p->Add("Search failed", r.status().ToString());
      return std::nullopt;
    }
    check_hits(*r, q.data(), what_q);
    return std::move(*r);
  };
  // Stored vectors find themselves; the in-flight ids always among them.
  for (VectorId id : probes(m->live, live_ids)) {
    const auto r = own_search(id, m->live[id], "self-search");
    if (!r) return -1;
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
  for (VectorId id : probes(m->dead, dead_ids)) {
    if (!own_search(id, m->dead[id], "deleted-vector search")) return -1;
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

}  // namespace strata::crash
