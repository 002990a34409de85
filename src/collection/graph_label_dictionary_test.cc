// GraphLabelDictionary: keywords numbered in order of first sight, stored so
// that a reload reads the same numbers, a malformed entry refused, and the
// label space bounded.
#include "collection/graph_label_dictionary.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <vector>

#include "collection/scratch_db_test_util.h"
#include "collection/store_keys.h"
#include "scratch_dir.h"

namespace strata::collection {
namespace {

TEST(GraphLabelDictionary, NumbersInFirstSightOrderAndReloads) {
  testutil::ScratchDir dir;
  {
    auto db = OpenScratchDb(dir.File("db"));
    GraphLabelDictionary d;
    ASSERT_TRUE(d.Load(db.get()).ok());
    EXPECT_EQ(d.size(), 0u);
    const std::vector<std::string> first = {"news", "sport", "news"};
    ASSERT_TRUE(d.Assign(db.get(), first, 100).ok());
    EXPECT_EQ(d.Find("news"), 0u);
    EXPECT_EQ(d.Find("sport"), 1u);
    EXPECT_FALSE(d.Find("weather").has_value());
    const std::vector<std::string> second = {"weather", "news", ""};
    ASSERT_TRUE(d.Assign(db.get(), second, 100).ok());
    EXPECT_EQ(d.Find("weather"), 2u);
    EXPECT_EQ(d.Find(""), 3u);  // an empty keyword is a keyword
    EXPECT_EQ(d.size(), 4u);
    // Other key spaces are not read as labels.
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), MetaKey("options"), "{}").ok());
  }
  auto db = OpenScratchDb(dir.File("db"));
  GraphLabelDictionary again;
  ASSERT_TRUE(again.Load(db.get()).ok());
  EXPECT_EQ(again.size(), 4u);
  EXPECT_EQ(again.Find("news"), 0u);
  EXPECT_EQ(again.Find("sport"), 1u);
  EXPECT_EQ(again.Find("weather"), 2u);
  EXPECT_EQ(again.Find(""), 3u);
}

TEST(GraphLabelDictionary, BoundedAndCorruptionRefused) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  GraphLabelDictionary d;
  const std::vector<std::string> two = {"a", "b"};
  ASSERT_TRUE(d.Assign(db.get(), two, 2).ok());
  const std::vector<std::string> more = {"a", "c"};
  const Status full = d.Assign(db.get(), more, 2);
  EXPECT_EQ(full.code(), StatusCode::kInvalidArgument) << full.ToString();
  EXPECT_FALSE(d.Find("c").has_value()) << "a refused batch assigns nothing";

  ASSERT_TRUE(
      db->Put(rocksdb::WriteOptions(), std::string(1, kGraphLabelPrefix) + "x", "abc").ok());
  GraphLabelDictionary reread;
  const Status bad = reread.Load(db.get());
  EXPECT_EQ(bad.code(), StatusCode::kCorruption) << bad.ToString();
}

}  // namespace
}  // namespace strata::collection
