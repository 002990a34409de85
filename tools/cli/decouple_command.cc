// `strata decouple`: writes a graph index's decoupled layout (edge file and
// vector file, strata/graph_index.h) for searches with `--decoupled DIR`.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "command.h"
#include "strata/graph_index.h"

namespace strata::cli {
namespace {

struct DecoupleArgs {
  std::string index, out;
  DecoupledLayoutOptions options;
};

Status RunDecouple(const DecoupleArgs& a) {
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) return Status::IOError("cannot create " + a.out + ": " + ec.message());
  STRATA_ASSIGN_OR_RETURN(DecoupledLayoutReport r, WriteDecoupledLayout(a.index, a.out, a.options));
  std::printf("%s/graph.edges: %llu vertices on %llu edge pages (%.1f MiB), OR(G) %.4f (slot "
              "order %.4f)\n%s/graph.vectors: %.1f MiB\n",
              a.out.c_str(), static_cast<unsigned long long>(r.vertices),
              static_cast<unsigned long long>(r.edge_pages),
              static_cast<double>(r.edge_bytes) / (1 << 20), r.overlap_after, r.overlap_before,
              a.out.c_str(),
              static_cast<double>(r.vector_bytes) / (1 << 20));
  return Status::OK();
}

}  // namespace

void AddDecoupleCommand(CLI::App& root, CommandAction* action) {
  auto a = std::make_shared<DecoupleArgs>();
  CLI::App* cmd = root.add_subcommand(
      "decouple", "Write a graph index's decoupled layout (edge pages + vector file)");
  cmd->add_option("--index", a->index, "Graph index directory")->required();
  cmd->add_option("--out", a->out, "Output directory (search it with --decoupled)")->required();
  cmd->add_flag("--shuffle", a->options.shuffle,
                "Place edge lists by a page shuffle of their own (else the node file's slot order)");
  cmd->add_option("--shuffle-rounds", a->options.refine_rounds, "LDG refinement rounds")
      ->capture_default_str();
  cmd->add_option("--shuffle-swaps", a->options.swap_passes, "Swap passes")->capture_default_str();
  cmd->add_option("--threads", a->options.threads, "Threads (0 = all cores)");
  cmd->add_flag("--vectors-in-pages", a->options.vectors_in_edge_pages,
                "Each edge slot carries its vector too: the packed in-place baseline "
                "(OdinANN-like), searched with no vector reads");
  cmd->callback([a, action] { *action = [a] { return RunDecouple(*a); }; });
}

}  // namespace strata::cli
