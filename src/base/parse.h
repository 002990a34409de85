// Parsing of user-supplied numbers and lists ("1,4,16", "2G") with clear errors.
#ifndef STRATA_BASE_PARSE_H_
#define STRATA_BASE_PARSE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/result.h"

namespace strata {

// "10,20,30" -> {10, 20, 30}. Rejects empty items, signs, junk and overflow.
Result<std::vector<std::uint64_t>> ParseUintList(std::string_view text);
// "0.5,0.9" -> {0.5, 0.9}. Rejects NaN/Inf and junk.
Result<std::vector<double>> ParseDoubleList(std::string_view text);
// "4096", "64K", "2M", "2G", "1T" (binary units, case-insensitive, optional
// trailing 'B' or 'iB') -> bytes.
Result<std::uint64_t> ParseByteSize(std::string_view text);

}  // namespace strata

#endif  // STRATA_BASE_PARSE_H_
