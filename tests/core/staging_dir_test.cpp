#include "core/staging_dir.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "core/error.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;

void touch(const fs::path& p) {
  std::ofstream(p) << "x";
}

TEST(StagingDir, CommitMovesTheDirectoryIntoPlace) {
  testing::TempDir tmp;
  const fs::path out = tmp / "out";
  {
    StagingDir staging(out, false);
    touch(staging.path() / "a");
    EXPECT_FALSE(fs::exists(out));
    staging.commit();
  }
  EXPECT_TRUE(fs::exists(out / "a"));
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), {}), 1);  // no temp left
}

TEST(StagingDir, AbandonedStagingLeavesNothing) {
  testing::TempDir tmp;
  {
    StagingDir staging(tmp / "out", false);
    touch(staging.path() / "a");
  }
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

TEST(StagingDir, RefusesAnExistingDestinationUnlessReplacing) {
  testing::TempDir tmp;
  fs::create_directory(tmp / "out");
  touch(tmp / "out" / "old");
  EXPECT_THROW(StagingDir(tmp / "out", false), Error);
  StagingDir staging(tmp / "out", true);
  touch(staging.path() / "new");
  EXPECT_TRUE(fs::exists(tmp / "out" / "old"));  // untouched until commit
  staging.commit();
  EXPECT_TRUE(fs::exists(tmp / "out" / "new"));
  EXPECT_FALSE(fs::exists(tmp / "out" / "old"));
}

TEST(StagingDir, MissingParentIsAClearError) {
  testing::TempDir tmp;
  try {
    StagingDir staging(tmp / "no" / "such" / "out", false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parent directory"), std::string::npos) << e.what();
  }
}

TEST(StagingDir, RemovesStagingLeftByAKilledProcess) {
  testing::TempDir tmp;
  pid_t child = ::fork();
  if (child == 0) {
    StagingDir staging(tmp / "out", false);
    ::_exit(0);  // dies without running destructors, as if killed
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_FALSE(fs::is_empty(tmp.path()));
  EXPECT_EQ(remove_stale_staging_dirs(tmp / "out"), 1);
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

}  // namespace
}  // namespace evenfeed
