// `strata serve`: an HTTP server speaking (a subset of) Qdrant's REST API over
// Strata collections kept under one data directory (src/server/).
#ifndef STRATA_SERVER_H_
#define STRATA_SERVER_H_

#include <cstdint>
#include <string>

#include "strata/status.h"

namespace strata {

struct ServerOptions {
  std::string data_dir;            // collections live in data_dir/collections/<name>
  std::string host = "127.0.0.1";  // loopback unless asked: other hosts need api_key
  int port = 6333;
  std::string api_key;             // empty: no key (only allowed on loopback)
  // Request workers. httplib gives a worker to a connection for its whole
  // keep-alive life (idle ones are cut after 5 s), so a worker is a
  // connection more than a core: 0 = 4 per core, at least 8.
  unsigned threads = 0;
  // Connections that may wait for a worker. Beyond that (all workers busy,
  // queue full) requests get 503 with Retry-After instead of queueing
  // without bound; /metrics counts them (strata_requests_shed_total).
  unsigned max_queue = 64;
  // Limits; each exceeded one is a 4xx naming it.
  std::uint64_t max_body_bytes = 64ull << 20;
  std::uint64_t max_batch = 10000;       // points per upsert/delete/retrieve, queries per batch
  std::uint32_t max_limit = 10000;       // search/scroll `limit` (+ offset)
  std::uint32_t max_dim = 65536;         // vectors.size
  std::uint32_t max_filter_depth = 32;   // nesting of filter objects/arrays
  std::uint32_t max_json_depth = 64;     // nesting of the whole request body
  int read_timeout_s = 30;
  int write_timeout_s = 30;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

// Opens every collection, serves until SIGTERM/SIGINT, then finishes the
// requests in flight and closes (flushes) every collection. InvalidArgument
// for a non-loopback host without an API key; IOError if the port cannot be bound.
Status RunServer(const ServerOptions& options);

}  // namespace strata

#endif  // STRATA_SERVER_H_
