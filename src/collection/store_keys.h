// The collection's RocksDB key space and value encodings (docs/collection.md).
//
// One key space, eight prefixes (one byte each), ids big-endian so that a
// prefix iterates in id order:
//   'm' + name           meta: "options" (JSON, creation options),
//                        "version" (JSON: current index version and the
//                        write sequence it holds), "seq" (last write, u64)
//   'v' + id (8 B BE)    the record: version byte, write sequence, payload
//                        length, vector bytes (stored element type), payload
//   'p' + id (8 B BE)    the id is in the pending list (not yet merged):
//                        the write sequence of its pending copy (u64 LE)
//   't' + id (8 B BE)    tombstone: the id's copy in the SSD index is dead
//                        (deleted or replaced); the write sequence (u64 LE)
//   'g' + keyword        a label-aware graph's label of a keyword (u32 LE;
//                        graph_label_dictionary.h)
//   'e' + version (8 B BE) + page (4 B BE)
//                        update_mode in_place: the lists an update wrote to
//                        that page of the version's decoupled layout, with
//                        the update's journal sequence (in_place_journal.h)
//   'j' + version (8 B BE) + vertex (4 B BE)
//                        update_mode in_place, before 2026-12-07: where the
//                        vertex's edge list was moved (read, never written)
//   'a' + version (8 B BE) + vertex (4 B BE)
//                        update_mode in_place: a vertex appended to that
//                        version: its id, birth sequence and PQ code
//                        (in_place_journal.h)
// RocksDB checksums its log and its files; a record also carries a format
// version byte so that a newer layout is refused rather than misread.
#ifndef STRATA_COLLECTION_STORE_KEYS_H_
#define STRATA_COLLECTION_STORE_KEYS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "strata/result.h"
#include "strata/types.h"

namespace strata::collection {

inline constexpr char kMetaPrefix = 'm';
inline constexpr char kVectorPrefix = 'v';
inline constexpr char kPendingPrefix = 'p';
inline constexpr char kTombstonePrefix = 't';
inline constexpr char kGraphLabelPrefix = 'g';
inline constexpr char kJournalPagePrefix = 'e';
inline constexpr char kJournalMovePrefix = 'j';
inline constexpr char kJournalAppendPrefix = 'a';
inline constexpr std::uint8_t kRecordFormatVersion = 1;

std::string MetaKey(std::string_view name);
// prefix + id, big-endian.
std::string IdKey(char prefix, VectorId id);
// The id of an IdKey; Corruption if `key` is not prefix + 8 bytes.
Result<VectorId> ParseIdKey(std::string_view key, char prefix);

std::string EncodeU64(std::uint64_t v);
Result<std::uint64_t> DecodeU64(std::string_view value);

// A decoded 'v' record (views into the value's bytes).
struct RecordView {
  std::uint64_t seq = 0;
  std::string_view vector;  // dim * element size bytes
  std::string_view payload;
};

std::string EncodeRecord(std::uint64_t seq, std::span<const std::byte> vector,
                         std::string_view payload);
// Corruption for a short value, a vector of the wrong size or an unknown
// format version.
Result<RecordView> DecodeRecord(std::string_view value, std::size_t vector_bytes);

}  // namespace strata::collection

#endif  // STRATA_COLLECTION_STORE_KEYS_H_
