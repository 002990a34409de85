#include "collection_io.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <string_view>

#include "strata/dataset.h"

namespace strata::cli {
namespace {

Status Bad(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path + ": " + what);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const std::size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open for reading");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::IOError(path + ": read failed");
  return data;
}

// The value of `key` in a numpy header dict ("{'descr': '<i8', ...}"), as
// the raw text up to the next top-level ',' or '}' (a tuple kept whole).
Result<std::string> NpyField(const std::string& path, std::string_view header,
                             std::string_view key) {
  std::size_t pos = std::string_view::npos;
  for (const char q : {'\'', '"'}) {
    const std::string quoted = std::string(1, q) + std::string(key) + std::string(1, q);
    pos = header.find(quoted);
    if (pos != std::string_view::npos) {
      pos += quoted.size();
      break;
    }
  }
  if (pos == std::string_view::npos) {
    return Status::Corruption(path + ": npy header has no '" + std::string(key) + "'");
  }
  pos = header.find(':', pos);
  if (pos == std::string_view::npos) {
    return Status::Corruption(path + ": malformed npy header");
  }
  ++pos;
  int depth = 0;
  std::size_t end = pos;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return std::string(Trim(header.substr(pos, end - pos)));
}

// One column of integer ids from a .npy file (see ReadIdsFile).
Result<std::vector<VectorId>> ReadNpyIds(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string data, ReadWholeFile(path));
  if (data.size() < 10 || std::memcmp(data.data(), "\x93NUMPY", 6) != 0) {
    return Status::Corruption(path + ": not a .npy file (bad magic)");
  }
  const unsigned major = static_cast<unsigned char>(data[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) |
                 (static_cast<std::size_t>(static_cast<unsigned char>(data[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) return Status::Corruption(path + ": truncated npy header");
    for (int i = 0; i < 4; ++i) {
      header_len |= static_cast<std::size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    }
    header_start = 12;
  } else {
    return Status::NotSupported(path + ": npy format version " + std::to_string(major));
  }
  if (header_start + header_len > data.size()) {
    return Status::Corruption(path + ": truncated npy header");
  }
  const std::string_view header(data.data() + header_start, header_len);
  STRATA_ASSIGN_OR_RETURN(std::string descr, NpyField(path, header, "descr"));
  STRATA_ASSIGN_OR_RETURN(std::string shape_text, NpyField(path, header, "shape"));
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"')) {
    descr = descr.substr(1, descr.size() - 2);
  }
  // Little-endian (or native on this little-endian tool) 4- and 8-byte integers.
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '=' && descr[0] != '|') ||
      (descr[1] != 'i' && descr[1] != 'u') || (descr[2] != '4' && descr[2] != '8')) {
    return Status::NotSupported(path +
                                ": npy ids must be int64, uint64, int32 or uint32 "
                                "(little-endian), not '" +
                                descr + "'");
  }
  const bool is_signed = descr[1] == 'i';
  const std::size_t item = descr[2] == '8' ? 8 : 4;
  // shape: "(n,)", "(n, 1)" or "(1, n)".
  std::vector<std::uint64_t> shape;
  {
    std::string_view s = Trim(shape_text);
    if (s.size() < 2 || s.front() != '(' || s.back() != ')') {
      return Status::Corruption(path + ": malformed npy shape " + shape_text);
    }
    s = s.substr(1, s.size() - 2);
    while (!Trim(s).empty()) {
      const std::size_t comma = s.find(',');
      const std::string_view tok = Trim(s.substr(0, comma));
      std::uint64_t v = 0;
      auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (ec != std::errc() || p != tok.data() + tok.size()) {
        return Status::Corruption(path + ": malformed npy shape " + shape_text);
      }
      shape.push_back(v);
      if (comma == std::string_view::npos) break;
      s = s.substr(comma + 1);
    }
  }
  std::uint64_t n = 0;
  if (shape.size() == 1) {
    n = shape[0];
  } else if (shape.size() == 2 && (shape[1] == 1 || shape[0] == 1)) {
    n = shape[0] * shape[1];
  } else {
    return Bad(path,
               "npy ids must be one column (shape (n,), (n, 1) or (1, n)), not " + shape_text);
  }
  const std::size_t offset = header_start + header_len;
  if (n > (data.size() - offset) / item || data.size() - offset != n * item) {
    return Status::Corruption(path + ": file size " + std::to_string(data.size()) +
                              " does not match the npy shape " + shape_text);
  }
  std::vector<VectorId> ids(n);
  const auto* p = reinterpret_cast<const unsigned char*>(data.data() + offset);
  for (std::uint64_t i = 0; i < n; ++i, p += item) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < item; ++b) v |= static_cast<std::uint64_t>(p[b]) << (8 * b);
    if (is_signed) {
      const bool negative = item == 8 ? (v >> 63) != 0 : (v >> 31) != 0;
      if (negative) {
        const std::int64_t sv = item == 8
                                    ? static_cast<std::int64_t>(v)
                                    : static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
        return Bad(path,
                   "entry " + std::to_string(i) + " is the negative id " + std::to_string(sv));
      }
    }
    ids[i] = v;
  }
  return ids;
}

Result<std::vector<VectorId>> ReadTextIds(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string data, ReadWholeFile(path));
  std::vector<VectorId> ids;
  std::string_view rest(data);
  std::uint64_t line_no = 0;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = Trim(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    VectorId v = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec != std::errc() || p != line.data() + line.size()) {
      return Bad(path, "line " + std::to_string(line_no) + ": '" + std::string(line.substr(0, 40)) +
                           "' is not an id (an unsigned 64-bit decimal integer)");
    }
    ids.push_back(v);
  }
  return ids;
}

}  // namespace

Result<std::vector<VectorId>> ReadIdsFile(const std::string& path) {
  const std::string lower = Lower(path);
  auto ends_with = [&](std::string_view ext) {
    return lower.size() >= ext.size() &&
           lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (ends_with(".npy")) return ReadNpyIds(path);
  if (ends_with(".ibin") || ends_with(".ivecs")) {
    STRATA_ASSIGN_OR_RETURN(GroundTruth gt, ReadGroundTruth(path));
    if (gt.k != 1 && gt.num_queries != 1) {
      return Bad(path, "an ids file holds one column of ids; this one is " +
                           std::to_string(gt.num_queries) + " x " + std::to_string(gt.k));
    }
    return std::move(gt.ids);
  }
  return ReadTextIds(path);
}

PayloadReader::PayloadReader(std::string path, std::uint64_t lines)
    : path_(std::move(path)), lines_(lines), in_(path_, std::ios::binary) {}

Result<std::unique_ptr<PayloadReader>> PayloadReader::Open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open for reading");
  // Count lines in blocks (the file may be large).
  std::uint64_t lines = 0;
  char last = '\n';
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    lines += static_cast<std::uint64_t>(std::count(buf.data(), buf.data() + got, '\n'));
    last = buf[static_cast<std::size_t>(got) - 1];
  }
  if (in.bad()) return Status::IOError(path + ": read failed");
  if (last != '\n') ++lines;
  auto reader = std::unique_ptr<PayloadReader>(new PayloadReader(path, lines));
  if (!reader->in_) return Status::IOError(path + ": cannot open for reading");
  return reader;
}

Status PayloadReader::Next(std::uint64_t count, std::vector<std::string>* out) {
  out->resize(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string& line = (*out)[i];
    if (read_ >= lines_ || !std::getline(in_, line)) {
      return Status::OutOfRange(path_ + ": only " + std::to_string(read_) + " payload lines");
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++read_;
  }
  return Status::OK();
}

Result<PayloadFilter> ParseFilterArgument(const std::string& arg) {
  std::string text = arg;
  if (!text.empty() && text[0] == '@') {
    std::ifstream in(text.substr(1));
    if (!in) return Status::NotFound("--filter: cannot read " + text.substr(1));
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto parsed = PayloadFilter::Parse(text);
  if (!parsed.ok()) return parsed.status().WithContext("--filter");
  return std::move(*parsed);
}

std::string FormatBytes(std::uint64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  } else if (bytes < (1ull << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024);
  } else if (bytes < (1ull << 30)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", b / (1 << 20));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", b / (1 << 30));
  }
  return buf;
}

void PrintCollectionStats(const std::string& dir, const CollectionStats& s, std::FILE* out,
                          int indent) {
  auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::fprintf(out, "collection %s\n", dir.c_str());
  std::fprintf(out, "%*sdim %u, metric %s, element %s, index %s, updates %s\n", indent, "", s.dim,
               std::string(MetricName(s.metric)).c_str(),
               std::string(ElementTypeName(s.element_type)).c_str(), s.index_type.c_str(),
               std::string(UpdateModeName(s.update_mode)).c_str());
  if (s.update_mode == UpdateMode::kInPlace) {
    std::fprintf(out,
                 "%*sin place since open: %llu writes applied, %llu deletes repaired (%llu queued), "
                 "%llu compactions, %llu hot pages rewritten; edge pages %llu (%llu with lists); "
                 "%.1f MiB written by inserts, %.1f by repairs and compactions\n",
                 indent, "", u(s.in_place_inserts), u(s.in_place_repairs),
                 u(s.in_place_repairs_queued), u(s.in_place_compactions),
                 u(s.in_place_hot_pages_rewritten),
                 u(s.in_place_edge_pages), u(s.in_place_live_edge_pages),
                 static_cast<double>(s.in_place_insert_bytes_written) / (1 << 20),
                 static_cast<double>(s.in_place_upkeep_bytes_written) / (1 << 20));
  }
  std::fprintf(out, "%*slive %llu (indexed %llu, pending %llu, deleted slots %llu)\n", indent, "",
               u(s.live), u(s.indexed), u(s.pending), u(s.deleted));
  if (s.index_version == 0) {
    std::fprintf(out, "%*sindex: none yet (flat phase: exact scan)\n", indent, "");
  } else {
    std::fprintf(out, "%*sindex version %llu: %s\n", indent, "", u(s.index_version),
                 s.index_description.c_str());
  }
  std::fprintf(out, "%*smerges %llu this open%s", indent, "", u(s.merges),
               s.merging ? ", one running" : "");
  if (s.merges > 0) std::fprintf(out, ", last %.2f s", s.last_merge_seconds);
  if (s.first_build_seconds > 0) std::fprintf(out, "; first build %.2f s", s.first_build_seconds);
  std::fprintf(out, "\n%*sRAM %s, disk %s, last sequence %llu\n", indent, "",
               FormatBytes(s.ram_bytes).c_str(), FormatBytes(s.disk_bytes).c_str(),
               u(s.last_sequence));
  std::string cpus;
  for (unsigned c : s.background_cpus) {
    if (!cpus.empty()) cpus += ',';
    cpus += std::to_string(c);
  }
  std::fprintf(out, "%*sbackground threads on CPUs %s\n", indent, "",
               cpus.empty() ? "any" : cpus.c_str());
  if (!s.payload_fields.empty()) {
    std::string fields;
    for (const PayloadFieldSpec& f : s.payload_fields) {
      if (!fields.empty()) fields += ", ";
      fields += f.path + ":" + std::string(PayloadFieldTypeName(f.type));
    }
    std::fprintf(out, "%*spayload index %s (%s in RAM)\n", indent, "", fields.c_str(),
                 FormatBytes(s.payload_index_bytes).c_str());
  }
}

nlohmann::json CollectionStatsToJson(const CollectionStats& s) {
  return {{"dim", s.dim},
          {"metric", std::string(MetricName(s.metric))},
          {"element_type", std::string(ElementTypeName(s.element_type))},
          {"index_type", s.index_type},
          {"update_mode", std::string(UpdateModeName(s.update_mode))},
          {"in_place_inserts", s.in_place_inserts},
          {"in_place_repairs", s.in_place_repairs},
          {"in_place_repairs_queued", s.in_place_repairs_queued},
          {"in_place_compactions", s.in_place_compactions},
          {"in_place_hot_pages_rewritten", s.in_place_hot_pages_rewritten},
          {"in_place_insert_bytes_written", s.in_place_insert_bytes_written},
          {"in_place_upkeep_bytes_written", s.in_place_upkeep_bytes_written},
          {"in_place_insert_lists_changed", s.in_place_insert_lists_changed},
          {"in_place_edge_pages", s.in_place_edge_pages},
          {"in_place_live_edge_pages", s.in_place_live_edge_pages},
          {"live", s.live},
          {"indexed", s.indexed},
          {"pending", s.pending},
          {"deleted", s.deleted},
          {"index_version", s.index_version},
          {"merges", s.merges},
          {"merging", s.merging},
          {"last_merge_seconds", s.last_merge_seconds},
          {"first_build_seconds", s.first_build_seconds},
          {"ram_bytes", s.ram_bytes},
          {"disk_bytes", s.disk_bytes},
          {"last_sequence", s.last_sequence},
          {"background_cpus", s.background_cpus},
          {"index_description", s.index_description},
          {"payload_index", [&] {
             nlohmann::json f = nlohmann::json::object();
             for (const PayloadFieldSpec& p : s.payload_fields) {
               f[p.path] = std::string(PayloadFieldTypeName(p.type));
             }
             return f;
           }()},
          {"payload_index_bytes", s.payload_index_bytes}};
}

Result<std::unique_ptr<Collection>> OpenExistingCollection(const std::string& dir,
                                                           CollectionOptions options) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    return Status::NotFound(dir +
                            ": no such directory (create a collection with "
                            "`strata collection create " +
                            dir + " --dim D`)");
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::InvalidArgument(dir + ": not a directory");
  }
  if (!IsCollectionDirectory(dir)) {
    Result<std::string> what = DescribeCollectionDirectory(dir);
    if (what.ok() && *what == "index") {
      return Status::InvalidArgument(dir +
                                     " holds an index, not a collection (search it with "
                                     "`strata search --index " +
                                     dir + "`)");
    }
    return Status::NotFound(dir +
                            ": not a collection (create one with `strata collection "
                            "create " +
                            dir + " --dim D`)");
  }
  options.create_if_missing = false;
  options.error_if_exists = false;
  Result<std::unique_ptr<Collection>> c = Collection::Open(dir, options);
  if (!c.ok()) return c.status().WithContext("opening collection " + dir);
  return c;
}

// The shortest decimal text that reads back as exactly `v`.
std::string FloatText(float v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

// `v` as a double with the float's shortest digits, so JSON prints
// "0.8105941" and not the widened 0.8105941414833069.
double JsonFloat(float v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return static_cast<double>(v);
  *end = '\0';
  return std::strtod(buf, nullptr);
}

nlohmann::json VectorJson(std::span<const float> v) {
  nlohmann::json arr = nlohmann::json::array();
  for (float x : v) arr.push_back(JsonFloat(x));
  return arr;
}

std::string FormatVector(std::span<const float> v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ' ';
    s += FloatText(v[i]);
  }
  return s;
}

// A payload as JSON: parsed when it is JSON, else the bytes as a string.
nlohmann::json PayloadJson(const std::string& payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return nlohmann::json(payload);
  return j;
}

// Missing slots hold id 2^32-1 and the largest float: .ibin can store both
// (kInvalidVectorId and +inf it cannot).
GroundTruth HitsToResults(const std::vector<std::vector<SearchHit>>& hits, std::uint32_t k) {
  GroundTruth r;
  r.num_queries = hits.size();
  r.k = k;
  r.ids.assign(hits.size() * k, std::numeric_limits<std::uint32_t>::max());
  r.distances.assign(hits.size() * k, std::numeric_limits<float>::max());
  for (std::size_t q = 0; q < hits.size(); ++q) {
    for (std::size_t i = 0; i < hits[q].size() && i < k; ++i) {
      r.ids[q * k + i] = hits[q][i].id;
      r.distances[q * k + i] = hits[q][i].distance;
    }
  }
  return r;
}

nlohmann::json HitsJson(const std::vector<SearchHit>& hits, bool with_payload) {
  nlohmann::json arr = nlohmann::json::array();
  for (const SearchHit& h : hits) {
    nlohmann::json j = {{"id", h.id}, {"distance", JsonFloat(h.distance)}};
    if (with_payload) {
      j["payload"] = h.payload.empty() ? nlohmann::json(nullptr) : PayloadJson(h.payload);
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace strata::cli
