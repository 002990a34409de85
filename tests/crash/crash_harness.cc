// kill -9 crash harness for the Collection (include/strata/collection.h),
// after rocksdb's db_crashtest.py and its expected-state oracle: a child
// process writes to a collection as fast as it can and reports every write
// the collection acknowledged on a pipe; the parent kills it with SIGKILL at
// a random moment, reopens the collection itself and checks it against the
// model built from the acknowledgements. State accumulates across kills.
//
//   parent: collection_crash_harness --dir DIR --kills N [--seed S]
//                                    [--durability async|sync] [--fresh-every K]
//                                    [--update-mode buffered|in_place]
//   child:  collection_crash_harness --child DIR --state FILE --seed S --fd N
//                                    [--durability async|sync]
//
// The child -> parent protocol is described in crash_common.h.
//
// What the parent checks after each kill (the Collection's contract):
//   - every acknowledged upsert is there with its exact vector and payload;
//   - no acknowledged delete comes back, in Get or in Search;
//   - the batch in flight (intent, no ack) is applied entirely or not at all;
//   - Count() is the model's live count (for the in-flight batch's outcome);
//   - searching for stored vectors finds them at distance ~0, every hit is a
//     live id at its exact distance, and recall@10 against brute force over
//     the model is >= 0.9.
// At the end it compares recall with a clean build of the same live set.
// The child also runs a search thread beside its writes (results must stay
// well formed while merges switch versions) and reads its own writes back.
//
// Kill plans, drawn per round: a log-uniform time (5 ms .. 1.5 s from the
// spawn, so some kills land before or during the child's Open), the k-th
// intent plus 0..3 ms (a write in flight), a merge (a background merge seen
// running in Stats(), or an explicit Merge() call, plus a delay), and while
// the collection has no index yet, the batch that crosses flat_threshold
// plus 0..200 ms (the first training build). After a failed round the
// parent rewrites the diverging ids so that later rounds start from the
// model again; the collection is kept for inspection.
//
// Files: crash_common (configuration, data generator, protocol), crash_child
// (the writer), crash_model (the expected state), crash_verify (the checks
// after a kill), crash_parent (kill plans and rounds); this file parses the
// command line and runs one role.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include "crash_child.h"
#include "crash_parent.h"

namespace strata::crash {
namespace {

void Usage() {
  std::fprintf(stderr,
               "usage: collection_crash_harness --dir DIR --kills N [--seed S] "
               "[--durability async|sync] [--update-mode buffered|in_place] "
               "[--fresh-every K] [--min-delay-ms MS] "
               "[--max-delay-ms MS] [--keep]\n"
               "       collection_crash_harness --child DIR --state FILE --seed S [--fd N] "
               "[--durability async|sync] [--update-mode buffered|in_place] [--max-seconds S] "
               "[--drain LIVE]\n");
}

int Main(int argc, char** argv) {
  std::string child_dir, dir, state, durability = "async", update_mode = "buffered";
  ParentArgs pa;
  ChildArgs ca;
  bool child = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "collection_crash_harness: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (arg == "--child") {
        child = true;
        ca.dir = value();
      } else if (arg == "--state") {
        ca.state = value();
      } else if (arg == "--fd") {
        ca.fd = std::stoi(value());
      } else if (arg == "--drain") {
        ca.drain = std::stol(value());
      } else if (arg == "--max-seconds") {
        ca.max_seconds = std::stod(value());
      } else if (arg == "--dir") {
        pa.dir = value();
      } else if (arg == "--kills") {
        pa.kills = std::stoi(value());
      } else if (arg == "--seed") {
        pa.seed = ca.seed = std::stoull(value());
      } else if (arg == "--durability") {
        durability = value();
      } else if (arg == "--update-mode") {
        update_mode = value();
      } else if (arg == "--fresh-every") {
        pa.fresh_every = std::stoi(value());
      } else if (arg == "--min-delay-ms") {
        pa.min_delay_ms = std::stod(value());
      } else if (arg == "--max-delay-ms") {
        pa.max_delay_ms = std::stod(value());
      } else if (arg == "--keep") {
        pa.keep = true;
      } else if (arg == "--help" || arg == "-h") {
        Usage();
        return 0;
      } else {
        std::fprintf(stderr, "collection_crash_harness: unknown option %s\n", arg.c_str());
        Usage();
        return 2;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "collection_crash_harness: bad value for %s\n", arg.c_str());
      return 2;
    }
  }
  auto d = ParseDurability(durability);
  if (!d.ok()) {
    std::fprintf(stderr, "collection_crash_harness: %s\n", d.status().ToString().c_str());
    return 2;
  }
  pa.durability = ca.durability = *d;
  auto m = ParseUpdateMode(update_mode);
  if (!m.ok()) {
    std::fprintf(stderr, "collection_crash_harness: %s\n", m.status().ToString().c_str());
    return 2;
  }
  pa.update_mode = ca.update_mode = *m;
  if (child) {
    if (ca.state.empty()) {
      Usage();
      return 2;
    }
    return RunChild(ca);
  }
  if (pa.dir.empty() || pa.kills < 1 || pa.min_delay_ms <= 0 || pa.max_delay_ms < pa.min_delay_ms) {
    Usage();
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  pa.dir = std::filesystem::absolute(pa.dir).string();
  return RunParent(pa);
}

}  // namespace
}  // namespace strata::crash

int main(int argc, char** argv) { return strata::crash::Main(argc, argv); }
