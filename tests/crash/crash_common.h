// What both roles of collection_crash_harness share (crash_harness.cc): the
// fixed configuration, the deterministic data generator that lets the parent
// recompute every vector and payload bit for bit from (id, version), the
// collection's options, and the child -> parent pipe protocol.
//
// Child -> parent protocol: one line per write(2) (atomic on a pipe: every
// line is shorter than PIPE_BUF), never buffered, so a line the parent reads
// was written before the kill:
//   O <index_version> <count>            collection opened
//   B <n> U <flag> id:ver ...            intent: upsert batch n is about to be issued
//   B <n> D <flag> id ...                intent: delete batch n
//   B <n> M <flag>                       intent: explicit Merge() (flag T: the batch
//                                        crosses flat_threshold: the first build)
//   U <n> id:ver ...                     upsert batch n returned OK
//   D <n> <existed> id ...               delete batch n returned OK (`existed` deleted)
//   M <n>                                Merge() returned OK
//   V <version> <merging> <merges> <pending> <live>   Stats() changed
//   E <n> <message>                      a contract violation the child saw
//   F <n> <message>                      a call failed (the child then exits 3)
//   C                                    the child closed the collection and exits 0
// A version is the number of the batch that wrote it, so (id, version) keys
// the vector and the payload and the parent recomputes both bit for bit.
// Batch numbers are never reused: the parent passes the next free one in the
// state file and counts every intent it read.
#ifndef STRATA_TESTS_CRASH_CRASH_COMMON_H_
#define STRATA_TESTS_CRASH_CRASH_COMMON_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/collection.h"

namespace strata::crash {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kDim = 16;
constexpr std::uint64_t kFlatThreshold = 256;
constexpr std::uint64_t kMergePendingCount = 300;
constexpr std::size_t kMaxLive = 5000;
constexpr std::uint32_t kK = 10;
constexpr std::uint32_t kListSize = 64;
constexpr VectorId kAbsentIdBase = VectorId{1} << 50;  // ids never upserted
constexpr VectorId kQueryKeyBase = VectorId{1} << 52;  // keys of the fixed queries
constexpr int kRecallQueries = 200;
constexpr double kRecallBar = 0.9;

// splitmix64.
std::uint64_t Mix(std::uint64_t x);

// The vector of `id` as written by batch `ver`: kDim floats in [-1, 1), each a
// multiple of 2^-23 (exact in float32).
std::vector<float> MakeVector(VectorId id, std::uint64_t ver);

// The payload of `id` written by batch `ver`: empty one time in 16 (no
// payload), otherwise a readable prefix and up to 200 filler bytes, binary
// (NUL, 0xff) one time in 7.
std::string MakePayload(VectorId id, std::uint64_t ver);

// Squared L2 distance of two kDim vectors.
float L2(const float* a, const float* b);

// Same length and the same bits (no float comparison: -0 vs 0, NaN).
bool SameBits(const std::vector<float>& a, const std::vector<float>& b);

// The collection's options, the same in the child and in the parent's reopen.
// With `update_mode` in_place the graph takes writes in place (an
// applier thread, a journal in RocksDB).
CollectionOptions MakeOptions(Durability durability, UpdateMode update_mode);

// k = kK at list size kListSize.
CollectionSearchParams MakeSearchParams();

// The first `max` ids, space-separated, and how many there are in all.
std::string JoinIds(const std::vector<VectorId>& ids, std::size_t max = 8);

// The kRecallQueries fixed recall queries (keys above kQueryKeyBase).
std::vector<std::vector<float>> FixedQueries();

// The rows, one after the other.
std::vector<float> Flatten(const std::vector<std::vector<float>>& rows);

}  // namespace strata::crash

#endif  // STRATA_TESTS_CRASH_CRASH_COMMON_H_
