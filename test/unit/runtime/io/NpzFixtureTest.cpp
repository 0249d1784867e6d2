//===- NpzFixtureTest.cpp - Archives written by numpy itself --------------===//
//
// data/*.npz come from data/make_fixtures.py (numpy.savez, savez_compressed,
// ml_dtypes' bfloat16); the values below are the ones that script writes.
//
//===----------------------------------------------------------------------===//

#include "runtime/io/Inflate.h"
#include "runtime/io/Npz.h"

#include "TestUtil.h"

#ifndef SHARDC_RUNTIME_IO_TEST_DATA
#error "SHARDC_RUNTIME_IO_TEST_DATA must name test/unit/runtime/io/data"
#endif

namespace shardc::rt::io::test {
namespace {

std::string fixture(const std::string &name) {
  return std::string(SHARDC_RUNTIME_IO_TEST_DATA) + "/" + name;
}

/// What make_fixtures.py saves, in its order.
void expectFixtureArrays(const std::vector<NamedTensor> &arrays) {
  std::vector<std::string> names;
  for (const NamedTensor &entry : arrays)
    names.push_back(entry.name);
  EXPECT_EQ(names, (std::vector<std::string>{"f32", "i64", "mask", "scalar", "f16", "bf16", "i32",
                                             "i16", "i8", "u8", "empty"}));
  auto get = [&](const char *name) -> const HostTensor & {
    return findTensor(arrays, name)->tensor;
  };
  if (names.size() != 11)
    return;

  EXPECT_EQ(get("f32").dtype, DType::F32);
  EXPECT_EQ(get("f32").shape, (Shape{2, 3}));
  EXPECT_EQ(valuesOf<float>(get("f32")), (std::vector<float>{0, 0.25, 0.5, 0.75, 1, 1.25}));

  EXPECT_EQ(get("i64").dtype, DType::I64);
  EXPECT_EQ(valuesOf<int64_t>(get("i64")), (std::vector<int64_t>{-3, 0, int64_t(1) << 40}));

  EXPECT_EQ(get("mask").dtype, DType::Bool);
  EXPECT_EQ(get("mask").shape, (Shape{2, 3}));
  EXPECT_EQ(valuesOf<uint8_t>(get("mask")), (std::vector<uint8_t>{1, 0, 1, 0, 0, 1}));

  EXPECT_EQ(get("scalar").dtype, DType::F64);
  EXPECT_TRUE(get("scalar").shape.empty());
  EXPECT_EQ(valuesOf<double>(get("scalar")), std::vector<double>{3.25});

  EXPECT_EQ(get("f16").dtype, DType::F16);
  EXPECT_EQ(valuesOf<uint16_t>(get("f16")), (std::vector<uint16_t>{0x3e00, 0xc000}));

  // ml_dtypes' bfloat16 arrives as "<V2": the top half of the float32 bits.
  EXPECT_EQ(get("bf16").dtype, DType::BF16);
  EXPECT_EQ(valuesOf<uint16_t>(get("bf16")), (std::vector<uint16_t>{0x3f80, 0xbf00, 0x4380}));

  EXPECT_EQ(get("i32").dtype, DType::I32);
  EXPECT_EQ(get("i32").shape, (Shape{2, 1}));
  EXPECT_EQ(valuesOf<int32_t>(get("i32")), (std::vector<int32_t>{7, -8}));

  EXPECT_EQ(get("i16").dtype, DType::I16);
  std::vector<int16_t> ramp(1024);
  for (size_t i = 0; i < ramp.size(); ++i)
    ramp[i] = static_cast<int16_t>(int(i % 7) - 3);
  EXPECT_EQ(valuesOf<int16_t>(get("i16")), ramp);

  EXPECT_EQ(get("i8").dtype, DType::I8);
  EXPECT_EQ(valuesOf<int8_t>(get("i8")), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(get("u8").dtype, DType::U8);
  EXPECT_EQ(valuesOf<uint8_t>(get("u8")), (std::vector<uint8_t>{0, 255, 9}));

  EXPECT_EQ(get("empty").dtype, DType::I32);
  EXPECT_EQ(get("empty").shape, (Shape{0, 4}));
  EXPECT_TRUE(get("empty").bytes.empty());
}

TEST(NpzFixtureTest, ReadsNumpySavez) {
  StatusOr<std::vector<NamedTensor>> arrays = readNpz(fixture("savez.npz"));
  ASSERT_TRUE(succeeded(arrays));
  expectFixtureArrays(*arrays);
}

TEST(NpzFixtureTest, ReadsNumpySavezCompressed) {
  // Make sure the fixture really is deflated (method 8), or this tests nothing.
  std::string zip = readFile(fixture("savez_compressed.npz"));
  for (const ZipRecordAt &record : zipRecords(zip))
    EXPECT_EQ(le(zip, record.central + 10, 2), 8u) << record.name;
  StatusOr<std::vector<NamedTensor>> arrays = readNpz(fixture("savez_compressed.npz"));
  ASSERT_TRUE(succeeded(arrays));
  expectFixtureArrays(*arrays);
}

TEST(NpzFixtureTest, RefusesFortranOrder) {
  EXPECT_TRUE(failsWith(readNpz(fixture("fortran.npz")),
                        "fortran.npz: entry 'matrix': fortran_order arrays are not supported"));
}

class NpzCompressedTest : public TempDir {
protected:
  void SetUp() override {
    TempDir::SetUp();
    zip_ = readFile(fixture("savez_compressed.npz"));
    for (const ZipRecordAt &record : zipRecords(zip_))
      if (record.name == "i16.npy")
        i16_ = record;
    ASSERT_EQ(i16_.name, "i16.npy");
  }
  StatusOr<std::vector<NamedTensor>> readBytes(const std::string &bytes) {
    writeFile(path("x.npz"), bytes);
    return readNpz(path("x.npz"));
  }
  /// The raw deflate stream of i16.npy and its recorded size.
  std::string stream() const { return zip_.substr(i16_.data, i16_.compressedSize); }
  size_t inflatedSize() const { return le(zip_, i16_.central + 24, 4); }

  std::string zip_;
  ZipRecordAt i16_;
};

StatusOr<std::vector<std::byte>> inflate(const std::string &in, size_t outSize) {
  return inflateRaw(reinterpret_cast<const std::byte *>(in.data()), in.size(), outSize);
}

TEST_F(NpzCompressedTest, InflateChecksTheRecordedSize) {
  ASSERT_GT(inflatedSize(), 2048u);
  ASSERT_LT(stream().size(), 200u); // the ramp compresses well
  EXPECT_TRUE(succeeded(inflate(stream(), inflatedSize())));
  EXPECT_TRUE(failsWith(inflate(stream(), inflatedSize() - 1),
                        "inflated data is larger than the recorded"));
  EXPECT_TRUE(failsWith(inflate(stream(), inflatedSize() + 1), "the archive records"));
  EXPECT_TRUE(failsWith(inflate(stream().substr(0, stream().size() / 2), inflatedSize()),
                        "deflate data is truncated"));
  EXPECT_TRUE(failsWith(inflate(stream() + "xy", inflatedSize()),
                        "2 bytes follow the end of the deflate stream"));
  EXPECT_TRUE(failsWith(inflate(std::string("\xff\xff\xff\xff", 4), 10), "corrupt deflate data"));
  EXPECT_TRUE(failsWith(inflate("", 10), "deflate data is truncated"));
}

TEST_F(NpzCompressedTest, ImplausibleSizeIsRefusedBeforeAllocating) {
  std::string zip = zip_;
  putLE(zip, i16_.central + 24, 0xfffffff0u, 4);
  EXPECT_TRUE(failsWith(readBytes(zip), "entry 'i16': implausible uncompressed size 4294967280"));
}

TEST_F(NpzCompressedTest, EveryFlippedStreamByteIsCaught) {
  StatusOr<std::vector<NamedTensor>> fixtureArrays = readNpz(fixture("savez_compressed.npz"));
  ASSERT_TRUE(succeeded(fixtureArrays));
  const std::string original = bytesOf(findTensor(*fixtureArrays, "i16")->tensor);
  for (size_t at = i16_.data; at < i16_.data + i16_.compressedSize; ++at) {
    for (unsigned char mask : {0x01, 0x10, 0xff}) {
      std::string zip = zip_;
      zip[at] = static_cast<char>(zip[at] ^ mask);
      StatusOr<std::vector<NamedTensor>> result = readBytes(zip);
      // A flip in the padding bits after the final block changes nothing;
      // any other flip must be caught, by inflate or by the CRC.
      if (result) {
        EXPECT_EQ(bytesOf(findTensor(*result, "i16")->tensor), original) << at;
      } else {
        EXPECT_TRUE(failedCleanly(result)) << at;
      }
    }
  }
}

TEST_F(NpzCompressedTest, EveryFlippedByteIsSafe) {
  // Anywhere in the archive; with ASan/UBSan this is the memory-safety check.
  for (size_t at = 0; at < zip_.size(); ++at) {
    std::string zip = zip_;
    zip[at] = static_cast<char>(zip[at] ^ 0x5a);
    StatusOr<std::vector<NamedTensor>> result = readBytes(zip);
    if (!result) {
      EXPECT_TRUE(failedCleanly(result)) << at;
    }
  }
}

} // namespace
} // namespace shardc::rt::io::test
