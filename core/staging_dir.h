// Atomic output directories: everything is written into a temporary directory beside
// the destination and renamed into place only when complete, so a failure, an
// interrupt or a kill never leaves a half-written dataset at the destination.
#pragma once

#include <filesystem>

namespace evenfeed {

class StagingDir {
 public:
  // Creates `<parent>/.<name>.evenfeed-tmp-<pid>` beside `destination`. Throws Error
  // when the destination exists and `replace_existing` is false, or the parent is
  // not writable.
  StagingDir(std::filesystem::path destination, bool replace_existing);
  ~StagingDir();  // removes the temporary directory unless committed
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const std::filesystem::path& path() const { return temp_; }
  const std::filesystem::path& destination() const { return destination_; }

  // Moves the finished directory into place: a plain rename, or an atomic exchange
  // with an existing destination (which is then deleted).
  void commit();

 private:
  std::filesystem::path destination_;
  std::filesystem::path temp_;
  bool replace_existing_;
  bool committed_ = false;
};

// Where this process stages `destination`: `<parent>/.<name>.evenfeed-tmp-<pid>` (a
// directory for StagingDir, a file for a single output such as `plan --dump`).
std::filesystem::path staging_path(const std::filesystem::path& destination);

// Removes temporary directories or files left beside `destination` by runs that were
// killed (their process is gone). Returns how many were removed.
int remove_stale_staging_dirs(const std::filesystem::path& destination);

}  // namespace evenfeed
