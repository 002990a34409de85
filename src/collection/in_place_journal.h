// The journal of an in-place version (update_mode in_place), kept in the
// collection's RocksDB store: what an in-place insert changed in the
// version's decoupled layout, so that a reopen finds every insert that was
// acknowledged as applied. Edge lists are written out of place, so the old
// version of every list stays valid on its page until the journal entry
// that moves it is written (NAVIS's out-of-place structural updates, made
// crash-consistent here by the journal, where PipeANN and OdinANN update
// pages in place).
//
// Keys (store_keys.h), both per index version so that a merge's switch
// drops the old version's entries with a range delete:
//   'j' + version + vertex   page u32 LE | slot u16 LE: the list's place
//   'a' + version + vertex   id u64 LE | birth sequence u64 LE | PQ code:
//                            a vertex appended by an insert
// One batch per insert holds its 'j' entries (the new vertex's and every
// neighbour's changed list), its 'a' entry and the removal of the write's
// 'p' key.
#ifndef STRATA_COLLECTION_IN_PLACE_JOURNAL_H_
#define STRATA_COLLECTION_IN_PLACE_JOURNAL_H_

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strata/in_place_graph.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata::collection {

// Adds the moved lists of an insert or a delete's repair to `batch`.
void JournalMoves(std::uint64_t version, std::span<const InPlaceListMove> moves,
                  rocksdb::WriteBatch* batch);
// Adds one insert's entries to `batch` (its moves and its appended vertex).
void JournalInsert(std::uint64_t version, const PreparedInPlaceInsert& insert, VectorId id,
                   std::uint64_t born, rocksdb::WriteBatch* batch);

// Removes every journal entry of `version` (a version that is no longer
// current).
void DropJournal(std::uint64_t version, rocksdb::WriteBatch* batch);

// A version's journal as read at open.
struct LoadedJournal {
  InPlaceRecovery recovery;  // moves, appended count and codes
  std::vector<std::pair<VectorId, std::uint64_t>> appended;  // id and birth, by vertex
  std::uint32_t first_appended = 0;  // the first appended vertex (the layout's vertex count)
  // Entries of versions other than the current one (a crash before their
  // removal): removed by the caller.
  std::vector<std::uint64_t> stale_versions;
};

// Reads `version`'s journal. Appended vertices must follow each other
// without a gap, their codes all of one size: Corruption otherwise (the
// graph checks that they start at its own vertex count).
Result<LoadedJournal> LoadJournal(rocksdb::DB* db, std::uint64_t version);

}  // namespace strata::collection

#endif  // STRATA_COLLECTION_IN_PLACE_JOURNAL_H_
