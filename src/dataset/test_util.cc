#include "dataset/test_util.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace strata::dataset_test {

ScopedTempDir::ScopedTempDir() {
  std::string base = ::testing::TempDir();
  if (base.empty()) base = "/tmp/";
  if (base.back() != '/') base.push_back('/');
  std::string tmpl = base + "strata_dataset_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* dir = ::mkdtemp(buf.data());
  if (dir == nullptr) {
    ADD_FAILURE() << "mkdtemp failed: " << std::strerror(errno);
    return;
  }
  path_ = dir;
}

ScopedTempDir::~ScopedTempDir() {
  if (path_.empty()) return;
  // Tests create only flat files here.
  for (const std::string& name : List()) ::unlink(File(name).c_str());
  ::rmdir(path_.c_str());
}

std::vector<std::string> ScopedTempDir::List() const {
  std::vector<std::string> names;
  DIR* d = ::opendir(path_.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string U32Bytes(std::uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

std::string I32Bytes(std::int32_t v) { return U32Bytes(static_cast<std::uint32_t>(v)); }

std::string F32Bytes(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return U32Bytes(bits);
}

}  // namespace strata::dataset_test
