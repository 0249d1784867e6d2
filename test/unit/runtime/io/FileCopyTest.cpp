//===- FileCopyTest.cpp - a whole file read into memory of its own --------===//

#include "runtime/io/FileCopy.h"

#include "runtime/io/Checksum.h"

#include "TestUtil.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

namespace shardc::rt::io::test {
namespace {

class FileCopyTest : public TempDir {};

/// More than one 4 MiB piece and not a whole number of pages.
std::string patternedBytes() {
  std::string bytes((9 << 20) + 7, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>((i * 2654435761u) >> 24);
  return bytes;
}

TEST_F(FileCopyTest, HoldsTheBytesAndTheirCrc) {
  const std::string bytes = patternedBytes();
  writeFile(path("w.bin"), bytes);
  StatusOr<FileCopy> copy = FileCopy::read(path("w.bin"));
  ASSERT_TRUE(succeeded(copy));
  ASSERT_EQ(copy->size(), bytes.size());
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), bytes.size()), 0);
  EXPECT_EQ(copy->crc32(), crc32Hex(crc32Update(0, bytes.data(), bytes.size())));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy->data()) % 4096, 0u) << "page-aligned";
  EXPECT_EQ(copy->path(), path("w.bin"));
}

// What the copy holds is what was read: a file truncated or rewritten
// afterwards changes nothing in it (and reading it cannot raise SIGBUS).
TEST_F(FileCopyTest, IsNotChangedByTheFileAfterwards) {
  const std::string bytes = patternedBytes();
  writeFile(path("w.bin"), bytes);
  StatusOr<FileCopy> copy = FileCopy::read(path("w.bin"));
  ASSERT_TRUE(succeeded(copy));
  ASSERT_EQ(::truncate(path("w.bin").c_str(), 100), 0);
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), bytes.size()), 0);
  writeFile(path("w.bin"), std::string(bytes.size(), 'x'));
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), bytes.size()), 0);
  FileCopy moved = std::move(*copy);
  EXPECT_EQ(std::memcmp(moved.data(), bytes.data(), bytes.size()), 0);
}

const size_t kBlock = FileCopy::blockSize();

// Dropping a range gives back the whole blocks inside it, not the blocks at
// its edges, whose other bytes others may read; restoring brings back the
// bytes first read.
TEST_F(FileCopyTest, DroppedBlocksComeBackAsTheyWere) {
  const std::string bytes = patternedBytes();
  writeFile(path("w.bin"), bytes);
  StatusOr<FileCopy> copy = FileCopy::read(path("w.bin"));
  ASSERT_TRUE(succeeded(copy));
  // [kBlock / 2, 5 kBlock + 100): blocks 1 to 4 lie wholly inside.
  copy->drop(kBlock / 2, 5 * kBlock + 100 - kBlock / 2);
  EXPECT_EQ(copy->droppedBytes(), 4 * kBlock);
  // The edge blocks stay readable, as they were.
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), kBlock), 0);
  EXPECT_EQ(std::memcmp(copy->data() + 5 * kBlock, bytes.data() + 5 * kBlock, kBlock), 0);
  copy->drop(kBlock, kBlock); // already out: nothing changes
  EXPECT_EQ(copy->droppedBytes(), 4 * kBlock);
  ASSERT_TRUE(succeeded(copy->restore(2 * kBlock, 10)));
  EXPECT_EQ(copy->droppedBytes(), 3 * kBlock);
  ASSERT_TRUE(succeeded(copy->restore(0, bytes.size())));
  EXPECT_EQ(copy->droppedBytes(), 0u);
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), bytes.size()), 0);
  EXPECT_EQ(copy->crc32(), crc32Hex(crc32Update(0, bytes.data(), bytes.size())));
}

// A dropped block is not silently zeros: reading it without restoring it
// first faults.
TEST_F(FileCopyTest, ReadingADroppedBlockFaults) {
  writeFile(path("w.bin"), patternedBytes());
  StatusOr<FileCopy> copy = FileCopy::read(path("w.bin"));
  ASSERT_TRUE(succeeded(copy));
  copy->drop(kBlock, kBlock);
  const volatile std::byte *dropped = copy->data() + kBlock;
  // Other tests of the binary leave threads running (OpenMP's): the child
  // runs the binary afresh rather than fork this process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)*dropped, "");
}

// Restoring reads the file again: bytes that differ from those first read
// (a file rewritten or truncated since) are an error naming the file, and
// the blocks stay out of memory; an unchanged block restores.
TEST_F(FileCopyTest, RestoringAFileChangedSinceFailsNamingIt) {
  std::string bytes = patternedBytes();
  writeFile(path("w.bin"), bytes);
  StatusOr<FileCopy> copy = FileCopy::read(path("w.bin"));
  ASSERT_TRUE(succeeded(copy));
  copy->drop(kBlock, 3 * kBlock);
  bytes[2 * kBlock + 5] ^= 1; // block 2
  overwriteFile(path("w.bin"), bytes);
  Status changed = copy->restore(kBlock, 3 * kBlock);
  EXPECT_TRUE(failsWith(changed, path("w.bin") + ": changed since it was loaded: bytes [" +
                                     std::to_string(2 * kBlock) + ", " +
                                     std::to_string(3 * kBlock) + ") differ (CRC-32 expected "));
  EXPECT_EQ(changed.message().find('\n'), std::string::npos);
  EXPECT_EQ(copy->droppedBytes(), 3 * kBlock);
  // Block 1 is unchanged: it alone comes back.
  ASSERT_TRUE(succeeded(copy->restore(kBlock, kBlock)));
  EXPECT_EQ(copy->droppedBytes(), 2 * kBlock);
  EXPECT_EQ(std::memcmp(copy->data() + kBlock, bytes.data() + kBlock, kBlock), 0);
  ASSERT_EQ(::truncate(path("w.bin").c_str(), 3 * kBlock), 0);
  EXPECT_TRUE(failsWith(copy->restore(kBlock, 3 * kBlock),
                        path("w.bin") + ": changed since it was loaded (" +
                            std::to_string(bytes.size()) + " bytes then, " +
                            std::to_string(3 * kBlock) + " now)"));
  EXPECT_EQ(copy->droppedBytes(), 2 * kBlock);
}

// The copy reads again through the descriptor it was read through: a file
// replaced by rename since (an artifact compiled again in its place) still
// gives the bytes loaded.
TEST_F(FileCopyTest, RestoresFromTheFileLoadedThoughReplacedSince) {
  const std::string bytes = patternedBytes();
  writeFile(path("w.bin"), bytes);
  StatusOr<FileCopy> copy = FileCopy::read(path("w.bin"));
  ASSERT_TRUE(succeeded(copy));
  copy->drop(0, bytes.size());
  writeFile(path("new.bin"), std::string(bytes.size(), 'x'));
  ASSERT_EQ(std::rename(path("new.bin").c_str(), path("w.bin").c_str()), 0);
  ASSERT_TRUE(succeeded(copy->restore(0, bytes.size())));
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), bytes.size()), 0);
}

TEST_F(FileCopyTest, EmptyFileIsAnEmptyCopy) {
  writeFile(path("empty"), "");
  StatusOr<FileCopy> copy = FileCopy::read(path("empty"));
  ASSERT_TRUE(succeeded(copy));
  EXPECT_EQ(copy->size(), 0u);
  EXPECT_EQ(copy->data(), nullptr);
  EXPECT_EQ(copy->crc32(), "00000000");
}

TEST_F(FileCopyTest, RefusesWhatIsNotARegularFile) {
  EXPECT_TRUE(failsWith(FileCopy::read(path("absent")), "absent: cannot open: No such file"));
  EXPECT_TRUE(failsWith(FileCopy::read(dir_), "not a regular file"));
  // A FIFO is refused at once, not waited on for a writer.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_TRUE(failsWith(FileCopy::read(path("fifo")), "fifo: not a regular file"));
}

} // namespace
} // namespace shardc::rt::io::test
