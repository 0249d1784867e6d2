//===- AtomicFileTest.cpp - Temporary name, then rename -------------------===//

#include "runtime/io/AtomicFile.h"
#include "runtime/io/MappedFile.h"

#include "TestUtil.h"

#include <sys/stat.h>
#include <unistd.h>

namespace shardc::rt::io::test {
namespace {

class AtomicFileTest : public TempDir {};

TEST_F(AtomicFileTest, CommitReplacesTheDestination) {
  writeFile(path("out"), "old");
  {
    StatusOr<AtomicFile> file = AtomicFile::create(path("out"));
    ASSERT_TRUE(succeeded(file));
    ASSERT_TRUE(succeeded(file->write(std::string("new "))));
    ASSERT_TRUE(succeeded(file->writeZeros(5000)));
    EXPECT_EQ(file->offset(), 5004u);
    // Until commit, readers see the old file (and a hidden temporary).
    EXPECT_EQ(readFile(path("out")), "old");
    EXPECT_EQ(listing().size(), 2u);
    ASSERT_TRUE(succeeded(file->commit()));
    EXPECT_TRUE(failsWith(file->write(std::string("late")), "write after the file was closed"));
  }
  EXPECT_EQ(readFile(path("out")), "new " + std::string(5000, '\0'));
  EXPECT_EQ(listing(), std::vector<std::string>{"out"});
}

TEST_F(AtomicFileTest, AbandoningRemovesTheTemporary) {
  {
    StatusOr<AtomicFile> file = AtomicFile::create(path("out"));
    ASSERT_TRUE(succeeded(file));
    ASSERT_TRUE(succeeded(file->write(std::string("partial"))));
    AtomicFile moved = std::move(*file); // the moved-from one must not clean up twice
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(AtomicFileTest, ErrorsNameThePath) {
  EXPECT_TRUE(failsWith(AtomicFile::create(path("missing/out")),
                        "missing/out: the folder '" + path("missing") + "' does not exist"));
  EXPECT_TRUE(failsWith(AtomicFile::create(dir_ + "/"), "is a directory"));
}

// Renaming over a directory, a device or a symlink would replace it: only a
// regular file (or a symlink's regular target) is replaced.
TEST_F(AtomicFileTest, ReplacesOnlyRegularFiles) {
  ASSERT_EQ(::mkdir(path("sub").c_str(), 0755), 0);
  EXPECT_TRUE(failsWith(AtomicFile::create(path("sub")), "sub: is a directory"));
  EXPECT_TRUE(failsWith(AtomicFile::create("/dev/null"), "/dev/null: is not a regular file"));
  ASSERT_EQ(::symlink("/dev/null", path("null-link").c_str()), 0);
  ASSERT_EQ(::symlink(path("absent").c_str(), path("dangling").c_str()), 0);
  for (const char *link : {"null-link", "dangling"})
    EXPECT_TRUE(failsWith(AtomicFile::create(path(link)),
                          "is a symbolic link to something other than a regular file"));
  writeFile(path("target"), "old");
  ASSERT_EQ(::symlink("target", path("link").c_str()), 0);
  StatusOr<AtomicFile> file = AtomicFile::create(path("link"));
  ASSERT_TRUE(succeeded(file));
  ASSERT_TRUE(succeeded(file->write(std::string("new"))));
  ASSERT_TRUE(succeeded(file->commit()));
  EXPECT_EQ(readFile(path("target")), "new");
  struct stat info;
  ASSERT_EQ(::lstat(path("link").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_EQ(listing(),
            (std::vector<std::string>{"dangling", "link", "null-link", "sub", "target"}));
}

TEST_F(AtomicFileTest, MappedFileOfEmptyFile) {
  writeFile(path("empty"), "");
  StatusOr<MappedFile> file = MappedFile::open(path("empty"));
  ASSERT_TRUE(succeeded(file));
  EXPECT_EQ(file->size(), 0u);
  EXPECT_EQ(file->data(), nullptr);
}

} // namespace
} // namespace shardc::rt::io::test
