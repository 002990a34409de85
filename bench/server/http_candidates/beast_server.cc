// Boost.Beast candidate: asynchronous sessions on one io_context run by
// THREADS threads (Beast's "advanced server" shape), keep-alive, TCP_NODELAY.
// usage: beast_server PORT THREADS
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <utility>  // before Boost 1.74's asio: its awaitable.hpp uses std::exchange unincluded
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include "handler.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket socket) : stream_(std::move(socket)) {}
  void Start() { Read(); }

 private:
  void Read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->Close();
                       self->Respond();
                     });
  }
  void Respond() {
    int status = 0;
    std::string body = AnswerSearch(request_.body(), &status);
    response_ = {};
    response_.result(static_cast<http::status>(status));
    response_.version(request_.version());
    response_.set(http::field::content_type, "application/json");
    response_.keep_alive(request_.keep_alive());
    response_.body() = std::move(body);
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec || !self->response_.keep_alive()) return self->Close();
                        self->Read();
                      });
  }
  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

void Accept(tcp::acceptor& acceptor, asio::io_context& io) {
  acceptor.async_accept(asio::make_strand(io), [&](beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      socket.set_option(tcp::no_delay(true));
      std::make_shared<Session>(std::move(socket))->Start();
    }
    Accept(acceptor, io);
  });
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT THREADS\n", argv[0]);
    return 2;
  }
  const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
  const int threads = std::atoi(argv[2]);
  asio::io_context io(threads);
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  Accept(acceptor, io);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  return 0;
}
