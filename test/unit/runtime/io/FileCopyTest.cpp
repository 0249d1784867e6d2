//===- FileCopyTest.cpp - a whole file read into memory of its own --------===//

#include "runtime/io/FileCopy.h"

#include "runtime/io/Checksum.h"

#include "TestUtil.h"

#include <cstdint>
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
