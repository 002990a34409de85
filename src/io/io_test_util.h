// Helpers shared by the io module's tests: a scratch directory on a real
// filesystem (O_DIRECT is refused by some tmpfs versions) and deterministic
// file contents.
#ifndef STRATA_IO_IO_TEST_UTIL_H_
#define STRATA_IO_IO_TEST_UTIL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.h"

#include "strata/io.h"

namespace strata::testing_io {

// Byte `i` of the test pattern: depends on the absolute file offset only, so
// any read can be checked without keeping the file in memory.
inline std::byte PatternByte(std::uint64_t offset) {
  std::uint64_t z = offset / 8 + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<std::byte>(z >> (8 * (offset % 8)));
}

inline std::vector<std::byte> Pattern(std::uint64_t offset, std::size_t length) {
  std::vector<std::byte> v(length);
  for (std::size_t i = 0; i < length; ++i) v[i] = PatternByte(offset + i);
  return v;
}

inline bool MatchesPattern(const std::byte* data, std::uint64_t offset, std::size_t length) {
  for (std::size_t i = 0; i < length; ++i) {
    if (data[i] != PatternByte(offset + i)) return false;
  }
  return true;
}

// Test scratch directories (disk-backed, removed on destruction).
using testutil::ScratchDir;

// Writes `length` pattern bytes (buffered I/O) to a new file.
inline bool WritePatternFile(const std::string& path, std::size_t length) {
  std::vector<std::byte> data = Pattern(0, length);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(length));
  return static_cast<bool>(out);
}

inline std::vector<std::byte> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) out[i] = static_cast<std::byte>(raw[i]);
  return out;
}

// True when `dir` accepts O_DIRECT opens (checked on a probe file).
inline bool DirectIoSupported(const std::string& dir) {
  const std::string probe = dir + "/.direct_probe";
  const int fd = ::open(probe.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  return fd >= 0;
}

}  // namespace strata::testing_io

// Skips the current test with a clear message when the scratch directory
// cannot do O_DIRECT (set STRATA_TEST_TMPDIR to a disk-backed directory).
#define STRATA_REQUIRE_DIRECT_IO(dir)                                                 \
  do {                                                                                \
    ASSERT_TRUE((dir).ok()) << "cannot create a scratch directory";                   \
    if (!::strata::testing_io::DirectIoSupported((dir).path())) {                     \
      GTEST_SKIP() << "O_DIRECT is not supported on " << (dir).path()                 \
                   << "; set STRATA_TEST_TMPDIR to a directory on a disk filesystem"; \
    }                                                                                 \
  } while (0)

#endif  // STRATA_IO_IO_TEST_UTIL_H_
