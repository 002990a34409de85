// The journal of an in-place version (update_mode in_place), kept in the
// collection's RocksDB store: what an in-place insert changed in the
// version's decoupled layout, so that a reopen finds every insert that was
// acknowledged as applied. Edge lists are written out of place, so the old
// version of every list stays valid on its page until the journal entry
// that moves it is written (NAVIS's out-of-place structural updates, made
// crash-consistent here by the journal, where PipeANN and OdinANN update
// pages in place).
//
// Keys (store_keys.h), all per index version so that a merge's switch
// drops the old version's entries with a range delete:
//   'e' + version + page     journal sequence u64 LE, then for every list on
//                            the page: vertex u32 LE | slot u16 LE
//   'a' + version + vertex   id u64 LE | birth sequence u64 LE | PQ code:
//                            a vertex appended by an insert
//   'j' + version + vertex   page u32 LE | slot u16 LE (written before
//                            2026-12-07, one key per moved list; still read)
// A structural update writes its lists only to pages it takes whole (fresh
// or reused, hot copies included), so the lists it moves onto a page are
// all that page holds: one 'e' entry per written page describes it
// completely, about 22 lists of an insert in 1-3 keys where a key per list
// cost a tenth of an applier's CPU in RocksDB's memtable. A page reused
// later overwrites its entry; a list that moved away leaves a stale mention
// on its old page's entry, and the newest journal sequence naming a vertex
// says where it is (legacy 'j' entries are older than every 'e' entry).
// One batch per insert holds its page entries, its 'a' entry and the
// removal of the write's 'p' key.
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

// Adds the moved lists of an insert or a delete's repair to `batch`, as
// entries of the pages they moved to, stamped `seq`: a journal sequence
// greater than every earlier batch's of the version (the caller's counter,
// continued from LoadedJournal::max_seq after a reopen).
void JournalMoves(std::uint64_t version, std::uint64_t seq, std::span<const InPlaceListMove> moves,
                  rocksdb::WriteBatch* batch);
// Adds one insert's entries to `batch` (its moves and its appended vertex).
void JournalInsert(std::uint64_t version, std::uint64_t seq, const PreparedInPlaceInsert& insert,
                   VectorId id, std::uint64_t born, rocksdb::WriteBatch* batch);

// Removes every journal entry of `version` (a version that is no longer
// current).
void DropJournal(std::uint64_t version, rocksdb::WriteBatch* batch);

// A version's journal as read at open.
struct LoadedJournal {
  InPlaceRecovery recovery;                                  // moves, appended count and codes
  std::vector<std::pair<VectorId, std::uint64_t>> appended;  // id and birth, by vertex
  std::uint32_t first_appended = 0;  // the first appended vertex (the layout's vertex count)
  std::uint64_t max_seq = 0;         // the newest page entry's journal sequence (0: none)
  // Entries of versions other than the current one (a crash before their
  // removal): removed by the caller.
  std::vector<std::uint64_t> stale_versions;
};

// Reads `version`'s journal: each moved vertex once, at its newest place.
// Appended vertices must follow each other without a gap, their codes all
// of one size, and entries must have their sizes: Corruption otherwise (the
// graph checks that appended vertices start at its own vertex count).
Result<LoadedJournal> LoadJournal(rocksdb::DB* db, std::uint64_t version);

}  // namespace strata::collection

#endif  // STRATA_COLLECTION_IN_PLACE_JOURNAL_H_
