// Dispatch, the collection endpoints, health and metrics. The points and
// search endpoints are in points_handlers.cc.
#include <chrono>
#include <regex>
#include <sstream>

#include "server/collection_config.h"
#include "server/handlers.h"
#include "strata/filter.h"

namespace strata::server {

Reply ErrorReply(int status, const std::string& message) {
  // Messages quote the request (a path is any bytes once %-decoded): bytes
  // that are not UTF-8 become U+FFFD rather than make dump() throw.
  return Reply{status, ErrorBody(message, 0).dump(-1, ' ', false, json::error_handler_t::replace)};
}

int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kNotSupported: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kBusy: return 409;
    case StatusCode::kAborted: return 503;
    default: return 500;
  }
}

void Metrics::Record(const std::string& endpoint, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[endpoint];
  ++e.count;
  if (status >= 400) ++e.errors;
  e.seconds += seconds;
  for (std::size_t b = 0; b < kNumBuckets; ++b) {
    if (seconds <= kBuckets[b]) {
      ++e.buckets[b];
      break;
    }
  }
}

std::string Metrics::Prometheus() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream out;
  out << "# TYPE strata_requests_total counter\n";
  for (const auto& [ep, e] : entries_) {
    out << "strata_requests_total{endpoint=\"" << ep << "\"} " << e.count << "\n";
  }
  out << "# TYPE strata_request_errors_total counter\n";
  for (const auto& [ep, e] : entries_) {
    out << "strata_request_errors_total{endpoint=\"" << ep << "\"} " << e.errors << "\n";
  }
  out << "# TYPE strata_request_seconds_total counter\n";
  for (const auto& [ep, e] : entries_) {
    out << "strata_request_seconds_total{endpoint=\"" << ep << "\"} " << e.seconds << "\n";
  }
  out << "# TYPE strata_request_duration_seconds histogram\n";
  for (const auto& [ep, e] : entries_) {
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < kNumBuckets; ++b) {
      cumulative += e.buckets[b];
      out << "strata_request_duration_seconds_bucket{endpoint=\"" << ep << "\",le=\"" << kBuckets[b]
          << "\"} " << cumulative << "\n";
    }
    out << "strata_request_duration_seconds_bucket{endpoint=\"" << ep << "\",le=\"+Inf\"} " << e.count
        << "\n";
    out << "strata_request_duration_seconds_sum{endpoint=\"" << ep << "\"} " << e.seconds << "\n";
    out << "strata_request_duration_seconds_count{endpoint=\"" << ep << "\"} " << e.count << "\n";
  }
  out << "# HELP strata_requests_shed_total requests answered 503 because the worker pool and its queue were full\n";
  out << "# TYPE strata_requests_shed_total counter\n";
  out << "strata_requests_shed_total " << shed() << "\n";
  out << "# TYPE strata_uptime_seconds gauge\n";
  out << "strata_uptime_seconds "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() << "\n";
  return out.str();
}

namespace {

struct Route {
  const char* method;
  std::regex pattern;
  const char* name;
  int id;
};

enum RouteId {
  kHealthz, kReadyz, kMetrics, kListCollections, kGetCollection, kPutCollection, kDeleteCollection,
  kExists, kCreateIndex, kUpsert, kDeletePoints, kRetrieve, kCount, kScroll, kSearch,
  kSearchBatch, kQuery, kQueryBatch, kRoot, kSnapshots, kGetPoint,
};

const std::vector<Route>& Routes() {
  static const std::vector<Route> routes = [] {
    const std::string n = "/collections/([^/]+)";
    std::vector<Route> r;
    auto add = [&](const char* m, const std::string& re, const char* name, int id) {
      r.push_back(Route{m, std::regex(re), name, id});
    };
    add("GET", "/", "/", kRoot);
    add("GET", "/healthz", "/healthz", kHealthz);
    add("GET", "/readyz", "/readyz", kReadyz);
    add("GET", "/metrics", "/metrics", kMetrics);
    add("GET", "/collections", "/collections", kListCollections);
    add("GET", n, "/collections/{name}", kGetCollection);
    add("PUT", n, "/collections/{name}", kPutCollection);
    add("DELETE", n, "/collections/{name}", kDeleteCollection);
    add("GET", n + "/exists", "/collections/{name}/exists", kExists);
    add("PUT", n + "/index", "/collections/{name}/index", kCreateIndex);
    add("PUT", n + "/points", "/collections/{name}/points", kUpsert);
    add("POST", n + "/points/delete", "/collections/{name}/points/delete", kDeletePoints);
    add("POST", n + "/points", "/collections/{name}/points", kRetrieve);
    add("POST", n + "/points/count", "/collections/{name}/points/count", kCount);
    add("POST", n + "/points/scroll", "/collections/{name}/points/scroll", kScroll);
    add("POST", n + "/points/search", "/collections/{name}/points/search", kSearch);
    add("POST", n + "/points/search/batch", "/collections/{name}/points/search/batch", kSearchBatch);
    add("POST", n + "/points/query", "/collections/{name}/points/query", kQuery);
    add("POST", n + "/points/query/batch", "/collections/{name}/points/query/batch", kQueryBatch);
    add("POST", n + "/snapshots", "/collections/{name}/snapshots", kSnapshots);
    add("GET", n + "/snapshots", "/collections/{name}/snapshots", kSnapshots);
    add("PUT", n + "/snapshots/recover", "/collections/{name}/snapshots/recover", kSnapshots);
    add("DELETE", n + "/snapshots/([^/]+)", "/collections/{name}/snapshots/{snapshot}", kSnapshots);
    // After the fixed /points/... routes: their paths go to those first.
    add("GET", n + "/points/([^/]+)", "/collections/{name}/points/{id}", kGetPoint);
    return r;
  }();
  return routes;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Reply Handlers::Dispatch(const std::string& method, const std::string& path,
                         const std::string& body,
                         const std::multimap<std::string, std::string>& params,
                         std::string* endpoint) {
  const auto start = std::chrono::steady_clock::now();
  // std::regex matches recursively, a few stack frames per character: an
  // unbounded path could overflow a worker's stack (an 8,000-byte one did
  // under AddressSanitizer). No route is longer than a 255-byte collection
  // name plus its fixed parts.
  constexpr std::size_t kMaxPathBytes = 1024;
  if (path.size() > kMaxPathBytes) {
    *endpoint = "unmatched";
    return ErrorReply(414, "path longer than " + std::to_string(kMaxPathBytes) + " bytes");
  }
  const Route* route = nullptr;
  std::smatch m;
  bool path_known = false;
  for (const Route& r : Routes()) {
    if (std::regex_match(path, m, r.pattern)) {
      path_known = true;
      if (method == r.method) {
        route = &r;
        break;
      }
    }
  }
  if (route == nullptr) {
    return path_known ? ErrorReply(405, "method " + method + " not allowed on " + path)
                      : ErrorReply(404, "no such endpoint: " + path);
  }
  // The regex match for the chosen route (the loop's last match may be another's).
  std::regex_match(path, m, route->pattern);
  *endpoint = route->name;
  const std::string name = m.size() > 1 ? m[1].str() : "";
  json req = json::object();
  if (!body.empty()) {
    if (Status depth = CheckJsonDepth(body, options_.max_json_depth); !depth.ok()) {
      return ErrorReply(400, depth.message());
    }
    req = json::parse(body, nullptr, false);
    if (req.is_discarded()) return ErrorReply(400, "request body is not valid JSON");
    if (!req.is_object()) return ErrorReply(400, "request body must be a JSON object");
  }
  auto param = [&](const char* key) {
    auto it = params.find(key);
    return it == params.end() ? std::string() : it->second;
  };
  const bool wait = param("wait") == "true";

  Reply reply;
  switch (route->id) {
    case kRoot:
      reply = Reply{200, json{{"title", "strata"}, {"version", "0.1.0"}}.dump()};
      break;
    case kHealthz:
      reply = Reply{200, "healthz check passed", "text/plain"};
      break;
    case kReadyz:
      reply = ready_ ? Reply{200, "all shards are ready", "text/plain"}
                     : ErrorReply(503, "not ready");
      break;
    case kMetrics:
      return MetricsText();
    case kListCollections: {
      json list = json::array();
      for (const std::string& c : manager_->Names()) list.push_back({{"name", c}});
      reply = Reply{200, OkBody(json{{"collections", list}}, Since(start)).dump()};
      break;
    }
    case kPutCollection:
      reply = CreateCollection(name, req);
      break;
    case kGetCollection:
      reply = CollectionInfo(name);
      break;
    case kExists:
      reply = Reply{200, OkBody(json{{"exists", manager_->Get(name) != nullptr}}, 0).dump()};
      break;
    case kDeleteCollection: {
      Result<bool> dropped = manager_->Drop(name);
      reply = dropped.ok() ? Reply{200, OkBody(dropped.value(), 0).dump()}
                           : ErrorReply(HttpStatusOf(dropped.status()), dropped.status().message());
      break;
    }
    case kSnapshots:
      reply = SnapshotEndpoint(manager_, method, name, m.size() > 2 ? m[2].str() : "", req);
      break;
    default: {
      std::shared_ptr<ServedCollection> c = manager_->Get(name);
      if (c == nullptr) return ErrorReply(404, "Collection `" + name + "` doesn't exist!");
      const auto in_use = c->Use();
      if (c->closed()) return ErrorReply(404, "Collection `" + name + "` doesn't exist!");
      switch (route->id) {
        case kCreateIndex: reply = CreateIndex(*c, req); break;
        case kUpsert: reply = Upsert(*c, req, wait); break;
        case kDeletePoints: reply = DeletePoints(*c, req, wait); break;
        case kRetrieve: reply = Retrieve(*c, req); break;
        case kGetPoint: reply = GetPoint(*c, m[2].str()); break;
        case kCount: reply = Count(*c, req); break;
        case kScroll: reply = Scroll(*c, req); break;
        case kSearch:
        case kQuery: {
          const bool query_api = route->id == kQuery;
          Result<json> points = SearchOne(*c, req, query_api);
          if (!points.ok()) return ErrorReply(HttpStatusOf(points.status()), points.status().message());
          json result = query_api ? json{{"points", points.value()}} : points.value();
          reply = Reply{200, OkBody(result, 0).dump()};
          break;
        }
        case kSearchBatch:
        case kQueryBatch: {
          const json& searches = req.value("searches", json());
          if (!searches.is_array()) return ErrorReply(400, "searches must be a list");
          if (searches.size() > options_.max_batch) {
            return ErrorReply(400, "searches: batch of " + std::to_string(searches.size()) +
                                       " exceeds the limit of " + std::to_string(options_.max_batch));
          }
          const bool query_api = route->id == kQueryBatch;
          json results = json::array();
          for (const json& s : searches) {
            if (!s.is_object()) return ErrorReply(400, "each search must be a JSON object");
            Result<json> points = SearchOne(*c, s, query_api);
            if (!points.ok()) return ErrorReply(HttpStatusOf(points.status()), points.status().message());
            results.push_back(query_api ? json{{"points", points.value()}} : points.value());
          }
          reply = Reply{200, OkBody(results, 0).dump()};
          break;
        }
        default: return ErrorReply(500, "unrouted endpoint");
      }
    }
  }
  // Stamp the handler's time into the envelope (Qdrant's "time" field).
  if (reply.content_type == "application/json" && !reply.body.empty()) {
    json j = json::parse(reply.body, nullptr, false);
    if (j.is_object()) {
      j["time"] = Since(start);
      reply.body = j.dump();
    }
  }
  return reply;
}

Reply Handlers::CreateCollection(const std::string& name, const json& body) {
  const json& vectors = body.value("vectors", json());
  if (!vectors.is_object() || !vectors.contains("size") || !IsUnsigned(vectors["size"])) {
    return ErrorReply(400, "vectors: expected {\"size\": N, \"distance\": \"Cosine\"|\"Euclid\"|\"Dot\"}"
                           " (named vectors are not supported)");
  }
  const std::uint64_t size = vectors["size"].get<std::uint64_t>();
  if (size == 0 || size > options_.max_dim) {
    return ErrorReply(400, "vectors.size must be 1.." + std::to_string(options_.max_dim));
  }
  const json& distance = vectors.value("distance", json());
  if (!distance.is_string()) return ErrorReply(400, "vectors.distance must be a string (Cosine, Euclid or Dot)");
  Result<Metric> metric = MetricFromQdrant(distance.get<std::string>());
  if (!metric.ok()) return ErrorReply(400, metric.status().message());
  CollectionOptions o;
  o.dim = static_cast<std::uint32_t>(size);
  o.metric = metric.value();
  o.max_batch = options_.max_batch;
  // Our own knobs, under "strata" (Qdrant ignores unknown keys; we name them).
  if (Status s = ApplyStrataOptions(body.value("strata", json::object()), &o); !s.ok()) {
    return ErrorReply(400, s.message());
  }
  Status st = manager_->Create(name, o);
  if (!st.ok()) return ErrorReply(HttpStatusOf(st), st.message());
  return Reply{200, OkBody(true, 0).dump()};
}

Reply Handlers::CollectionInfo(const std::string& name) {
  std::shared_ptr<ServedCollection> c = manager_->Get(name);
  if (c == nullptr) return ErrorReply(404, "Collection `" + name + "` doesn't exist!");
  const auto in_use = c->Use();
  if (c->closed()) return ErrorReply(404, "Collection `" + name + "` doesn't exist!");
  const CollectionStats st = c->collection().Stats();
  const CollectionOptions& opts = c->options();
  json schema = json::object();
  for (const PayloadFieldSpec& f : st.payload_fields) {
    schema[f.path] = {{"data_type", std::string(PayloadFieldTypeName(f.type))}, {"points", st.live}};
  }
  json result = {
      // Qdrant: yellow while an optimization (here, a merge) runs.
      {"status", st.merging ? "yellow" : "green"},
      {"optimizer_status", "ok"},
      {"points_count", st.live},
      {"indexed_vectors_count", st.indexed},
      {"segments_count", 1},
      {"config",
       {{"params",
         {{"vectors", {{"size", st.dim}, {"distance", QdrantDistanceName(st.metric)}}},
          {"shard_number", 1},
          {"replication_factor", 1},
          {"on_disk_payload", true}}},
        // Qdrant's required sections, in our terms: the graph's R and L as
        // m and ef_construct (0 for IVF), the exact-scan phase's size as
        // full_scan_threshold and indexing_threshold, one segment, the
        // log's fsync period, the merge's threads.
        {"hnsw_config",
         {{"m", st.graph_R},
          {"ef_construct", st.graph_L},
          {"full_scan_threshold", opts.flat_threshold},
          {"on_disk", true}}},
        {"optimizer_config",
         {{"default_segment_number", 1},
          {"indexing_threshold", opts.flat_threshold},
          {"flush_interval_sec", (opts.sync_interval_ms + 999) / 1000},
          {"max_optimization_threads", opts.merge_threads}}},
        {"strata", {{"index", st.index_type}, {"graph_label_field", st.graph_label_field},
                    {"update_mode", std::string(UpdateModeName(st.update_mode))},
                    {"index_version", st.index_version},
                    {"pending", st.pending}, {"merging", st.merging}, {"merges", st.merges},
                    {"ram_bytes", st.ram_bytes}, {"disk_bytes", st.disk_bytes}}}}},
      {"payload_schema", schema},
  };
  return Reply{200, OkBody(result, 0).dump()};
}

Reply Handlers::CreateIndex(ServedCollection& c, const json& body) {
  const json& field = body.value("field_name", json());
  json schema = body.value("field_schema", json());
  if (schema.is_object()) schema = schema.value("type", json());
  if (!field.is_string() || !schema.is_string()) {
    return ErrorReply(400, "expected {\"field_name\": PATH, \"field_schema\": keyword|integer|float|bool}");
  }
  Result<PayloadFieldType> type = ParsePayloadFieldType(schema.get<std::string>());
  if (!type.ok()) return ErrorReply(400, "field_schema: " + type.status().message());
  Status st = c.collection().CreatePayloadIndex(PayloadFieldSpec{field.get<std::string>(), type.value()});
  if (!st.ok()) return ErrorReply(HttpStatusOf(st), st.message());
  return Reply{200, OkBody(json{{"operation_id", 0}, {"status", "completed"}}, 0).dump()};
}

Reply Handlers::MetricsText() {
  std::string text = metrics_.Prometheus();
  std::ostringstream out;
  out << "# TYPE strata_collection_points gauge\n";
  std::vector<std::pair<std::string, CollectionStats>> stats;
  for (const std::string& n : manager_->Names()) {
    if (auto c = manager_->Get(n)) {
      const auto in_use = c->Use();
      if (!c->closed()) stats.emplace_back(n, c->collection().Stats());
    }
  }
  for (const auto& [n, st] : stats) out << "strata_collection_points{collection=\"" << n << "\"} " << st.live << "\n";
  out << "# TYPE strata_collection_pending gauge\n";
  for (const auto& [n, st] : stats) out << "strata_collection_pending{collection=\"" << n << "\"} " << st.pending << "\n";
  out << "# TYPE strata_collection_merging gauge\n";
  for (const auto& [n, st] : stats) out << "strata_collection_merging{collection=\"" << n << "\"} " << (st.merging ? 1 : 0) << "\n";
  out << "# TYPE strata_collection_merges_total counter\n";
  for (const auto& [n, st] : stats) out << "strata_collection_merges_total{collection=\"" << n << "\"} " << st.merges << "\n";
  out << "# TYPE strata_collection_ram_bytes gauge\n";
  for (const auto& [n, st] : stats) out << "strata_collection_ram_bytes{collection=\"" << n << "\"} " << st.ram_bytes << "\n";
  out << "# TYPE strata_collection_disk_bytes gauge\n";
  for (const auto& [n, st] : stats) out << "strata_collection_disk_bytes{collection=\"" << n << "\"} " << st.disk_bytes << "\n";
  return Reply{200, text + out.str(), "text/plain; version=0.0.4"};
}

}  // namespace strata::server
