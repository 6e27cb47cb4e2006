// The columnar index, `index.bin` (docs/format.md, "The index"): per-sample length,
// label, width, height and source name, memory-mapped so planning and loading never
// touch a shard to learn a sample's size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"

namespace evenfeed {

struct IndexEntry {
  uint64_t length = 0;
  int32_t label = -1;
  uint32_t width = 0;
  uint32_t height = 0;
};

// Collects entries in id order, then writes the file in one go.
class IndexWriter {
 public:
  void add(const IndexEntry& entry, std::string_view source_name);
  uint64_t size() const { return lengths_.size(); }
  // Writes the index to `path`; throws Error on I/O failure (e.g. a full disk).
  void write(const std::filesystem::path& path) const;

 private:
  std::vector<uint64_t> lengths_;
  std::vector<int32_t> labels_;
  std::vector<uint32_t> widths_, heights_;
  std::vector<uint64_t> name_offsets_{0};
  std::string names_;
};

class IndexReader {
 public:
  static constexpr const char* kFileName = "index.bin";

  // Maps and checks the index: magic, version, and that the size matches its header.
  explicit IndexReader(const std::filesystem::path& path);

  uint64_t size() const { return num_samples_; }
  std::span<const uint64_t> lengths() const { return lengths_; }
  std::span<const int32_t> labels() const { return labels_; }
  std::span<const uint32_t> widths() const { return widths_; }
  std::span<const uint32_t> heights() const { return heights_; }
  std::string_view source_name(uint64_t id) const;
  // Drops the index's mapped pages from the resident set (they stay in the page cache).
  void release_resident_pages() const { file_.release_resident_pages(); }
  IndexEntry entry(uint64_t id) const {
    return {lengths_[id], labels_[id], widths_[id], heights_[id]};
  }

 private:
  MappedFile file_;
  uint64_t num_samples_ = 0;
  std::span<const uint64_t> lengths_;
  std::span<const int32_t> labels_;
  std::span<const uint32_t> widths_, heights_;
  std::span<const uint64_t> name_offsets_;
  std::string_view names_;
};

}  // namespace evenfeed
