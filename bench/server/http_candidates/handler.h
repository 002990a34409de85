// The work both candidate servers do per request, identical in each: parse a
// search body (nlohmann-json, as strata serve does), answer `limit` points in
// Qdrant's shape. No index: what differs between the runs is the HTTP library.
#ifndef STRATA_BENCH_HTTP_CANDIDATES_HANDLER_H_
#define STRATA_BENCH_HTTP_CANDIDATES_HANDLER_H_

#include <string>

#include <nlohmann/json.hpp>

inline std::string AnswerSearch(const std::string& body, int* status) {
  const nlohmann::json req = nlohmann::json::parse(body, nullptr, false);
  if (req.is_discarded() || !req.contains("vector") || !req["vector"].is_array()) {
    *status = 400;
    return R"({"status":{"error":"bad request"},"time":0})";
  }
  double norm = 0;
  for (const auto& x : req["vector"]) norm += x.get<double>() * x.get<double>();
  const int limit = req.value("limit", 10);
  nlohmann::json points = nlohmann::json::array();
  for (int i = 0; i < limit; ++i) {
    points.push_back({{"id", i}, {"version", 0}, {"score", norm / (i + 1)}});
  }
  *status = 200;
  return nlohmann::json{{"result", points}, {"status", "ok"}, {"time", 0}}.dump();
}

#endif  // STRATA_BENCH_HTTP_CANDIDATES_HANDLER_H_
