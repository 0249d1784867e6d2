//===- SafeTensorsTest.cpp - Layout, round trips and hostile headers ------===//

#include "runtime/io/SafeTensors.h"

#include "TestUtil.h"

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace shardc::rt::io::test {
namespace {

class SafeTensorsTest : public TempDir {
protected:
  /// A file with this JSON header (unpadded) and a data buffer of `buffer` bytes.
  StatusOr<SafeTensorsFile> openRaw(const std::string &json, size_t buffer = 0) {
    std::string file;
    putLength(file, json.size());
    writeFile(path("x.safetensors"), file + json + std::string(buffer, '\0'));
    return SafeTensorsFile::open(path("x.safetensors"));
  }
  static void putLength(std::string &out, uint64_t length) {
    for (int i = 0; i < 8; ++i)
      out += static_cast<char>((length >> (8 * i)) & 0xff);
  }
  std::string x() { return path("x.safetensors"); }
};

TEST_F(SafeTensorsTest, DtypeNames) {
  const char *names[] = {"F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL"};
  for (size_t i = 0; i < allDTypes().size(); ++i) {
    EXPECT_STREQ(safeTensorsDtypeName(allDTypes()[i]), names[i]);
    EXPECT_EQ(dtypeFromSafeTensorsName(names[i]), allDTypes()[i]);
  }
  EXPECT_EQ(dtypeFromSafeTensorsName("F8_E4M3"), std::nullopt);
}

TEST_F(SafeTensorsTest, RoundTripsEveryDtypeAligned) {
  std::vector<NamedTensor> tensors;
  unsigned seed = 0;
  for (DType dtype : allDTypes())
    tensors.push_back({std::string("w.") + dtypeName(dtype), patterned(dtype, {3, 5}, ++seed)});
  tensors.push_back({"scalar", patterned(DType::F32, {}, ++seed)});
  tensors.push_back({"empty", patterned(DType::F16, {4, 0})});
  tensors.push_back({"last", patterned(DType::U8, {1}, ++seed)});
  SafeTensorsMetadata metadata = {{"rank", "0"}, {"mesh", "dp=1,tp=2"}, {"coords", "0,1"}};
  ASSERT_TRUE(succeeded(writeSafeTensors(path("w.safetensors"), tensors, metadata)));

  StatusOr<SafeTensorsFile> file = SafeTensorsFile::open(path("w.safetensors"));
  ASSERT_TRUE(succeeded(file));
  EXPECT_EQ(file->metadata(), metadata);
  EXPECT_EQ(file->dataOffset() % 64, 0u);
  // Data-offset order is the order written ("empty" sits at the aligned
  // cursor, before "last", which begins at the same place).
  ASSERT_EQ(file->tensors().size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const NamedView &view = file->tensors()[i];
    SCOPED_TRACE(tensors[i].name);
    EXPECT_EQ(view.name, tensors[i].name);
    EXPECT_EQ(view.view.dtype, tensors[i].tensor.dtype);
    EXPECT_EQ(view.view.shape, tensors[i].tensor.shape);
    EXPECT_EQ(bytesOf(view.view), bytesOf(tensors[i].tensor));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view.view.data) % 64, 0u);
  }
  ASSERT_NE(file->find("w.int64"), nullptr);
  EXPECT_EQ(file->find("w.int64")->dtype, DType::I64);
  EXPECT_EQ(file->find("nope"), nullptr);

  // The file ends with the last tensor, and the header is space-padded JSON.
  std::string bytes = readFile(path("w.safetensors"));
  EXPECT_EQ(bytes.back(), static_cast<char>(bytesOf(tensors.back().tensor).back()));
  uint64_t headerLength = le(bytes, 0, 4);
  EXPECT_EQ((8 + headerLength) % 64, 0u);
  std::string header = bytes.substr(8, headerLength);
  EXPECT_EQ(header.rfind("{\"__metadata__\":{\"coords\":\"0,1\",\"mesh\":\"dp=1,tp=2\","
                         "\"rank\":\"0\"},",
                         0),
            0u);
  EXPECT_NE(
      header.find("\"w.float32\":{\"dtype\":\"F32\",\"shape\":[3,5],\"data_offsets\":[0,60]}"),
      std::string::npos);
  EXPECT_NE(
      header.find("\"w.float16\":{\"dtype\":\"F16\",\"shape\":[3,5],\"data_offsets\":[64,94]}"),
      std::string::npos);
  EXPECT_EQ(header.find_last_not_of(' '), header.rfind('}'));
}

TEST_F(SafeTensorsTest, AlignmentOneWritesTheContiguousLayout) {
  // What Hugging Face's library requires: back to back, header padded to 8.
  std::vector<NamedTensor> tensors = {{"a", patterned(DType::F16, {3})},
                                      {"b", patterned(DType::I8, {5})},
                                      {"c", patterned(DType::F32, {1})}};
  ASSERT_TRUE(succeeded(writeSafeTensors(x(), tensors, {}, {/*alignment=*/1})));
  std::string bytes = readFile(x());
  uint64_t headerLength = le(bytes, 0, 4);
  EXPECT_EQ(headerLength % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + headerLength + 6 + 5 + 4);
  StatusOr<SafeTensorsFile> file = SafeTensorsFile::open(x());
  ASSERT_TRUE(succeeded(file));
  EXPECT_EQ(bytesOf(*file->find("c")), bytesOf(tensors[2].tensor));
  EXPECT_TRUE(failsWith(writeSafeTensors(x(), tensors, {}, {48}),
                        "alignment 48 is not a power of two up to 4096"));
  EXPECT_TRUE(failsWith(writeSafeTensors(x(), tensors, {}, {0}), "alignment 0 is not"));
}

TEST_F(SafeTensorsTest, NoTensorsNoMetadata) {
  ASSERT_TRUE(succeeded(writeSafeTensors(path("e.safetensors"), std::vector<NamedView>{})));
  EXPECT_EQ(readFile(path("e.safetensors")).substr(8, 2), "{}");
  StatusOr<SafeTensorsFile> file = SafeTensorsFile::open(path("e.safetensors"));
  ASSERT_TRUE(succeeded(file));
  EXPECT_TRUE(file->tensors().empty());
  EXPECT_TRUE(file->metadata().empty());
}

TEST_F(SafeTensorsTest, ViewsSurviveMovingTheFile) {
  HostTensor tensor = patterned(DType::F32, {16});
  ASSERT_TRUE(
      succeeded(writeSafeTensors(path("m.safetensors"), std::vector<NamedTensor>{{"t", tensor}})));
  StatusOr<SafeTensorsFile> opened = SafeTensorsFile::open(path("m.safetensors"));
  ASSERT_TRUE(succeeded(opened));
  SafeTensorsFile moved = std::move(*opened);
  EXPECT_EQ(bytesOf(*moved.find("t")), bytesOf(tensor));
}

// The views read the bytes the file held when it was opened: truncating it
// in place, or rewriting it at the same size, changes nothing they see (a
// mapping would raise SIGBUS on the first, show the new bytes on the second).
TEST_F(SafeTensorsTest, ViewsOutliveChangesToTheFile) {
  HostTensor big = patterned(DType::F32, {3 * 4096}), small = patterned(DType::I32, {5});
  const std::string name = path("r.safetensors");
  ASSERT_TRUE(succeeded(
      writeSafeTensors(name, std::vector<NamedTensor>{{"big", big}, {"small", small}})));
  StatusOr<SafeTensorsFile> file = SafeTensorsFile::open(name);
  ASSERT_TRUE(succeeded(file));
  const auto size = std::filesystem::file_size(name);
  ASSERT_EQ(::truncate(name.c_str(), 0), 0);
  EXPECT_EQ(bytesOf(*file->find("big")), bytesOf(big));
  std::ofstream(name, std::ios::binary | std::ios::in | std::ios::out)
      << std::string(size, '\x5a');
  ASSERT_EQ(std::filesystem::file_size(name), size);
  EXPECT_EQ(bytesOf(*file->find("big")), bytesOf(big));
  EXPECT_EQ(bytesOf(*file->find("small")), bytesOf(small));
}

// A tensor's bytes stay while a handle holds them; the last handle lets
// them go (those of the blocks wholly inside it), and the next hold reads
// them back as they were. Other tensors are not touched.
TEST_F(SafeTensorsTest, HeldTensorsLeaveMemoryWithTheirLastHolder) {
  HostTensor big = patterned(DType::F32, {5 * 16384}), other = patterned(DType::F32, {3 * 16384}, 2);
  const std::string name = path("h.safetensors");
  ASSERT_TRUE(succeeded(
      writeSafeTensors(name, std::vector<NamedTensor>{{"big", big}, {"other", other}})));
  StatusOr<SafeTensorsFile> file = SafeTensorsFile::open(name);
  ASSERT_TRUE(succeeded(file));
  auto first = file->hold("big"), second = file->hold("big");
  ASSERT_TRUE(succeeded(first) && succeeded(second));
  first->reset();
  EXPECT_EQ(file->droppedBytes(), 0u) << "still held";
  second->reset();
  // The blocks wholly inside it: all but those at its two ends.
  const size_t block = FileCopy::blockSize();
  EXPECT_EQ(file->droppedBytes(), big.bytes.size() / block * block - block);
  EXPECT_EQ(bytesOf(*file->find("other")), bytesOf(other));
  auto again = file->hold("big");
  ASSERT_TRUE(succeeded(again));
  EXPECT_EQ(file->droppedBytes(), 0u);
  EXPECT_EQ(bytesOf(*file->find("big")), bytesOf(big));
  EXPECT_TRUE(failsWith(file->hold("absent"), name + ": holds no tensor 'absent'"));
}

// A tensor let go and held again after the file changed is an error naming
// the file, and none of the new bytes are used; a tensor still held, or
// never let go, reads as loaded. Put back as it was, the file serves again.
TEST_F(SafeTensorsTest, HoldingAgainAFileChangedSinceFailsNamingIt) {
  HostTensor big = patterned(DType::F32, {5 * 16384}), other = patterned(DType::F32, {3 * 16384}, 2);
  const std::string name = path("c.safetensors");
  ASSERT_TRUE(succeeded(
      writeSafeTensors(name, std::vector<NamedTensor>{{"big", big}, {"other", other}})));
  const std::string original = readFile(name);
  StatusOr<SafeTensorsFile> file = SafeTensorsFile::open(name);
  ASSERT_TRUE(succeeded(file));
  (void)file->hold("big"); // held and let go at once
  ASSERT_GT(file->droppedBytes(), 0u);
  overwriteFile(name, std::string(original.size(), '\x5a'));
  auto changed = file->hold("big");
  EXPECT_TRUE(failsWith(changed, name + ": changed since it was loaded: bytes ["));
  EXPECT_EQ(changed.status().message().find('\n'), std::string::npos);
  auto kept = file->hold("other");
  ASSERT_TRUE(succeeded(kept));
  EXPECT_EQ(bytesOf(*file->find("other")), bytesOf(other));
  ASSERT_EQ(::truncate(name.c_str(), 100), 0);
  EXPECT_TRUE(failsWith(file->hold("big"), name + ": changed since it was loaded (" +
                                              std::to_string(original.size()) +
                                              " bytes then, 100 now)"));
  overwriteFile(name, original);
  ASSERT_TRUE(succeeded(file->hold("big")));
}

TEST_F(SafeTensorsTest, ReadsContiguousFilesFromOtherWriters) {
  // Hugging Face's layout: no padding, header padded to 8 only, any order.
  std::string json =
      "{\"b\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[4,6]},"
      "\"a\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]},\"__metadata__\":null}";
  StatusOr<SafeTensorsFile> file = openRaw(json, 6);
  ASSERT_TRUE(succeeded(file));
  ASSERT_EQ(file->tensors().size(), 2u);
  EXPECT_EQ(file->tensors()[0].name, "a");
  EXPECT_EQ(file->tensors()[1].name, "b");
}

TEST_F(SafeTensorsTest, WriterRefusesBadInputAndLeavesNoFile) {
  HostTensor t = patterned(DType::F32, {2});
  auto write = [&](std::vector<NamedTensor> tensors, SafeTensorsMetadata metadata = {}) {
    return writeSafeTensors(x(), tensors, metadata);
  };
  EXPECT_TRUE(failsWith(write({{"a", t}, {"a", t}}), "x.safetensors: tensor 'a': appears twice"));
  EXPECT_TRUE(failsWith(write({{"__metadata__", t}}), "the name is reserved for metadata"));
  EXPECT_TRUE(failsWith(write({{"", t}}), "a tensor has an empty name"));
  EXPECT_TRUE(failsWith(write({{"bad\xff", t}}), "tensor name 'bad\xff' is not valid UTF-8"));
  EXPECT_TRUE(failsWith(write({{"a", t}}, {{"k", "\xc0\x80"}}), "metadata 'k' is not valid UTF-8"));
  EXPECT_TRUE(
      failsWith(writeSafeTensors(x(), std::vector<NamedView>{{"v", {nullptr, DType::F32, {2}}}}),
                "tensor 'v': tensor has no data"));
  EXPECT_TRUE(
      failsWith(writeSafeTensors(x(), std::vector<NamedView>{{"v", {nullptr, DType::F32, {-2}}}}),
                "tensor 'v': invalid shape [-2]"));
  EXPECT_TRUE(listing().empty());
}

TEST_F(SafeTensorsTest, TooShortAndBadLengths) {
  writeFile(x(), "1234567");
  EXPECT_TRUE(failsWith(SafeTensorsFile::open(x()),
                        x() + ": too short to be a safetensors file (7 bytes)"));
  std::string file;
  putLength(file, 100);
  writeFile(x(), file + "{}");
  EXPECT_TRUE(failsWith(SafeTensorsFile::open(x()),
                        x() + ": header length 100 runs past the end of the file (10 bytes)"));
  file.clear();
  putLength(file, UINT64_MAX);
  writeFile(x(), file + "{}");
  EXPECT_TRUE(
      failsWith(SafeTensorsFile::open(x()), "header length 18446744073709551615 runs past"));
  EXPECT_TRUE(failsWith(SafeTensorsFile::open(path("absent")), "absent: cannot open"));
}

TEST_F(SafeTensorsTest, HeaderMustBeValidJsonObject) {
  EXPECT_TRUE(failsWith(openRaw("{\"a\": "), x() + ": header is not valid JSON: "));
  EXPECT_TRUE(failsWith(openRaw("[1, 2]"), "header is not a JSON object"));
  EXPECT_TRUE(failsWith(openRaw("{\"a\": 1} {}"), "header is not valid JSON"));
  EXPECT_TRUE(failsWith(openRaw("{\"k\": \"\xff\"}"), "header is not valid JSON"));
  EXPECT_TRUE(failsWith(openRaw(std::string(50, '[') + std::string(50, ']')),
                        "header JSON nests deeper than 8 levels"));
  const std::string entry = "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}";
  EXPECT_TRUE(failsWith(openRaw("{\"a\":" + entry + ",\"a\":" + entry + "}", 1),
                        "header JSON has key 'a' twice"));
  EXPECT_TRUE(failsWith(
      openRaw("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
              1),
      "header JSON has key 'dtype' twice"));
}

TEST_F(SafeTensorsTest, EntriesAreValidated) {
  auto open = [&](const std::string &entry, size_t buffer = 64) {
    return openRaw("{\"w\":" + entry + "}", buffer);
  };
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}"),
                        x() + ": tensor 'w': unsupported dtype 'F8_E4M3'"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}"),
                        "tensor 'w': 'shape' must hold non-negative integers"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}"),
                        "'shape' must hold non-negative integers"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F32\",\"data_offsets\":[0,4]}"),
                        "'shape' is missing or not an array"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}"),
                        "'dtype' is missing or not a string"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}"),
                        "'data_offsets' must be [begin, end]"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}"),
                        "tensor 'w': unexpected key 'x'"));
  EXPECT_TRUE(failsWith(open("[1]"), "tensor 'w': entry is not an object"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}"),
                        "data_offsets [8, 4] end before they begin"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[64,68]}"),
                        "data_offsets [64, 68] run past the data buffer of 64 bytes"));
  EXPECT_TRUE(failsWith(open("{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,12]}"),
                        "tensor 'w': data_offsets [0, 12] hold 12 bytes, float32 [2, 3] needs 24"));
  EXPECT_TRUE(failsWith(
      open("{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}"),
      "shape [4294967296, 4294967296] is too large"));
  EXPECT_TRUE(
      failsWith(open("{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,18446744073709551615]}"),
                "'data_offsets' must be [begin, end]"));
  EXPECT_TRUE(failsWith(openRaw("{\"__metadata__\":{\"rank\":0}}"),
                        "'__metadata__' value of 'rank' is not a string"));
  EXPECT_TRUE(failsWith(openRaw("{\"__metadata__\":[]}"), "'__metadata__' is not an object"));
}

TEST_F(SafeTensorsTest, OverlapsAreRefusedGapsAndEmptiesAllowed) {
  std::string a = "\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}";
  std::string b = "\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[4,12]}";
  std::string c = "\"c\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[16,20]}";
  std::string e = "\"e\":{\"dtype\":\"I32\",\"shape\":[0],\"data_offsets\":[4,4]}";
  EXPECT_TRUE(failsWith(openRaw("{" + a + "," + b + "}", 32),
                        x() + ": tensors 'a' [0, 8] and 'b' [4, 12] overlap"));
  // A long tensor swallowing a later short one.
  std::string big = "\"big\":{\"dtype\":\"U8\",\"shape\":[32],\"data_offsets\":[0,32]}";
  EXPECT_TRUE(failsWith(openRaw("{" + big + "," + c + "}", 32),
                        "tensors 'big' [0, 32] and 'c' [16, 20] overlap"));
  StatusOr<SafeTensorsFile> ok = openRaw("{" + a + "," + c + "," + e + "}", 32);
  ASSERT_TRUE(succeeded(ok));
  EXPECT_EQ(ok->tensors().size(), 3u);
}

TEST_F(SafeTensorsTest, EveryTruncationFailsCleanly) {
  std::vector<NamedTensor> tensors = {{"a", patterned(DType::F32, {3})},
                                      {"b", patterned(DType::I64, {2})}};
  ASSERT_TRUE(succeeded(writeSafeTensors(x(), tensors, {{"rank", "1"}})));
  std::string bytes = readFile(x());
  for (size_t length = 0; length < bytes.size(); ++length) {
    writeFile(path("cut"), bytes.substr(0, length));
    EXPECT_TRUE(failedCleanly(SafeTensorsFile::open(path("cut")))) << length;
  }
}

TEST_F(SafeTensorsTest, EveryFlippedByteIsSafe) {
  std::vector<NamedTensor> tensors = {{"a", patterned(DType::F32, {3})},
                                      {"b", patterned(DType::I64, {2})}};
  ASSERT_TRUE(succeeded(writeSafeTensors(x(), tensors, {{"rank", "1"}})));
  std::string bytes = readFile(x());
  size_t headerEnd = 8 + le(bytes, 0, 4);
  for (size_t at = 0; at < headerEnd; ++at) {
    for (unsigned char mask : {0x01, 0x20, 0x80}) {
      std::string mutated = bytes;
      mutated[at] = static_cast<char>(mutated[at] ^ mask);
      writeFile(path("m"), mutated);
      StatusOr<SafeTensorsFile> file = SafeTensorsFile::open(path("m"));
      if (!file) {
        EXPECT_TRUE(failedCleanly(file)) << at;
        continue;
      }
      // Whatever still parses must describe bytes inside the file.
      for (const NamedView &tensor : file->tensors()) {
        EXPECT_LE(file->dataOffset() + tensor.view.bytes(), mutated.size()) << at;
        (void)bytesOf(tensor.view); // touches every byte: a stray view would fault
      }
    }
  }
}

} // namespace
} // namespace shardc::rt::io::test
