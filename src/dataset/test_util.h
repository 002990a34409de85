// Helpers for the dataset tests: a per-test temporary directory and raw file
// byte access, so tests can craft and inspect exact file layouts.
#ifndef STRATA_DATASET_TEST_UTIL_H_
#define STRATA_DATASET_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace strata::dataset_test {

// A fresh directory (mkdtemp under ::testing::TempDir()), removed with its
// contents on destruction.
class ScopedTempDir {
 public:
  ScopedTempDir();
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> List() const;

 private:
  std::string path_;
};

// Writes `bytes` to `path` (replacing it).
void WriteFileBytes(const std::string& path, const std::string& bytes);
// The whole content of `path` ("" if it cannot be read).
std::string ReadFileBytes(const std::string& path);
bool FileExists(const std::string& path);

// Little-endian encodings for building files by hand.
std::string U32Bytes(std::uint32_t v);
std::string I32Bytes(std::int32_t v);
std::string F32Bytes(float v);
template <typename T>
std::string RawBytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace strata::dataset_test

#endif  // STRATA_DATASET_TEST_UTIL_H_
