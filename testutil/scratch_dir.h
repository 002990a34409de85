// ScratchDir: a fresh directory for one test, removed with its contents on
// destruction. Placed under $STRATA_TEST_TMPDIR, else /var/tmp (disk-backed on
// Debian, so O_DIRECT works), else /tmp.
#ifndef STRATA_TESTUTIL_SCRATCH_DIR_H_
#define STRATA_TESTUTIL_SCRATCH_DIR_H_

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace strata::testutil {

class ScratchDir {
 public:
  ScratchDir() {
    std::vector<std::string> bases;
    if (const char* env = std::getenv("STRATA_TEST_TMPDIR")) bases.emplace_back(env);
    bases.emplace_back("/var/tmp");
    bases.emplace_back("/tmp");
    for (const std::string& base : bases) {
      std::string tmpl = base + "/strata_test.XXXXXX";
      if (::mkdtemp(tmpl.data()) != nullptr) {
        path_ = tmpl;
        break;
      }
    }
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace strata::testutil

#endif  // STRATA_TESTUTIL_SCRATCH_DIR_H_
