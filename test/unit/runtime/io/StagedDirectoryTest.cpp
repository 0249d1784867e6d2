//===- StagedDirectoryTest.cpp - folders written beside their place -------===//
#include "runtime/io/StagedDirectory.h"

#include "test/unit/runtime/io/TestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

namespace shardc::rt::io {
namespace {

using test::readFile;
using test::writeFile;

class StagedDirectoryTest : public test::TempDir {
protected:
  /// Accepts a folder that holds a file "ours" (and anything else).
  static Status ours(const std::string &directory) {
    if (std::filesystem::exists(directory + "/ours"))
      return {};
    return Status::error("is not ours");
  }

  std::vector<std::string> namesIn(const std::string &directory) const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(directory))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

TEST_F(StagedDirectoryTest, MovesANewFolderIntoPlace) {
  auto staged = StagedDirectory::create(path("out/"), ours);
  ASSERT_TRUE(staged.ok()) << staged.message();
  EXPECT_EQ((*staged)->path(), path(".out.partial-" + std::to_string(::getpid())));
  writeFile((*staged)->path() + "/a", "new");
  EXPECT_FALSE(std::filesystem::exists(path("out")));
  ASSERT_TRUE((*staged)->commit().ok());
  EXPECT_EQ(readFile(path("out/a")), "new");
  EXPECT_EQ(listing(), std::vector<std::string>{"out"});
}

TEST_F(StagedDirectoryTest, ReplacesAFolderTheCheckAccepts) {
  std::filesystem::create_directory(path("out"));
  writeFile(path("out/ours"), "old");
  writeFile(path("out/stale"), "old");
  auto staged = StagedDirectory::create(path("out"), ours);
  ASSERT_TRUE(staged.ok()) << staged.message();
  writeFile((*staged)->path() + "/ours", "new");
  // Until the commit the old folder is whole.
  EXPECT_EQ(namesIn(path("out")), (std::vector<std::string>{"ours", "stale"}));
  ASSERT_TRUE((*staged)->commit().ok());
  EXPECT_EQ(namesIn(path("out")), std::vector<std::string>{"ours"});
  EXPECT_EQ(readFile(path("out/ours")), "new");
  EXPECT_EQ(listing(), std::vector<std::string>{"out"});
}

TEST_F(StagedDirectoryTest, AFolderNotCommittedGoesAway) {
  std::filesystem::create_directory(path("out"));
  writeFile(path("out/ours"), "old");
  {
    auto staged = StagedDirectory::create(path("out"), ours);
    ASSERT_TRUE(staged.ok()) << staged.message();
    writeFile((*staged)->path() + "/ours", "new");
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"out"});
  EXPECT_EQ(readFile(path("out/ours")), "old");
}

TEST_F(StagedDirectoryTest, RefusesWhatItMustNotReplace) {
  std::filesystem::create_directory(path("theirs"));
  writeFile(path("theirs/x"), "");
  writeFile(path("file"), "");
  std::filesystem::create_directory_symlink(path("theirs"), path("link"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {path("theirs"), "'" + path("theirs") + "' is not ours; refusing to replace it"},
      {path("file"),
       "'" + path("file") + "' exists and is not a directory; refusing to replace it"},
      {path("link"), "'" + path("link") + "' is a symbolic link; refusing to replace it"},
      {path("none/out"),
       "'" + path("none/out") + "': the folder '" + path("none") + "' does not exist"},
      {".", "'.' is the working folder or a folder above it; refusing to replace it"}};
  for (const auto &[destination, message] : cases)
    EXPECT_EQ(StagedDirectory::create(destination, ours).message(), message) << destination;
  EXPECT_EQ(listing(), (std::vector<std::string>{"file", "link", "theirs"}));
}

TEST_F(StagedDirectoryTest, TheDestinationIsCheckedAgainAtTheCommit) {
  auto staged = StagedDirectory::create(path("out"), ours);
  ASSERT_TRUE(staged.ok()) << staged.message();
  // Someone else's folder appeared there meanwhile.
  std::filesystem::create_directory(path("out"));
  writeFile(path("out/theirs"), "");
  EXPECT_EQ((*staged)->commit().message(),
            "'" + path("out") + "' is not ours; refusing to replace it");
  staged->reset();
  EXPECT_EQ(namesIn(path("out")), std::vector<std::string>{"theirs"});
  EXPECT_EQ(listing(), std::vector<std::string>{"out"});
}

} // namespace
} // namespace shardc::rt::io
