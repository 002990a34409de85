#include "server/qdrant_json.h"

#include <cmath>

#include <gtest/gtest.h>

namespace strata::server {
namespace {

TEST(QdrantJson, UnsignedAndUuidIds) {
  Result<PointId> n = ParsePointId(json(42u));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value().id, 42u);
  EXPECT_FALSE(n.value().uuid);

  Result<PointId> a = ParsePointId(json("5C56C793-69F3-4FBF-87E6-C4BF54C28C26"));
  Result<PointId> b = ParsePointId(json("5c56c79369f34fbf87e6c4bf54c28c26"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().id, b.value().id);  // same UUID, either spelling
  EXPECT_EQ(*a.value().uuid, "5c56c793-69f3-4fbf-87e6-c4bf54c28c26");
  Result<PointId> c = ParsePointId(json("5c56c793-69f3-4fbf-87e6-c4bf54c28c27"));
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c.value().id, a.value().id);

  EXPECT_FALSE(ParsePointId(json(-1)).ok());
  EXPECT_FALSE(ParsePointId(json("not-a-uuid")).ok());
  EXPECT_FALSE(ParsePointId(json(1.5)).ok());
}

TEST(QdrantJson, UuidRoundTripsThroughPayload) {
  Result<PointId> id = ParsePointId(json("5c56c793-69f3-4fbf-87e6-c4bf54c28c26"));
  ASSERT_TRUE(id.ok());
  Result<std::string> stored = StoredPayload(json{{"a", 1}}, id.value());
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(PointIdJson(id.value().id, stored.value()), json("5c56c793-69f3-4fbf-87e6-c4bf54c28c26"));
  Result<json> shown = ProjectPayload(json(true), stored.value());
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ(shown.value(), (json{{"a", 1}}));  // the reserved key is hidden
  EXPECT_EQ(PointIdJson(7, "{\"a\":1}"), json(7));
  EXPECT_FALSE(StoredPayload(json::array(), PointId{}).ok());
}

TEST(QdrantJson, ScoresPerDistance) {
  EXPECT_FLOAT_EQ(ScoreFromDistance(Metric::kCosine, 0.25f), 0.75f);
  EXPECT_FLOAT_EQ(ScoreFromDistance(Metric::kInnerProduct, -3.0f), 3.0f);
  EXPECT_FLOAT_EQ(ScoreFromDistance(Metric::kL2, 9.0f), 3.0f);
  EXPECT_TRUE(PassesThreshold(Metric::kCosine, 0.8f, 0.5f));
  EXPECT_FALSE(PassesThreshold(Metric::kCosine, 0.4f, 0.5f));
  EXPECT_TRUE(PassesThreshold(Metric::kL2, 1.0f, 2.0f));
  EXPECT_FALSE(PassesThreshold(Metric::kL2, 3.0f, 2.0f));
  EXPECT_EQ(MetricFromQdrant("Dot").value(), Metric::kInnerProduct);
  EXPECT_FALSE(MetricFromQdrant("Manhattan").ok());
  EXPECT_EQ(QdrantDistanceName(Metric::kL2), "Euclid");
}

TEST(QdrantJson, PayloadProjection) {
  const std::string p = R"({"a":1,"b":2,"c":3})";
  EXPECT_TRUE(ProjectPayload(json(false), p).value().is_null());
  EXPECT_EQ(ProjectPayload(json{"a", "c", "zz"}, p).value(), (json{{"a", 1}, {"c", 3}}));
  EXPECT_EQ(ProjectPayload(json{{"exclude", {"b"}}}, p).value(), (json{{"a", 1}, {"c", 3}}));
  EXPECT_FALSE(ProjectPayload(json{{"include", 5}}, p).ok());
}

TEST(QdrantJson, FilterDepthAndUuidHasId) {
  json deep = {{"must", json::array()}};
  json* cur = &deep["must"];
  for (int i = 0; i < 40; ++i) {
    cur->push_back({{"must", json::array()}});
    cur = &(*cur)[0]["must"];
  }
  Result<std::string> r = PrepareFilter(deep, 32);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deeper"), std::string::npos);

  const json f = {{"must", {{{"has_id", {"5c56c793-69f3-4fbf-87e6-c4bf54c28c26", 3}}}}}};
  Result<std::string> ok = PrepareFilter(f, 32);
  ASSERT_TRUE(ok.ok());
  const json parsed = json::parse(ok.value());
  const json& ids = parsed["must"][0]["has_id"];
  EXPECT_EQ(ids[0], json(ParsePointId(json("5c56c793-69f3-4fbf-87e6-c4bf54c28c26")).value().id));
  EXPECT_EQ(ids[1], json(3));
  EXPECT_FALSE(PrepareFilter(json::array(), 32).ok());
}

TEST(QdrantJson, Envelopes) {
  const json e = ErrorBody("boom", 0.5);
  EXPECT_EQ(e["status"]["error"], "boom");
  EXPECT_EQ(e["time"], 0.5);
  EXPECT_EQ(OkBody(true, 0)["status"], "ok");
}

}  // namespace
}  // namespace strata::server
