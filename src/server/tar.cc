#include "server/tar.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <memory>
#include <unistd.h>

#include "strata/result.h"

namespace strata::server {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kBlock = 512;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// The ustar header's fields, by offset and length.
struct Field {
  std::size_t off, len;
};
constexpr Field kName{0, 100}, kMode{100, 8}, kUid{108, 8}, kGid{116, 8}, kSize{124, 12},
    kMtime{136, 12}, kChksum{148, 8}, kType{156, 1}, kMagic{257, 6}, kVersion{263, 2},
    kPrefix{345, 155};

void PutOctal(char* h, Field f, std::uint64_t v) {
  std::snprintf(h + f.off, f.len, "%0*llo", static_cast<int>(f.len - 1),
                static_cast<unsigned long long>(v));
}

void PutSize(char* h, std::uint64_t size) {
  if (size < (1ull << 33)) {  // 11 octal digits
    PutOctal(h, kSize, size);
    return;
  }
  // GNU base-256: the high bit of the first byte set, the value big-endian.
  unsigned char* p = reinterpret_cast<unsigned char*>(h + kSize.off);
  std::memset(p, 0, kSize.len);
  p[0] = 0x80;
  for (std::size_t i = kSize.len - 1; i > 0 && size > 0; --i, size >>= 8) p[i] = size & 0xff;
}

unsigned Checksum(const char* h) {
  unsigned sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const bool in_field = i >= kChksum.off && i < kChksum.off + kChksum.len;
    sum += in_field ? ' ' : static_cast<unsigned char>(h[i]);
  }
  return sum;
}

Status Header(const std::string& name, bool dir, std::uint64_t size, char* h) {
  std::memset(h, 0, kBlock);
  std::string prefix, base = name;
  if (base.size() > kName.len) {  // split at a '/' into prefix (155) and name (100)
    const std::size_t cut = name.rfind('/', kPrefix.len);
    if (cut == std::string::npos || name.size() - cut - 1 > kName.len || cut == 0) {
      return Status::NotSupported("tar: name too long: " + name);
    }
    prefix = name.substr(0, cut);
    base = name.substr(cut + 1);
  }
  std::memcpy(h + kName.off, base.data(), base.size());
  std::memcpy(h + kPrefix.off, prefix.data(), prefix.size());
  PutOctal(h, kMode, dir ? 0755 : 0644);
  PutOctal(h, kUid, 0);
  PutOctal(h, kGid, 0);
  PutSize(h, dir ? 0 : size);
  PutOctal(h, kMtime, 0);
  h[kType.off] = dir ? '5' : '0';
  std::memcpy(h + kMagic.off, "ustar", 6);
  std::memcpy(h + kVersion.off, "00", 2);
  std::snprintf(h + kChksum.off, 7, "%06o", Checksum(h));
  h[kChksum.off + 7] = ' ';
  return Status::OK();
}

Status AddFile(std::FILE* out, const std::string& name, const fs::path& src) {
  File in(std::fopen(src.c_str(), "rb"));
  if (!in) return Status::FromErrno("tar: open " + src.string(), errno);
  std::error_code ec;
  const std::uint64_t size = fs::file_size(src, ec);
  if (ec) return Status::IOError("tar: size of " + src.string() + ": " + ec.message());
  char h[kBlock];
  STRATA_RETURN_IF_ERROR(Header(name, false, size, h));
  if (std::fwrite(h, 1, kBlock, out) != kBlock) return Status::FromErrno("tar: write", errno);
  std::vector<char> buf(1 << 20);
  std::uint64_t left = size;
  while (left > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size()));
    if (std::fread(buf.data(), 1, want, in.get()) != want) {
      return Status::IOError("tar: " + src.string() + " changed while archived");
    }
    if (std::fwrite(buf.data(), 1, want, out) != want) return Status::FromErrno("tar: write", errno);
    left -= want;
  }
  static const char kZeros[kBlock] = {};
  const std::size_t pad = (kBlock - size % kBlock) % kBlock;
  if (std::fwrite(kZeros, 1, pad, out) != pad) return Status::FromErrno("tar: write", errno);
  return Status::OK();
}

Status AddTree(std::FILE* out, const std::string& name, const fs::path& src) {
  std::error_code ec;
  if (!fs::is_directory(src, ec)) return AddFile(out, name, src);
  char h[kBlock];
  STRATA_RETURN_IF_ERROR(Header(name + "/", true, 0, h));
  if (std::fwrite(h, 1, kBlock, out) != kBlock) return Status::FromErrno("tar: write", errno);
  std::vector<fs::path> children;
  for (const auto& e : fs::directory_iterator(src, ec)) children.push_back(e.path());
  if (ec) return Status::IOError("tar: list " + src.string() + ": " + ec.message());
  std::sort(children.begin(), children.end());
  for (const fs::path& c : children) {
    STRATA_RETURN_IF_ERROR(AddTree(out, name + "/" + c.filename().string(), c));
  }
  return Status::OK();
}

Result<std::uint64_t> ParseSize(const char* h) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(h + kSize.off);
  std::uint64_t v = 0;
  if (p[0] & 0x80) {
    if ((p[0] & 0x7f) != 0 || p[1] != 0 || p[2] != 0 || p[3] != 0) {
      return Status::Corruption("tar: size out of range");
    }
    for (std::size_t i = 4; i < kSize.len; ++i) v = (v << 8) | p[i];
    return v;
  }
  for (std::size_t i = 0; i < kSize.len && p[i] != 0 && p[i] != ' '; ++i) {
    if (p[i] < '0' || p[i] > '7') return Status::Corruption("tar: bad size field");
    v = v * 8 + (p[i] - '0');
  }
  return v;
}

std::string FieldString(const char* h, Field f) {
  return std::string(h + f.off, strnlen(h + f.off, f.len));
}

// A relative name that stays inside the destination.
bool SafeName(const std::string& name) {
  if (name.empty() || name[0] == '/') return false;
  for (const auto& part : fs::path(name)) {
    if (part == "..") return false;
  }
  return true;
}

}  // namespace

Status WriteTar(const std::string& tar_path,
                const std::vector<std::pair<std::string, std::string>>& entries) {
  File out(std::fopen(tar_path.c_str(), "wb"));
  if (!out) return Status::FromErrno("tar: create " + tar_path, errno);
  for (const auto& [name, src] : entries) STRATA_RETURN_IF_ERROR(AddTree(out.get(), name, src));
  static const char kZeros[2 * kBlock] = {};
  if (std::fwrite(kZeros, 1, sizeof(kZeros), out.get()) != sizeof(kZeros) ||
      std::fflush(out.get()) != 0 || ::fsync(fileno(out.get())) != 0) {
    return Status::FromErrno("tar: write " + tar_path, errno);
  }
  if (std::fclose(out.release()) != 0) return Status::FromErrno("tar: close " + tar_path, errno);
  return Status::OK();
}

Status ExtractTar(const std::string& tar_path, const std::string& dest_dir) {
  File in(std::fopen(tar_path.c_str(), "rb"));
  if (!in) return Status::FromErrno("tar: open " + tar_path, errno);
  std::error_code ec;
  fs::create_directories(dest_dir, ec);
  if (ec) return Status::IOError("tar: create " + dest_dir + ": " + ec.message());
  std::vector<char> buf(1 << 20);
  for (;;) {
    char h[kBlock];
    if (std::fread(h, 1, kBlock, in.get()) != kBlock) return Status::Corruption("tar: truncated");
    if (std::all_of(h, h + kBlock, [](char c) { return c == 0; })) return Status::OK();
    const std::string chksum = FieldString(h, kChksum);
    unsigned stored = 0;
    if (std::sscanf(chksum.c_str(), "%o", &stored) != 1 || stored != Checksum(h)) {
      return Status::Corruption("tar: header checksum mismatch in " + tar_path);
    }
    const std::string prefix = FieldString(h, kPrefix);
    std::string name = FieldString(h, kName);
    if (!prefix.empty()) name = prefix + "/" + name;
    if (!SafeName(name)) return Status::InvalidArgument("tar: unsafe entry name '" + name + "'");
    const fs::path target = fs::path(dest_dir) / name;
    const char type = h[kType.off];
    if (type == '5') {
      fs::create_directories(target, ec);
      if (ec) return Status::IOError("tar: create " + target.string() + ": " + ec.message());
      continue;
    }
    if (type != '0' && type != '\0') {
      return Status::NotSupported("tar: entry '" + name + "' is not a file or directory");
    }
    Result<std::uint64_t> size = ParseSize(h);
    if (!size.ok()) return size.status();
    fs::create_directories(target.parent_path(), ec);
    if (ec) return Status::IOError("tar: create " + target.parent_path().string() + ": " + ec.message());
    File out(std::fopen(target.c_str(), "wb"));
    if (!out) return Status::FromErrno("tar: create " + target.string(), errno);
    const std::uint64_t padded = (size.value() + kBlock - 1) / kBlock * kBlock;
    for (std::uint64_t done = 0; done < padded;) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(padded - done, buf.size()));
      if (std::fread(buf.data(), 1, want, in.get()) != want) return Status::Corruption("tar: truncated");
      const std::uint64_t data_left = done < size.value() ? size.value() - done : 0;
      const std::size_t keep = static_cast<std::size_t>(std::min<std::uint64_t>(want, data_left));
      if (std::fwrite(buf.data(), 1, keep, out.get()) != keep) {
        return Status::FromErrno("tar: write " + target.string(), errno);
      }
      done += want;
    }
    if (std::fflush(out.get()) != 0 || ::fsync(fileno(out.get())) != 0) {
      return Status::FromErrno("tar: write " + target.string(), errno);
    }
  }
}

}  // namespace strata::server
