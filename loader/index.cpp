#include "loader/index.h"

#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace evenfeed {
namespace {

constexpr char kMagic[8] = {'E', 'V', 'F', 'I', 'N', 'D', 'E', 'X'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 64;

constexpr uint64_t pad8(uint64_t n) {
  return (n + 7) & ~uint64_t{7};
}

// Byte offsets of each column for N samples; `end` is where the names blob starts.
struct Layout {
  uint64_t lengths, labels, widths, heights, name_offsets, names;
  explicit Layout(uint64_t n) {
    lengths = kHeaderSize;
    labels = lengths + 8 * n;
    widths = labels + pad8(4 * n);
    heights = widths + pad8(4 * n);
    name_offsets = heights + pad8(4 * n);
    names = name_offsets + 8 * (n + 1);
  }
};

class OutputFile {
 public:
  explicit OutputFile(const std::filesystem::path& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) fail_errno("open for writing", path.string(), errno);
  }
  ~OutputFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  void write(const void* data, size_t bytes) {
    if (bytes > 0 && std::fwrite(data, 1, bytes, file_) != bytes)
      fail_errno("write", path_.string(), errno);
  }
  void pad_to(uint64_t offset) {
    static constexpr char zeros[8] = {};
    long at = std::ftell(file_);
    if (at >= 0 && static_cast<uint64_t>(at) < offset)
      write(zeros, offset - static_cast<uint64_t>(at));
  }
  void close() {
    if (std::fflush(file_) != 0 || std::fclose(file_) != 0) {
      file_ = nullptr;
      fail_errno("close", path_.string(), errno);
    }
    file_ = nullptr;
  }

 private:
  std::filesystem::path path_;
  FILE* file_ = nullptr;
};

}  // namespace

void IndexWriter::add(const IndexEntry& entry, std::string_view source_name) {
  lengths_.push_back(entry.length);
  labels_.push_back(entry.label);
  widths_.push_back(entry.width);
  heights_.push_back(entry.height);
  names_.append(source_name);
  name_offsets_.push_back(names_.size());
}

void IndexWriter::write(const std::filesystem::path& path) const {
  const uint64_t n = lengths_.size();
  const Layout layout(n);
  OutputFile out(path);
  char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, 8);
  std::memcpy(header + 8, &kVersion, 4);
  std::memcpy(header + 16, &n, 8);
  uint64_t names_bytes = names_.size();
  std::memcpy(header + 24, &names_bytes, 8);
  out.write(header, kHeaderSize);
  out.write(lengths_.data(), 8 * n);
  out.write(labels_.data(), 4 * n);
  out.pad_to(layout.widths);
  out.write(widths_.data(), 4 * n);
  out.pad_to(layout.heights);
  out.write(heights_.data(), 4 * n);
  out.pad_to(layout.name_offsets);
  out.write(name_offsets_.data(), 8 * (n + 1));
  out.write(names_.data(), names_.size());
  out.close();
}

IndexReader::IndexReader(const std::filesystem::path& path) : file_(path) {
  auto bytes = file_.bytes();
  const std::string where = path.string();
  EVENFEED_CHECK(bytes.size() >= kHeaderSize && std::memcmp(bytes.data(), kMagic, 8) == 0,
                 "{}: not an evenfeed index (bad magic or too short); re-run `evenfeed convert`",
                 where);
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  EVENFEED_CHECK(version == kVersion, "{}: index version {} is not supported (reads {})", where,
                 version, kVersion);
  uint64_t names_bytes;
  std::memcpy(&num_samples_, bytes.data() + 16, 8);
  std::memcpy(&names_bytes, bytes.data() + 24, 8);
  EVENFEED_CHECK(num_samples_ < (uint64_t{1} << 48) && names_bytes < (uint64_t{1} << 56),
                 "{}: index header is damaged (num_samples {}, names {} bytes)", where,
                 num_samples_, names_bytes);
  const Layout layout(num_samples_);
  EVENFEED_CHECK(
      bytes.size() == layout.names + names_bytes,
      "{}: index is {} bytes but its header implies {}; the file is truncated or damaged", where,
      bytes.size(), layout.names + names_bytes);
  const std::byte* base = bytes.data();  // page-aligned, so every column is aligned
  const uint64_t n = num_samples_;
  lengths_ = {reinterpret_cast<const uint64_t*>(base + layout.lengths), n};
  labels_ = {reinterpret_cast<const int32_t*>(base + layout.labels), n};
  widths_ = {reinterpret_cast<const uint32_t*>(base + layout.widths), n};
  heights_ = {reinterpret_cast<const uint32_t*>(base + layout.heights), n};
  name_offsets_ = {reinterpret_cast<const uint64_t*>(base + layout.name_offsets), n + 1};
  names_ = {reinterpret_cast<const char*>(base + layout.names), names_bytes};
  EVENFEED_CHECK(name_offsets_[0] == 0 && name_offsets_[n] == names_bytes,
                 "{}: source-name offsets are damaged", where);
}

std::string_view IndexReader::source_name(uint64_t id) const {
  uint64_t begin = name_offsets_[id], end = name_offsets_[id + 1];
  if (begin > end || end > names_.size()) return "<damaged name>";
  return names_.substr(begin, end - begin);
}

}  // namespace evenfeed
