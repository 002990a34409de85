// The endpoints of `strata serve`: each maps a Qdrant REST request (method,
// path, JSON body, query parameters) to calls on the collections and builds
// Qdrant's response JSON. Independent of the HTTP library, so that tests
// drive it directly.
#ifndef STRATA_SERVER_HANDLERS_H_
#define STRATA_SERVER_HANDLERS_H_

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "server/collection_manager.h"
#include "server/qdrant_json.h"
#include "strata/server.h"

namespace strata::server {

struct Reply {
  int status = 0;  // 0: not yet decided
  std::string body;
  std::string content_type = "application/json";
};
Reply ErrorReply(int status, const std::string& message);
// The HTTP status of a failed Status: 400 for bad input, 404, 409, 500 ...
int HttpStatusOf(const Status& s);

// The snapshot endpoints (snapshots.cc): POST creates, GET lists, PUT
// (.../snapshots/recover) recovers from body.location, DELETE removes
// `snapshot`.
Reply SnapshotEndpoint(CollectionManager* manager, const std::string& method,
                       const std::string& name, const std::string& snapshot, const json& body);

// Requests and latency per endpoint, for /metrics: counters and a
// Prometheus latency histogram (cumulative buckets, seconds) per endpoint.
// Thread-safe.
class Metrics {
 public:
  // Upper bounds of the latency buckets, seconds (+Inf is implied).
  static constexpr double kBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                        0.1,    0.25,  0.5,    1,     2.5,  5,    10};
  static constexpr std::size_t kNumBuckets = sizeof(kBuckets) / sizeof(kBuckets[0]);

  void Record(const std::string& endpoint, int status, double seconds);
  // A request answered 503 by load shedding (recorded by Record too).
  void RecordShed() { shed_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t shed() const { return shed_.load(std::memory_order_relaxed); }
  std::string Prometheus() const;

 private:
  struct Entry {
    std::uint64_t count = 0;
    std::uint64_t errors = 0;
    double seconds = 0;
    std::uint64_t buckets[kNumBuckets] = {};  // non-cumulative here; summed when printed
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::atomic<std::uint64_t> shed_{0};
  // For strata_uptime_seconds: clients derive rates from the server's clock,
  // not from when their polls happened to arrive.
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

class Handlers {
 public:
  Handlers(CollectionManager* manager, const ServerOptions& options)
      : manager_(manager), options_(options) {}
  // `endpoint` receives the route's pattern (e.g. "/collections/{name}/points/search").
  Reply Dispatch(const std::string& method, const std::string& path, const std::string& body,
                 const std::multimap<std::string, std::string>& params, std::string* endpoint);
  Metrics& metrics() { return metrics_; }
  void SetReady(bool ready) { ready_ = ready; }

 private:
  Reply CreateCollection(const std::string& name, const json& body);
  Reply CollectionInfo(const std::string& name);
  Reply CreateIndex(ServedCollection& c, const json& body);
  Reply Upsert(ServedCollection& c, const json& body, bool wait);
  Reply DeletePoints(ServedCollection& c, const json& body, bool wait);
  Reply Retrieve(ServedCollection& c, const json& body);
  // GET /collections/{name}/points/{id}: the point with its payload and vector.
  Reply GetPoint(ServedCollection& c, const std::string& id);
  Reply Count(ServedCollection& c, const json& body);
  Reply Scroll(ServedCollection& c, const json& body);
  // One search request (the /search shape or the /query shape) -> its points.
  Result<json> SearchOne(ServedCollection& c, const json& req, bool query_api);
  Reply MetricsText();

  CollectionManager* manager_;
  ServerOptions options_;
  Metrics metrics_;
  std::atomic<bool> ready_{false};
};

}  // namespace strata::server

#endif  // STRATA_SERVER_HANDLERS_H_
