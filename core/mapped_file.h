// A read-only memory map of a whole file (RAII). Used for the columnar index, for
// checksumming shards and for reading token files without copying them.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace evenfeed {

class MappedFile {
 public:
  // Maps `path` read-only; throws Error if it cannot be opened or mapped. An empty
  // file maps to an empty span.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  // Drops the mapped pages from the process's resident set (madvise DONTNEED); they
  // stay in the page cache and the next access faults them back in.
  void release_resident_pages() const;

 private:
  void release();

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace evenfeed

namespace evenfeed {
// Reads a whole file into `out` (reusing its capacity). Returns a description of the
// problem ("unreadable: Permission denied") or nothing.
std::optional<std::string> read_whole_file(const std::filesystem::path& path,
                                           std::vector<std::byte>& out);
}  // namespace evenfeed
