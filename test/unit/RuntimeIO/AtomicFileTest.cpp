//===- AtomicFileTest.cpp - Temporary name, then rename -------------------===//

#include "runtime/io/AtomicFile.h"
#include "runtime/io/MappedFile.h"

#include "TestUtil.h"

#include <sys/stat.h>

namespace shardc::rt::io::test {
namespace {

class AtomicFileTest : public TempDir {};

TEST_F(AtomicFileTest, CommitReplacesTheDestination) {
  writeFile(path("out"), "old");
  {
    Expected<AtomicFile> file = AtomicFile::create(path("out"));
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
    Expected<AtomicFile> file = AtomicFile::create(path("out"));
    ASSERT_TRUE(succeeded(file));
    ASSERT_TRUE(succeeded(file->write(std::string("partial"))));
    AtomicFile moved = std::move(*file); // the moved-from one must not clean up twice
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(AtomicFileTest, ErrorsNameThePath) {
  EXPECT_TRUE(failsWith(AtomicFile::create(path("missing/out")), "missing/out: cannot create"));
  EXPECT_TRUE(failsWith(AtomicFile::create(dir_ + "/"), "not a file name"));
  // Renaming over a directory fails at commit; the temporary goes away.
  ASSERT_EQ(::mkdir(path("sub").c_str(), 0755), 0);
  Expected<AtomicFile> file = AtomicFile::create(path("sub"));
  ASSERT_TRUE(succeeded(file));
  EXPECT_TRUE(failsWith(file->commit(), "sub: cannot rename"));
  EXPECT_EQ(listing(), std::vector<std::string>{"sub"});
}

TEST_F(AtomicFileTest, MappedFileOfEmptyFile) {
  writeFile(path("empty"), "");
  Expected<MappedFile> file = MappedFile::open(path("empty"));
  ASSERT_TRUE(succeeded(file));
  EXPECT_EQ(file->size(), 0u);
  EXPECT_EQ(file->data(), nullptr);
}

} // namespace
} // namespace shardc::rt::io::test
