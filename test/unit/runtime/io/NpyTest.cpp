//===- NpyTest.cpp - .npy headers, dtypes, round trips, bad files ---------===//

#include "runtime/io/Npy.h"
#include "runtime/io/NpyDtype.h"
#include "runtime/io/NpyHeader.h"

#include "TestUtil.h"

namespace shardc::rt::io::test {
namespace {

/// A .npy image with this version, dict text (padded to numpy's 64 bytes
/// unless told otherwise) and data.
std::string npyImage(int major, std::string dict, const std::string &data, bool pad = true) {
  size_t preamble = major == 1 ? 10 : 12;
  if (pad) {
    dict += '\n';
    while ((preamble + dict.size()) % 64)
      dict.insert(dict.size() - 1, " ");
  }
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  return out + dict + data;
}

StatusOr<HostTensor> decode(const std::string &image) {
  return decodeNpy(reinterpret_cast<const std::byte *>(image.data()), image.size());
}

//===--- header dict --------------------------------------------------------===//

TEST(NpyHeaderTest, FormatsLikeNumpy) {
  EXPECT_EQ(formatNpyHeaderDict({"<f4", false, {2, 3}}),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(formatNpyHeaderDict({"|b1", false, {5}}),
            "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }");
  EXPECT_EQ(formatNpyHeaderDict({"<f8", false, {}}),
            "{'descr': '<f8', 'fortran_order': False, 'shape': (), }");
}

TEST(NpyHeaderTest, AcceptsWhatLiteralEvalAccepts) {
  auto dict =
      parseNpyHeaderDict("{\"shape\": ( 4 , 5L ) , \"fortran_order\":True,'descr':'<i8'}   \n");
  ASSERT_TRUE(succeeded(dict));
  EXPECT_EQ(dict->descr, "<i8");
  EXPECT_TRUE(dict->fortranOrder);
  EXPECT_EQ(dict->shape, (Shape{4, 5}));

  dict = parseNpyHeaderDict("{'descr': '<f4', 'fortran_order': False, 'shape': (), }");
  ASSERT_TRUE(succeeded(dict));
  EXPECT_TRUE(dict->shape.empty());
}

TEST(NpyHeaderTest, RejectsMalformedDicts) {
  const std::string ok = "'fortran_order': False, 'shape': (2,)";
  EXPECT_TRUE(failsWith(parseNpyHeaderDict("{'descr': [('a', '<f4')], " + ok + "}"),
                        "structured dtypes are not supported"));
  EXPECT_TRUE(failsWith(parseNpyHeaderDict("{'descr': '<f4', 'shape': (2,)}"),
                        "npy header lacks 'fortran_order'"));
  EXPECT_TRUE(
      failsWith(parseNpyHeaderDict("{'descr': '<f4', 'x': 1, " + ok + "}"), "unexpected key 'x'"));
  EXPECT_TRUE(failsWith(parseNpyHeaderDict("{'descr': '<f4', 'descr': '<f4', " + ok + "}"),
                        "key 'descr' twice"));
  EXPECT_TRUE(
      failsWith(parseNpyHeaderDict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}"),
                "negative dimension"));
  EXPECT_TRUE(
      failsWith(parseNpyHeaderDict("{'descr': '<f4', 'fortran_order': False, 'shape': (5)}"),
                "expected ',' after the only dimension"));
  EXPECT_TRUE(
      failsWith(parseNpyHeaderDict("{'descr': '<f4', 'fortran_order': False, 'shape': [5]}"),
                "expected a tuple for 'shape'"));
  EXPECT_TRUE(failsWith(parseNpyHeaderDict("{'descr': '<f4', 'fortran_order': 0, 'shape': (5,)}"),
                        "expected True or False"));
  EXPECT_TRUE(
      failsWith(parseNpyHeaderDict(
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
                "too large for int64"));
  EXPECT_TRUE(failsWith(parseNpyHeaderDict("{'descr': '<f4"), "unterminated string"));
  EXPECT_TRUE(failsWith(parseNpyHeaderDict("{'descr': '<f4', " + ok + "} x"),
                        "unexpected text after the dict"));
  EXPECT_TRUE(failsWith(parseNpyHeaderDict(""), "expected '{', found the end"));
  EXPECT_TRUE(failsWith(parseNpyHeaderDict("{'de\x01scr': 1}"), "unexpected key 'de\\x01scr'"));
}

TEST(NpyHeaderTest, EveryPrefixOfAHeaderFailsCleanly) {
  std::string text = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  for (size_t length = 0; length < text.size(); ++length)
    EXPECT_TRUE(failedCleanly(parseNpyHeaderDict(text.substr(0, length)))) << length;
}

//===--- descrs --------------------------------------------------------------===//

TEST(NpyDtypeTest, DescrsRoundTrip) {
  for (DType dtype : allDTypes()) {
    StatusOr<DType> back = dtypeFromNpyDescr(npyDescr(dtype));
    ASSERT_TRUE(succeeded(back)) << dtypeName(dtype);
    EXPECT_EQ(*back, dtype);
  }
}

TEST(NpyDtypeTest, ByteOrderRules) {
  EXPECT_EQ(*dtypeFromNpyDescr("=f4"), DType::F32);
  EXPECT_EQ(*dtypeFromNpyDescr("|V2"), DType::BF16); // np.dtype('V2').str
  EXPECT_EQ(*dtypeFromNpyDescr("<V2"), DType::BF16); // what ml_dtypes writes
  EXPECT_EQ(*dtypeFromNpyDescr(">i1"), DType::I8);   // one byte: order is moot
  EXPECT_EQ(*dtypeFromNpyDescr("<u1"), DType::U8);
  EXPECT_TRUE(failsWith(dtypeFromNpyDescr(">f4"), "unsupported dtype '>f4' (big-endian)"));
  EXPECT_TRUE(failsWith(dtypeFromNpyDescr("|f4"), "unsupported dtype '|f4'"));
  EXPECT_TRUE(failsWith(dtypeFromNpyDescr("<c8"), "unsupported dtype '<c8'"));
  EXPECT_TRUE(failsWith(dtypeFromNpyDescr("<u4"), "unsupported dtype '<u4'"));
  EXPECT_TRUE(failsWith(dtypeFromNpyDescr("O"), "unsupported dtype 'O'"));
  EXPECT_TRUE(failsWith(dtypeFromNpyDescr(""), "unsupported dtype ''"));
}

//===--- whole files ---------------------------------------------------------===//

class NpyTest : public TempDir {};

TEST_F(NpyTest, RoundTripsEveryDtypeAndShape) {
  const std::vector<Shape> shapes = {{}, {0}, {7}, {2, 3}, {2, 0, 4}, {1, 2, 3, 4}};
  for (DType dtype : allDTypes()) {
    for (const Shape &shape : shapes) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " " + formatShape(shape));
      HostTensor tensor = patterned(dtype, shape);
      ASSERT_TRUE(succeeded(writeNpy(path("t.npy"), tensor)));
      std::string file = readFile(path("t.npy"));
      // numpy's alignment: the data starts at a multiple of 64.
      EXPECT_EQ((file.size() - tensor.bytes.size()) % 64, 0u);
      StatusOr<HostTensor> back = readNpy(path("t.npy"));
      ASSERT_TRUE(succeeded(back));
      EXPECT_EQ(back->dtype, dtype);
      EXPECT_EQ(back->shape, shape);
      EXPECT_EQ(bytesOf(*back), bytesOf(tensor));
    }
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"t.npy"});
}

TEST_F(NpyTest, WritesNumpysExactHeader) {
  HostTensor tensor = tensorOf<float>(DType::F32, {2, 3}, {0, 1, 2, 3, 4, 5});
  ASSERT_TRUE(succeeded(writeNpy(path("t.npy"), tensor)));
  std::string file = readFile(path("t.npy"));
  // Byte for byte what np.save(np.arange(6, dtype=np.float32).reshape(2, 3)) writes.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                         std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  EXPECT_EQ(file.substr(0, 128), expected);
  EXPECT_EQ(file.size(), 128u + 24u);
}

TEST_F(NpyTest, ReadsVersions2And3) {
  std::string data(8, '\x11');
  for (int major : {2, 3}) {
    StatusOr<HostTensor> tensor =
        decode(npyImage(major, "{'descr': '<i2', 'fortran_order': False, 'shape': (4,), }", data));
    ASSERT_TRUE(succeeded(tensor));
    EXPECT_EQ(tensor->dtype, DType::I16);
    EXPECT_EQ(tensor->shape, Shape{4});
    EXPECT_EQ(bytesOf(*tensor), data);
  }
  // Unpadded headers are fine too (only numpy's writer pads).
  StatusOr<HostTensor> tensor =
      decode(npyImage(1, "{'descr':'|u1','fortran_order':False,'shape':(1,)}", "x", /*pad=*/false));
  ASSERT_TRUE(succeeded(tensor));
  EXPECT_EQ(bytesOf(*tensor), "x");
}

TEST_F(NpyTest, FortranOrderOnlyWhereItDiffersFromC) {
  std::string data(24, '\0');
  EXPECT_TRUE(failsWith(
      decode(npyImage(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data)),
      "fortran_order arrays are not supported (shape [2, 3])"));
  // (1, 6) and (6,) have one layout whichever the order.
  EXPECT_TRUE(succeeded(
      decode(npyImage(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 6), }", data))));
  EXPECT_TRUE(succeeded(
      decode(npyImage(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", data))));
}

TEST_F(NpyTest, BadFilesGiveTheirErrors) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_TRUE(failsWith(decode(""), "not a .npy file (bad magic)"));
  EXPECT_TRUE(failsWith(decode("PK\x03\x04 not numpy"), "not a .npy file (bad magic)"));
  EXPECT_TRUE(failsWith(decode(std::string("\x93NUMPY\x04\x00\x10\x00", 10)),
                        "unsupported .npy format version 4.0"));
  EXPECT_TRUE(failsWith(decode(std::string("\x93NUMPY\x01\x00", 8)), "truncated .npy header"));
  EXPECT_TRUE(failsWith(decode(std::string("\x93NUMPY\x01\x00\xff\xff{}", 12)),
                        "npy header length 65535 runs past the end of the data (12 bytes)"));
  EXPECT_TRUE(failsWith(decode(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12)),
                        "npy header length 4294967295 runs past the end"));
  EXPECT_TRUE(failsWith(decode(npyImage(1, dict, std::string(7, 'x'))),
                        "truncated: float32 [2] needs 8 data bytes, found 7"));
  EXPECT_TRUE(failsWith(decode(npyImage(1, dict, std::string(9, 'x'))),
                        "1 unexpected bytes after the 8 data bytes"));
  EXPECT_TRUE(failsWith(
      decode(npyImage(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "")),
      "unsupported dtype '<c8'"));
  EXPECT_TRUE(failsWith(decode(npyImage(1,
                                        "{'descr': '<f8', 'fortran_order': False, "
                                        "'shape': (4294967296, 4294967296), }",
                                        "")),
                        "shape [4294967296, 4294967296] is too large"));
  // Zero elements, but the dims multiply past int64 on the way: refused
  // rather than left for numElements() to overflow on.
  EXPECT_TRUE(failsWith(decode(npyImage(1,
                                        "{'descr': '|u1', 'fortran_order': False, "
                                        "'shape': (4294967296, 2147483648, 0), }",
                                        "")),
                        "is too large"));
}

TEST_F(NpyTest, EveryTruncationOfAFileFailsCleanly) {
  HostTensor tensor = patterned(DType::I32, {3, 5});
  ASSERT_TRUE(succeeded(writeNpy(path("t.npy"), tensor)));
  std::string file = readFile(path("t.npy"));
  for (size_t length = 0; length < file.size(); ++length)
    EXPECT_TRUE(failedCleanly(decode(file.substr(0, length)))) << length;
}

TEST_F(NpyTest, DecodingAnOwnedImageReusesIt) {
  HostTensor tensor = patterned(DType::F64, {3, 3});
  ASSERT_TRUE(succeeded(writeNpy(path("t.npy"), tensor)));
  std::string file = readFile(path("t.npy"));
  std::vector<std::byte> image(reinterpret_cast<const std::byte *>(file.data()),
                               reinterpret_cast<const std::byte *>(file.data()) + file.size());
  StatusOr<HostTensor> back = decodeNpy(std::move(image));
  ASSERT_TRUE(succeeded(back));
  EXPECT_EQ(bytesOf(*back), bytesOf(tensor));
}

TEST_F(NpyTest, ReadErrorsNameTheFile) {
  EXPECT_TRUE(failsWith(readNpy(path("absent.npy")),
                        path("absent.npy") + ": cannot open: No such file or directory"));
  writeFile(path("bad.npy"), "garbage");
  EXPECT_TRUE(failsWith(readNpy(path("bad.npy")), path("bad.npy") + ": not a .npy file"));
  EXPECT_TRUE(failsWith(readNpy(dir_), dir_ + ": not a regular file"));
}

TEST_F(NpyTest, FailedWritesLeaveNoFileAndKeepTheOldOne) {
  writeFile(path("t.npy"), "old contents");
  HostTensor broken = patterned(DType::F32, {2, 2});
  broken.bytes.resize(3); // does not match its shape
  EXPECT_TRUE(failsWith(writeNpy(path("t.npy"), broken),
                        "t.npy: tensor of float32 [2, 2] needs 16 bytes but holds 3"));
  TensorView negative{nullptr, DType::F32, {-1}};
  EXPECT_TRUE(failsWith(writeNpy(path("t.npy"), negative), "cannot write shape [-1]"));
  TensorView missing{nullptr, DType::F32, {4}};
  EXPECT_TRUE(failsWith(writeNpy(path("t.npy"), missing), "tensor has no data"));
  EXPECT_TRUE(failsWith(writeNpy(path("no/such/dir/t.npy"), patterned(DType::U8, {1})),
                        "no/such/dir/t.npy: the folder"));
  EXPECT_EQ(readFile(path("t.npy")), "old contents");
  EXPECT_EQ(listing(), std::vector<std::string>{"t.npy"});
}

} // namespace
} // namespace shardc::rt::io::test
