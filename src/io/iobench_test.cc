#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "strata/io.h"

namespace strata {
namespace {

using testing_io::ReadWholeFile;
using testing_io::ScratchDir;

TEST(Iobench, PrepareCreatesNonZeroFileAndExtendsDeterministically) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  const std::string stepped = dir.File("stepped");
  const std::string direct = dir.File("direct");
  ASSERT_TRUE(PrepareIobenchFile(stepped, 1 << 20).ok());
  EXPECT_EQ(ReadWholeFile(stepped).size(), 1u << 20);
  ASSERT_TRUE(PrepareIobenchFile(stepped, 5 << 20).ok());  // extend
  ASSERT_TRUE(PrepareIobenchFile(stepped, 2 << 20).ok());  // already large enough: untouched
  ASSERT_TRUE(PrepareIobenchFile(direct, 5 << 20).ok());
  const std::vector<std::byte> a = ReadWholeFile(stepped);
  ASSERT_EQ(a.size(), 5u << 20);
  EXPECT_EQ(a, ReadWholeFile(direct));
  // Every 8-byte word is non-zero: the file has no holes or zero pages.
  const auto* words = reinterpret_cast<const std::uint64_t*>(a.data());
  for (std::size_t i = 0; i < a.size() / 8; ++i) ASSERT_NE(words[i], 0u) << i;

  EXPECT_TRUE(PrepareIobenchFile(dir.File("x"), 1000).IsInvalidArgument());
  EXPECT_TRUE(PrepareIobenchFile(dir.path(), 4096).IsInvalidArgument());  // a directory
}

TEST(Iobench, EverySettingRunsAndReportsConsistentNumbers) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  IobenchOptions o;
  o.path = dir.File("bench");
  o.file_size = 8 << 20;
  o.queue_depths = {1, 8};
  o.threads = {1, 2};
  o.engines = {};
  for (IoEngine e : {IoEngine::kUring, IoEngine::kAio, IoEngine::kPread}) {
    if (ProbeIoEngine(e).ok()) o.engines.push_back(e);
  }
  o.seconds = 0.05;
  std::size_t callbacks = 0;
  Result<std::vector<IobenchResult>> results =
      RunIobench(o, [&](const IobenchResult&) { ++callbacks; });
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), o.engines.size() * 4);
  EXPECT_EQ(callbacks, results->size());
  std::size_t i = 0;
  for (IoEngine e : o.engines) {
    for (std::uint32_t threads : o.threads) {
      for (std::uint32_t qd : o.queue_depths) {
        const IobenchResult& r = (*results)[i++];
        SCOPED_TRACE(r.engine_description);
        EXPECT_EQ(r.engine, e);
        EXPECT_EQ(r.threads, threads);
        EXPECT_EQ(r.queue_depth, qd);
        EXPECT_EQ(r.block_size, 4096u);
        EXPECT_GT(r.reads, 0u);
        EXPECT_GE(r.seconds, o.seconds);
        EXPECT_NEAR(r.iops, r.reads / r.seconds, 1e-6 * r.iops);
        EXPECT_NEAR(r.mbps, r.iops * 4096 / 1e6, 1e-9 * r.mbps + 1e-9);
        EXPECT_GT(r.mean_us, 0);
        EXPECT_LE(r.p50_us, r.p99_us);
        EXPECT_LE(r.p99_us, r.max_us);
        EXPECT_EQ(r.stats.reads, r.reads);  // all issued reads were collected
        EXPECT_EQ(r.stats.pages_read, r.reads);
        EXPECT_EQ(r.stats.errors, 0u);
        EXPECT_EQ(r.stats.max_in_flight, qd);
      }
    }
  }
}

TEST(Iobench, ValidatesOptions) {
  IobenchOptions o;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());  // no path
  o.path = "/nonexistent/f";
  EXPECT_TRUE(o.Validate().ok());
  IobenchOptions bad = o;
  bad.block_size = 1000;
  EXPECT_TRUE(bad.Validate().IsInvalidArgument());
  bad = o;
  bad.queue_depths = {0};
  EXPECT_TRUE(bad.Validate().IsInvalidArgument());
  bad = o;
  bad.threads = {};
  EXPECT_TRUE(bad.Validate().IsInvalidArgument());
  bad = o;
  bad.seconds = 0;
  EXPECT_TRUE(bad.Validate().IsInvalidArgument());
  bad = o;
  bad.file_size = 4097;
  EXPECT_TRUE(bad.Validate().IsInvalidArgument());
  bad = o;
  bad.engines = {};
  EXPECT_TRUE(bad.Validate().IsInvalidArgument());
  // A missing directory is reported, not crashed on.
  EXPECT_FALSE(RunIobench(o).ok());
}

TEST(Iobench, SizeLargerThanFileIsRejectedBySingleSetting) {
  ScratchDir dir;
  STRATA_REQUIRE_DIRECT_IO(dir);
  IobenchOptions o;
  o.path = dir.File("small");
  ASSERT_TRUE(PrepareIobenchFile(o.path, 1 << 20).ok());
  o.file_size = 2 << 20;
  Result<IobenchResult> r = RunIobenchSetting(o, IoEngine::kPread, 1, 1);
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
}

}  // namespace
}  // namespace strata
