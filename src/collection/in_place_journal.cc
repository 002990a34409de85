#include "collection/in_place_journal.h"

#include <memory>

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

void JournalMoves(std::uint64_t version, std::span<const InPlaceListMove> moves,
                  rocksdb::WriteBatch* batch) {
  std::string value;
  for (const InPlaceListMove& m : moves) {
    value.clear();
    PutLe(&value, m.page, 4);
    PutLe(&value, m.slot, 2);
    batch->Put(JournalKey(kJournalMovePrefix, version, m.vertex), value);
  }
}

void JournalInsert(std::uint64_t version, const PreparedInPlaceInsert& insert, VectorId id,
                   std::uint64_t born, rocksdb::WriteBatch* batch) {
  JournalMoves(version, insert.moves, batch);
  std::string value;
  PutLe(&value, id, 8);
  PutLe(&value, born, 8);
  value.append(reinterpret_cast<const char*>(insert.code.data()), insert.code.size());
  batch->Put(JournalKey(kJournalAppendPrefix, version, insert.vertex), value);
}

void DropJournal(std::uint64_t version, rocksdb::WriteBatch* batch) {
  for (char prefix : {kJournalMovePrefix, kJournalAppendPrefix}) {
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
  for (char prefix : {kJournalMovePrefix, kJournalAppendPrefix}) {
    const std::string p(1, prefix);
    std::size_t code_size = 0;
    std::uint32_t next = 0;
    for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
      const std::string_view key = it->key().ToStringView();
      const std::string_view value = it->value().ToStringView();
      if (key.size() != kKeySize) {
        return Status::Corruption("collection: journal key of " + std::to_string(key.size()) +
                                  " bytes");
      }
      std::uint64_t v = 0;
      std::uint32_t vertex = 0;
      ParseKey(key, &v, &vertex);
      if (v != version) {
        stale(v);
        continue;
      }
      const std::string where = "collection: journal entry of vertex " + std::to_string(vertex);
      if (prefix == kJournalMovePrefix) {
        if (value.size() != 6) return Status::Corruption(where + ": bad size");
        out.recovery.moves.push_back({vertex, static_cast<std::uint32_t>(GetLe(value, 0, 4)),
                                      static_cast<std::uint16_t>(GetLe(value, 4, 2))});
        continue;
      }
      if (value.size() <= 16) return Status::Corruption(where + ": bad size");
      if (out.appended.empty()) {
        code_size = value.size() - 16;
        out.first_appended = vertex;
        next = vertex;
      }
      if (vertex != next || value.size() - 16 != code_size) {
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
  out.recovery.appended = static_cast<std::uint32_t>(out.appended.size());
  return out;
}

}  // namespace strata::collection
