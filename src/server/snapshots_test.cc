// Collection snapshots: create, list, recover (by name, by file:// URL, into
// another name), what a recover refuses, snapshots under concurrent
// searches, and the tar format beneath.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "server/handlers.h"
#include "server/tar.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;

class SnapshotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata_snapshots_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    handlers_.reset();
    if (manager_) manager_->CloseAll().IgnoreError();
    fs::remove_all(dir_);
  }
  void Reopen() {
    handlers_.reset();
    if (manager_) {
      ASSERT_TRUE(manager_->CloseAll().ok());
    }
    manager_ = std::make_unique<CollectionManager>(dir_.string());
    ASSERT_TRUE(manager_->OpenAll().ok());
    handlers_ = std::make_unique<Handlers>(manager_.get(), options_);
  }
  std::pair<int, json> Call(const std::string& method, const std::string& path, const json& body = nullptr) {
    std::string ep;
    Reply r = handlers_->Dispatch(method, path, body.is_null() ? "" : body.dump(), {}, &ep);
    return {r.status, json::parse(r.body, nullptr, false)};
  }
  json Points(const std::string& c) {
    auto [s, r] = Call("POST", "/collections/" + c + "/points/scroll",
                       {{"limit", 100}, {"with_payload", true}, {"with_vector", true}});
    EXPECT_EQ(s, 200) << r.dump();
    return r["result"]["points"];
  }
  void MakeCollection(const std::string& c) {
    ASSERT_EQ(Call("PUT", "/collections/" + c, {{"vectors", {{"size", 2}, {"distance", "Euclid"}}}}).first, 200);
    json pts = json::array();
    pts.push_back({{"id", 1}, {"vector", {1, 0}}, {"payload", {{"a", 1}}}});
    pts.push_back({{"id", 2}, {"vector", {0, 1}}, {"payload", {{"a", 2}}}});
    pts.push_back({{"id", "550e8400-e29b-41d4-a716-446655440000"}, {"vector", {1, 1}}});
    ASSERT_EQ(Call("PUT", "/collections/" + c + "/points", {{"points", pts}}).first, 200);
  }

  fs::path dir_;
  ServerOptions options_;
  std::unique_ptr<CollectionManager> manager_;
  std::unique_ptr<Handlers> handlers_;
};

TEST_F(SnapshotsTest, CreateListRecover) {
  MakeCollection("s");
  const json before = Points("s");
  ASSERT_EQ(before.size(), 3u);
  auto [sc, created] = Call("POST", "/collections/s/snapshots");
  ASSERT_EQ(sc, 200) << created.dump();
  const std::string name = created["result"]["name"];
  EXPECT_TRUE(name.starts_with("s-") && name.ends_with(".snapshot")) << name;
  EXPECT_GT(created["result"]["size"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(created["result"]["creation_time"].is_string());
  EXPECT_EQ(fs::file_size(dir_ / "snapshots" / "s" / name), created["result"]["size"].get<std::uint64_t>());
  // The collection works on after the snapshot (it was closed and reopened).
  ASSERT_EQ(Call("PUT", "/collections/s/points", {{"points", {{{"id", 9}, {"vector", {2, 2}}}}}}).first, 200);
  ASSERT_EQ(Call("POST", "/collections/s/points/delete", {{"points", {1}}}).first, 200);
  EXPECT_EQ(Points("s").size(), 3u);

  auto [sl, list] = Call("GET", "/collections/s/snapshots");
  ASSERT_EQ(sl, 200);
  ASSERT_EQ(list["result"].size(), 1u);
  EXPECT_EQ(list["result"][0]["name"], name);
  EXPECT_EQ(list["result"][0]["size"], created["result"]["size"]);

  // Recover by name: back to the snapshot's points (9 gone, 1 back).
  auto [sr, rec] = Call("PUT", "/collections/s/snapshots/recover", {{"location", name}});
  ASSERT_EQ(sr, 200) << rec.dump();
  EXPECT_EQ(Points("s"), before);
  EXPECT_EQ(Call("POST", "/collections/s/points/count", json::object()).second["result"]["count"], 3);
  // ... into another name, by file:// URL; both survive a restart.
  const std::string url = "file://" + (dir_ / "snapshots" / "s" / name).string();
  ASSERT_EQ(Call("PUT", "/collections/t/snapshots/recover", {{"location", url}}).first, 200);
  Reopen();
  EXPECT_EQ(Points("s"), before);
  EXPECT_EQ(Points("t"), before);
  // Writes to the recovered copy do not reach the original.
  ASSERT_EQ(Call("POST", "/collections/t/points/delete", {{"points", {2}}}).first, 200);
  EXPECT_EQ(Points("t").size(), 2u);
  EXPECT_EQ(Points("s").size(), 3u);
}

TEST_F(SnapshotsTest, RefusesBadRequests) {
  MakeCollection("s");
  EXPECT_EQ(Call("POST", "/collections/nope/snapshots").first, 404);
  EXPECT_EQ(Call("GET", "/collections/nope/snapshots").first, 404);
  EXPECT_EQ(Call("PUT", "/collections/s/snapshots/recover", {{"location", 5}}).first, 400);
  EXPECT_EQ(Call("PUT", "/collections/s/snapshots/recover", json::object()).first, 400);
  EXPECT_EQ(Call("PUT", "/collections/s/snapshots/recover", {{"location", "file:///etc/passwd"}}).first, 400);
  EXPECT_EQ(Call("PUT", "/collections/s/snapshots/recover",
                 {{"location", "file://" + (dir_ / "snapshots" / ".." / "ids" / "s.log").string()}}).first, 400);
  EXPECT_EQ(Call("PUT", "/collections/s/snapshots/recover", {{"location", "http://x/y.snapshot"}}).first, 400);
  EXPECT_EQ(Call("PUT", "/collections/s/snapshots/recover", {{"location", "../x"}}).first, 400);
  EXPECT_EQ(Call("PUT", "/collections/s/snapshots/recover", {{"location", "missing.snapshot"}}).first, 404);
  // A damaged snapshot is refused and the collection is left as it was.
  fs::create_directories(dir_ / "snapshots" / "s");
  std::ofstream(dir_ / "snapshots" / "s" / "bad.snapshot") << std::string(1024, 'x');
  const int st = Call("PUT", "/collections/s/snapshots/recover", {{"location", "bad.snapshot"}}).first;
  EXPECT_GE(st, 400);
  EXPECT_EQ(Points("s").size(), 3u);
}

TEST_F(SnapshotsTest, SnapshotWhileSearching) {
  MakeCollection("s");
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, done{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        auto [s, r] = Call("POST", "/collections/s/points/search", {{"vector", {1, 0}}, {"limit", 3}});
        if (s != 200 || r["result"].size() != 3) ++bad;
        ++done;
      }
    });
  }
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Call("POST", "/collections/s/snapshots").first, 200);
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad, 0);
  EXPECT_GT(done, 0);
  EXPECT_EQ(Call("GET", "/collections/s/snapshots").second["result"].size(), 5u);
}

TEST_F(SnapshotsTest, Delete) {
  MakeCollection("s");
  auto [sc, created] = Call("POST", "/collections/s/snapshots");
  ASSERT_EQ(sc, 200);
  const std::string name = created["result"]["name"];
  EXPECT_EQ(Call("DELETE", "/collections/s/snapshots/nope.snapshot").first, 404);
  EXPECT_EQ(Call("DELETE", "/collections/s/snapshots/..").first, 400);
  EXPECT_EQ(Call("DELETE", "/collections/s/snapshots/" + name).first, 200);
  EXPECT_EQ(Call("GET", "/collections/s/snapshots").second["result"].size(), 0u);
  EXPECT_EQ(Call("DELETE", "/collections/s/snapshots/" + name).first, 404);
}

TEST(TarTest, RoundTrip) {
  const fs::path d = fs::temp_directory_path() / ("strata_tar_test_" + std::to_string(::getpid()));
  fs::remove_all(d);
  const std::string long_dir(90, 'd');
  fs::create_directories(d / "src" / "sub" / long_dir);
  std::ofstream(d / "src" / "a.txt") << "hello";
  std::ofstream(d / "src" / "empty");
  std::string big(100000, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  std::ofstream(d / "src" / "sub" / long_dir / (std::string(60, 'f') + ".bin"), std::ios::binary) << big;
  std::ofstream(d / "single") << "one";
  ASSERT_TRUE(WriteTar((d / "t.tar").string(), {{"x", (d / "src").string()}, {"y", (d / "single").string()}}).ok());
  EXPECT_EQ(fs::file_size(d / "t.tar") % 512, 0u);
  ASSERT_TRUE(ExtractTar((d / "t.tar").string(), (d / "out").string()).ok());
  auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(d / "out" / "x" / "a.txt"), "hello");
  EXPECT_EQ(fs::file_size(d / "out" / "x" / "empty"), 0u);
  EXPECT_EQ(read(d / "out" / "x" / "sub" / long_dir / (std::string(60, 'f') + ".bin")), big);
  EXPECT_EQ(read(d / "out" / "y"), "one");
  // A header naming ../ is refused; so is a truncated archive.
  std::ofstream(d / "evil") << "e";
  ASSERT_TRUE(WriteTar((d / "evil.tar").string(), {{"../escape", (d / "evil").string()}}).ok());
  EXPECT_FALSE(ExtractTar((d / "evil.tar").string(), (d / "out2").string()).ok());
  EXPECT_FALSE(fs::exists(d / "escape"));
  fs::resize_file(d / "t.tar", 700);
  EXPECT_FALSE(ExtractTar((d / "t.tar").string(), (d / "out3").string()).ok());
  fs::remove_all(d);
}

}  // namespace
}  // namespace strata::server
