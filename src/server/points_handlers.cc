// The points and search endpoints: upsert, delete, retrieve, count, scroll,
// search and query (Qdrant's request and response shapes).
#include <algorithm>

#include "server/handlers.h"
#include "strata/filter.h"

namespace strata::server {
namespace {

Reply Fail(const Status& s) { return ErrorReply(HttpStatusOf(s), s.message()); }

Reply UpdateResult(bool wait) {
  // Writes are applied before the reply either way; Qdrant's status tells
  // the client whether it asked to wait.
  return Reply{200, OkBody(json{{"operation_id", 0}, {"status", wait ? "completed" : "acknowledged"}},
                           0).dump()};
}

Status ParseVector(const json& v, std::uint32_t dim, std::vector<float>* out) {
  if (!v.is_array()) {
    return Status::InvalidArgument("vector must be a list of numbers (named and sparse vectors are not supported)");
  }
  if (v.size() != dim) {
    return Status::InvalidArgument("wrong vector dimension: expected " + std::to_string(dim) +
                                   ", got " + std::to_string(v.size()));
  }
  for (const json& x : v) {
    Result<float> f = FloatOf(x, "vector elements");
    if (!f.ok()) return f.status();
    out->push_back(f.value());
  }
  return Status::OK();
}

Result<PayloadFilter> ParseFilter(const json& body, std::uint32_t max_depth) {
  Result<std::string> text = PrepareFilter(body.value("filter", json()), max_depth);
  if (!text.ok()) return text.status();
  if (text.value().empty()) return PayloadFilter();
  return PayloadFilter::Parse(text.value());
}

Result<std::vector<PointId>> ParseIds(const json& ids, std::uint64_t max_batch, const char* what) {
  if (!ids.is_array()) return Status::InvalidArgument(std::string(what) + " must be a list of ids");
  if (ids.size() > max_batch) {
    return Status::InvalidArgument(std::string(what) + ": " + std::to_string(ids.size()) +
                                   " ids exceed the batch limit of " + std::to_string(max_batch));
  }
  std::vector<PointId> out;
  for (const json& j : ids) {
    Result<PointId> p = ParsePointId(j);
    if (!p.ok()) return p.status();
    out.push_back(p.value());
  }
  return out;
}

// One returned point: id, payload and vector as asked.
Result<json> PointJson(VectorId id, const std::string& payload, const json& with_payload,
                       const std::vector<float>* vector) {
  json p = {{"id", PointIdJson(id, payload)}};
  Result<json> projected = ProjectPayload(with_payload, payload);
  if (!projected.ok()) return projected.status();
  p["payload"] = projected.value();
  p["vector"] = vector ? json(*vector) : json(nullptr);
  return p;
}

// Walks ids >= from in order, calling fn(record) for each that passes the
// filter, until fn returns false. Reads payloads only if the filter needs them.
Status ScanIds(ServedCollection& c, VectorId from, const PayloadFilter& filter,
               const std::function<bool(const StoredRecord&)>& fn) {
  constexpr std::size_t kChunk = 1024;
  for (;;) {
    const std::vector<VectorId> ids = c.IdsFrom(from, kChunk);
    if (ids.empty()) return Status::OK();
    Result<std::vector<StoredRecord>> recs = c.collection().Get(ids);
    if (!recs.ok()) return recs.status();
    for (const StoredRecord& r : recs.value()) {
      if (!r.found || !filter.Matches(r.id, r.payload)) continue;
      if (!fn(r)) return Status::OK();
    }
    if (ids.back() == ~VectorId{0}) return Status::OK();
    from = ids.back() + 1;
  }
}

}  // namespace

Reply Handlers::Upsert(ServedCollection& c, const json& body, bool wait) {
  const std::uint32_t dim = c.collection().dim();
  std::vector<VectorId> ids;
  std::vector<float> vectors;
  std::vector<std::string> payloads;
  bool any_uuid = false;
  auto add = [&](const json& id, const json& vector, const json& payload) -> Status {
    Result<PointId> p = ParsePointId(id);
    if (!p.ok()) return p.status();
    if (p.value().uuid) any_uuid = true;
    STRATA_RETURN_IF_ERROR(ParseVector(vector, dim, &vectors));
    Result<std::string> stored = StoredPayload(payload, p.value());
    if (!stored.ok()) return stored.status();
    ids.push_back(p.value().id);
    payloads.push_back(std::move(stored.value()));
    return Status::OK();
  };
  std::size_t n = 0;
  if (body.contains("points")) {
    const json& points = body["points"];
    if (!points.is_array()) return ErrorReply(400, "points must be a list");
    n = points.size();
  } else if (body.contains("batch")) {
    const json& batch = body["batch"];
    if (!batch.is_object() || !batch.value("ids", json()).is_array() ||
        !batch.value("vectors", json()).is_array()) {
      return ErrorReply(400, "batch: expected {ids: [...], vectors: [...], payloads: [...]}");
    }
    n = batch["ids"].size();
    if (batch["vectors"].size() != n ||
        (batch.contains("payloads") && !batch["payloads"].is_null() &&
         (!batch["payloads"].is_array() || batch["payloads"].size() != n))) {
      return ErrorReply(400, "batch: ids, vectors and payloads must have the same length");
    }
  } else {
    return ErrorReply(400, "expected `points` or `batch`");
  }
  if (n == 0) return ErrorReply(400, "no points to upsert");
  if (n > options_.max_batch) {
    return ErrorReply(400, "batch of " + std::to_string(n) + " points exceeds the limit of " +
                               std::to_string(options_.max_batch));
  }
  for (std::size_t i = 0; i < n; ++i) {
    Status st;
    if (body.contains("points")) {
      const json& p = body["points"][i];
      if (!p.is_object()) return ErrorReply(400, "points[" + std::to_string(i) + "] must be an object");
      st = add(p.value("id", json()), p.value("vector", json()), p.value("payload", json()));
    } else {
      const json& b = body["batch"];
      const json payload = b.contains("payloads") && b["payloads"].is_array() ? b["payloads"][i] : json();
      st = add(b["ids"][i], b["vectors"][i], payload);
    }
    if (!st.ok()) return ErrorReply(400, "points[" + std::to_string(i) + "]: " + st.message());
  }
  Status st = c.Upsert(ids, vectors, payloads, any_uuid);
  if (!st.ok()) return Fail(st);
  return UpdateResult(wait);
}

Reply Handlers::DeletePoints(ServedCollection& c, const json& body, bool wait) {
  std::vector<VectorId> ids;
  if (body.contains("points")) {
    Result<std::vector<PointId>> parsed = ParseIds(body["points"], options_.max_batch, "points");
    if (!parsed.ok()) return Fail(parsed.status());
    for (const PointId& p : parsed.value()) ids.push_back(p.id);
  } else if (body.contains("filter")) {
    Result<PayloadFilter> filter = ParseFilter(body, options_.max_filter_depth);
    if (!filter.ok()) return Fail(filter.status());
    Status st = ScanIds(c, 0, filter.value(), [&](const StoredRecord& r) {
      ids.push_back(r.id);
      return true;
    });
    if (!st.ok()) return Fail(st);
  } else {
    return ErrorReply(400, "expected `points` (ids) or `filter`");
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  // Deleted in batches: a filter may select more than one write takes.
  for (std::size_t i = 0; i < ids.size(); i += options_.max_batch) {
    const std::size_t end = std::min(ids.size(), i + options_.max_batch);
    Result<std::uint64_t> n = c.Delete(std::span<const VectorId>(ids).subspan(i, end - i));
    if (!n.ok()) return Fail(n.status());
  }
  return UpdateResult(wait);
}

Reply Handlers::Retrieve(ServedCollection& c, const json& body) {
  Result<std::vector<PointId>> parsed = ParseIds(body.value("ids", json()), options_.max_batch, "ids");
  if (!parsed.ok()) return Fail(parsed.status());
  std::vector<VectorId> ids;
  for (const PointId& p : parsed.value()) ids.push_back(p.id);
  const json with_payload = body.value("with_payload", json(true));
  const bool with_vector = body.value("with_vector", json(false)) == json(true);
  Result<std::vector<StoredRecord>> recs = c.collection().Get(ids);
  if (!recs.ok()) return Fail(recs.status());
  json points = json::array();
  for (const StoredRecord& r : recs.value()) {
    if (!r.found) continue;
    Result<json> p = PointJson(r.id, r.payload, with_payload, with_vector ? &r.vector : nullptr);
    if (!p.ok()) return Fail(p.status());
    points.push_back(p.value());
  }
  return Reply{200, OkBody(points, 0).dump()};
}

Reply Handlers::GetPoint(ServedCollection& c, const std::string& id_text) {
  // The path's id: digits are an unsigned id, anything else must be a UUID.
  const bool digits = !id_text.empty() && id_text.size() <= 20 &&
                      id_text.find_first_not_of("0123456789") == std::string::npos;
  json id_json = id_text;
  if (digits) {
    try {
      id_json = std::stoull(id_text);
    } catch (const std::out_of_range&) {
      return ErrorReply(400, "point id " + id_text + " is out of range");
    }
  }
  Result<PointId> id = ParsePointId(id_json);
  if (!id.ok()) return Fail(id.status());
  const VectorId ids[1] = {id.value().id};
  Result<std::vector<StoredRecord>> recs = c.collection().Get(ids);
  if (!recs.ok()) return Fail(recs.status());
  const StoredRecord& r = recs.value()[0];
  if (!r.found) return ErrorReply(404, "Not found: No point with id " + id_text + " found");
  Result<json> p = PointJson(r.id, r.payload, json(true), &r.vector);
  if (!p.ok()) return Fail(p.status());
  return Reply{200, OkBody(p.value(), 0).dump()};
}

Reply Handlers::Count(ServedCollection& c, const json& body) {
  Result<PayloadFilter> filter = ParseFilter(body, options_.max_filter_depth);
  if (!filter.ok()) return Fail(filter.status());
  std::uint64_t count = 0;
  if (filter.value().empty()) {
    count = c.collection().Count();
  } else {
    Status st = ScanIds(c, 0, filter.value(), [&](const StoredRecord&) {
      ++count;
      return true;
    });
    if (!st.ok()) return Fail(st);
  }
  return Reply{200, OkBody(json{{"count", count}}, 0).dump()};
}

Reply Handlers::Scroll(ServedCollection& c, const json& body) {
  Result<PayloadFilter> filter = ParseFilter(body, options_.max_filter_depth);
  if (!filter.ok()) return Fail(filter.status());
  const json& limit_j = body.value("limit", json(10));
  if (!IsUnsigned(limit_j) || limit_j.get<std::uint64_t>() == 0 ||
      limit_j.get<std::uint64_t>() > options_.max_limit) {
    return ErrorReply(400, "limit must be 1.." + std::to_string(options_.max_limit));
  }
  const std::size_t limit = limit_j.get<std::size_t>();
  VectorId from = 0;
  if (body.contains("offset") && !body["offset"].is_null()) {
    Result<PointId> p = ParsePointId(body["offset"]);
    if (!p.ok()) return Fail(p.status());
    from = p.value().id;
  }
  const json with_payload = body.value("with_payload", json(true));
  const bool with_vector = body.value("with_vector", json(false)) == json(true);
  json points = json::array();
  json next = nullptr;
  Status failed;
  Status st = ScanIds(c, from, filter.value(), [&](const StoredRecord& r) {
    if (points.size() == limit) {  // one past the page: the next page starts here
      next = PointIdJson(r.id, r.payload);
      return false;
    }
    Result<json> p = PointJson(r.id, r.payload, with_payload, with_vector ? &r.vector : nullptr);
    if (!p.ok()) {
      failed = p.status();
      return false;
    }
    points.push_back(p.value());
    return true;
  });
  if (!st.ok()) return Fail(st);
  if (!failed.ok()) return Fail(failed);
  return Reply{200, OkBody(json{{"points", points}, {"next_page_offset", next}}, 0).dump()};
}

Result<json> Handlers::SearchOne(ServedCollection& c, const json& req, bool query_api) {
  json vector = req.value(query_api ? "query" : "vector", json());
  if (query_api && vector.is_object() && vector.contains("nearest")) vector = vector["nearest"];
  if (query_api && vector.is_null()) {
    return Status::InvalidArgument("query: only a vector query (or {nearest: vector}) is supported");
  }
  if (!query_api && vector.is_object() && vector.contains("vector")) vector = vector["vector"];
  std::vector<float> q;
  STRATA_RETURN_IF_ERROR(ParseVector(vector, c.collection().dim(), &q));
  const json& limit_j = req.value("limit", json(10));
  const json& offset_j = req.value("offset", json(0));
  if (!IsUnsigned(limit_j) || !IsUnsigned(offset_j)) {
    return Status::InvalidArgument("limit and offset must be unsigned integers");
  }
  const std::uint64_t limit = limit_j.get<std::uint64_t>();
  const std::uint64_t offset = offset_j.get<std::uint64_t>();
  // Each bounded before the sum, which could otherwise wrap past the limit.
  if (limit == 0 || limit > options_.max_limit || offset > options_.max_limit ||
      limit + offset > options_.max_limit) {
    return Status::InvalidArgument("limit must be >= 1 and limit + offset <= " +
                                   std::to_string(options_.max_limit));
  }
  Result<PayloadFilter> filter = ParseFilter(req, options_.max_filter_depth);
  if (!filter.ok()) return filter.status();
  const json with_payload = req.value("with_payload", json(false));
  const bool with_vector = req.value("with_vector", json(false)) == json(true);

  CollectionSearchParams params;
  params.index.k = static_cast<std::uint32_t>(limit + offset);
  params.index.list_size = std::max<std::uint32_t>(params.index.list_size, params.index.k);
  const json& p = req.value("params", json::object());
  if (p.is_object() && p.contains("hnsw_ef") && !p["hnsw_ef"].is_null()) {
    if (!IsUnsigned(p["hnsw_ef"]) || p["hnsw_ef"].get<std::uint64_t>() > SearchParams::kMaxListSize) {
      return Status::InvalidArgument("params.hnsw_ef must be 0.." + std::to_string(SearchParams::kMaxListSize));
    }
    const auto ef = p["hnsw_ef"].get<std::uint32_t>();
    // One knob, read by whichever index the collection has: L for a graph,
    // nprobe for IVF (each ignores the other's field).
    params.index.list_size = std::max(ef, params.index.k);
    params.index.nprobe = ef;
  }
  // Payloads are read for UUID ids too (the original id lives there), when
  // the collection may hold any: without, a search that returns no payload
  // reads none (9 % of in-process QPS at 100k x 128, L 50:
  // bench/results/server_load.md).
  params.with_payload = with_payload != json(false) || c.may_have_uuids();
  if (!filter.value().empty()) params.filter = &filter.value();
  Result<std::vector<SearchHit>> hits = c.collection().Search(q, params);
  if (!hits.ok()) return hits.status();

  const Metric metric = c.collection().metric();
  const bool has_threshold = req.contains("score_threshold") && !req["score_threshold"].is_null();
  float threshold = 0;
  if (has_threshold) {
    Result<float> t = FloatOf(req["score_threshold"], "score_threshold");
    if (!t.ok()) return t.status();
    threshold = t.value();
  }
  std::vector<const SearchHit*> kept;
  for (std::size_t i = offset; i < hits.value().size(); ++i) {
    const SearchHit& h = hits.value()[i];
    if (has_threshold && !PassesThreshold(metric, ScoreFromDistance(metric, h.distance), threshold)) continue;
    kept.push_back(&h);
  }
  std::vector<StoredRecord> recs;
  if (with_vector && !kept.empty()) {
    std::vector<VectorId> ids;
    for (const SearchHit* h : kept) ids.push_back(h->id);
    Result<std::vector<StoredRecord>> got = c.collection().Get(ids);
    if (!got.ok()) return got.status();
    recs = std::move(got.value());
  }
  json points = json::array();
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const SearchHit& h = *kept[i];
    Result<json> pj = PointJson(h.id, h.payload, with_payload,
                                with_vector && recs[i].found ? &recs[i].vector : nullptr);
    if (!pj.ok()) return pj.status();
    pj.value()["score"] = ScoreFromDistance(metric, h.distance);
    pj.value()["version"] = 0;
    points.push_back(pj.value());
  }
  return points;
}

}  // namespace strata::server
