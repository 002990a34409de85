// cpp-httplib candidate: httplib::Server with a pool of THREADS workers, as
// strata serve uses it (TCP_NODELAY on). usage: httplib_server PORT THREADS
#include <netinet/tcp.h>

#include <cstdio>
#include <cstdlib>

#include <httplib.h>

#include "handler.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT THREADS\n", argv[0]);
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int threads = std::atoi(argv[2]);
  httplib::Server server;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_socket_options([](socket_t sock) {
    int one = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  });
  server.Post(".*", [](const httplib::Request& req, httplib::Response& res) {
    int status = 0;
    res.set_content(AnswerSearch(req.body, &status), "application/json");
    res.status = status;
  });
  return server.listen("127.0.0.1", port) ? 0 : 1;
}
