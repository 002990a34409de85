// The parent role of collection_crash_harness: spawns the child round after
// round, kills it with SIGKILL by a kill plan drawn per round, follows the
// pipe into the model, reopens the collection and verifies it
// (crash_verify.h), and at the end compares recall with a clean build.
#ifndef STRATA_TESTS_CRASH_CRASH_PARENT_H_
#define STRATA_TESTS_CRASH_CRASH_PARENT_H_

#include <cstdint>
#include <string>

#include "strata/collection.h"

namespace strata::crash {

struct ParentArgs {
  std::string dir;
  int kills = 20;
  std::uint64_t seed = 1;
  Durability durability = Durability::kAsync;
  UpdateMode update_mode = UpdateMode::kBuffered;
  int fresh_every = 0;
  double min_delay_ms = 5;
  double max_delay_ms = 1500;
  bool keep = false;
};

// Runs every round; returns the exit status (0 all passed, 1 a round failed,
// 2 the scratch directory could not be prepared).
int RunParent(const ParentArgs& a);

}  // namespace strata::crash

#endif  // STRATA_TESTS_CRASH_CRASH_PARENT_H_
