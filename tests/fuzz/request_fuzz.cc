// libFuzzer target: the server's pure request parsing, without a collection
// (so that it builds in a minute: CI runs it, tests/fuzz/run_fuzz.sh). It
// reads the same inputs as server_fuzz (request line, newline, body) and
// puts the body through what the handlers do with its parts: the depth
// check, JSON parsing, point ids, vectors, payloads, with_payload
// projection, and filters through PrepareFilter, PayloadFilter::Parse and
// Matches against a few stored payloads.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "server/qdrant_json.h"
#include "strata/filter.h"

namespace {

using strata::server::json;
namespace sv = strata::server;

constexpr std::uint32_t kMaxJsonDepth = 64;   // ServerOptions' defaults
constexpr std::uint32_t kMaxFilterDepth = 32;

const char* const kPayloads[] = {
    R"({"color": "red", "n": 1, "tags": ["a", "b"], "__strata_uuid": "6f1c2a1e-8b7d-4c3e-9a2b-0d1e2f3a4b5c"})",
    R"({"color": "blue", "n": 2.5, "x": {"y": null}, "items": [{"sku": "k", "q": 3}]})",
    "",
    "[1, 2]",
};

void Filter(const json& body) {
  if (!body.contains("filter")) return;
  strata::Result<std::string> text = sv::PrepareFilter(body["filter"], kMaxFilterDepth);
  if (!text.ok() || text.value().empty()) return;
  strata::Result<strata::PayloadFilter> f = strata::PayloadFilter::Parse(text.value());
  if (!f.ok()) return;
  for (std::uint64_t id : {1ull, 2ull, ~0ull}) {
    for (const char* p : kPayloads) f.value().Matches(id, p);
  }
}

void Points(const json& list) {
  if (!list.is_array()) return;
  for (const json& p : list) {
    const json& id = p.is_object() ? p.value("id", json()) : p;
    strata::Result<sv::PointId> pid = sv::ParsePointId(id);
    if (!pid.ok()) continue;
    sv::PointIdJson(pid.value().id, pid.value().uuid ? "" : kPayloads[0]);
    if (!p.is_object()) continue;
    const json& v = p.value("vector", json());
    if (v.is_array()) {
      for (const json& x : v) sv::FloatOf(x, "vector elements").status().IgnoreError();
    }
    strata::Result<std::string> stored = sv::StoredPayload(p.value("payload", json()), pid.value());
    if (stored.ok()) sv::ProjectPayload(json(true), stored.value()).status().IgnoreError();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = input.find('\n');
  const std::string body = nl == std::string::npos ? input : input.substr(nl + 1);
  if (!sv::CheckJsonDepth(body, kMaxJsonDepth).ok()) return 0;
  const json req = json::parse(body, nullptr, false);
  if (req.is_discarded() || !req.is_object()) return 0;
  Filter(req);
  if (req.contains("searches") && req["searches"].is_array()) {
    for (const json& s : req["searches"]) {
      if (s.is_object()) Filter(s);
    }
  }
  Points(req.value("points", json()));
  Points(req.value("ids", json()));
  if (req.contains("with_payload")) {
    for (const char* p : kPayloads) sv::ProjectPayload(req["with_payload"], p).status().IgnoreError();
  }
  if (req.contains("score_threshold")) sv::FloatOf(req["score_threshold"], "t").status().IgnoreError();
  return 0;
}
