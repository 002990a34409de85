// Ground truth: .ibin (with and without distances) and .ivecs round trips,
// exact layouts, id range limits and corrupt files.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dataset/test_util.h"
#include "strata/dataset.h"

namespace strata {
namespace {

using dataset_test::F32Bytes;
using dataset_test::I32Bytes;
using dataset_test::ReadFileBytes;
using dataset_test::ScopedTempDir;
using dataset_test::U32Bytes;
using dataset_test::WriteFileBytes;

GroundTruth Sample() {
  GroundTruth gt;
  gt.num_queries = 3;
  gt.k = 2;
  gt.ids = {7, 3, 0, 4294967294ull, 12, 5};  // the largest id .ibin holds
  gt.distances = {0.5f, 0.75f, 0.0f, 1.0f, 2.0f, 3.5f};
  return gt;
}

TEST(GroundTruth, IbinLayoutAndRoundTrip) {
  ScopedTempDir dir;
  const std::string path = dir.File("gt.ibin");
  const GroundTruth gt = Sample();
  ASSERT_TRUE(WriteGroundTruth(path, gt).ok());
  std::string expected = U32Bytes(3) + U32Bytes(2);
  for (VectorId id : gt.ids) expected += U32Bytes(static_cast<std::uint32_t>(id));
  for (float d : gt.distances) expected += F32Bytes(d);
  EXPECT_EQ(ReadFileBytes(path), expected);
  EXPECT_EQ(dir.List(), std::vector<std::string>{"gt.ibin"});

  auto back = ReadGroundTruth(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->num_queries, 3u);
  EXPECT_EQ(back->k, 2u);
  EXPECT_EQ(back->ids, gt.ids);
  EXPECT_EQ(back->distances, gt.distances);
  EXPECT_EQ(std::vector<VectorId>(back->ids_of(1).begin(), back->ids_of(1).end()),
            (std::vector<VectorId>{0, 4294967294ull}));
}

TEST(GroundTruth, IdsOnlyIbinAndIvecs) {
  ScopedTempDir dir;
  GroundTruth gt = Sample();
  gt.ids[3] = 9;  // .ivecs ids are i32
  gt.distances.clear();
  ASSERT_TRUE(WriteGroundTruth(dir.File("ids.ibin"), gt).ok());
  EXPECT_EQ(ReadFileBytes(dir.File("ids.ibin")).size(), 8u + 6 * 4);
  auto ibin = ReadGroundTruth(dir.File("ids.ibin"));
  ASSERT_TRUE(ibin.ok()) << ibin.status().ToString();
  EXPECT_EQ(ibin->ids, gt.ids);
  EXPECT_TRUE(ibin->distances.empty());
  auto info = GetDatasetInfo(dir.File("ids.ibin"));
  EXPECT_FALSE(info->has_distances);

  GroundTruth with_d = Sample();
  with_d.ids[3] = 9;
  ASSERT_TRUE(WriteGroundTruth(dir.File("gt.ivecs"), with_d).ok());  // distances dropped
  std::string expected;
  for (std::uint64_t q = 0; q < 3; ++q) {
    expected += I32Bytes(2);
    for (VectorId id : with_d.ids_of(q)) expected += I32Bytes(static_cast<std::int32_t>(id));
  }
  EXPECT_EQ(ReadFileBytes(dir.File("gt.ivecs")), expected);
  auto ivecs = ReadGroundTruth(dir.File("gt.ivecs"));
  ASSERT_TRUE(ivecs.ok()) << ivecs.status().ToString();
  EXPECT_EQ(ivecs->ids, gt.ids);
  EXPECT_TRUE(ivecs->distances.empty());
}

TEST(GroundTruth, MissingResultsRoundTripAsTheSentinel) {
  // A search that found fewer than k: kInvalidVectorId with +inf, stored as
  // 2^32 - 1 in .ibin and -1 in .ivecs.
  ScopedTempDir dir;
  GroundTruth gt = Sample();
  gt.ids[5] = kInvalidVectorId;
  gt.distances[5] = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(WriteGroundTruth(dir.File("gt.ibin"), gt).ok());
  const std::string bytes = ReadFileBytes(dir.File("gt.ibin"));
  EXPECT_EQ(bytes.substr(8 + 5 * 4, 4), U32Bytes(kMissingIdU32));
  auto back = ReadGroundTruth(dir.File("gt.ibin"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ids, gt.ids);
  EXPECT_EQ(back->distances[5], std::numeric_limits<float>::infinity());
  gt.ids[3] = 9;
  ASSERT_TRUE(WriteGroundTruth(dir.File("gt.ivecs"), gt).ok());
  EXPECT_EQ(ReadFileBytes(dir.File("gt.ivecs")).substr(3 * 12 - 4, 4), I32Bytes(-1));
  auto ivecs = ReadGroundTruth(dir.File("gt.ivecs"));
  ASSERT_TRUE(ivecs.ok()) << ivecs.status().ToString();
  EXPECT_EQ(ivecs->ids[5], kInvalidVectorId);
  // An infinite distance beside a real id is still rejected.
  gt.ids[5] = 1;
  ASSERT_TRUE(WriteGroundTruth(dir.File("bad.ibin"), gt).ok());
  EXPECT_TRUE(ReadGroundTruth(dir.File("bad.ibin")).status().IsInvalidArgument());
}

TEST(GroundTruth, IdsThatDoNotFitAreInvalidArgument) {
  ScopedTempDir dir;
  GroundTruth gt = Sample();
  gt.ids[5] = kMissingIdU32;  // the sentinel's value is not an id
  EXPECT_TRUE(WriteGroundTruth(dir.File("gt.ibin"), gt).IsInvalidArgument());
  gt.ids[5] = std::uint64_t{1} << 32;
  Status s = WriteGroundTruth(dir.File("gt.ibin"), gt);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("query 2 position 1"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("gt.ibin"), std::string::npos);
  gt.ids[5] = std::uint64_t{1} << 31;
  s = WriteGroundTruth(dir.File("gt.ivecs"), gt);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(dir.List().empty());  // nothing written, no temporary left
}

TEST(GroundTruth, ValidateChecksShapesAndIdRange) {
  GroundTruth gt = Sample();
  EXPECT_TRUE(gt.Validate().ok());
  Status range = gt.Validate(100);
  EXPECT_TRUE(range.IsInvalidArgument());
  EXPECT_NE(range.message().find("query 1 position 1"), std::string::npos) << range.ToString();
  gt.ids[3] = 99;
  EXPECT_TRUE(gt.Validate(100).ok());
  gt.distances.pop_back();
  EXPECT_TRUE(gt.Validate().IsInvalidArgument());
  gt.distances.clear();
  gt.ids.pop_back();
  EXPECT_TRUE(gt.Validate().IsInvalidArgument());
  ScopedTempDir dir;
  EXPECT_TRUE(WriteGroundTruth(dir.File("gt.ibin"), gt).IsInvalidArgument());
  EXPECT_TRUE(WriteGroundTruth(dir.File("gt.fbin"), Sample()).IsInvalidArgument());
}

TEST(GroundTruth, CorruptFilesAreReported) {
  ScopedTempDir dir;
  const std::string ibin = dir.File("gt.ibin");
  // Size matching neither ids-only nor ids + distances.
  WriteFileBytes(ibin, U32Bytes(2) + U32Bytes(2) + std::string(20, '\0'));
  Status s = ReadGroundTruth(ibin).status();
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find(ibin), std::string::npos);
  // k = 0.
  WriteFileBytes(ibin, U32Bytes(2) + U32Bytes(0));
  EXPECT_TRUE(ReadGroundTruth(ibin).status().IsCorruption());
  // NaN distance.
  WriteFileBytes(ibin, U32Bytes(1) + U32Bytes(2) + U32Bytes(1) + U32Bytes(2) + F32Bytes(0.5f) +
                           F32Bytes(std::nanf("")));
  Status nan = ReadGroundTruth(ibin).status();
  EXPECT_TRUE(nan.IsInvalidArgument());
  EXPECT_NE(nan.message().find("row 0 column 1 is NaN"), std::string::npos) << nan.ToString();
  DatasetReadOptions lax;
  lax.check_finite = false;
  EXPECT_TRUE(ReadGroundTruth(ibin, lax).ok());

  const std::string ivecs = dir.File("gt.ivecs");
  WriteFileBytes(ivecs, I32Bytes(2) + I32Bytes(1) + I32Bytes(-2));  // -1 means "no result"
  Status neg = ReadGroundTruth(ivecs).status();
  EXPECT_TRUE(neg.IsCorruption());
  EXPECT_NE(neg.message().find("negative id -2"), std::string::npos) << neg.ToString();
  WriteFileBytes(ivecs, I32Bytes(2) + I32Bytes(1) + I32Bytes(2) + I32Bytes(1) + I32Bytes(3) +
                            I32Bytes(4) + I32Bytes(2) + I32Bytes(5) + I32Bytes(6));
  Status dims = ReadGroundTruth(ivecs).status();
  EXPECT_TRUE(dims.IsCorruption());
  EXPECT_NE(dims.message().find("row 1 has k 1"), std::string::npos) << dims.ToString();

  WriteFileBytes(dir.File("v.fbin"), U32Bytes(1) + U32Bytes(1) + F32Bytes(1.0f));
  EXPECT_TRUE(ReadGroundTruth(dir.File("v.fbin")).status().IsInvalidArgument());
  EXPECT_TRUE(ReadGroundTruth(dir.File("missing.ibin")).status().IsNotFound());
}

}  // namespace
}  // namespace strata
