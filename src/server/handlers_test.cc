// The endpoints driven directly (no sockets): request JSON in, Qdrant JSON out.
#include "server/handlers.h"

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace strata::server {
namespace {

class HandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata_server_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    handlers_.reset();
    if (manager_) manager_->CloseAll().IgnoreError();
    manager_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    handlers_.reset();
    if (manager_) {
      ASSERT_TRUE(manager_->CloseAll().ok());
    }
    manager_ = std::make_unique<CollectionManager>(dir_.string());
    ASSERT_TRUE(manager_->OpenAll().ok());
    options_.max_batch = 1000;
    handlers_ = std::make_unique<Handlers>(manager_.get(), options_);
  }
  std::pair<int, json> Call(const std::string& method, const std::string& path, const json& body = nullptr) {
    std::string ep;
    Reply r = handlers_->Dispatch(method, path, body.is_null() ? "" : body.dump(), {}, &ep);
    json j = json::parse(r.body, nullptr, false);
    return {r.status, j};
  }

  std::filesystem::path dir_;
  ServerOptions options_;
  std::unique_ptr<CollectionManager> manager_;
  std::unique_ptr<Handlers> handlers_;
};

TEST_F(HandlersTest, CollectionLifecycleAndErrors) {
  auto [s1, r1] = Call("PUT", "/collections/c1", {{"vectors", {{"size", 4}, {"distance", "Dot"}}}});
  ASSERT_EQ(s1, 200) << r1.dump();
  EXPECT_EQ(r1["result"], true);
  EXPECT_EQ(Call("PUT", "/collections/c1", {{"vectors", {{"size", 4}, {"distance", "Dot"}}}}).first, 409);
  EXPECT_EQ(Call("PUT", "/collections/c2", {{"vectors", {{"size", 4}, {"distance", "Foo"}}}}).first, 400);
  EXPECT_EQ(Call("PUT", "/collections/c2", {{"vectors", {{"size", 0}, {"distance", "Dot"}}}}).first, 400);
  EXPECT_EQ(Call("PUT", "/collections/c2", {{"vectors", {{"size", 4}, {"distance", "Dot"}}},
                                            {"strata", {{"bogus", 1}}}}).first, 400);
  auto [s2, r2] = Call("GET", "/collections/c1");
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(r2["result"]["config"]["params"]["vectors"]["distance"], "Dot");
  EXPECT_EQ(r2["result"]["config"]["params"]["vectors"]["size"], 4);
  EXPECT_EQ(Call("GET", "/collections/c1/exists").second["result"]["exists"], true);
  EXPECT_EQ(Call("GET", "/collections/nope/exists").second["result"]["exists"], false);
  auto [s404, r404] = Call("GET", "/collections/nope");
  EXPECT_EQ(s404, 404);
  EXPECT_TRUE(r404["status"]["error"].is_string());
  EXPECT_EQ(Call("GET", "/collections").second["result"]["collections"].size(), 1u);
  EXPECT_EQ(Call("DELETE", "/collections/c1").first, 200);
  EXPECT_EQ(Call("GET", "/collections/c1").first, 404);
  EXPECT_EQ(Call("GET", "/nothing").first, 404);
  std::string ep;
  EXPECT_EQ(handlers_->Dispatch("PUT", "/collections/x", "{not json", {}, &ep).status, 400);
}

TEST_F(HandlersTest, PointsSearchScrollCountSurviveReopen) {
  ASSERT_EQ(Call("PUT", "/collections/c", {{"vectors", {{"size", 2}, {"distance", "Euclid"}}}}).first, 200);
  json points = json::array();
  for (int i = 0; i < 50; ++i) {
    points.push_back({{"id", i}, {"vector", {i, 0}}, {"payload", {{"even", i % 2 == 0}, {"i", i}}}});
  }
  points.push_back({{"id", "5c56c793-69f3-4fbf-87e6-c4bf54c28c26"}, {"vector", {100, 0}}, {"payload", {{"i", 100}}}});
  auto [su, ru] = Call("PUT", "/collections/c/points", {{"points", points}});
  ASSERT_EQ(su, 200) << ru.dump();
  // Wrong dimension and oversized batch: 400 naming the problem.
  auto [sd, rd] = Call("PUT", "/collections/c/points", {{"points", {{{"id", 1}, {"vector", {1, 2, 3}}}}}});
  EXPECT_EQ(sd, 400);
  EXPECT_NE(rd["status"]["error"].get<std::string>().find("dimension"), std::string::npos);

  auto [ss, rs] = Call("POST", "/collections/c/points/search",
                       {{"vector", {10.2, 0}}, {"limit", 3}, {"with_payload", true}});
  ASSERT_EQ(ss, 200) << rs.dump();
  ASSERT_EQ(rs["result"].size(), 3u);
  EXPECT_EQ(rs["result"][0]["id"], 10);
  EXPECT_NEAR(rs["result"][0]["score"].get<double>(), 0.2, 1e-4);  // Euclidean distance, not squared
  EXPECT_EQ(rs["result"][0]["payload"]["i"], 10);

  const json even = {{"must", {{{"key", "even"}, {"match", {{"value", true}}}}}}};
  auto [sf, rf] = Call("POST", "/collections/c/points/query", {{"query", {11.2, 0}}, {"limit", 2}, {"filter", even}});
  ASSERT_EQ(sf, 200) << rf.dump();
  EXPECT_EQ(rf["result"]["points"][0]["id"], 12);
  EXPECT_EQ(rf["result"]["points"][1]["id"], 10);
  auto [st, rt] = Call("POST", "/collections/c/points/search",
                       {{"vector", {0, 0}}, {"limit", 10}, {"score_threshold", 2.5}});
  EXPECT_EQ(rt["result"].size(), 3u);  // ids 0, 1, 2

  auto [sc, rc] = Call("POST", "/collections/c/points/count", {{"filter", even}});
  EXPECT_EQ(rc["result"]["count"], 25);
  auto [sr, rr] = Call("POST", "/collections/c/points/scroll", {{"limit", 20}, {"offset", 40}});
  ASSERT_EQ(sr, 200) << rr.dump();
  EXPECT_EQ(rr["result"]["points"].size(), 11u);  // 40..49 and the UUID point (hashed id > 49)
  EXPECT_EQ(rr["result"]["points"][0]["id"], 40);
  EXPECT_TRUE(rr["result"]["next_page_offset"].is_null());
  auto [sg, rg] = Call("POST", "/collections/c/points",
                       {{"ids", {"5c56c793-69f3-4fbf-87e6-c4bf54c28c26", 3, 999}}, {"with_vector", true}});
  ASSERT_EQ(rg["result"].size(), 2u);
  EXPECT_EQ(rg["result"][0]["id"], "5c56c793-69f3-4fbf-87e6-c4bf54c28c26");
  EXPECT_EQ(rg["result"][0]["payload"], (json{{"i", 100}}));
  EXPECT_EQ(rg["result"][1]["vector"], (json{3.0, 0.0}));

  EXPECT_EQ(Call("POST", "/collections/c/points/delete", {{"filter", even}}).first, 200);
  EXPECT_EQ(Call("POST", "/collections/c/points/delete", {{"points", {1, 3}}}).first, 200);
  Reopen();  // the id set comes back from the log, checked against the collection
  EXPECT_EQ(Call("POST", "/collections/c/points/count").second["result"]["count"], 24);
  auto [sr2, rr2] = Call("POST", "/collections/c/points/scroll", {{"limit", 2}});
  EXPECT_EQ(rr2["result"]["points"][0]["id"], 5);
  EXPECT_EQ(rr2["result"]["next_page_offset"], 9);
  EXPECT_EQ(Call("POST", "/collections/c/points/scroll", {{"limit", 0}}).first, 400);
  EXPECT_EQ(Call("POST", "/collections/c/points/search", {{"vector", {0, 0}}, {"limit", 100000}}).first, 400);
}

// A search without payloads reads none while no point has a UUID id, and
// answers with UUIDs once one has, also after a restart (the id log's mark).
TEST_F(HandlersTest, SearchWithoutPayloadStillAnswersUuids) {
  const std::string uuid = "5c56c793-69f3-4fbf-87e6-c4bf54c28c26";
  ASSERT_EQ(Call("PUT", "/collections/u", {{"vectors", {{"size", 2}, {"distance", "Euclid"}}}}).first, 200);
  json points = json::array();
  for (int i = 0; i < 20; ++i) points.push_back({{"id", i}, {"vector", {i, 0}}, {"payload", {{"i", i}}}});
  ASSERT_EQ(Call("PUT", "/collections/u/points", {{"points", points}}).first, 200);
  EXPECT_FALSE(manager_->Get("u")->may_have_uuids());
  const json search = {{"vector", {50, 0}}, {"limit", 1}};
  auto [s1, r1] = Call("POST", "/collections/u/points/search", search);
  ASSERT_EQ(s1, 200) << r1.dump();
  EXPECT_EQ(r1["result"][0]["id"], 19);
  EXPECT_FALSE(r1["result"][0].contains("payload") && !r1["result"][0]["payload"].is_null())
      << r1.dump();
  ASSERT_EQ(Call("PUT", "/collections/u/points", {{"points", {{{"id", uuid}, {"vector", {49, 0}}}}}}).first, 200);
  EXPECT_TRUE(manager_->Get("u")->may_have_uuids());
  // GET one point: by integer id, by UUID; absent 404; malformed 400.
  auto [sg, rg] = Call("GET", "/collections/u/points/3");
  ASSERT_EQ(sg, 200) << rg.dump();
  EXPECT_EQ(rg["result"]["id"], 3);
  EXPECT_EQ(rg["result"]["payload"]["i"], 3);
  EXPECT_EQ(rg["result"]["vector"], (json{3.0, 0.0}));
  EXPECT_EQ(Call("GET", "/collections/u/points/" + uuid).second["result"]["id"], uuid);
  EXPECT_EQ(Call("GET", "/collections/u/points/999").first, 404);
  EXPECT_EQ(Call("GET", "/collections/u/points/not-an-id").first, 400);
  EXPECT_EQ(Call("GET", "/collections/u/points/99999999999999999999999").first, 400);
  EXPECT_EQ(Call("GET", "/collections/nope/points/3").first, 404);
  for (int round = 0; round < 2; ++round) {
    auto [s, r] = Call("POST", "/collections/u/points/search", search);
    ASSERT_EQ(s, 200) << r.dump();
    EXPECT_EQ(r["result"][0]["id"], uuid) << "round " << round << ": " << r.dump();
    Reopen();
    EXPECT_TRUE(manager_->Get("u")->may_have_uuids());
  }
}

TEST_F(HandlersTest, StrataOptionsSurviveRestart) {
  ASSERT_EQ(Call("PUT", "/collections/t", {{"vectors", {{"size", 2}, {"distance", "Euclid"}}},
                                           {"strata", {{"flat_threshold", 300}, {"durability", "sync"}}}}).first, 200);
  Reopen();  // the threshold must come back from the options file, not the default 1024
  json points = json::array();
  for (int i = 0; i < 300; ++i) points.push_back({{"id", i}, {"vector", {i, i % 7}}});
  ASSERT_EQ(Call("PUT", "/collections/t/points", {{"points", points}}).first, 200);
  auto [s, r] = Call("GET", "/collections/t");
  ASSERT_EQ(s, 200);
  EXPECT_GT(r["result"]["config"]["strata"]["index_version"].get<int>(), 0) << r.dump();
}

TEST_F(HandlersTest, GraphLabelFieldMakesALabelAwareGraph) {
  const json vectors = {{"size", 4}, {"distance", "Euclid"}};
  for (const json& bad : {json(3), json(""), json::array(), json{{"field", "c"}, {"type", "float"}},
                          json{{"type", "keyword"}}, json{{"field", "c"}, {"kind", "keyword"}}}) {
    auto [status, reply] = Call("PUT", "/collections/bad",
                                {{"vectors", vectors}, {"strata", {{"graph_label_field", bad}}}});
    EXPECT_EQ(status, 400) << bad.dump();
    EXPECT_NE(reply.dump().find("graph_label_field"), std::string::npos) << reply.dump();
  }
  ASSERT_EQ(Call("PUT", "/collections/l",
                 {{"vectors", vectors},
                  {"strata", {{"graph_label_field", "class"}, {"flat_threshold", 256}}}})
                .first,
            200);
  Reopen();  // the option and the declared field are the collection's own
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  json points = json::array();
  for (int i = 0; i < 300; ++i) {
    points.push_back({{"id", i},
                      {"vector", {nd(rng), nd(rng), nd(rng), nd(rng)}},
                      {"payload", {{"class", i % 3}}}});
  }
  ASSERT_EQ(Call("PUT", "/collections/l/points", {{"points", points}}).first, 200);
  ASSERT_TRUE(manager_->Get("l")->collection().WaitForMerge().ok());
  const CollectionStats st = manager_->Get("l")->collection().Stats();
  ASSERT_GT(st.index_version, 0u);
  ASSERT_EQ(st.payload_fields.size(), 1u);
  EXPECT_EQ(st.payload_fields[0].path, "class");
  EXPECT_EQ(st.graph_label_field, "class");
  EXPECT_EQ(Call("GET", "/collections/l").second["result"]["config"]["strata"]["graph_label_field"],
            "class");
  // A label search returns only that class.
  auto [s, r] = Call("POST", "/collections/l/points/search",
                     {{"vector", {0.1, 0.2, 0.3, 0.4}},
                      {"limit", 10},
                      {"filter", {{"must", {{{"key", "class"}, {"match", {{"value", 2}}}}}}}}});
  ASSERT_EQ(s, 200) << r.dump();
  ASSERT_EQ(r["result"].size(), 10u) << r.dump();
  for (const json& hit : r["result"]) EXPECT_EQ(hit["id"].get<int>() % 3, 2) << r.dump();

  // The same on a keyword field: {"field", "type"}.
  ASSERT_EQ(Call("PUT", "/collections/k",
                 {{"vectors", vectors},
                  {"strata",
                   {{"graph_label_field", {{"field", "tag"}, {"type", "keyword"}}},
                    {"flat_threshold", 256}}}})
                .first,
            200);
  Reopen();
  json tagged = json::array();
  const char* tags[] = {"red", "green", "blue"};
  for (int i = 0; i < 300; ++i) {
    tagged.push_back({{"id", i},
                      {"vector", {nd(rng), nd(rng), nd(rng), nd(rng)}},
                      {"payload", {{"tag", tags[i % 3]}}}});
  }
  ASSERT_EQ(Call("PUT", "/collections/k/points", {{"points", tagged}}).first, 200);
  ASSERT_TRUE(manager_->Get("k")->collection().WaitForMerge().ok());
  const CollectionStats kst = manager_->Get("k")->collection().Stats();
  ASSERT_GT(kst.index_version, 0u);
  ASSERT_EQ(kst.payload_fields.size(), 1u);
  EXPECT_EQ(kst.payload_fields[0].type, PayloadFieldType::kKeyword);
  auto [ks, kr] = Call("POST", "/collections/k/points/search",
                       {{"vector", {0.1, 0.2, 0.3, 0.4}},
                        {"limit", 10},
                        {"filter", {{"must", {{{"key", "tag"}, {"match", {{"value", "blue"}}}}}}}}});
  ASSERT_EQ(ks, 200) << kr.dump();
  ASSERT_EQ(kr["result"].size(), 10u) << kr.dump();
  for (const json& hit : kr["result"]) EXPECT_EQ(hit["id"].get<int>() % 3, 2) << kr.dump();
}

TEST_F(HandlersTest, StrataBuildAndMergeOptions) {
  const json vectors = {{"size", 4}, {"distance", "Euclid"}};
  auto create = [&](const std::string& name, const json& strata) {
    return Call("PUT", "/collections/" + name, {{"vectors", vectors}, {"strata", strata}});
  };
  // Each bad option is a 400 that names it.
  for (const auto& [strata, named] : std::vector<std::pair<json, std::string>>{
           {{{"graph", {{"Q", 1}}}}, "graph.Q"},
           {{{"graph", {{"R", -3}}}}, "graph.R"},
           {{{"graph", {{"R", 2}}}}, "R must be"},
           {{{"graph", 5}}, "graph"},
           {{{"ivf", {{"bits", "x"}}}}, "ivf.bits"},
           {{{"ivf", {{"filter_codes", 1}}}}, "ivf.filter_codes"},
           {{{"merge_pending_ratio", "x"}}, "merge_pending_ratio"},
           {{{"update_mode", "sideways"}}, "update_mode"},
           {{{"update_mode", "in_place"}, {"index", "ivf"}}, "in_place"},
           {{{"index", "hnsw"}}, "index"}}) {
    auto [status, reply] = create("bad", strata);
    EXPECT_EQ(status, 400) << strata.dump();
    EXPECT_NE(reply.dump().find(named), std::string::npos) << strata.dump() << " -> " << reply.dump();
  }
  EXPECT_EQ(Call("GET", "/collections/bad").first, 404);

  ASSERT_EQ(create("g", {{"flat_threshold", 256}, {"merge_pending_count", 100},
                         {"merge_pending_ratio", 0.0}, {"update_mode", "buffered"},
                         {"graph", {{"R", 16}, {"L", 40}, {"alpha", 1.1}, {"pq_bytes", 4}}}}).first,
            200);
  Reopen();  // merge policy from the options file, build parameters from the collection
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  json points = json::array();
  for (int i = 0; i < 256; ++i) points.push_back({{"id", i}, {"vector", {nd(rng), nd(rng), nd(rng), nd(rng)}}});
  ASSERT_EQ(Call("PUT", "/collections/g/points", {{"points", points}}).first, 200);
  const CollectionStats st = manager_->Get("g")->collection().Stats();
  EXPECT_NE(st.index_description.find("R=16"), std::string::npos) << st.index_description;
  EXPECT_NE(st.index_description.find("pq 4 B"), std::string::npos) << st.index_description;
  auto [s, r] = Call("GET", "/collections/g");
  ASSERT_EQ(s, 200);
  EXPECT_TRUE(r["result"]["config"]["strata"].contains("merging")) << r.dump();
  // 100 pending (the count, not the ratio) start a merge.
  points = json::array();
  for (int i = 256; i < 356; ++i) points.push_back({{"id", i}, {"vector", {nd(rng), nd(rng), nd(rng), nd(rng)}}});
  ASSERT_EQ(Call("PUT", "/collections/g/points", {{"points", points}}).first, 200);
  ASSERT_TRUE(manager_->Get("g")->collection().WaitForMerge().ok());
  for (int i = 0; i < 200 && manager_->Get("g")->collection().Stats().pending > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ASSERT_TRUE(manager_->Get("g")->collection().WaitForMerge().ok());
  }
  EXPECT_EQ(manager_->Get("g")->collection().Stats().pending, 0u);
}

}  // namespace
}  // namespace strata::server
