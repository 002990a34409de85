// The collection's payload index (filter/payload_index.h): its field list
// stored in RocksDB ('m' "payload_index", a JSON array of {path, type}),
// rebuilt from the stored payloads at open and when a field is added.
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "collection/collection_impl.h"
#include "collection/store_keys.h"

namespace strata {
namespace {

Result<std::vector<PayloadFieldSpec>> FieldsFromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) {
    return Status::Corruption("collection: the stored payload index list is not a JSON array");
  }
  std::vector<PayloadFieldSpec> out;
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("path") || !e["path"].is_string() || !e.contains("type") ||
        !e["type"].is_string()) {
      return Status::Corruption("collection: a stored payload index entry lacks path or type");
    }
    PayloadFieldSpec f;
    f.path = e["path"].get<std::string>();
    auto type = ParsePayloadFieldType(e["type"].get<std::string>());
    if (!type.ok()) return Status::Corruption("collection: " + std::string(type.status().message()));
    f.type = *type;
    out.push_back(std::move(f));
  }
  return out;
}

// Adds `f` to `fields` unless there; InvalidArgument for a path indexed
// with another type.
Result<bool> AddField(const PayloadFieldSpec& f, std::vector<PayloadFieldSpec>* fields) {
  STRATA_RETURN_IF_ERROR(CheckPayloadPath(f.path));
  for (const PayloadFieldSpec& have : *fields) {
    if (have.path != f.path) continue;
    if (have.type == f.type) return false;
    return Status::InvalidArgument("payload index: field '" + f.path + "' is indexed as " +
                                   std::string(PayloadFieldTypeName(have.type)) + ", not " +
                                   std::string(PayloadFieldTypeName(f.type)));
  }
  fields->push_back(f);
  return true;
}

}  // namespace

Status Collection::Impl::StorePayloadFields(const std::vector<PayloadFieldSpec>& fields) {
  nlohmann::json j = nlohmann::json::array();
  for (const PayloadFieldSpec& f : fields) {
    j.push_back({{"path", f.path}, {"type", std::string(PayloadFieldTypeName(f.type))}});
  }
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(db->Put(sync, collection::MetaKey("payload_index"), j.dump()),
                   "collection: storing the payload index list");
}

Result<std::shared_ptr<filter::PayloadIndex>> Collection::Impl::BuildPayloadIndex(
    std::vector<PayloadFieldSpec> fields) const {
  auto index = std::make_shared<filter::PayloadIndex>(std::move(fields));
  if (index->fields().empty()) return index;
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;  // one pass over every record
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  const std::string prefix(1, collection::kVectorPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    STRATA_ASSIGN_OR_RETURN(VectorId id, collection::ParseIdKey(it->key().ToStringView(), prefix[0]));
    STRATA_ASSIGN_OR_RETURN(auto rec, collection::DecodeRecord(it->value().ToStringView(), vector_bytes));
    index->Set(id, rec.payload);
  }
  STRATA_RETURN_IF_ERROR(FromRocks(it->status(), "collection: indexing payloads"));
  return index;
}

Status Collection::Impl::OpenPayloadIndex(const std::vector<PayloadFieldSpec>& given) {
  std::vector<PayloadFieldSpec> fields;
  std::string text;
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), collection::MetaKey("payload_index"), &text);
  if (s.ok()) {
    STRATA_ASSIGN_OR_RETURN(fields, FieldsFromJson(text));
  } else if (!s.IsNotFound()) {
    return FromRocks(s, "collection: reading the payload index list");
  }
  bool changed = false;
  for (const PayloadFieldSpec& f : given) {
    STRATA_ASSIGN_OR_RETURN(bool added, AddField(f, &fields));
    changed = changed || added;
  }
  if (changed) STRATA_RETURN_IF_ERROR(StorePayloadFields(fields));
  STRATA_ASSIGN_OR_RETURN(payload_index, BuildPayloadIndex(std::move(fields)));
  return Status::OK();
}

Status Collection::CreatePayloadIndex(const PayloadFieldSpec& field) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.write_mu);
  std::vector<PayloadFieldSpec> fields = m.payload_index->fields();
  STRATA_ASSIGN_OR_RETURN(bool added, AddField(field, &fields));
  if (!added) return Status::OK();
  // Writes wait on write_mu, so the index sees every stored payload.
  STRATA_ASSIGN_OR_RETURN(auto index, m.BuildPayloadIndex(fields));
  STRATA_RETURN_IF_ERROR(m.StorePayloadFields(fields));
  std::lock_guard<std::mutex> state_lock(m.state_mu);
  m.payload_index = std::move(index);
  return Status::OK();
}

int Collection::Impl::LabelFieldPosition(const filter::PayloadIndex& index) const {
  if (stored.graph_label_field.empty()) return -1;
  const auto& fields = index.fields();
  for (std::size_t f = 0; f < fields.size(); ++f) {
    if (fields[f].path == stored.graph_label_field) {
      return fields[f].type == PayloadFieldType::kInteger ||
                     fields[f].type == PayloadFieldType::kKeyword
                 ? static_cast<int>(f)
                 : -1;
    }
  }
  return -1;
}

Result<LabelSets> Collection::Impl::GraphLabels(const filter::PayloadIndex& index,
                                                std::span<const VectorId> ids) {
  LabelSets out;
  const int field = LabelFieldPosition(index);
  const bool keyword =
      field >= 0 && index.fields()[static_cast<std::size_t>(field)].type == PayloadFieldType::kKeyword;
  std::vector<std::string> words;
  if (keyword) {
    // Keywords first seen here get their labels (stored) before any row
    // refers to them.
    std::vector<std::string> unseen;
    std::unordered_set<std::string> listed;
    for (const VectorId id : ids) {
      words.clear();
      index.AppendStrings(id, static_cast<std::size_t>(field), &words);
      for (std::string& w : words) {
        if (!graph_keywords.Find(w) && listed.insert(w).second) unseen.push_back(std::move(w));
      }
    }
    STRATA_RETURN_IF_ERROR(graph_keywords.Assign(db.get(), unseen, Index::kNoLabelStart));
  }
  out.offsets.reserve(ids.size() + 1);
  std::vector<std::int64_t> values;
  std::vector<std::uint32_t> row;
  for (const VectorId id : ids) {
    row.clear();
    if (keyword) {
      words.clear();
      index.AppendStrings(id, static_cast<std::size_t>(field), &words);
      for (const std::string& w : words) {
        // A keyword written after the pass above has no label yet: the
        // row goes without it (the walk still checks the filter itself).
        if (auto label = graph_keywords.Find(w)) row.push_back(*label);
      }
    } else {
      values.clear();
      if (field >= 0) index.AppendIntegers(id, static_cast<std::size_t>(field), &values);
      for (const std::int64_t v : values) {
        if (v >= 0 && v < static_cast<std::int64_t>(Index::kNoLabelStart)) {
          row.push_back(static_cast<std::uint32_t>(v));
        }
      }
    }
    out.AddRow(row);
  }
  return out;
}

}  // namespace strata
