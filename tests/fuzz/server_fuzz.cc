// libFuzzer target: the server's request handling, from the route match and
// the body's JSON through the Qdrant request parsing and the filter parser,
// against a real collection (tmpfs when there is one).
//
// An input is the request line, a newline, then the body:
//   POST /collections/c/points/search?wait=true
//   {"vector": [0.1, 0.2, 0.3, 0.4], "filter": {...}}
// The seed corpus (tests/fuzz/corpus/server) holds one input per endpoint.
// A DELETE of a collection is skipped, and a PUT that creates one is made
// against the scratch name "fz" and dropped again, so that every input finds
// the same collection "c" (dim 4, a few points with payloads), which is
// recreated now and then to keep its size bounded. Snapshots are not
// created (recovering from a missing one and listing are exercised).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>

#include "server/handlers.h"

namespace strata::server {
namespace {

// httplib refuses longer request lines (CPPHTTPLIB_REQUEST_URI_MAX_LENGTH).
constexpr std::size_t kMaxPath = 8192;
constexpr int kRecreateEvery = 20000;
constexpr std::uint64_t kMaxPoints = 20000;

struct World {
  std::filesystem::path dir;
  ServerOptions options;
  std::unique_ptr<CollectionManager> manager;
  std::unique_ptr<Handlers> handlers;
  int runs = 0;

  World() {
    const char* shm = "/dev/shm";
    const std::filesystem::path base =
        std::filesystem::is_directory(shm) ? std::filesystem::path(shm)
                                           : std::filesystem::temp_directory_path();
    dir = base / ("strata_server_fuzz_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    manager = std::make_unique<CollectionManager>(dir.string());
    if (!manager->OpenAll().ok()) std::abort();
    options.max_batch = 1000;
    options.max_limit = 1000;
    handlers = std::make_unique<Handlers>(manager.get(), options);
    Recreate();
  }
  ~World() {
    handlers.reset();
    manager->CloseAll().IgnoreError();
    std::filesystem::remove_all(dir);
  }

  Reply Call(const std::string& method, const std::string& path, const std::string& body) {
    std::string endpoint;
    return handlers->Dispatch(method, path, body, {}, &endpoint);
  }

  void Recreate() {
    if (manager->Get("c") != nullptr && !manager->Drop("c").ok()) std::abort();
    // Async durability: the fuzzer needs no fsync per write.
    const std::string create =
        R"({"vectors": {"size": 4, "distance": "Cosine"}, "strata": {"durability": "async"}})";
    if (Call("PUT", "/collections/c", create).status != 200) std::abort();
    const std::string points = R"({"points": [
      {"id": 1, "vector": [1, 0, 0, 0], "payload": {"color": "red", "n": 1, "tags": ["a", "b"]}},
      {"id": 2, "vector": [0, 1, 0, 0], "payload": {"color": "blue", "n": 2.5, "x": {"y": null}}},
      {"id": "6f1c2a1e-8b7d-4c3e-9a2b-0d1e2f3a4b5c", "vector": [0, 0, 1, 0], "payload": {"items": [{"sku": "k"}]}},
      {"id": 4, "vector": [0, 0, 0, 1]}]})";
    if (Reply r = Call("PUT", "/collections/c/points", points); r.status != 200) {
      std::fprintf(stderr, "seed upsert: %s\n", r.body.c_str());
      std::abort();
    }
  }
};

World* g_world = nullptr;

World& TheWorld() {
  if (g_world == nullptr) {
    // Never destroyed (libFuzzer exits from anywhere, other threads running),
    // but its directory is removed at a normal exit: on /dev/shm it is memory.
    g_world = new World();
    std::atexit([] { std::filesystem::remove_all(g_world->dir); });
  }
  return *g_world;
}

}  // namespace
}  // namespace strata::server

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata::server;
  World& w = TheWorld();
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = input.find('\n');
  const std::string line = input.substr(0, nl);
  const std::string body = nl == std::string::npos ? std::string() : input.substr(nl + 1);
  const std::size_t sp = line.find(' ');
  if (sp == std::string::npos) return 0;
  const std::string method = line.substr(0, sp);
  std::string target = line.substr(sp + 1);
  std::multimap<std::string, std::string> params;
  if (const std::size_t q = target.find('?'); q != std::string::npos) {
    if (target.compare(q + 1, std::string::npos, "wait=true") == 0) params.emplace("wait", "true");
    target.resize(q);
  }
  if (target.size() > kMaxPath) return 0;
  const bool names_collection = target.rfind("/collections/", 0) == 0 &&
                                target.find('/', sizeof("/collections/") - 1) == std::string::npos;
  if (names_collection && method == "DELETE") return 0;
  // Each snapshot is a copy of the collection: a million would fill the disk.
  if (method == "POST" && target.ends_with("/snapshots")) return 0;
  if (names_collection && method == "PUT") target = "/collections/fz";

  std::string endpoint;
  const Reply reply = w.handlers->Dispatch(method, target, body, params, &endpoint);
  // Every reply is decided and a 5xx is a server fault, not the client's.
  if (reply.status < 200 || reply.status >= 500) {
    std::fprintf(stderr, "status %d for %s %s: %s\n", reply.status, method.c_str(), target.c_str(),
                 reply.body.c_str());
    std::abort();
  }
  if (names_collection && method == "PUT" && w.manager->Get("fz") != nullptr) {
    if (!w.manager->Drop("fz").ok()) std::abort();
  }
  if (++w.runs % kRecreateEvery == 0) w.Recreate();
  if (auto c = w.manager->Get("c"); c != nullptr && c->size() > kMaxPoints) w.Recreate();
  return 0;
}
