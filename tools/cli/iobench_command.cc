// `strata iobench`: random-read IOPS / latency of the I/O engines on one file,
// the number to compare with `fio --rw=randread --direct=1` on the same file.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.h"
#include "strata/io.h"

namespace strata::cli {
namespace {

struct IobenchArgs {
  std::string file;
  std::uint64_t size = 0;
  std::uint64_t block = 4096;
  std::vector<std::uint32_t> qd = {1, 4, 16, 64, 128};
  std::vector<std::uint32_t> threads = {1};
  std::string engine = "uring";
  double seconds = 5.0;
  std::uint64_t seed = 42;
  bool json = false;
};

nlohmann::json ToJson(const IobenchResult& r) {
  return nlohmann::json{
      {"engine", std::string(IoEngineName(r.engine))},
      {"qd", r.queue_depth},
      {"threads", r.threads},
      {"block_size", r.block_size},
      {"seconds", r.seconds},
      {"reads", r.reads},
      {"iops", r.iops},
      {"mbps", r.mbps},
      {"mean_us", r.mean_us},
      {"p50_us", r.p50_us},
      {"p99_us", r.p99_us},
      {"max_us", r.max_us},
      {"cpu_percent", r.cpu_percent},
      {"bytes_read", r.stats.bytes_read},
      {"pages_read", r.stats.pages_read},
      {"wait_us", static_cast<double>(r.stats.wait_ns) / 1e3},
      {"max_in_flight", r.stats.max_in_flight},
      {"submit_batches", r.stats.submit_batches},
      {"errors", r.stats.errors},
      {"engine_description", r.engine_description},
  };
}

void PrintRow(const IobenchResult& r) {
  std::printf("%-6s %7u %5u %11.0f %9.1f %9.1f %9.1f %9.1f %6.0f  %s\n",
              std::string(IoEngineName(r.engine)).c_str(), r.threads, r.queue_depth, r.iops, r.mbps,
              r.mean_us, r.p50_us, r.p99_us, r.cpu_percent, r.engine_description.c_str());
  std::fflush(stdout);
}

Status RunIobenchCommand(const IobenchArgs& a) {
  IobenchOptions o;
  o.path = a.file;
  o.file_size = a.size;
  if (a.block > (16u << 20)) return Status::InvalidArgument("--block must be at most 16M");
  o.block_size = static_cast<std::uint32_t>(a.block);
  o.queue_depths = a.qd;
  o.threads = a.threads;
  STRATA_ASSIGN_OR_RETURN(o.engines, ParseIoEngineList(a.engine));
  o.seconds = a.seconds;
  o.seed = a.seed;
  STRATA_RETURN_IF_ERROR(o.Validate());
  bool header_printed = false;
  auto on_result = [&](const IobenchResult& r) {
    if (!a.json && !header_printed) {  // printed late, so an early error prints only itself
      std::printf("%-6s %7s %5s %11s %9s %9s %9s %9s %6s  %s\n", "engine", "threads", "qd", "iops",
                  "MB/s", "mean_us", "p50_us", "p99_us", "cpu%", "queue");
      header_printed = true;
    }
    if (a.json) {
      std::fprintf(stderr, "iobench: %s threads=%u qd=%u: %.0f IOPS\n",
                   std::string(IoEngineName(r.engine)).c_str(), r.threads, r.queue_depth, r.iops);
    } else {
      PrintRow(r);
    }
  };
  STRATA_ASSIGN_OR_RETURN(std::vector<IobenchResult> results, RunIobench(o, on_result));
  if (a.json) {
    // One object per setting, one per line, inside a JSON array.
    std::printf("[\n");
    for (std::size_t i = 0; i < results.size(); ++i) {
      std::printf("  %s%s\n", ToJson(results[i]).dump().c_str(), i + 1 < results.size() ? "," : "");
    }
    std::printf("]\n");
  }
  return Status::OK();
}

}  // namespace

void AddIobenchCommand(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<IobenchArgs>();
  CLI::App* cmd = root.add_subcommand(
      "iobench", "Random 4 KiB O_DIRECT reads at fixed queue depths: IOPS, MB/s, latency");
  cmd->add_option("--file", args->file,
                  "File to read; created or extended (non-zero data, O_DIRECT, fsync) if smaller "
                  "than --size")
      ->required();
  cmd->add_option("--size", args->size,
                  "Bytes of the file to read from, e.g. 2G (default: the file's size, 2G if new)")
      ->transform(CLI::AsSizeValue(false));
  cmd->add_option("--block", args->block, "Bytes per read, a multiple of 4096")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  cmd->add_option("--qd", args->qd, "Queue depths per thread, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Reader thread counts, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--engine", args->engine, "uring, aio, pread, auto, a comma list, or all")
      ->capture_default_str();
  cmd->add_option("--seconds", args->seconds, "Run time per setting")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the random offsets")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print a JSON array, one object per setting");
  cmd->callback([args, action] { *action = [args] { return RunIobenchCommand(*args); }; });
}

}  // namespace strata::cli
