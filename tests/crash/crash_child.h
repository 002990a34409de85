// The child role of collection_crash_harness: opens the collection, writes
// to it as fast as it can (upserts, deletes, drains, explicit merges) beside
// a search thread, and reports each write on the pipe before issuing it and
// again once the collection acknowledged it (crash_common.h: the protocol),
// until the parent kills it.
#ifndef STRATA_TESTS_CRASH_CRASH_CHILD_H_
#define STRATA_TESTS_CRASH_CRASH_CHILD_H_

#include <cstdint>
#include <string>

#include "strata/collection.h"

namespace strata::crash {

struct ChildArgs {
  std::string dir;
  std::string state;
  std::uint64_t seed = 1;
  int fd = 1;
  Durability durability = Durability::kAsync;
  UpdateMode update_mode = UpdateMode::kBuffered;
  double max_seconds = 60;
  // Start with a drain down to this many live ids (the parent asks every
  // 10th round; -1 = no).
  long drain = -1;
};

// Runs the child's workload; returns its exit status (0 after a clean Close
// when max_seconds ran out, 3 when a call failed, 5 when the parent is gone).
int RunChild(const ChildArgs& a);

}  // namespace strata::crash

#endif  // STRATA_TESTS_CRASH_CRASH_CHILD_H_
