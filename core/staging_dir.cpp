#include "core/staging_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "core/error.h"

namespace evenfeed {
namespace fs = std::filesystem;
namespace {

std::string staging_prefix(const fs::path& destination) {
  return "." + destination.filename().string() + ".evenfeed-tmp-";
}

fs::path parent_of(const fs::path& destination) {
  fs::path parent = destination.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

void fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

StagingDir::StagingDir(fs::path destination, bool replace_existing)
    : destination_(std::move(destination)), replace_existing_(replace_existing) {
  while (!destination_.empty() && !destination_.has_filename())
    destination_ = destination_.parent_path();
  EVENFEED_CHECK(!destination_.empty(), "output path is empty: name a directory to write");
  std::error_code ec;
  if (fs::exists(destination_, ec) && !replace_existing_) {
    fail("{} already exists; pass --force to replace it, or choose another output",
         destination_.string());
  }
  fs::path parent = parent_of(destination_);
  EVENFEED_CHECK(fs::is_directory(parent, ec),
                 "cannot write {}: its parent directory {} does not exist", destination_.string(),
                 parent.string());
  remove_stale_staging_dirs(destination_);
  temp_ = staging_path(destination_);
  fs::remove_all(temp_, ec);
  if (!fs::create_directory(temp_, ec) || ec) {
    fail("cannot create temporary directory {}: {}; check that {} is writable", temp_.string(),
         ec.message(), parent.string());
  }
}

StagingDir::~StagingDir() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(temp_, ec);
  }
}

void StagingDir::commit() {
  fsync_dir(temp_);
  std::error_code ec;
  if (fs::exists(destination_, ec)) {
    EVENFEED_CHECK(replace_existing_, "{} appeared while writing; pass --force to replace it",
                   destination_.string());
    if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, destination_.c_str(), RENAME_EXCHANGE) !=
        0) {
      fail_errno("rename (exchange)", destination_.string(), errno);
    }
    committed_ = true;
    fs::remove_all(temp_, ec);  // now holds the replaced dataset
  } else {
    if (::rename(temp_.c_str(), destination_.c_str()) != 0) {
      fail_errno("rename", destination_.string(), errno);
    }
    committed_ = true;
  }
  fsync_dir(parent_of(destination_));
}

fs::path staging_path(const fs::path& destination) {
  return parent_of(destination) / (staging_prefix(destination) + std::to_string(::getpid()));
}

int remove_stale_staging_dirs(const fs::path& destination) {
  const std::string prefix = staging_prefix(destination);
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(parent_of(destination), ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    pid_t pid = static_cast<pid_t>(std::atoi(name.c_str() + prefix.size()));
    bool alive = pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
    if (alive) continue;
    fs::remove_all(entry.path(), ec);
    ++removed;
  }
  return removed;
}

}  // namespace evenfeed
