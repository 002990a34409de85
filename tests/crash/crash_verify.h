// Verification after a kill (collection_crash_harness): checks the reopened
// collection against the model (the Collection's contract, listed in
// crash_harness.cc), resolves the batch that was in flight, and brings a
// diverging collection back to the model so that later rounds start clean.
#ifndef STRATA_TESTS_CRASH_CRASH_VERIFY_H_
#define STRATA_TESTS_CRASH_CRASH_VERIFY_H_

#include <cstddef>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "crash_model.h"
#include "strata/collection.h"

namespace strata::crash {

// Problems of one round, grouped so that a systematic loss prints compactly.
class Problems {
 public:
  void Add(const std::string& category, const std::string& example) {
    auto& [count, examples] = groups_[category];
    ++count;
    if (examples.size() < 5) examples.push_back(example);
  }
  bool empty() const { return groups_.empty(); }
  std::string ToString() const {
    std::string s;
    for (const auto& [category, g] : groups_) {
      s += "    " + category + ": " + std::to_string(g.first) + "\n";
      for (const auto& e : g.second) s += "      " + e + "\n";
    }
    return s;
  }

 private:
  std::map<std::string, std::pair<std::size_t, std::vector<std::string>>> groups_;
};

// Checks the reopened collection against the model and resolves the batch in
// flight by what it finds. Returns recall@10 (or -1 if it could not search).
// `outcome` says what became of the batch in flight (applied, not applied,
// partial, no-op, merge or none); the model takes it on when it was applied.
double Verify(Collection& c, Model* m, const std::optional<Batch>& in_flight, std::mt19937_64& rng,
              Problems* p, std::string* outcome);

// After a failed round: rewrites the ids whose state differs from the model
// so that later rounds test from a known state again. The in-flight batch's
// ids outside the model may exist too and are checked.
Status Repair(Collection& c, const Model& m, const std::optional<Batch>& in_flight);

}  // namespace strata::crash

#endif  // STRATA_TESTS_CRASH_CRASH_VERIFY_H_
