// The HTTP layer of `strata serve` (cpp-httplib: Debian packages it, it is
// small, and its thread-per-request pool keeps searches off the accept
// thread; Boost.Beast would need our own HTTP framing and pool). Routes,
// auth, limits, metrics and shutdown live here; the Qdrant JSON mapping is in
// qdrant_json.cc and the handlers of each endpoint in points_handlers.cc.
#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <unistd.h>
#include <cstring>
#include <thread>

#include <httplib.h>

#include "server/dashboard.h"
#include "server/handlers.h"
#include "server/task_queue.h"
#include "strata/server.h"

namespace strata {

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

namespace server {
namespace {

// Constant-time comparison: the key must not leak through response timing.
bool KeyEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int sig) {
  const char c = static_cast<char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &c, 1);  // async-signal-safe
}

void Send(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply.body, reply.content_type);
}

}  // namespace

Status Serve(const ServerOptions& options) {
  if (options.data_dir.empty()) return Status::InvalidArgument("--data is required");
  if (!IsLoopbackHost(options.host) && options.api_key.empty()) {
    return Status::InvalidArgument(
        "refusing to listen on non-loopback host " + options.host +
        " without an API key (give --api-key-file or set STRATA_API_KEY)");
  }
  // SIGTERM/SIGINT: a handler writes to a pipe that a waiter thread reads
  // (a handler, not sigwait: threads started before us, e.g. at static
  // initialisation, would not have the signals blocked and take them).
  if (pipe(g_signal_pipe) != 0) return Status::FromErrno("pipe", errno);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  CollectionManager manager(options.data_dir);
  STRATA_RETURN_IF_ERROR(manager.OpenAll());
  Handlers handlers(&manager, options);

  httplib::Server http;
  // httplib gives each connection a worker for its whole keep-alive life, so
  // idle keep-alive clients hold workers: the default pool is 4 per core (at
  // least 8) rather than 1, and idle connections are dropped after 5 s. A
  // connection holds its worker for at most 5 requests (httplib's keep-alive
  // maximum): the 5th answer closes it and the client's reconnection waits
  // in the queue like any other, so busy keep-alive clients cannot keep the
  // pool from others either.
  const unsigned threads = options.threads
                               ? options.threads
                               : std::max(8u, 4 * std::thread::hardware_concurrency());
  const unsigned max_queue = options.max_queue;
  http.new_task_queue = [threads, max_queue] { return new SheddingTaskQueue(threads, max_queue); };
  http.set_payload_max_length(options.max_body_bytes);
  http.set_read_timeout(options.read_timeout_s, 0);
  http.set_write_timeout(options.write_timeout_s, 0);
  http.set_keep_alive_timeout(5);
  // httplib writes a response's headers and body separately: with Nagle's
  // algorithm the body waits for the client's delayed ACK of the headers
  // (40 ms on Linux), which capped a keep-alive connection at ~25 searches/s.
  http.set_tcp_nodelay(true);

  // Every request: auth, then the handler; errors (even exceptions) become
  // Qdrant-shaped JSON, never a dropped connection.
  auto route = [&](httplib::Request const& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    const bool probe = req.path == "/healthz" || req.path == "/readyz";
    // Overloaded: answer at once, touching no collection (probes still
    // answer, so that an orchestrator does not restart a busy server).
    if (SheddingTaskQueue::IsShedding() && !probe) {
      Send(res, ErrorReply(503, "server overloaded: all request workers busy and the queue full; retry later"));
      res.set_header("Retry-After", "1");
      res.set_header("Connection", "close");
      handlers.metrics().RecordShed();
      handlers.metrics().Record(req.method + " (shed)", 503,
                                std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                              start).count());
      return;
    }
    // The console page itself holds no data (its script calls the API with
    // the key the user gives it), so it is served without a key.
    if (req.method == "GET" && req.path == "/dashboard") {
      const std::string_view page = DashboardHtml();
      res.set_content(page.data(), page.size(), "text/html; charset=utf-8");
      res.set_header("Cache-Control", "no-store");
      return;
    }
    Reply reply;
    if (!options.api_key.empty() && !probe) {
      const std::string given = req.get_header_value("api-key");
      if (given.empty()) {
        reply = ErrorReply(401, "missing api-key header");
      } else if (!KeyEquals(given, options.api_key)) {
        reply = ErrorReply(403, "invalid api-key");
      }
    }
    std::string endpoint = "unmatched";
    if (reply.status == 0) {
      try {
        reply = handlers.Dispatch(req.method, req.path, req.body, req.params, &endpoint);
      } catch (const std::exception& e) {
        reply = ErrorReply(400, std::string("bad request: ") + e.what());
      }
    }
    Send(res, reply);
    handlers.metrics().Record(req.method + " " + endpoint, reply.status,
                              std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                            start).count());
  };
  for (const char* pattern : {R"(/.*)"}) {
    http.Get(pattern, route);
    http.Put(pattern, route);
    http.Post(pattern, route);
    http.Delete(pattern, route);
    http.Patch(pattern, route);
  }
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    // httplib's own errors (413 payload too large, 400 malformed request).
    if (res.body.empty()) {
      const std::string msg = res.status == 413 ? "request body too large" : "bad request";
      res.set_content(ErrorBody(msg, 0).dump(), "application/json");
    }
  });

  if (!http.bind_to_port(options.host, options.port)) {
    manager.CloseAll().IgnoreError();
    return Status::IOError("cannot listen on " + options.host + ":" + std::to_string(options.port));
  }
  std::atomic<bool> signalled{false};
  std::thread waiter([&] {
    char sig = 0;
    while (read(g_signal_pipe[0], &sig, 1) < 0 && errno == EINTR) {
    }
    signalled = true;
    std::fprintf(stderr, "strata serve: signal %d, finishing requests in flight\n", sig);
    http.stop();  // closes the listener; listen_after_bind joins the workers
  });
  std::fprintf(stderr, "strata serve: listening on %s:%d (%u threads, queue %u), data %s\n",
               options.host.c_str(), options.port, threads, max_queue, options.data_dir.c_str());
  handlers.SetReady(true);
  http.listen_after_bind();
  handlers.SetReady(false);
  // listen ended by itself (not by a signal): wake the waiter.
  if (!signalled) OnSignal(0);
  waiter.join();
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  const Status closed = manager.CloseAll();
  std::fprintf(stderr, "strata serve: collections closed\n");
  return closed;
}

}  // namespace server

Status RunServer(const ServerOptions& options) { return server::Serve(options); }

}  // namespace strata
