// .npy headers: versions 1.0/2.0/3.0 written by hand, dict syntax variants,
// and every unsupported-array case.
#include "dataset/npy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dataset/test_util.h"
#include "strata/dataset.h"

namespace strata {
namespace {

using dataset_test::RawBytes;
using dataset_test::ScopedTempDir;
using dataset_test::U32Bytes;
using dataset_test::WriteFileBytes;

// A complete .npy file: magic, version, header length (u16 for major 1, u32
// otherwise), `dict` padded with spaces to a 64-byte boundary plus '\n', data.
std::string NpyFile(int major, const std::string& dict, const std::string& data) {
  const std::size_t pre = major == 1 ? 10 : 12;
  std::string text = dict;
  while ((pre + text.size() + 1) % 64 != 0) text.push_back(' ');
  text.push_back('\n');
  std::string out = std::string("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  if (major == 1) {
    out.push_back(static_cast<char>(text.size() & 0xff));
    out.push_back(static_cast<char>(text.size() >> 8));
  } else {
    out += U32Bytes(static_cast<std::uint32_t>(text.size()));
  }
  return out + text + data;
}

const std::vector<float> kData = {1.5f, -2.0f, 3.0f, 4.0f, 5.0f, 6.0f};

TEST(Npy, ReadsVersions1And2And3) {
  ScopedTempDir dir;
  for (int major : {1, 2, 3}) {
    SCOPED_TRACE(major);
    const std::string path = dir.File(std::to_string(major) + "v.npy");
    WriteFileBytes(path,
                   NpyFile(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }",
                           RawBytes(kData)));
    auto r = DatasetReader::Open(path);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->info().npy_version, major);
    EXPECT_EQ((*r)->info().data_offset, 128u);  // 64-byte aligned
    EXPECT_EQ((*r)->rows(), 3u);
    EXPECT_EQ((*r)->dim(), 2u);
    std::vector<float> out(6);
    ASSERT_TRUE((*r)->ReadRows(0, 3, std::span<float>(out)).ok());
    EXPECT_EQ(out, kData);
  }
}

TEST(Npy, AcceptsDictSyntaxVariants) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.npy");
  // Keys reordered, double quotes, Python 2 longs, no trailing comma, an extra key.
  WriteFileBytes(path, NpyFile(1,
                               "{\"shape\": (3L, 2L), \"fortran_order\": False, "
                               "\"extra\": [1, (2, 'x')], \"descr\": \"<f4\"}",
                               RawBytes(kData)));
  auto info = GetDatasetInfo(path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->rows, 3u);
  EXPECT_EQ(info->dim, 2u);
  // One-byte types with any byte-order marker, and '=' (native) floats.
  for (const char* descr : {"|u1", "<u1", ">u1", "|i1", "=f4"}) {
    SCOPED_TRACE(descr);
    const bool is_f4 = std::string(descr) == "=f4";
    WriteFileBytes(path, NpyFile(1,
                                 std::string("{'descr': '") + descr +
                                     "', 'fortran_order': False, 'shape': (2, 3), }",
                                 is_f4 ? RawBytes(kData) : std::string(6, '\x07')));
    auto i = GetDatasetInfo(path);
    ASSERT_TRUE(i.ok()) << i.status().ToString();
    EXPECT_EQ(i->element_type, is_f4
                                   ? ElementType::kFloat32
                                   : (descr[1] == 'u' ? ElementType::kUint8 : ElementType::kInt8));
  }
}

struct BadCase {
  const char* name;
  std::string dict;
  std::string data;
  StatusCode code;
  const char* needle;  // must appear in the message
};

TEST(Npy, RejectsUnsupportedArraysWithClearErrors) {
  ScopedTempDir dir;
  const std::string d6 = RawBytes(kData);
  const std::vector<BadCase> cases = {
      {"fortran", "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }", d6,
       StatusCode::kNotSupported, "Fortran"},
      {"big_endian", "{'descr': '>f4', 'fortran_order': False, 'shape': (3, 2), }", d6,
       StatusCode::kNotSupported, "big-endian"},
      {"float64", "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 1), }", d6,
       StatusCode::kNotSupported, "'<f8'"},
      {"int32", "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 2), }", d6,
       StatusCode::kNotSupported, "'<i4'"},
      {"structured", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", d6,
       StatusCode::kNotSupported, "structured"},
      {"one_d", "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", d6,
       StatusCode::kInvalidArgument, "(6,) (1-D)"},
      {"three_d", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 2), }", d6,
       StatusCode::kInvalidArgument, "3-D"},
      {"scalar", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", d6.substr(0, 4),
       StatusCode::kInvalidArgument, "0-D"},
      {"zero_dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", "",
       StatusCode::kInvalidArgument, "dimension 0"},
      {"huge_dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 100000), }", d6,
       StatusCode::kInvalidArgument, "dimension 100000"},
      {"overflow", "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615, 4), }",
       d6, StatusCode::kCorruption, "overflows"},
      {"short_data", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2), }", d6,
       StatusCode::kCorruption, "truncated"},
      {"long_data", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", d6,
       StatusCode::kCorruption, "does not match"},
      {"missing_key", "{'descr': '<f4', 'shape': (3, 2), }", d6, StatusCode::kCorruption, "lacks"},
      {"garbage", "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3, 2), }", d6,
       StatusCode::kCorruption, "fortran_order"},
      {"unclosed", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2)", d6,
       StatusCode::kCorruption, "malformed"},
      {"negative", "{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 2), }", d6,
       StatusCode::kCorruption, "shape"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.File(std::string(c.name) + ".npy");
    WriteFileBytes(path, NpyFile(1, c.dict, c.data));
    Status s = DatasetReader::Open(path).status();
    EXPECT_EQ(s.code(), c.code) << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find(c.needle), std::string::npos) << s.ToString();
  }
}

TEST(Npy, RejectsBadPreamble) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.npy");
  const std::string good =
      NpyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", RawBytes(kData));
  WriteFileBytes(path, "\x93NUMP");
  EXPECT_TRUE(GetDatasetInfo(path).status().IsCorruption());
  WriteFileBytes(path, "PK\x03\x04" + good.substr(4));  // e.g. an .npz renamed
  Status magic = GetDatasetInfo(path).status();
  EXPECT_TRUE(magic.IsCorruption());
  EXPECT_NE(magic.message().find("magic"), std::string::npos);
  std::string v4 = good;
  v4[6] = 4;
  WriteFileBytes(path, v4);
  Status version = GetDatasetInfo(path).status();
  EXPECT_TRUE(version.IsNotSupported()) << version.ToString();
  EXPECT_NE(version.message().find("4.0"), std::string::npos);
  WriteFileBytes(path, good.substr(0, 40));  // header cut short
  Status cut = GetDatasetInfo(path).status();
  EXPECT_TRUE(cut.IsCorruption());
  EXPECT_NE(cut.message().find("truncated npy header"), std::string::npos) << cut.ToString();
  std::string huge = good;
  huge[8] = '\xff';
  huge[9] = '\xff';
  WriteFileBytes(path, huge);
  EXPECT_TRUE(GetDatasetInfo(path).status().IsCorruption());
}

TEST(Npy, HeaderWeWriteParsesBack) {
  const std::string h =
      dataset_internal::FormatNpyHeader(ElementType::kInt8, 18446744073709551615ull, 65536);
  ASSERT_EQ(h.size(), dataset_internal::kNpyWriteHeaderBytes);
  EXPECT_EQ(h.back(), '\n');
  auto parsed = dataset_internal::ParseNpyDict("x", h.substr(10));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->descr, "|i1");
  EXPECT_FALSE(parsed->fortran_order);
  EXPECT_EQ(parsed->shape, (std::vector<std::uint64_t>{18446744073709551615ull, 65536}));
}

}  // namespace
}  // namespace strata
