#include "base/parse.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace strata {
namespace {

std::vector<std::string_view> SplitComma(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

Status BadItem(std::string_view text, std::string_view item, std::string_view what) {
  return Status::InvalidArgument("cannot parse '" + std::string(item) + "' in '" +
                                 std::string(text) + "' as " + std::string(what));
}

}  // namespace

Result<std::vector<std::uint64_t>> ParseUintList(std::string_view text) {
  std::vector<std::uint64_t> out;
  for (std::string_view item : SplitComma(text)) {
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      return BadItem(text, item, "a non-negative integer");
    }
    out.push_back(v);
  }
  return out;
}

Result<std::vector<double>> ParseDoubleList(std::string_view text) {
  std::vector<double> out;
  for (std::string_view item : SplitComma(text)) {
    std::string s(item);
    char* end = nullptr;
    const double v = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
      return BadItem(text, item, "a finite number");
    }
    out.push_back(v);
  }
  return out;
}

Result<std::uint64_t> ParseByteSize(std::string_view text) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc()) return BadItem(text, text, "a byte size");
  std::string suffix(ptr, text.data() + text.size());
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (suffix.size() >= 2 && suffix.substr(suffix.size() - 2) == "ib") suffix.resize(suffix.size() - 2);
  else if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();
  int shift = 0;
  if (suffix.empty()) shift = 0;
  else if (suffix == "k") shift = 10;
  else if (suffix == "m") shift = 20;
  else if (suffix == "g") shift = 30;
  else if (suffix == "t") shift = 40;
  else return BadItem(text, text, "a byte size (units K, M, G, T)");
  if (shift > 0 && v > (UINT64_MAX >> shift)) return BadItem(text, text, "a byte size (overflow)");
  return v << shift;
}

}  // namespace strata
