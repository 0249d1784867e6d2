//===- NpzTest.cpp - .npz round trips and hostile archives ----------------===//

#include "runtime/io/Npz.h"

#include "runtime/io/AtomicFile.h"
#include "runtime/io/Npy.h"
#include "runtime/io/ZipWriter.h"

#include "TestUtil.h"

namespace shardc::rt::io::test {
namespace {

class NpzTest : public TempDir {
protected:
  /// An archive with two small stored entries, "a" and "b", as bytes.
  std::string smallArchive(NpzWriteOptions options = {}) {
    std::vector<NamedTensor> entries = {{"a", patterned(DType::F32, {2, 2})},
                                        {"b", patterned(DType::I64, {3}, 2)}};
    EXPECT_TRUE(succeeded(writeNpz(path("small.npz"), entries, options)));
    return readFile(path("small.npz"));
  }

  /// Writes raw zip entries (name -> contents) with the real writer, so tests
  /// can put anything inside a well-formed archive.
  void writeRawArchive(const std::string &name,
                       const std::vector<std::pair<std::string, std::string>> &entries) {
    StatusOr<AtomicFile> file = AtomicFile::create(path(name));
    ASSERT_TRUE(succeeded(file));
    ZipWriter zip(*file);
    for (const auto &[entryName, contents] : entries)
      ASSERT_TRUE(succeeded(zip.addStored(entryName, {{contents.data(), contents.size()}})));
    ASSERT_TRUE(succeeded(zip.finish()));
    ASSERT_TRUE(succeeded(file->commit()));
  }

  std::string npyOf(const HostTensor &tensor) {
    StatusOr<std::string> header = encodeNpyHeader(tensor.dtype, tensor.shape);
    EXPECT_TRUE(succeeded(header));
    return *header + bytesOf(tensor);
  }

  StatusOr<std::vector<NamedTensor>> readBytes(const std::string &bytes) {
    writeFile(path("x.npz"), bytes);
    return readNpz(path("x.npz"));
  }
  std::string x() { return path("x.npz"); }
};

TEST_F(NpzTest, RoundTripsEveryDtypeInOrder) {
  std::vector<NamedTensor> entries;
  unsigned seed = 0;
  for (DType dtype : allDTypes()) {
    entries.push_back({std::string("t_") + dtypeName(dtype), patterned(dtype, {2, 3}, ++seed)});
    entries.push_back({std::string("s_") + dtypeName(dtype), patterned(dtype, {}, ++seed)});
  }
  // numpy keeps '/' in keys; non-ASCII names are flagged as UTF-8.
  entries.push_back({"layer.0/attn", patterned(DType::F16, {0, 5})});
  entries.push_back({"gr\xc3\xb6\xc3\x9f"
                     "e",
                     patterned(DType::U8, {4})});

  ASSERT_TRUE(succeeded(writeNpz(path("all.npz"), entries)));
  StatusOr<std::vector<NamedTensor>> back = readNpz(path("all.npz"));
  ASSERT_TRUE(succeeded(back));
  ASSERT_EQ(back->size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    SCOPED_TRACE(entries[i].name);
    EXPECT_EQ((*back)[i].name, entries[i].name);
    EXPECT_EQ((*back)[i].tensor.dtype, entries[i].tensor.dtype);
    EXPECT_EQ((*back)[i].tensor.shape, entries[i].tensor.shape);
    EXPECT_EQ(bytesOf((*back)[i].tensor), bytesOf(entries[i].tensor));
  }
  ASSERT_NE(findTensor(*back, "layer.0/attn"), nullptr);
  EXPECT_EQ(findTensor(*back, "layer.0/attn")->tensor.shape, (Shape{0, 5}));
  EXPECT_EQ(findTensor(*back, "missing"), nullptr);
}

TEST_F(NpzTest, WritesViewsAndIsDeterministic) {
  HostTensor tensor = patterned(DType::BF16, {4, 4});
  std::vector<NamedView> views = {{"v", tensor.view()}};
  ASSERT_TRUE(succeeded(writeNpz(path("one.npz"), views)));
  ASSERT_TRUE(succeeded(writeNpz(path("two.npz"), views)));
  EXPECT_EQ(readFile(path("one.npz")), readFile(path("two.npz")));
  StatusOr<std::vector<NamedTensor>> back = readNpz(path("one.npz"));
  ASSERT_TRUE(succeeded(back));
  EXPECT_EQ(bytesOf((*back)[0].tensor), bytesOf(tensor));
}

TEST_F(NpzTest, ForcedZip64RoundTrips) {
  std::string zip = smallArchive({/*forceZip64=*/true});
  // Saturated end record, preceded by the zip64 locator.
  size_t end = endRecordAt(zip);
  EXPECT_EQ(le(zip, end + 10, 2), 0xffffu);
  EXPECT_EQ(le(zip, end + 16, 4), 0xffffffffu);
  EXPECT_EQ(le(zip, end - 20, 4), 0x07064b50u);
  StatusOr<std::vector<NamedTensor>> back = readNpz(path("small.npz"));
  ASSERT_TRUE(succeeded(back));
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ(bytesOf((*back)[1].tensor), bytesOf(patterned(DType::I64, {3}, 2)));
}

TEST_F(NpzTest, EmptyArchiveRoundTrips) {
  ASSERT_TRUE(succeeded(writeNpz(path("empty.npz"), std::vector<NamedTensor>{})));
  EXPECT_EQ(readFile(path("empty.npz")).size(), 22u); // just the end record
  StatusOr<std::vector<NamedTensor>> back = readNpz(path("empty.npz"));
  ASSERT_TRUE(succeeded(back));
  EXPECT_TRUE(back->empty());
}

TEST_F(NpzTest, BadEntriesAreRefusedBeforeAnyFileExists) {
  HostTensor t = patterned(DType::F32, {2});
  EXPECT_TRUE(failsWith(writeNpz(x(), std::vector<NamedTensor>{{"a", t}, {"a", t}}),
                        "x.npz: entry 'a': appears twice"));
  EXPECT_TRUE(failsWith(writeNpz(x(), std::vector<NamedTensor>{{"", t}}),
                        "x.npz: an entry has an empty name"));
  EXPECT_TRUE(failsWith(writeNpz(x(), std::vector<NamedTensor>{{std::string("a\0b", 3), t}}),
                        "entry 'a\\x00b': name contains a NUL byte"));
  HostTensor broken = t;
  broken.bytes.pop_back();
  EXPECT_TRUE(failsWith(writeNpz(x(), std::vector<NamedTensor>{{"ok", t}, {"bad", broken}}),
                        "x.npz: entry 'bad': tensor of float32 [2] needs 8 bytes but holds 7"));
  EXPECT_TRUE(failsWith(writeNpz(x(), std::vector<NamedView>{{"v", {nullptr, DType::F32, {3}}}}),
                        "entry 'v': tensor has no data"));
  EXPECT_TRUE(listing().empty());
}

TEST_F(NpzTest, NotAZipArchive) {
  EXPECT_TRUE(failsWith(readBytes(""), x() + ": not a zip archive (0 bytes)"));
  EXPECT_TRUE(failsWith(readBytes(std::string(100, 'z')),
                        x() + ": not a zip archive (no end of central directory record)"));
  HostTensor t = patterned(DType::F32, {8});
  EXPECT_TRUE(failsWith(readBytes(npyOf(t)), "not a zip archive"));
  EXPECT_TRUE(failsWith(readNpz(path("absent.npz")), "absent.npz: cannot open"));
}

TEST_F(NpzTest, CrcMismatch) {
  std::string zip = smallArchive();
  std::vector<ZipRecordAt> records = zipRecords(zip);
  ASSERT_EQ(records.size(), 2u);
  // The last data byte of "b": the header still parses, only the CRC differs.
  zip[records[1].data + records[1].compressedSize - 1] ^= 0x40;
  EXPECT_TRUE(failsWith(readBytes(zip), x() + ": entry 'b': CRC-32 mismatch: archive records "));
}

TEST_F(NpzTest, UnsupportedDtypeNamesFileAndEntry) {
  std::string npy = "\x93NUMPY\x01";
  std::string dict = "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n";
  npy += '\0';
  npy += static_cast<char>(dict.size());
  npy += '\0';
  npy += dict + std::string(8, '\0');
  writeRawArchive("x.npz", {{"input_ids.npy", npy}});
  EXPECT_TRUE(failsWith(readNpz(x()), x() + ": entry 'input_ids': unsupported dtype '<c8'"));
}

TEST_F(NpzTest, EntriesMustBeDistinctNpyFiles) {
  std::string npy = npyOf(patterned(DType::U8, {2}));
  writeRawArchive("x.npz", {{"a.npy", npy}, {"notes.txt", "hello"}});
  EXPECT_TRUE(failsWith(readNpz(x()), x() + ": entry 'notes.txt' is not a .npy file"));
  writeRawArchive("x.npz", {{"a.npy", npy}, {"a.npy", npy}});
  EXPECT_TRUE(failsWith(readNpz(x()), x() + ": entry 'a': appears twice"));
  writeRawArchive("x.npz", {{"a.npy", "\x93NUMPY"}});
  EXPECT_TRUE(failsWith(readNpz(x()), x() + ": entry 'a': not a .npy file (bad magic)"));
  writeRawArchive("x.npz", {{".npy", npy}});
  EXPECT_TRUE(failsWith(readNpz(x()), "entry '.npy' is not a .npy file"));
}

TEST_F(NpzTest, UnsupportedMethodAndEncryption) {
  std::string zip = smallArchive();
  ZipRecordAt a = zipRecords(zip)[0];
  std::string bzip2 = zip;
  putLE(bzip2, a.central + 10, 12, 2);
  EXPECT_TRUE(failsWith(readBytes(bzip2), "entry 'a': compression method 12 is not supported"));
  std::string encrypted = zip;
  putLE(encrypted, a.central + 8, 1, 2);
  EXPECT_TRUE(failsWith(readBytes(encrypted), "entry 'a': encrypted entries are not supported"));
}

TEST_F(NpzTest, OffsetsOutOfRange) {
  std::string zip = smallArchive();
  ZipRecordAt b = zipRecords(zip)[1];
  size_t end = endRecordAt(zip);

  std::string badLocal = zip;
  putLE(badLocal, b.central + 42, 0x7fffffff, 4);
  EXPECT_TRUE(
      failsWith(readBytes(badLocal), "entry 'b': local header offset 2147483647 is out of range"));

  std::string intoDirectory = zip;
  putLE(intoDirectory, b.central + 42, b.central - 10, 4);
  EXPECT_TRUE(failedCleanly(readBytes(intoDirectory)));

  std::string badSize = zip;
  putLE(badSize, b.central + 20, 1u << 30, 4);
  putLE(badSize, b.central + 24, 1u << 30, 4);
  EXPECT_TRUE(failsWith(readBytes(badSize), "runs past the start of the central directory"));

  std::string badDirectory = zip;
  putLE(badDirectory, end + 16, 0xfffffff0u, 4);
  EXPECT_TRUE(failsWith(readBytes(badDirectory), "lies outside the archive"));

  std::string tooMany = zip;
  putLE(tooMany, end + 8, 0x7fff, 2);
  putLE(tooMany, end + 10, 0x7fff, 2);
  EXPECT_TRUE(failsWith(readBytes(tooMany), "cannot hold 32767 entries"));

  std::string multiDisk = zip;
  putLE(multiDisk, end + 4, 1, 2);
  EXPECT_TRUE(failsWith(readBytes(multiDisk), "multi-disk zip archives are not supported"));

  std::string renamed = zip;
  renamed[b.local + 30] = 'c'; // the local header now says "c.npy"
  EXPECT_TRUE(
      failsWith(readBytes(renamed), "local header names 'c.npy', the central directory 'b.npy'"));

  std::string saturated = zip;
  putLE(saturated, end + 16, 0xffffffffu, 4); // zip64 marker without zip64 records
  EXPECT_TRUE(failsWith(readBytes(saturated), "no zip64 end record locator"));
}

TEST_F(NpzTest, MissingZip64ExtraField) {
  std::string zip = smallArchive({/*forceZip64=*/true});
  // Our forced-zip64 central records carry the extra field right after the
  // name; renaming its id hides it.
  size_t end = endRecordAt(zip);
  size_t end64 = le(zip, end - 20 + 8, 4);
  size_t directory = le(zip, end64 + 48, 4);
  size_t nameLength = le(zip, directory + 28, 2);
  putLE(zip, directory + 46 + nameLength, 0x9999, 2);
  EXPECT_TRUE(failsWith(readBytes(zip), "entry 'a.npy': zip64 extra field is missing"));
}

TEST_F(NpzTest, EveryTruncationFailsCleanly) {
  std::string zip = smallArchive();
  for (size_t length = 0; length < zip.size(); ++length)
    EXPECT_TRUE(failedCleanly(readBytes(zip.substr(0, length)))) << length;
}

TEST_F(NpzTest, EveryFlippedByteFailsCleanlyOrReadsTheSameShape) {
  for (bool zip64 : {false, true}) {
    std::string zip = smallArchive({zip64});
    for (size_t at = 0; at < zip.size(); ++at) {
      for (unsigned char mask : {0x01, 0x80, 0xff}) {
        std::string mutated = zip;
        mutated[at] = static_cast<char>(mutated[at] ^ mask);
        StatusOr<std::vector<NamedTensor>> result = readBytes(mutated);
        // Bytes no reader looks at (timestamps, attributes, the versions)
        // may change freely; anything else must be caught.
        if (result) {
          ASSERT_EQ(result->size(), 2u) << at;
          EXPECT_EQ(bytesOf((*result)[0].tensor), bytesOf(patterned(DType::F32, {2, 2})));
        } else {
          EXPECT_TRUE(failedCleanly(result)) << at;
        }
      }
    }
  }
}

} // namespace
} // namespace shardc::rt::io::test
