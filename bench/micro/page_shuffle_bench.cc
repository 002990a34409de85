// PageShuffle on a built graph index: loads the neighbour lists of
// <index_dir>/graph.nodes (a sequential pass over the file), then runs
// ShufflePages once per requested (threads, rounds, swap passes) and prints OR(G) of the id
// order and after every phase, the time per phase and the peak RSS.
//
// usage: page_shuffle_bench <index_dir> [--rounds 0,4,8,16] [--swaps 1]
//                           [--threads 2] [--seed 1] [--records-per-page C]
// C defaults to the index's records per sector. A plain program rather than a
// Google Benchmark: one shuffle of 1M nodes takes seconds, and the numbers
// wanted are per phase and per round count, not per iteration.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/checksum.h"
#include "base/stats.h"
#include "base/timer.h"
#include "format/graph_node_file.h"
#include "graph/page_shuffle.h"

namespace strata {
namespace {

struct Args {
  std::string index_dir;
  std::vector<int> rounds = {0, 4, 8, 16};
  std::vector<unsigned> threads = {2};
  std::vector<int> swaps = {1};
  std::uint64_t seed = 1;
  std::uint32_t records_per_page = 0;  // 0 = the index's records per sector
};

template <typename T>
bool ParseList(const char* s, std::vector<T>* out) {
  out->clear();
  std::string item;
  for (const char* p = s;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (item.empty()) return false;
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (*end != '\0' || v < 0) return false;
      out->push_back(static_cast<T>(v));
      item.clear();
      if (*p == '\0') return true;
    } else {
      item.push_back(*p);
    }
  }
}

bool ParseArgs(int argc, char** argv, Args* a) {
  if (argc < 2) return false;
  a->index_dir = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--rounds") {
      if (!ParseList(v, &a->rounds)) return false;
    } else if (flag == "--swaps") {
      if (!ParseList(v, &a->swaps)) return false;
    } else if (flag == "--threads") {
      if (!ParseList(v, &a->threads)) return false;
    } else if (flag == "--seed") {
      a->seed = std::strtoull(v, nullptr, 10);
    } else if (flag == "--records-per-page") {
      a->records_per_page = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    } else {
      return false;
    }
  }
  return (argc % 2) == 0;
}

// Resets the kernel's peak-RSS counter (VmHWM) to the current RSS, so the
// next PeakRssBytes() covers only what follows.
void ResetPeakRss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}

double MiB(std::uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

// The neighbour lists of every node, CSR form.
struct LoadedGraph {
  std::vector<std::uint64_t> offsets;
  std::vector<graph::NodeId> ids;
  std::uint32_t records_per_sector = 0;
};

// Reads the node file front to back in 4 MiB windows and keeps only the
// neighbour ids (the vectors are dropped). Node ids are slot numbers, as the
// records store them; in the packed layout that is the row. Empty slots (a
// file that is already shuffled) load as isolated nodes.
Result<LoadedGraph> LoadNeighbours(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(format::GraphNodeFile file, format::GraphNodeFile::Open(path));
  const format::GraphLayout& layout = file.layout();
  const std::uint64_t slots = layout.num_slots;
  if (slots >= graph::kEmptySlot) return Status::NotSupported("too many slots");
  LoadedGraph g;
  g.records_per_sector = layout.records_per_sector;
  g.offsets.reserve(slots + 1);
  g.offsets.push_back(0);
  constexpr std::uint64_t kWindow = 1024;  // sectors per read
  const std::uint64_t window = std::max<std::uint64_t>(kWindow, layout.sectors_per_record);
  AlignedBuffer buf(window * format::kSector);
  if (buf.data() == nullptr) return Status::Aborted("out of memory");
  std::uint64_t w0 = 0, w1 = 0;  // sectors [w0, w1) are in buf
  const std::uint64_t end_sector = 1 + layout.data_sectors();
  std::vector<std::byte> scratch;
  for (std::uint64_t slot = 0; slot < slots; ++slot) {
    const format::RecordLocation loc = layout.Locate(slot);
    if (loc.sector < w0 || loc.sector + loc.sectors > w1) {
      w0 = loc.sector;
      w1 = std::min(end_sector, w0 + window);
      STRATA_RETURN_IF_ERROR(file.ReadSectors(
          w0, w1 - w0, std::span<std::byte>(buf.data(), (w1 - w0) * format::kSector)));
    }
    format::NodeRecordView rec;
    STRATA_RETURN_IF_ERROR(
        file.Decode(slot, loc,
                    std::span<const std::byte>(buf.data() + (loc.sector - w0) * format::kSector,
                                               loc.sectors * format::kSector),
                    &scratch, &rec));
    const std::uint32_t degree = rec.external_id == kInvalidVectorId ? 0 : rec.degree;
    for (std::uint32_t j = 0; j < degree; ++j) {
      const VectorId v = rec.neighbour(j);
      if (v >= slots) return Status::Corruption("neighbour id out of range");
      g.ids.push_back(static_cast<graph::NodeId>(v));
    }
    g.offsets.push_back(g.ids.size());
  }
  g.ids.shrink_to_fit();
  return g;
}

int Run(const Args& args) {
  const std::string path = args.index_dir + "/graph.nodes";
  Timer load_timer;
  Result<LoadedGraph> loaded = LoadNeighbours(path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "load %s: %s\n", path.c_str(), loaded.status().ToString().c_str());
    return 1;
  }
  const LoadedGraph& g = *loaded;
  const std::uint64_t n = g.offsets.size() - 1;
  const graph::CsrGraphView view{g.offsets, g.ids};
  const std::uint32_t c = args.records_per_page != 0 ? args.records_per_page : g.records_per_sector;
  std::printf("graph %s: n=%" PRIu64
              " edges=%zu avg_degree=%.2f records_per_page=%u "
              "load=%.1fs csr=%.1fMiB rss_after_load=%.1fMiB\n",
              path.c_str(), n, g.ids.size(), static_cast<double>(g.ids.size()) / n, c,
              load_timer.ElapsedSeconds(), MiB(g.offsets.size() * 8 + g.ids.size() * 4),
              MiB(CurrentRssBytes()));

  for (const unsigned threads : args.threads) {
    for (const int rounds : args.rounds) {
      for (const int swaps : args.swaps) {
        const graph::PageShuffleOptions options{.records_per_page = c,
                                                .refine_rounds = rounds,
                                                .swap_passes = swaps,
                                                .seed = args.seed,
                                                .threads = threads};
        graph::PageShuffleReport report;
        const std::size_t rss_before = CurrentRssBytes();
        ResetPeakRss();
        Result<graph::PagePartition> part = graph::ShufflePages(view, options, &report);
        const std::size_t peak = PeakRssBytes();
        if (!part.ok()) {
          std::fprintf(stderr, "shuffle: %s\n", part.status().ToString().c_str());
          return 1;
        }
        const Status valid = graph::ValidatePartition(*part, n);
        const std::uint64_t digest =
            Checksum64(part->members.data(), part->members.size() * sizeof(std::uint32_t));
        std::printf(
            "\nthreads=%u rounds=%d swaps=%d: OR identity=%.4f final=%.4f (best phase %s) "
            "total=%.2fs pages=%" PRIu64 " (ceil(n/C)=%" PRIu64 ") short_pages=%" PRIu64
            " free_pops=%" PRIu64 " valid=%s digest=%016" PRIx64 "\n",
            threads, rounds, swaps, report.identity_overlap_ratio, report.final_overlap_ratio,
            report.best_phase.c_str(), report.seconds_total, part->num_pages(), (n + c - 1) / c,
            report.short_pages, report.free_queue_pops,
            valid.ok() ? "yes" : valid.ToString().c_str(), digest);
        std::printf("  peak_rss=%.1fMiB (before %.1fMiB, shuffle +%.1fMiB) work_arrays=%.1fMiB\n",
                    MiB(peak), MiB(rss_before), MiB(peak > rss_before ? peak - rss_before : 0),
                    MiB(report.work_bytes));
        std::printf("  %-8s %9s %8s\n", "phase", "seconds", "OR");
        for (const auto& ph : report.phases) {
          std::printf("  %-8s %9.3f %8.4f\n", ph.name.c_str(), ph.seconds, ph.overlap_ratio);
        }
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::Args args;
  if (!strata::ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: %s <index_dir> [--rounds 0,4,8,16] [--swaps 1] [--threads 2] [--seed 1] "
                 "[--records-per-page C]\n",
                 argv[0]);
    return 2;
  }
  return strata::Run(args);
}
