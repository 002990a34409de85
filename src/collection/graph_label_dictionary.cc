#include "collection/graph_label_dictionary.h"

#include <memory>
#include <mutex>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "collection/store_keys.h"

namespace strata::collection {
namespace {

std::string LabelKey(std::string_view keyword) {
  std::string key(1, kGraphLabelPrefix);
  key.append(keyword);
  return key;
}

std::string EncodeLabel(std::uint32_t label) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((label >> (8 * i)) & 0xff);
  return out;
}

}  // namespace

Status GraphLabelDictionary::Load(rocksdb::DB* db) {
  std::unordered_map<std::string, std::uint32_t> labels;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  const std::string prefix(1, kGraphLabelPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const std::string_view value = it->value().ToStringView();
    if (value.size() != 4) {
      return Status::Corruption("collection store: graph label entry of " +
                                std::to_string(value.size()) + " bytes");
    }
    std::uint32_t label = 0;
    for (int i = 3; i >= 0; --i) label = label << 8 | static_cast<std::uint8_t>(value[i]);
    labels.emplace(std::string(it->key().ToStringView().substr(1)), label);
  }
  if (!it->status().ok()) {
    return Status::IOError("collection: reading graph labels: " + it->status().ToString());
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  labels_ = std::move(labels);
  return Status::OK();
}

std::optional<std::uint32_t> GraphLabelDictionary::Find(std::string_view keyword) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = labels_.find(std::string(keyword));
  if (it == labels_.end()) return std::nullopt;
  return it->second;
}

Status GraphLabelDictionary::Assign(rocksdb::DB* db, std::span<const std::string> keywords,
                                    std::uint32_t max_labels) {
  std::vector<std::pair<std::string, std::uint32_t>> fresh;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    std::uint32_t next = static_cast<std::uint32_t>(labels_.size());
    std::unordered_map<std::string_view, bool> seen;
    for (const std::string& k : keywords) {
      if (labels_.count(k) != 0 || !seen.emplace(k, true).second) continue;
      if (next >= max_labels) {
        return Status::InvalidArgument("graph_label_field: more than " +
                                       std::to_string(max_labels) + " distinct keywords");
      }
      fresh.emplace_back(k, next++);
    }
  }
  if (fresh.empty()) return Status::OK();
  rocksdb::WriteBatch batch;
  for (const auto& [k, label] : fresh) batch.Put(LabelKey(k), EncodeLabel(label));
  rocksdb::WriteOptions sync;
  sync.sync = true;  // an index built with these labels may be switched to next
  const rocksdb::Status s = db->Write(sync, &batch);
  if (!s.ok()) return Status::IOError("collection: storing graph labels: " + s.ToString());
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (auto& [k, label] : fresh) labels_.emplace(std::move(k), label);
  return Status::OK();
}

std::size_t GraphLabelDictionary::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return labels_.size();
}

}  // namespace strata::collection
