//===- ChecksumTest.cpp - CRC-32 of buffers and files ---------------------===//

#include "runtime/io/Checksum.h"

#include "TestUtil.h"

namespace shardc::rt::io::test {
namespace {

class ChecksumTest : public TempDir {};

TEST_F(ChecksumTest, MatchesTheStandardCheckValue) {
  // The CRC-32 (zip, PNG, zlib.crc32) of "123456789" is 0xcbf43926.
  EXPECT_EQ(crc32Update(0, "123456789", 9), 0xcbf43926u);
  EXPECT_EQ(crc32Hex(0xcbf43926u), "cbf43926");
  EXPECT_EQ(crc32Hex(0x0000abcdu), "0000abcd");
}

TEST_F(ChecksumTest, PiecesGiveTheSameCrcAsTheWhole) {
  std::string text = "the quick brown fox jumps over the lazy dog";
  uint32_t crc = crc32Update(0, text.data(), 10);
  crc = crc32Update(crc, text.data() + 10, text.size() - 10);
  EXPECT_EQ(crc, crc32Update(0, text.data(), text.size()));
}

TEST_F(ChecksumTest, FileCrcStreamsAcrossChunks) {
  // 3 MiB + 5 bytes: three full 1 MiB reads and a short one.
  std::string bytes((3 << 20) + 5, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>((i * 2654435761u) >> 24);
  writeFile(path("big.bin"), bytes);
  StatusOr<std::string> crc = crc32File(path("big.bin"));
  ASSERT_TRUE(succeeded(crc));
  EXPECT_EQ(*crc, crc32Hex(crc32Update(0, bytes.data(), bytes.size())));
  EXPECT_TRUE(succeeded(verifyCrc32File(path("big.bin"), *crc)));
}

TEST_F(ChecksumTest, EmptyFileIsZero) {
  writeFile(path("empty"), "");
  StatusOr<std::string> crc = crc32File(path("empty"));
  ASSERT_TRUE(succeeded(crc));
  EXPECT_EQ(*crc, "00000000");
}

TEST_F(ChecksumTest, VerifyAcceptsUpperCaseAndReportsMismatch) {
  writeFile(path("digits"), "123456789");
  EXPECT_TRUE(succeeded(verifyCrc32File(path("digits"), "CBF43926")));
  EXPECT_TRUE(failsWith(verifyCrc32File(path("digits"), "cbf43927"),
                        "digits: checksum mismatch: expected cbf43927, file has cbf43926"));
  EXPECT_TRUE(failsWith(verifyCrc32File(path("digits"), "cbf4392"), "is not 8 hex digits"));
  EXPECT_TRUE(failsWith(verifyCrc32File(path("digits"), "cbf4392g"), "is not 8 hex digits"));
}

TEST_F(ChecksumTest, MissingFileAndDirectoryAreErrors) {
  EXPECT_TRUE(failsWith(crc32File(path("absent")), "absent: cannot open: No such file"));
  EXPECT_TRUE(failsWith(crc32File(dir_), "not a regular file"));
  EXPECT_TRUE(failsWith(verifyCrc32File(path("absent"), "00000000"), "cannot open"));
}

} // namespace
// Pieces checked apart join into the CRC-32 of the whole: what lets
// FileCopy read a file's pieces on several threads.
TEST_F(ChecksumTest, JoinsTheCrcsOfPieces) {
  std::string bytes(3 * 4096 + 5, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>(i * 7 + 3);
  const uint32_t whole = crc32Update(0, bytes.data(), bytes.size());
  const uint32_t a = crc32Update(0, bytes.data(), 4096),
                 b = crc32Update(0, bytes.data() + 4096, 4096),
                 c = crc32Update(0, bytes.data() + 8192, 4096),
                 tail = crc32Update(0, bytes.data() + 12288, 5);
  const Crc32Joiner join(4096);
  EXPECT_EQ(crc32Combine(join(join(a, b), c), tail, 5), whole);
  EXPECT_EQ(crc32Combine(a, crc32Update(0, bytes.data() + 4096, bytes.size() - 4096),
                         bytes.size() - 4096),
            whole);
  EXPECT_NE(join(b, a), whole);
}

} // namespace shardc::rt::io::test
