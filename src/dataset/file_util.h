// POSIX file helpers shared by the dataset readers and writers: full-length
// pread/write loops, error messages that name the file, and the
// write-to-temporary-then-rename protocol.
#ifndef STRATA_DATASET_FILE_UTIL_H_
#define STRATA_DATASET_FILE_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "strata/result.h"
#include "strata/status.h"

namespace strata::dataset_internal {

// An open read-only file descriptor plus its path and size. Move-only; closes
// on destruction.
class InputFile {
 public:
  InputFile() = default;
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  // NotFound when `path` does not exist, InvalidArgument when it is not a
  // regular file, IOError for other open/fstat failures.
  static Result<InputFile> Open(const std::string& path);

  // Reads exactly `size` bytes at `offset`. Corruption ("unexpected end of
  // file") if the file is shorter than expected, IOError on a read error.
  Status ReadAt(std::uint64_t offset, std::size_t size, void* out) const;

  // Gives up ownership of the descriptor (the caller closes it).
  int Release();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::uint64_t size_ = 0;
};

// pread of exactly `size` bytes (retries short reads and EINTR).
Status PreadFull(int fd, const std::string& path, std::uint64_t offset, std::size_t size,
                 void* out);
// write / pwrite of exactly `size` bytes (retries short writes and EINTR).
Status WriteFull(int fd, const std::string& path, const void* data, std::size_t size);
Status PwriteFull(int fd, const std::string& path, std::uint64_t offset, const void* data,
                  std::size_t size);

// Creates a new, empty temporary file "<path>.tmp-<pid>-<n>" next to `path`
// (O_EXCL, mode 0666 minus umask) and returns its descriptor; *temp_path gets
// its name.
Result<int> CreateTempFor(const std::string& path, std::string* temp_path);

// Completes an atomic write: optionally fsyncs `fd`, closes it, renames
// temp_path over final_path and optionally fsyncs the directory. On failure the
// temporary file is removed. `fd` is closed in every case.
Status CommitTemp(int fd, const std::string& temp_path, const std::string& final_path, bool sync);

// Closes `fd` (if >= 0) and unlinks temp_path, ignoring errors: the clean-up
// path of a failed or abandoned write.
void DiscardTemp(int fd, const std::string& temp_path);

// "<path>: <message>" helpers, so every error names its file.
Status CorruptionAt(std::string_view path, std::string_view message);
Status InvalidArgumentAt(std::string_view path, std::string_view message);
Status NotSupportedAt(std::string_view path, std::string_view message);

// a * b and a + b with overflow detection (false on overflow).
inline bool MulOk(std::uint64_t a, std::uint64_t b, std::uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool AddOk(std::uint64_t a, std::uint64_t b, std::uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// Little-endian loads/stores (the formats are little-endian; so is every
// platform Strata builds for, but decoding explicitly keeps the intent visible).
std::uint32_t LoadU32(const void* p);
std::int32_t LoadI32(const void* p);
void StoreU32(void* p, std::uint32_t v);

}  // namespace strata::dataset_internal

#endif  // STRATA_DATASET_FILE_UTIL_H_
