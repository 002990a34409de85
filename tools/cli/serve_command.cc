// `strata serve`: the Qdrant-compatible HTTP server (include/strata/server.h).
// The API key comes from a file or the environment, never the command line
// (where `ps` would show it).
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "command.h"
#include "strata/server.h"

namespace strata::cli {

void AddServeCommand(CLI::App& root, CommandAction* action) {
  auto* cmd = root.add_subcommand("serve", "Serve collections over Qdrant's REST API");
  auto opts = std::make_shared<ServerOptions>();
  auto key_file = std::make_shared<std::string>();
  cmd->add_option("--data", opts->data_dir, "Data directory (collections under DIR/collections)")
      ->required();
  cmd->add_option("--host", opts->host, "Address to bind (non-loopback requires an API key)")
      ->capture_default_str();
  cmd->add_option("--port", opts->port, "TCP port")->capture_default_str();
  cmd->add_option("--api-key-file", *key_file, "File holding the API key (else env STRATA_API_KEY)");
  cmd->add_option("--threads", opts->threads, "Request worker threads (0 = 4 per core, at least 8)");
  cmd->add_option("--max-queue", opts->max_queue,
                  "Connections that may wait for a worker; beyond that, 503 with Retry-After")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", opts->max_body_bytes, "Largest request body")->capture_default_str();
  cmd->add_option("--max-batch", opts->max_batch, "Most points or queries per request")->capture_default_str();
  cmd->add_option("--max-limit", opts->max_limit, "Largest limit (+ offset) of a search or scroll")
      ->capture_default_str();
  cmd->callback([opts, key_file, action] {
    *action = [opts, key_file]() -> Status {
      ServerOptions o = *opts;
      if (!key_file->empty()) {
        std::ifstream in(*key_file);
        if (!in) return Status::IOError("cannot read --api-key-file " + *key_file);
        std::stringstream ss;
        ss << in.rdbuf();
        o.api_key = ss.str();
        while (!o.api_key.empty() && (o.api_key.back() == '\n' || o.api_key.back() == '\r' ||
                                      o.api_key.back() == ' ')) {
          o.api_key.pop_back();
        }
        if (o.api_key.empty()) return Status::InvalidArgument("--api-key-file " + *key_file + " is empty");
      } else if (const char* env = std::getenv("STRATA_API_KEY"); env != nullptr) {
        o.api_key = env;
      }
      return RunServer(o);
    };
  });
}

}  // namespace strata::cli
