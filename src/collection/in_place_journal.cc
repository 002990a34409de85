#include "collection/in_place_journal.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "collection/store_keys.h"

namespace strata::collection {
namespace {

constexpr std::size_t kKeySize = 1 + 8 + 4;

std::string JournalKey(char prefix, std::uint64_t version, std::uint32_t vertex) {
  std::string key(kKeySize, '\0');
  key[0] = prefix;
  for (int i = 0; i < 8; ++i) key[1 + i] = static_cast<char>((version >> (56 - 8 * i)) & 0xff);
  for (int i = 0; i < 4; ++i) key[9 + i] = static_cast<char>((vertex >> (24 - 8 * i)) & 0xff);
  return key;
}

void ParseKey(std::string_view key, std::uint64_t* version, std::uint32_t* vertex) {
  *version = 0;
  *vertex = 0;
  for (int i = 0; i < 8; ++i) *version = (*version << 8) | static_cast<std::uint8_t>(key[1 + i]);
  for (int i = 0; i < 4; ++i) *vertex = (*vertex << 8) | static_cast<std::uint8_t>(key[9 + i]);
}

void PutLe(std::string* out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t GetLe(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(in[at + i]);
  return v;
}

std::string VersionPrefix(char prefix, std::uint64_t version) {
  return JournalKey(prefix, version, 0).substr(0, 9);
}

}  // namespace

void JournalMoves(std::uint64_t version, std::uint64_t seq, std::span<const InPlaceListMove> moves,
                  rocksdb::WriteBatch* batch) {
  // Grouped by page, in the order the pages were filled.
  std::vector<InPlaceListMove> by_page(moves.begin(), moves.end());
  std::stable_sort(
      by_page.begin(), by_page.end(),
      [](const InPlaceListMove& a, const InPlaceListMove& b) { return a.page < b.page; });
  std::string value;
  for (std::size_t i = 0; i < by_page.size();) {
    const std::uint32_t page = by_page[i].page;
    value.clear();
    PutLe(&value, seq, 8);
    for (; i < by_page.size() && by_page[i].page == page; ++i) {
      PutLe(&value, by_page[i].vertex, 4);
      PutLe(&value, by_page[i].slot, 2);
    }
    batch->Put(JournalKey(kJournalPagePrefix, version, page), value);
  }
}

void JournalInsert(std::uint64_t version, std::uint64_t seq, const PreparedInPlaceInsert& insert,
                   VectorId id, std::uint64_t born, rocksdb::WriteBatch* batch) {
  JournalMoves(version, seq, insert.moves, batch);
  std::string value;
  PutLe(&value, id, 8);
  PutLe(&value, born, 8);
  value.append(reinterpret_cast<const char*>(insert.code.data()), insert.code.size());
  batch->Put(JournalKey(kJournalAppendPrefix, version, insert.vertex), value);
}

void DropJournal(std::uint64_t version, rocksdb::WriteBatch* batch) {
  for (char prefix : {kJournalPagePrefix, kJournalMovePrefix, kJournalAppendPrefix}) {
    batch->DeleteRange(VersionPrefix(prefix, version), VersionPrefix(prefix, version + 1));
  }
}

Result<LoadedJournal> LoadJournal(rocksdb::DB* db, std::uint64_t version) {
  LoadedJournal out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  std::uint64_t last_stale = 0;
  auto stale = [&](std::uint64_t v) {
    if (v != last_stale) out.stale_versions.push_back(v);
    last_stale = v;
  };
  // Each moved vertex's newest place, by vertex: rank 0 none, 1 a legacy
  // 'j' entry, else 2 + the page entry's journal sequence.
  struct Place {
    std::uint64_t rank = 0;
    std::uint32_t page = 0;
    std::uint16_t slot = 0;
  };
  std::vector<Place> places;
  auto offer = [&](std::uint32_t vertex, std::uint64_t rank, std::uint32_t page,
                   std::uint16_t slot) {
    if (vertex >= places.size())
      places.resize(std::max<std::size_t>(vertex + 1, places.size() * 2));
    if (rank > places[vertex].rank) places[vertex] = {rank, page, slot};
  };
  std::size_t code_size = 0;
  std::uint32_t next = 0;
  for (char prefix : {kJournalMovePrefix, kJournalPagePrefix, kJournalAppendPrefix}) {
    const std::string p(1, prefix);
    for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
      const std::string_view key = it->key().ToStringView();
      const std::string_view value = it->value().ToStringView();
      if (key.size() != kKeySize) {
        return Status::Corruption("collection: journal key of " + std::to_string(key.size()) +
                                  " bytes");
      }
      std::uint64_t v = 0;
      std::uint32_t at = 0;  // a vertex, or a page for 'e'
      ParseKey(key, &v, &at);
      if (v != version) {
        stale(v);
        continue;
      }
      if (prefix == kJournalMovePrefix) {
        if (value.size() != 6) {
          return Status::Corruption("collection: journal entry of vertex " + std::to_string(at) +
                                    ": bad size");
        }
        offer(at, 1, static_cast<std::uint32_t>(GetLe(value, 0, 4)),
              static_cast<std::uint16_t>(GetLe(value, 4, 2)));
        continue;
      }
      if (prefix == kJournalPagePrefix) {
        if (value.size() < 8 || (value.size() - 8) % 6 != 0) {
          return Status::Corruption("collection: journal entry of page " + std::to_string(at) +
                                    ": bad size");
        }
        const std::uint64_t seq = GetLe(value, 0, 8);
        out.max_seq = std::max(out.max_seq, seq);
        for (std::size_t e = 8; e < value.size(); e += 6) {
          offer(static_cast<std::uint32_t>(GetLe(value, e, 4)), 2 + seq, at,
                static_cast<std::uint16_t>(GetLe(value, e + 4, 2)));
        }
        continue;
      }
      const std::string where = "collection: journal entry of vertex " + std::to_string(at);
      if (value.size() <= 16) return Status::Corruption(where + ": bad size");
      if (out.appended.empty()) {
        code_size = value.size() - 16;
        out.first_appended = at;
        next = at;
      }
      if (at != next || value.size() - 16 != code_size) {
        return Status::Corruption(where + ": appended vertices leave a gap or differ in code size");
      }
      ++next;
      out.appended.emplace_back(GetLe(value, 0, 8), GetLe(value, 8, 8));
      out.recovery.codes.insert(out.recovery.codes.end(),
                                reinterpret_cast<const std::uint8_t*>(value.data()) + 16,
                                reinterpret_cast<const std::uint8_t*>(value.data()) + value.size());
    }
    if (!it->status().ok()) {
      return Status::IOError("collection: reading the journal: " + it->status().ToString());
    }
  }
  for (std::size_t vertex = 0; vertex < places.size(); ++vertex) {
    const Place& p = places[vertex];
    if (p.rank != 0)
      out.recovery.moves.push_back({static_cast<std::uint32_t>(vertex), p.page, p.slot});
  }
  out.recovery.appended = static_cast<std::uint32_t>(out.appended.size());
  return out;
}

}  // namespace strata::collection
