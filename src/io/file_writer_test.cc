// AtomicFileWriter and PageWriter: contents, atomic visibility, and failures.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "strata/io.h"

namespace strata {
namespace {

using testing_io::Pattern;
using testing_io::ReadWholeFile;
using testing_io::ScratchDir;
using testing_io::WritePatternFile;

constexpr std::size_t kPage = kIoAlignment;

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

// Names in `dir` other than the ones listed (to spot leftover temp files).
std::vector<std::string> OtherFiles(const std::string& dir, const std::vector<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (std::find(keep.begin(), keep.end(), name) == keep.end()) out.push_back(name);
  }
  return out;
}

TEST(AtomicFileWriter, ArbitraryAppendsCommitExactBytes) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  for (bool direct : {true, false}) {
    const std::string path = dir.File(direct ? "out_direct" : "out_buffered");
    Result<AtomicFileWriter> w =
        AtomicFileWriter::Create(path, {.buffer_size = 16 * kPage, .use_direct_io = direct});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_EQ(w->direct(), direct);
    const std::vector<std::byte> data = Pattern(0, 3 * 16 * kPage + 5000);
    // Sizes straddling the 64 KiB staging buffer in every way.
    std::size_t at = 0;
    for (std::size_t n : {std::size_t{1}, std::size_t{4095}, std::size_t{16 * kPage},
                          std::size_t{70000}, data.size()}) {
      n = std::min(n, data.size() - at);
      ASSERT_TRUE(w->Append({data.data() + at, n}).ok());
      at += n;
    }
    ASSERT_EQ(at, data.size());
    EXPECT_EQ(w->size(), data.size());
    EXPECT_FALSE(Exists(path)) << "visible before Commit";
    EXPECT_TRUE(Exists(w->temp_path()));
    ASSERT_TRUE(w->Commit().ok());
    EXPECT_TRUE(w->committed());
    EXPECT_FALSE(Exists(w->temp_path()));
    EXPECT_EQ(ReadWholeFile(path), data);
    EXPECT_TRUE(w->Append({data.data(), 1}).IsInvalidArgument());
    EXPECT_TRUE(w->Commit().ok());  // idempotent
  }
  EXPECT_TRUE(OtherFiles(dir.path(), {"out_direct", "out_buffered"}).empty());
}

TEST(AtomicFileWriter, EmptyAndBlockMultipleFiles) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  Result<AtomicFileWriter> empty = AtomicFileWriter::Create(dir.File("empty"));
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE(empty->Commit().ok());
  EXPECT_EQ(std::filesystem::file_size(dir.File("empty")), 0u);

  Result<AtomicFileWriter> exact = AtomicFileWriter::Create(dir.File("exact"));
  const std::vector<std::byte> data = Pattern(0, 8 * kPage);
  ASSERT_TRUE(exact->Append(data).ok());
  ASSERT_TRUE(exact->Commit().ok());
  EXPECT_EQ(ReadWholeFile(dir.File("exact")), data);
}

TEST(AtomicFileWriter, UncommittedWriterLeavesNothingAndOldFileIntact) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  const std::string path = dir.File("index");
  ASSERT_TRUE(WritePatternFile(path, 3 * kPage));
  const std::vector<std::byte> old = ReadWholeFile(path);
  std::string temp;
  {
    Result<AtomicFileWriter> w = AtomicFileWriter::Create(path);
    ASSERT_TRUE(w.ok());
    temp = w->temp_path();
    std::vector<std::byte> junk(10 * kPage, std::byte{1});
    ASSERT_TRUE(w->Append(junk).ok());
  }  // destroyed without Commit
  EXPECT_FALSE(Exists(temp));
  EXPECT_EQ(ReadWholeFile(path), old);
  EXPECT_TRUE(OtherFiles(dir.path(), {"index"}).empty());

  // Commit replaces the old file in one step.
  Result<AtomicFileWriter> w = AtomicFileWriter::Create(path);
  std::vector<std::byte> fresh(5, std::byte{9});
  ASSERT_TRUE(w->Append(fresh).ok());
  EXPECT_EQ(ReadWholeFile(path), old);
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(ReadWholeFile(path), fresh);

  // Explicit Abort, then moves.
  Result<AtomicFileWriter> a = AtomicFileWriter::Create(dir.File("aborted"));
  AtomicFileWriter moved = std::move(*a);
  ASSERT_TRUE(moved.Append(fresh).ok());
  moved.Abort();
  EXPECT_TRUE(moved.Commit().IsInvalidArgument());
  EXPECT_FALSE(Exists(dir.File("aborted")));
  EXPECT_TRUE(OtherFiles(dir.path(), {"index"}).empty());
}

TEST(AtomicFileWriter, MissingDirectoryAndBadOptionsAreClearErrors) {
  ScratchDir dir;
  ASSERT_TRUE(dir.ok());
  Result<AtomicFileWriter> w = AtomicFileWriter::Create(dir.File("no/such/dir/file"));
  EXPECT_TRUE(w.status().IsIOError()) << w.status().ToString();
  EXPECT_NE(w.status().message().find("No such file or directory"), std::string::npos);
  EXPECT_TRUE(
      AtomicFileWriter::Create(dir.File("x"), {.buffer_size = 100}).status().IsInvalidArgument());
  EXPECT_TRUE(AtomicFileWriter::Create("").status().IsInvalidArgument());
}

// Runs `body` in a child process whose file size limit is `limit` bytes (a
// write crossing it comes back short, one starting at it fails with EFBIG),
// returning the child's exit code. The limit would break the parent's own
// files, hence the fork.
int RunWithFileSizeLimit(std::uint64_t limit, int (*body)(const std::string&),
                         const std::string& arg) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit rl{limit, limit};
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(90);
    ::_exit(body(arg));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

// Exit codes: 0 as expected; others name the failed check.
int WriteThroughLimit(const std::string& path) {
  std::string temp;
  {
    Result<AtomicFileWriter> w = AtomicFileWriter::Create(path, {.buffer_size = 16 * kPage});
    if (!w.ok()) return 1;
    temp = w->temp_path();
    const std::vector<std::byte> data(256 * 1024, std::byte{0x5A});
    Status s = w->Append(data);
    if (s.ok()) return 2;
    if (!s.IsIOError()) return 3;
    const bool short_write = s.message().find("short write: 8192 of 65536") != std::string::npos;
    const bool too_large = s.message().find("File too large") != std::string::npos;
    if (!short_write && !too_large) return 4;
    if (w->Commit().ToString() != s.ToString()) return 5;  // sticky error
    if (!Exists(temp)) return 6;
  }
  if (Exists(temp) || Exists(path)) return 7;
  return 0;
}

TEST(AtomicFileWriter, ShortWriteIsAnErrorAndNoFileIsLeft) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  // 64 KiB chunks: the second crosses a 72 KiB limit and is cut to 8 KiB.
  EXPECT_EQ(RunWithFileSizeLimit(72 * 1024, WriteThroughLimit, dir.File("short")), 0);
  // A chunk starting exactly at the limit fails outright (EFBIG).
  EXPECT_EQ(RunWithFileSizeLimit(64 * 1024, WriteThroughLimit, dir.File("efbig")), 0);
  EXPECT_TRUE(OtherFiles(dir.path(), {}).empty());
}

TEST(PageWriter, RandomPageWritesReadBackAndExtendTheFile) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  const std::string path = dir.File("pages");
  EXPECT_TRUE(PageWriter::Open(path).status().IsNotFound());
  Result<PageWriter> w = PageWriter::Open(path, {.create_if_missing = true});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(w->direct());
  EXPECT_EQ(*w->Size(), 0u);
  Result<BufferPool> pool = BufferPool::Create(2, 2 * kPage);
  std::byte* buf = pool->Acquire();
  for (std::uint64_t page : {std::uint64_t{7}, std::uint64_t{2}, std::uint64_t{4}}) {
    std::memset(buf, static_cast<int>(page), 2 * kPage);
    ASSERT_TRUE(w->WriteAt(page * kPage, {buf, 2 * kPage}).ok());
  }
  ASSERT_TRUE(w->Sync().ok());
  EXPECT_EQ(*w->Size(), 9 * kPage);
  const std::vector<std::byte> bytes = ReadWholeFile(path);
  ASSERT_EQ(bytes.size(), 9 * kPage);
  // Pages 2-3, 4-5 and 7-8 were written; 0, 1 and 6 are holes (zeros).
  const int expected_page[9] = {0, 0, 2, 2, 4, 4, 0, 7, 7};
  for (std::size_t p = 0; p < 9; ++p) {
    for (std::size_t i = 0; i < kPage; ++i) {
      ASSERT_EQ(bytes[p * kPage + i], static_cast<std::byte>(expected_page[p])) << p;
    }
  }

  // In-place update of an existing page through a fresh writer.
  ASSERT_TRUE(w->Close().ok());
  Result<PageWriter> again = PageWriter::Open(path);
  ASSERT_TRUE(again.ok());
  std::memset(buf, 0x77, kPage);
  ASSERT_TRUE(again->WriteAt(3 * kPage, {buf, kPage}).ok());
  ASSERT_TRUE(again->Sync().ok());
  EXPECT_EQ(ReadWholeFile(path)[3 * kPage + 17], std::byte{0x77});
  EXPECT_EQ(*again->Size(), 9 * kPage);

  EXPECT_TRUE(again->WriteAt(100, {buf, kPage}).IsInvalidArgument());
  EXPECT_TRUE(again->WriteAt(0, {buf, 100}).IsInvalidArgument());
  EXPECT_TRUE(again->WriteAt(0, {buf + 8, kPage}).IsInvalidArgument());
  PageWriter moved = std::move(*again);
  EXPECT_TRUE(again->WriteAt(0, {buf, kPage}).IsInvalidArgument());  // moved-from is closed
  EXPECT_TRUE(moved.Close().ok());
}

}  // namespace
}  // namespace strata
