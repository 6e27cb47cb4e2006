// A fresh directory under $TMPDIR (or /tmp) for one test, removed with everything in
// it when the test ends.
#pragma once

#include <filesystem>

namespace evenfeed::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace evenfeed::testing
