#include "format/manifest.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "scratch_dir.h"

namespace strata::format {
namespace {

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Manifest Sample(const testutil::ScratchDir& dir) {
  WriteText(dir.File("graph.nodes"), std::string(8192, 'x'));
  Manifest m;
  m.index_type = "graph";
  m.metric = Metric::kCosine;
  m.element_type = ElementType::kUint8;
  m.dim = 96;
  m.num_vectors = 1000;
  m.parameters = {{"R", 64}, {"L", 125}, {"alpha", 1.2}};
  ManifestFile f{"graph.nodes", 0, 0};
  EXPECT_TRUE(ChecksumFile(dir.File("graph.nodes"), &f.bytes, &f.checksum).ok());
  m.files.push_back(f);
  return m;
}

TEST(Manifest, RoundTrip) {
  testutil::ScratchDir dir;
  Manifest m = Sample(dir);
  ASSERT_TRUE(WriteManifest(dir.path(), m).ok());
  auto got = ReadManifest(dir.path());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->index_type, "graph");
  EXPECT_EQ(got->metric, Metric::kCosine);
  EXPECT_EQ(got->element_type, ElementType::kUint8);
  EXPECT_EQ(got->dim, 96u);
  EXPECT_EQ(got->parameters["R"], 64);
  ASSERT_NE(got->Find("graph.nodes"), nullptr);
  EXPECT_EQ(got->Find("graph.nodes")->bytes, 8192u);
  EXPECT_TRUE(VerifyManifestFiles(dir.path(), *got).ok());
}

TEST(Manifest, DetectsEditsMissingFilesAndDamage) {
  testutil::ScratchDir dir;
  Manifest m = Sample(dir);
  ASSERT_TRUE(WriteManifest(dir.path(), m).ok());
  const std::string mpath = dir.File(kManifestName);
  const std::string good = ReadText(mpath);

  // A hand edit breaks the manifest checksum.
  std::string edited = good;
  edited.replace(edited.find("\"dim\": 96"), 9, "\"dim\": 97");
  WriteText(mpath, edited);
  EXPECT_TRUE(ReadManifest(dir.path()).status().IsCorruption());

  WriteText(mpath, "{not json");
  EXPECT_TRUE(ReadManifest(dir.path()).status().IsCorruption());

  // A data file of the wrong size, then a damaged one of the right size.
  WriteText(mpath, good);
  WriteText(dir.File("graph.nodes"), std::string(100, 'x'));
  EXPECT_TRUE(ReadManifest(dir.path()).status().IsCorruption());
  WriteText(dir.File("graph.nodes"), std::string(8191, 'x') + "y");
  auto reread = ReadManifest(dir.path());
  ASSERT_TRUE(reread.ok());
  EXPECT_TRUE(VerifyManifestFiles(dir.path(), *reread).IsCorruption());

  std::remove(dir.File("graph.nodes").c_str());
  EXPECT_TRUE(ReadManifest(dir.path()).status().IsCorruption());
  std::remove(mpath.c_str());
  Status none = ReadManifest(dir.path()).status();
  EXPECT_TRUE(none.IsNotFound());
  EXPECT_NE(none.message().find("not a Strata index"), std::string::npos);
}

}  // namespace
}  // namespace strata::format
