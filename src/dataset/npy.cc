#include "dataset/npy.h"

#include <cctype>
#include <cstring>
#include <optional>

#include "dataset/file_util.h"

namespace strata::dataset_internal {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
// numpy itself refuses headers above 10 KB unless asked to; anything near this
// bound is a corrupt length field, not a real header.
constexpr std::uint64_t kMaxHeaderText = 1 << 20;

// A recursive-descent reader for the Python literal subset numpy writes:
// dicts, strings, True/False/None, integers (with an optional Python 2 'L'),
// tuples and lists. Values we do not need are parsed and dropped.
class DictParser {
 public:
  DictParser(std::string_view path, std::string_view text) : path_(path), text_(text) {}

  Result<NpyHeader> Parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    SkipSpace();
    if (!Eat('{')) return Error("header does not start with '{'");
    for (;;) {
      SkipSpace();
      if (Eat('}')) break;
      std::string key;
      if (!ParseString(&key)) return Error("expected a quoted key");
      SkipSpace();
      if (!Eat(':')) return Error("expected ':' after key '" + key + "'");
      SkipSpace();
      if (key == "descr") {
        if (Peek() == '[') {
          // A list descr is a structured (record) dtype.
          const std::size_t start = pos_;
          if (!SkipValue()) return Error("malformed descr");
          h.descr = std::string(text_.substr(start, pos_ - start));
        } else if (!ParseString(&h.descr)) {
          return Error("descr is not a string");
        }
        have_descr = true;
      } else if (key == "fortran_order") {
        if (EatWord("True")) {
          h.fortran_order = true;
        } else if (EatWord("False")) {
          h.fortran_order = false;
        } else {
          return Error("fortran_order is not True or False");
        }
        have_order = true;
      } else if (key == "shape") {
        if (!ParseShape(&h.shape)) return Error("shape is not a tuple of non-negative integers");
        have_shape = true;
      } else if (!SkipValue()) {
        return Error("malformed value for key '" + key + "'");
      }
      SkipSpace();
      if (Eat(',')) continue;
      SkipSpace();
      if (Eat('}')) break;
      return Error("expected ',' or '}' in header dict");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the header dict");
    if (!have_descr || !have_order || !have_shape) {
      return Error("header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    return h;
  }

 private:
  Status Error(const std::string& what) const {
    return CorruptionAt(
        path_, "malformed npy header: " + what + " (at character " + std::to_string(pos_) + ")");
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool EatWord(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool ParseString(std::string* out) {
    const char q = Peek();
    if (q != '\'' && q != '"') return false;
    ++pos_;
    out->clear();
    while (pos_ < text_.size() && text_[pos_] != q) {
      if (text_[pos_] == '\\') ++pos_;  // escapes never occur in dtypes; keep the next char
      if (pos_ < text_.size()) out->push_back(text_[pos_++]);
    }
    return Eat(q);
  }
  bool ParseUint(std::uint64_t* out) {
    if (!std::isdigit(static_cast<unsigned char>(Peek()))) return false;
    std::uint64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(Peek()))) {
      if (__builtin_mul_overflow(v, 10u, &v) ||
          __builtin_add_overflow(v, static_cast<std::uint64_t>(Peek() - '0'), &v)) {
        return false;
      }
      ++pos_;
    }
    Eat('L');  // Python 2 long suffix in old files
    *out = v;
    return true;
  }
  bool ParseShape(std::vector<std::uint64_t>* shape) {
    if (!Eat('(')) return false;
    for (;;) {
      SkipSpace();
      if (Eat(')')) return true;
      std::uint64_t v;
      if (!ParseUint(&v)) return false;
      shape->push_back(v);
      SkipSpace();
      if (Eat(',')) continue;
      SkipSpace();
      return Eat(')');
    }
  }
  // Skips one literal of any supported kind (depth-limited).
  bool SkipValue(int depth = 0) {
    if (depth > 32) return false;
    SkipSpace();
    const char c = Peek();
    if (c == '\'' || c == '"') {
      std::string ignored;
      return ParseString(&ignored);
    }
    if (c == '(' || c == '[' || c == '{') {
      const char close = c == '(' ? ')' : (c == '[' ? ']' : '}');
      ++pos_;
      for (;;) {
        SkipSpace();
        if (Eat(close)) return true;
        if (!SkipValue(depth + 1)) return false;
        SkipSpace();
        if (close == '}' && Eat(':')) {
          if (!SkipValue(depth + 1)) return false;
          SkipSpace();
        }
        if (Eat(',')) continue;
        SkipSpace();
        return Eat(close);
      }
    }
    if (EatWord("True") || EatWord("False") || EatWord("None")) return true;
    Eat('-');
    std::uint64_t ignored;
    return ParseUint(&ignored);
  }

  std::string_view path_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<NpyHeader> ParseNpyDict(std::string_view path, std::string_view text) {
  return DictParser(path, text).Parse();
}

Result<NpyHeader> ReadNpyHeader(const InputFile& file) {
  const std::string& path = file.path();
  if (file.size() < 10) {
    return CorruptionAt(
        path, "file is " + std::to_string(file.size()) + " bytes, too short for an npy header");
  }
  unsigned char pre[12] = {};
  STRATA_RETURN_IF_ERROR(file.ReadAt(0, file.size() >= 12 ? 12 : 10, pre));
  if (std::memcmp(pre, kMagic, kMagicLen) != 0) {
    return CorruptionAt(path, "not an npy file (missing \\x93NUMPY magic)");
  }
  const int major = pre[6];
  const int minor = pre[7];
  std::uint64_t text_len = 0;
  std::uint64_t preamble = 0;
  if (major == 1) {
    text_len = static_cast<std::uint64_t>(pre[8]) | (static_cast<std::uint64_t>(pre[9]) << 8);
    preamble = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) return CorruptionAt(path, "truncated npy header");
    text_len = LoadU32(pre + 8);
    preamble = 12;
  } else {
    return NotSupportedAt(path, "npy format version " + std::to_string(major) + "." +
                                    std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  if (text_len > kMaxHeaderText) {
    return CorruptionAt(path, "npy header length " + std::to_string(text_len) + " is implausible");
  }
  if (preamble + text_len > file.size()) {
    return CorruptionAt(path, "truncated npy header (header needs " +
                                  std::to_string(preamble + text_len) + " bytes, file has " +
                                  std::to_string(file.size()) + ")");
  }
  std::string text(static_cast<std::size_t>(text_len), '\0');
  STRATA_RETURN_IF_ERROR(file.ReadAt(preamble, text.size(), text.data()));
  STRATA_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyDict(path, text));
  h.major = major;
  h.minor = minor;
  h.data_offset = preamble + text_len;
  return h;
}

Result<ElementType> NpyElementType(std::string_view path, std::string_view descr) {
  const std::string d(descr);
  if (d.size() == 3 && (d[0] == '<' || d[0] == '=' || d[0] == '|' || d[0] == '>')) {
    const std::string_view kind = std::string_view(d).substr(1);
    // One-byte types have no byte order, so every prefix is fine for them.
    if (kind == "u1") return ElementType::kUint8;
    if (kind == "i1") return ElementType::kInt8;
    if (d[0] == '>' && (kind == "f4" || kind == "f2")) {
      return NotSupportedAt(path, "big-endian npy data (dtype '" + d +
                                      "'); convert with arr.astype('<" + std::string(kind) + "')");
    }
    // '=' is native order, which is little-endian on every supported platform.
    if (d[0] != '|') {
      if (kind == "f4") return ElementType::kFloat32;
      if (kind == "f2") return ElementType::kFloat16;
    }
  }
  if (d == "u1" || d == "B") return ElementType::kUint8;
  if (d == "i1" || d == "b") return ElementType::kInt8;
  if (!d.empty() && d[0] == '[') {
    return NotSupportedAt(path, "structured npy dtype " + d +
                                    " (expected a plain float32, float16, uint8 or int8 array)");
  }
  return NotSupportedAt(path, "npy dtype '" + d +
                                  "' is not supported (expected float32 '<f4', float16 '<f2', "
                                  "uint8 '|u1' or int8 '|i1'; convert with arr.astype)");
}

std::string_view NpyDescr(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return "<f4";
    case ElementType::kFloat16:
      return "<f2";
    case ElementType::kUint8:
      return "|u1";
    case ElementType::kInt8:
      return "|i1";
    default:
      return "";
  }
}

std::string FormatNpyHeader(ElementType type, std::uint64_t rows, std::uint32_t dim) {
  std::string dict = "{'descr': '" + std::string(NpyDescr(type)) +
                     "', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                     std::to_string(dim) + "), }";
  // Preamble: magic, version 1.0, u16 text length; text padded with spaces to
  // the fixed total and terminated by '\n' (the longest dict is ~85 chars).
  const std::size_t text_len = kNpyWriteHeaderBytes - 10;
  dict.resize(text_len - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(text_len & 0xff));
  out.push_back(static_cast<char>(text_len >> 8));
  out += dict;
  return out;
}

}  // namespace strata::dataset_internal
