#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>

#include "io/io_test_util.h"
#include "strata/io.h"

namespace strata {
namespace {

using testing_io::MatchesPattern;
using testing_io::ScratchDir;
using testing_io::WritePatternFile;

constexpr std::size_t kPage = kIoAlignment;

TEST(DirectFile, OpenMissingFileIsNotFound) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  Result<DirectFile> f = DirectFile::Open(dir.File("missing"));
  EXPECT_TRUE(f.status().IsNotFound()) << f.status().ToString();
  EXPECT_NE(f.status().message().find("missing"), std::string::npos);
}

TEST(DirectFile, SizeAndAlignedReads) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  const std::string path = dir.File("f");
  ASSERT_TRUE(WritePatternFile(path, 7 * kPage + 10));
  Result<DirectFile> f = DirectFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->is_open());
  EXPECT_EQ(f->path(), path);
  EXPECT_EQ(*f->Size(), 7 * kPage + 10);

  Result<BufferPool> pool = BufferPool::Create(1, 8 * kPage);
  std::byte* buf = pool->Acquire();
  ASSERT_TRUE(f->ReadAt(2 * kPage, {buf, 3 * kPage}).ok());
  EXPECT_TRUE(MatchesPattern(buf, 2 * kPage, 3 * kPage));

  Status past = f->ReadAt(6 * kPage, {buf, 2 * kPage});
  EXPECT_TRUE(past.IsOutOfRange()) << past.ToString();
  EXPECT_NE(past.message().find("after 4106 bytes"), std::string::npos) << past.message();
  EXPECT_TRUE(f->ReadAt(100 * kPage, {buf, kPage}).IsOutOfRange());

  EXPECT_TRUE(f->ReadAt(1, {buf, kPage}).IsInvalidArgument());
  EXPECT_TRUE(f->ReadAt(0, {buf, 100}).IsInvalidArgument());
  EXPECT_TRUE(f->ReadAt(0, {buf + 1, kPage}).IsInvalidArgument());
  EXPECT_TRUE(f->ReadAt(0, {buf, 0}).IsInvalidArgument());
}

TEST(DirectFile, MoveTransfersOwnershipAndCloseIsIdempotent) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  const std::string path = dir.File("f");
  ASSERT_TRUE(WritePatternFile(path, kPage));
  Result<DirectFile> f = DirectFile::Open(path);
  ASSERT_TRUE(f.ok());
  const int fd = f->fd();
  DirectFile moved = std::move(*f);
  EXPECT_EQ(moved.fd(), fd);
  EXPECT_FALSE(f->is_open());
  DirectFile assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.fd(), fd);
  EXPECT_TRUE(assigned.Close().ok());
  EXPECT_TRUE(assigned.Close().ok());
  EXPECT_FALSE(assigned.is_open());
  EXPECT_TRUE(assigned.Size().status().IsInvalidArgument());
}

TEST(DirectFile, ReadWriteModeOpensExistingFile) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  EXPECT_TRUE(DirectFile::Open(dir.File("none"), DirectFileMode::kReadWrite).status().IsNotFound());
  ASSERT_TRUE(WritePatternFile(dir.File("f"), kPage));
  EXPECT_TRUE(DirectFile::Open(dir.File("f"), DirectFileMode::kReadWrite).ok());
}

}  // namespace
}  // namespace strata
