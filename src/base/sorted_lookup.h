// Looking up many keys, given in ascending order, in a table sorted by
// distinct integer keys (a version's slot -> user id map, or its inverse).
#ifndef STRATA_BASE_SORTED_LOOKUP_H_
#define STRATA_BASE_SORTED_LOOKUP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>

namespace strata {

// Calls found(it) for each key of `keys` (ascending) present in [begin, end),
// whose key_of(element) are distinct unsigned integers in ascending order.
// Each key is searched for past the previous one's place, galloping (doubling
// steps, then a binary search within the last), so the table is read once,
// forward. Distinct ascending integers put key k at most k - key_of(*at)
// places past `at`, and exactly there when no integer in between is missing:
// keys drawn from a dense range are found with one probe each. That probe
// is a cache miss in a large table, so the place a key kLookahead further on
// would have in a dense range is prefetched: the misses overlap.
template <class It, class KeyOf, class Found>
void ForEachFoundAscending(It begin, It end, std::span<const std::uint64_t> keys, KeyOf key_of,
                           Found found) {
  constexpr std::size_t kLookahead = 16;
  It at = begin;
  const auto less = [&](const auto& e, std::uint64_t x) { return key_of(e) < x; };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint64_t key = keys[i];
    if (at == end) return;
    const std::uint64_t here = key_of(*at);
    if (i + kLookahead < keys.size() && keys[i + kLookahead] > here) {
      const auto ahead = static_cast<std::uint64_t>(end - at - 1);
      __builtin_prefetch(&*(at + static_cast<std::ptrdiff_t>(
                                     std::min(ahead, keys[i + kLookahead] - here))));
    }
    if (here > key) continue;  // not in the table
    const auto left = static_cast<std::uint64_t>(end - at - 1);
    const It far = at + static_cast<std::ptrdiff_t>(std::min(left, key - here));
    if (key_of(*far) == key) {
      at = far;
      found(at);
      continue;
    }
    const It stop = far + 1;
    std::ptrdiff_t step = 1;
    It lo = at;
    while (step < stop - at && key_of(at[step]) < key) {
      lo = at + step;
      step *= 2;
    }
    at = std::lower_bound(lo, at + std::min(step, stop - at), key, less);
    if (at == end) return;
    if (key_of(*at) == key) found(at);
  }
}

}  // namespace strata

#endif  // STRATA_BASE_SORTED_LOOKUP_H_
