// The expected-state model of collection_crash_harness (crash_model.h): the
// state file, parsing and applying batches, recall against the model.
#include "crash_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

namespace strata::crash {

namespace fs = std::filesystem;

Status SaveModel(const Model& m, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << m.next_id << ' ' << m.next_batch << '\n';
    for (const auto& [id, ver] : m.live) out << "L " << id << ' ' << ver << '\n';
    for (const auto& [id, ver] : m.dead) out << "X " << id << ' ' << ver << '\n';
    if (!out) return Status::IOError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status::IOError("rename " + tmp + ": " + ec.message());
  return Status::OK();
}

Result<Model> LoadModel(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read state file " + path);
  Model m;
  if (!(in >> m.next_id >> m.next_batch)) return Status::Corruption("bad state file " + path);
  std::string tag;
  VectorId id;
  std::uint64_t ver;
  while (in >> tag >> id >> ver) {
    if (tag == "L") {
      m.live[id] = ver;
    } else if (tag == "X") {
      m.dead[id] = ver;
    } else {
      return Status::Corruption("bad state file line tag " + tag);
    }
  }
  return m;
}

bool ParseBatch(const std::string& line, bool intent, Batch* b, std::uint64_t* existed) {
  std::istringstream in(line);
  std::string tag, kind;
  in >> tag >> b->no;
  if (intent) {
    std::string flag;
    in >> kind >> flag;
    b->crosses = flag == "T";
  } else {
    kind = tag;
    if (kind == "D") in >> *existed;
  }
  if (!in || kind.size() != 1) return false;
  b->kind = kind[0];
  std::string item;
  while (in >> item) {
    if (b->kind == 'U') {
      const auto colon = item.find(':');
      if (colon == std::string::npos) return false;
      b->items.emplace_back(std::stoull(item.substr(0, colon)),
                            std::stoull(item.substr(colon + 1)));
    } else {
      b->items.emplace_back(std::stoull(item), 0);
    }
  }
  return true;
}

void ApplyBatch(Model* m, const Batch& b) {
  for (const auto& [id, ver] : b.items) {
    if (b.kind == 'U') {
      m->live[id] = ver;
      m->dead.erase(id);
      m->dead_in.erase(id);
      m->next_id = std::max(m->next_id, id < kAbsentIdBase ? id + 1 : m->next_id);
    } else if (b.kind == 'D') {
      auto it = m->live.find(id);
      if (it == m->live.end()) continue;
      m->dead[id] = it->second;
      m->dead_in[id] = b.no;
      m->live.erase(it);
    }
  }
}

std::string Describe(const Batch& b) {
  std::string s = std::string(1, b.kind) + " batch " + std::to_string(b.no);
  if (b.kind != 'M') s += " (" + std::to_string(b.items.size()) + " ids)";
  return s;
}

double Recall(const std::vector<std::vector<SearchHit>>& results,
              const std::vector<std::vector<float>>& queries, const Model& m) {
  std::vector<std::pair<VectorId, std::vector<float>>> base;
  base.reserve(m.live.size());
  for (const auto& [id, ver] : m.live) base.emplace_back(id, MakeVector(id, ver));
  double hit = 0, total = 0;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    std::vector<std::pair<float, VectorId>> d;
    d.reserve(base.size());
    for (const auto& [id, v] : base) d.emplace_back(L2(queries[q].data(), v.data()), id);
    const std::size_t k = std::min<std::size_t>(kK, d.size());
    std::partial_sort(d.begin(), d.begin() + k, d.end());
    std::unordered_set<VectorId> gt;
    for (std::size_t i = 0; i < k; ++i) gt.insert(d[i].second);
    for (const SearchHit& h : results[q]) hit += gt.count(h.id);
    total += k;
  }
  return total == 0 ? 1.0 : hit / total;
}

}  // namespace strata::crash
