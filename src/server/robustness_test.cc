// Malformed requests, each class of them: the reply is a 4xx with Qdrant's
// error envelope, never a crash, a hang or a 5xx. (The oversized body is
// refused by the HTTP layer: tests/server/kill_test.py checks its 413.)
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "server/handlers.h"

namespace strata::server {
namespace {

class RobustnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata_robustness_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    manager_ = std::make_unique<CollectionManager>(dir_.string());
    ASSERT_TRUE(manager_->OpenAll().ok());
    handlers_ = std::make_unique<Handlers>(manager_.get(), options_);
    ASSERT_EQ(Call("PUT", "/collections/c", R"({"vectors": {"size": 2, "distance": "Cosine"}})"), 200);
    ASSERT_EQ(Call("PUT", "/collections/c/points?wait=true",
                   R"({"points": [{"id": 1, "vector": [1, 0], "payload": {"a": 1}}]})"),
              200);
  }
  void TearDown() override {
    handlers_.reset();
    manager_->CloseAll().IgnoreError();
    std::filesystem::remove_all(dir_);
  }
  // The status of a request; checks that the body is Qdrant's error envelope
  // whenever the status is not 200.
  int Call(const std::string& method, const std::string& target, const std::string& body) {
    std::string path = target;
    std::multimap<std::string, std::string> params;
    if (auto q = path.find("?wait=true"); q != std::string::npos) {
      path.resize(q);
      params.emplace("wait", "true");
    }
    std::string ep;
    const Reply r = handlers_->Dispatch(method, path, body, params, &ep);
    if (r.status != 200) {
      const json j = json::parse(r.body, nullptr, false);
      EXPECT_TRUE(j.is_object() && j.contains("status") && j["status"].contains("error"))
          << method << " " << target << ": " << r.body;
    }
    return r.status;
  }
  void ExpectClientError(const std::string& method, const std::string& path, const std::string& body) {
    const int status = Call(method, path, body);
    EXPECT_GE(status, 400) << method << " " << path << " " << body.substr(0, 200);
    EXPECT_LT(status, 500) << method << " " << path << " " << body.substr(0, 200);
  }

  std::filesystem::path dir_;
  ServerOptions options_;
  std::unique_ptr<CollectionManager> manager_;
  std::unique_ptr<Handlers> handlers_;
};

const char* const kBodyEndpoints[][2] = {
    {"PUT", "/collections/c/points?wait=true"}, {"POST", "/collections/c/points/search"},
    {"POST", "/collections/c/points/query"},    {"POST", "/collections/c/points/scroll"},
    {"POST", "/collections/c/points/count"},    {"POST", "/collections/c/points/delete"},
    {"POST", "/collections/c/points"},          {"POST", "/collections/c/points/search/batch"},
    {"PUT", "/collections/d"},                  {"PUT", "/collections/c/index"},
};

TEST_F(RobustnessTest, MalformedJson) {
  for (const auto& [m, p] : kBodyEndpoints) {
    for (const char* body : {"{", "{\"points\": [", "nul", "{\"a\": 1,}", "\xff\xfe", "{\"a\" 1}",
                             "[1, 2]", "\"text\"", "12", "{\"a\": \"\\ud800\"}"}) {
      ExpectClientError(m, p, body);
    }
  }
}

TEST_F(RobustnessTest, WrongTypes) {
  const std::string bodies[] = {
      R"({"points": 5})", R"({"points": [5]})", R"({"points": [{"id": 1.5, "vector": [1, 0]}]})",
      R"({"points": [{"id": -1, "vector": [1, 0]}]})", R"({"points": [{"id": 1, "vector": "x"}]})",
      R"({"points": [{"id": 1, "vector": [1, "0"]}]})", R"({"points": [{"id": 1, "vector": [1, 0], "payload": [1]}]})",
      R"({"batch": {"ids": [1], "vectors": [[1, 0]], "payloads": 3}})", R"({"batch": [1]})",
      R"({"vector": {"a": 1}})", R"({"vector": [1, 0], "limit": "3"})", R"({"vector": [1, 0], "limit": -1})",
      R"({"vector": [1, 0], "with_payload": {"include": 3}})", R"({"vector": [1, 0], "score_threshold": "x"})",
      R"({"vector": [1, 0], "params": {"hnsw_ef": "big"}})", R"({"vector": [1, 0], "filter": 3})",
      R"({"vector": [1, 0], "filter": {"must": [{"key": 3, "match": {"value": 1}}]}})",
      R"({"query": {"nearest": {"x": 1}}})", R"({"searches": {"vector": [1, 0]}})", R"({"searches": [3]})",
      R"({"ids": "1"})", R"({"ids": [{"a": 1}]})", R"({"offset": [1], "limit": 2})", R"({"filter": []})",
      R"({"vectors": {"size": "4", "distance": "Dot"}})", R"({"vectors": {"size": 4, "distance": 5}})",
      R"({"vectors": {"size": 4, "distance": "Dot"}, "strata": 3})",
      R"({"field_name": 3, "field_schema": "keyword"})", R"({"field_name": "a", "field_schema": {"type": 1}})",
  };
  for (const auto& [m, p] : kBodyEndpoints) {
    for (const std::string& body : bodies) {
      const int status = Call(m, p, body);
      // Some bodies are fine for some endpoints (a key another ignores); never a 5xx.
      EXPECT_LT(status, 500) << m << " " << p << " " << body;
    }
  }
  ExpectClientError("PUT", "/collections/d", R"({"vectors": {"size": 4, "distance": 5}})");
  ExpectClientError("POST", "/collections/c/points/search", R"({"vector": [1, 0], "score_threshold": "x"})");
}

TEST_F(RobustnessTest, HugeNumbers) {
  // 1e400 overflows a double (the parser refuses it); 1e39 and -1e39 overflow a float.
  ExpectClientError("PUT", "/collections/c/points?wait=true", R"({"points": [{"id": 2, "vector": [1e400, 0]}]})");
  ExpectClientError("PUT", "/collections/c/points?wait=true", R"({"points": [{"id": 2, "vector": [1e39, 0]}]})");
  ExpectClientError("PUT", "/collections/c/points?wait=true", R"({"points": [{"id": 2, "vector": [-1e39, 0]}]})");
  ExpectClientError("POST", "/collections/c/points/search", R"({"vector": [1e39, 0]})");
  ExpectClientError("POST", "/collections/c/points/search", R"({"vector": [1, 0], "score_threshold": 1e300})");
  // 2^70 and 2^64 are not 64-bit ids; 2^64 - 1 is.
  ExpectClientError("PUT", "/collections/c/points?wait=true",
                    R"({"points": [{"id": 1180591620717411303424, "vector": [1, 0]}]})");
  ExpectClientError("PUT", "/collections/c/points?wait=true",
                    R"({"points": [{"id": 18446744073709551616, "vector": [1, 0]}]})");
  EXPECT_EQ(Call("PUT", "/collections/c/points?wait=true",
                 R"({"points": [{"id": 18446744073709551615, "vector": [0, 1]}]})"), 200);
  ExpectClientError("POST", "/collections/c/points", R"({"ids": [1180591620717411303424]})");
  ExpectClientError("POST", "/collections/c/points/delete", R"({"points": [1e30]})");
  ExpectClientError("POST", "/collections/c/points/scroll", R"({"offset": 1180591620717411303424})");
  ExpectClientError("POST", "/collections/c/points/count",
                    R"({"filter": {"must": [{"has_id": [1180591620717411303424]}]}})");
  EXPECT_LT(Call("POST", "/collections/c/points/count",
                 R"({"filter": {"must": [{"key": "a", "range": {"gt": 1e308}}]}})"), 500);
  // limit + offset must not wrap around the limit.
  ExpectClientError("POST", "/collections/c/points/search",
                    R"({"vector": [1, 0], "limit": 18446744073709551615, "offset": 1})");
  ExpectClientError("POST", "/collections/c/points/search",
                    R"({"vector": [1, 0], "limit": 1, "offset": 18446744073709551615})");
  ExpectClientError("POST", "/collections/c/points/scroll", R"({"limit": 18446744073709551615})");
  ExpectClientError("PUT", "/collections/d", R"({"vectors": {"size": 18446744073709551615, "distance": "Dot"}})");
  ExpectClientError("POST", "/collections/c/points/search",
                    R"({"vector": [1, 0], "params": {"hnsw_ef": 18446744073709551615}})");
}

TEST_F(RobustnessTest, DeepNesting) {
  for (const std::size_t depth : {100u, 10000u, 1000000u}) {
    for (const auto& [open, close] : {std::pair{"[", "]"}, std::pair{"{\"a\":", "}"}}) {
      std::string nested;
      for (std::size_t i = 0; i < depth; ++i) nested += open;
      nested += "1";
      for (std::size_t i = 0; i < depth; ++i) nested += close;
      ExpectClientError("PUT", "/collections/c/points?wait=true",
                        R"({"points": [{"id": 3, "vector": [1, 0], "payload": {"p": )" + nested + "}}]}");
      ExpectClientError("POST", "/collections/c/points/count", R"({"filter": {"must": )" + nested + "}}");
      ExpectClientError("POST", "/collections/c/points", R"({"ids": )" + nested + "}");
      ExpectClientError("POST", "/collections/c/points/search", nested);
    }
  }
  // Unbalanced: only opening brackets.
  ExpectClientError("POST", "/collections/c/points/search", std::string(100000, '['));
  // Brackets inside strings do not count.
  EXPECT_EQ(Call("PUT", "/collections/c/points?wait=true",
                 R"({"points": [{"id": 4, "vector": [1, 0], "payload": {"s": ")" + std::string(1000, '[') +
                     R"(\"{"}}]})"),
            200);
  // A payload within the limit is stored and returned whole.
  std::string ok = "1";
  for (int i = 0; i < 40; ++i) ok = "[" + ok + "]";
  EXPECT_EQ(Call("PUT", "/collections/c/points?wait=true",
                 R"({"points": [{"id": 5, "vector": [1, 0], "payload": {"p": )" + ok + "}}]}"),
            200);
}

TEST_F(RobustnessTest, LongPathsAndUnknownRoutes) {
  ExpectClientError("POST", "/collections/" + std::string(8000, 'x') + "/points/search", R"({"vector": [1, 0]})");
  ExpectClientError("PUT", "/collections/" + std::string(8000, 'x'), R"({"vectors": {"size": 2, "distance": "Dot"}})");
  ExpectClientError("GET", std::string(8001, '/'), "");
  ExpectClientError("BREW", "/collections/c", "");
  // Past 1,024 bytes a path is refused before any route is matched (the
  // matcher recurses per character); a 255-byte collection name still works.
  EXPECT_EQ(Call("GET", "/collections/" + std::string(100000, 'y'), ""), 414);
  EXPECT_EQ(Call("GET", "/collections/" + std::string(255, 'z'), ""), 404);
}

TEST_F(RobustnessTest, BytesThatAreNotUtf8InThePath) {
  // Found by server_fuzz: the 404's message quoted the path, and dump() threw on it.
  EXPECT_EQ(Call("GET", "/co\xa0llections", ""), 404);
  EXPECT_EQ(Call("POST", "/collections/\xff\xfe/points/search", R"({"vector": [1, 0]})"), 404);
  EXPECT_EQ(Call("PUT", "/collections/\xc3", R"({"vectors": {"size": 2, "distance": "Dot"}})"), 400);
}

TEST(CheckJsonDepthTest, CountsBracketsOutsideStrings) {
  EXPECT_TRUE(CheckJsonDepth(R"({"a": [[1]]})", 3).ok());
  EXPECT_FALSE(CheckJsonDepth(R"({"a": [[1]]})", 2).ok());
  EXPECT_TRUE(CheckJsonDepth(R"({"a": "[[[[\"[[["})", 1).ok());
  EXPECT_TRUE(CheckJsonDepth(R"(]]]]{})", 1).ok());
  EXPECT_TRUE(CheckJsonDepth("", 0).ok());
}

TEST(FloatOfTest, Range) {
  EXPECT_EQ(FloatOf(json(1.5), "x").value(), 1.5f);
  EXPECT_FALSE(FloatOf(json(1e39), "x").ok());
  EXPECT_FALSE(FloatOf(json(-1e39), "x").ok());
  EXPECT_FALSE(FloatOf(json("1"), "x").ok());
  EXPECT_TRUE(FloatOf(json(std::uint64_t{1} << 63), "x").ok());
}

}  // namespace
}  // namespace strata::server
