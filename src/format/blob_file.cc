#include "format/blob_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/checksum.h"
#include "format/le_coding.h"
#include "strata/io.h"

namespace strata::format {
namespace {

constexpr char kBlobMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'B', '1'};
constexpr std::uint32_t kMaxSections = 64;

std::size_t HeaderSize(std::uint32_t sections) { return 24 + 8 * sections + 16; }

Status ReadAll(int fd, std::uint64_t offset, std::byte* out, std::size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("read " + path, errno);
    }
    if (r == 0) return Status::Corruption(path + ": truncated");
    out += r;
    offset += static_cast<std::uint64_t>(r);
    n -= static_cast<std::size_t>(r);
  }
  return Status::OK();
}

}  // namespace

Result<std::uint64_t> WriteBlobFile(const std::string& path, BlobKind kind, std::uint32_t version,
                                    const std::vector<std::span<const std::uint8_t>>& sections) {
  const auto n = static_cast<std::uint32_t>(sections.size());
  std::vector<std::byte> header(HeaderSize(n));
  std::memcpy(header.data(), kBlobMagic, 8);
  PutU32(header.data() + 8, static_cast<std::uint32_t>(kind));
  PutU32(header.data() + 12, version);
  PutU32(header.data() + 16, n);
  ChecksumStream payload(static_cast<std::uint64_t>(kind));
  for (std::uint32_t i = 0; i < n; ++i) {
    PutU64(header.data() + 24 + 8 * i, sections[i].size());
    payload.Update(sections[i].data(), sections[i].size());
  }
  const std::size_t sums = 24 + 8 * n;
  PutU64(header.data() + sums, payload.Digest());
  PutU64(header.data() + sums + 8, Checksum64(header.data(), sums + 8));
  STRATA_ASSIGN_OR_RETURN(AtomicFileWriter writer,
                          AtomicFileWriter::Create(path, {.buffer_size = 4u << 20}));
  STRATA_RETURN_IF_ERROR(writer.Append(header));
  for (const auto& s : sections) STRATA_RETURN_IF_ERROR(writer.Append(std::as_bytes(s)));
  const std::uint64_t size = writer.size();
  STRATA_RETURN_IF_ERROR(writer.Commit());
  return size;
}

Result<BlobContents> ReadBlobFile(const std::string& path, BlobKind kind,
                                  std::uint32_t max_version, std::uint32_t expected_sections) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::FromErrno("open " + path, errno);
  }
  struct Closer {
    int fd;
    ~Closer() {
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // loaded to RAM: drop the page cache copy
      ::close(fd);
    }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno("stat " + path, errno);
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  std::byte fixed[24];
  if (file_size < HeaderSize(0)) return Status::Corruption(path + ": truncated header");
  STRATA_RETURN_IF_ERROR(ReadAll(fd, 0, fixed, 24, path));
  if (std::memcmp(fixed, kBlobMagic, 8) != 0) {
    return Status::Corruption(path + ": not a Strata blob file (bad magic)");
  }
  const std::uint32_t n = GetU32(fixed + 16);
  if (n > kMaxSections || file_size < HeaderSize(n)) {
    return Status::Corruption(path + ": bad section count");
  }
  std::vector<std::byte> header(HeaderSize(n));
  STRATA_RETURN_IF_ERROR(ReadAll(fd, 0, header.data(), header.size(), path));
  const std::size_t sums = 24 + 8 * n;
  if (GetU64(header.data() + sums + 8) != Checksum64(header.data(), sums + 8)) {
    return Status::Corruption(path + ": header checksum mismatch");
  }
  if (GetU32(header.data() + 8) != static_cast<std::uint32_t>(kind)) {
    return Status::Corruption(path + ": wrong file kind");
  }
  BlobContents out;
  out.version = GetU32(header.data() + 12);
  if (out.version == 0 || out.version > max_version) {
    return Status::NotSupported(path + ": blob version " + std::to_string(out.version) +
                                " is newer than this build reads");
  }
  if (expected_sections != 0 && n != expected_sections) {
    return Status::Corruption(path + ": expected " + std::to_string(expected_sections) +
                              " sections, found " + std::to_string(n));
  }
  std::uint64_t offset = header.size();
  ChecksumStream payload(static_cast<std::uint64_t>(kind));
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint64_t size = GetU64(header.data() + 24 + 8 * i);
    if (size > file_size - offset) return Status::Corruption(path + ": truncated section");
    std::vector<std::uint8_t> section(static_cast<std::size_t>(size));
    STRATA_RETURN_IF_ERROR(ReadAll(fd, offset, reinterpret_cast<std::byte*>(section.data()),
                                   section.size(), path));
    payload.Update(section.data(), section.size());
    offset += size;
    out.sections.push_back(std::move(section));
  }
  if (offset != file_size) return Status::Corruption(path + ": trailing bytes after sections");
  if (payload.Digest() != GetU64(header.data() + sums)) {
    return Status::Corruption(path + ": payload checksum mismatch");
  }
  return out;
}

}  // namespace strata::format
