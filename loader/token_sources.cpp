#include "loader/token_sources.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/error.h"

namespace evenfeed {
namespace fs = std::filesystem;
namespace {

// Where one document lives: which mapped file, a byte offset, and a count (bytes for
// JSON lines, tokens otherwise); `number` is its line/sequence/document number.
struct DocumentRef {
  uint32_t file = 0;
  uint64_t offset = 0;
  uint64_t count = 0;
  uint64_t number = 0;
};

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

class MappedTokenSource : public TokenSource {
 public:
  uint64_t size() const override { return docs_.size(); }
  uint64_t input_bytes() const override {
    uint64_t total = 0;
    for (const auto& f : files_) total += f.size();
    return total;
  }
  std::string source_name(uint64_t i) const override {
    const DocumentRef& d = docs_[i];
    return fmt::format("{}:{} {}", files_[d.file].path().filename().string(), unit_, d.number);
  }

 protected:
  explicit MappedTokenSource(const char* unit) : unit_(unit) {}
  std::vector<MappedFile> files_;
  std::vector<DocumentRef> docs_;
  const char* unit_;
};

// ---- JSON lines ----------------------------------------------------------------

class JsonlSource : public MappedTokenSource {
 public:
  explicit JsonlSource(const std::vector<fs::path>& paths) : MappedTokenSource("line") {
    for (const fs::path& p : paths) {
      files_.emplace_back(p);
      auto bytes = files_.back().bytes();
      const char* text = reinterpret_cast<const char*>(bytes.data());
      uint64_t start = 0, number = 1;
      while (start < bytes.size()) {
        const void* nl = std::memchr(text + start, '\n', bytes.size() - start);
        uint64_t end =
            nl ? static_cast<uint64_t>(static_cast<const char*>(nl) - text) : bytes.size();
        std::string_view line(text + start, end - start);
        if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
          docs_.push_back({static_cast<uint32_t>(files_.size() - 1), start, end - start, number});
        }
        start = end + 1;
        ++number;
      }
    }
  }
  const char* format() const override { return "jsonl"; }

  std::optional<std::string> read(uint64_t i, std::vector<uint32_t>& tokens,
                                  int32_t& label) const override {
    const DocumentRef& d = docs_[i];
    const char* text = reinterpret_cast<const char*>(files_[d.file].bytes().data()) + d.offset;
    nlohmann::json j = nlohmann::json::parse(text, text + d.count, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::string("not a JSON object");
    // Hugging Face tokenisers (and `datasets`' to_json) name the array "input_ids".
    auto t = j.find("tokens");
    if (t == j.end()) t = j.find("input_ids");
    if (t == j.end() || !t->is_array())
      return std::string("no \"tokens\" (or \"input_ids\") array");
    tokens.clear();
    tokens.reserve(t->size());
    for (const auto& v : *t) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > UINT32_MAX) {
        return fmt::format("token {} is not an integer in 0..{}", excerpt(v.dump()), UINT32_MAX);
      }
      tokens.push_back(static_cast<uint32_t>(v.get<int64_t>()));
    }
    label = -1;
    if (auto l = j.find("label"); l != j.end() && !l->is_null()) {
      if (!l->is_number_integer() || l->get<int64_t>() < 0 || l->get<int64_t>() > INT32_MAX) {
        return fmt::format("label {} is not a non-negative integer", excerpt(l->dump()));
      }
      label = static_cast<int32_t>(l->get<int64_t>());
    }
    if (tokens.empty()) return std::string("empty document (no tokens)");
    return std::nullopt;
  }
};

// ---- Megatron-LM indexed dataset --------------------------------------------------

// .idx: "MMIDIDX\0\0", u64 version (1), u8 dtype code, u64 sequences, u64 documents,
// i32 sizes[sequences], i64 pointers[sequences] (byte offsets in .bin), i64 doc_idx[documents].
class MegatronSource : public MappedTokenSource {
 public:
  explicit MegatronSource(const std::vector<fs::path>& idx_paths) : MappedTokenSource("sequence") {
    for (const fs::path& idx_path : idx_paths) add_pair(idx_path);
  }
  const char* format() const override { return "megatron"; }

  std::optional<std::string> read(uint64_t i, std::vector<uint32_t>& tokens,
                                  int32_t& label) const override {
    const DocumentRef& d = docs_[i];
    const std::byte* p = files_[d.file].bytes().data() + d.offset;
    const int width = widths_[d.file];
    const bool is_signed = signed_[d.file];
    tokens.resize(d.count);
    for (uint64_t k = 0; k < d.count; ++k) {
      int64_t v = 0;
      const std::byte* q = p + k * width;
      switch (width) {
        case 1:
          v = is_signed ? load<int8_t>(q) : load<uint8_t>(q);
          break;
        case 2:
          v = is_signed ? load<int16_t>(q) : load<uint16_t>(q);
          break;
        case 4:
          v = load<int32_t>(q);
          break;
        default:
          v = load<int64_t>(q);
          break;
      }
      if (v < 0 || v > UINT32_MAX)
        return fmt::format("token {} at position {} is out of range", v, k);
      tokens[k] = static_cast<uint32_t>(v);
    }
    label = -1;
    if (tokens.empty()) return std::string("empty sequence");
    return std::nullopt;
  }

 private:
  void add_pair(const fs::path& idx_path) {
    const std::string where = idx_path.string();
    MappedFile idx(idx_path);
    fs::path bin_path = fs::path(idx_path).replace_extension(".bin");
    files_.emplace_back(bin_path);
    const uint32_t file = static_cast<uint32_t>(files_.size() - 1);
    auto b = idx.bytes();
    constexpr size_t kHeader = 9 + 8 + 1 + 8 + 8;
    EVENFEED_CHECK(b.size() >= kHeader && std::memcmp(b.data(), "MMIDIDX\0\0", 9) == 0,
                   "{}: not a Megatron-LM index (bad magic)", where);
    EVENFEED_CHECK(load<uint64_t>(b.data() + 9) == 1,
                   "{}: Megatron index version {} is not supported (reads 1)", where,
                   load<uint64_t>(b.data() + 9));
    const uint8_t code = load<uint8_t>(b.data() + 17);
    // Megatron's dtype codes: 1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 8 uint16.
    static constexpr int kWidth[9] = {0, 1, 1, 2, 4, 8, 0, 0, 2};
    EVENFEED_CHECK(code < 9 && kWidth[code] > 0, "{}: dtype code {} is not an integer token type",
                   where, code);
    widths_.push_back(kWidth[code]);
    signed_.push_back(code == 2 || code == 3);
    const uint64_t sequences = load<uint64_t>(b.data() + 18);
    EVENFEED_CHECK(sequences <= (b.size() - kHeader) / 12,
                   "{}: index claims {} sequences but is only {} bytes", where, sequences,
                   b.size());
    const std::byte* sizes = b.data() + kHeader;
    const std::byte* pointers = sizes + 4 * sequences;
    const uint64_t bin_size = files_.back().size();
    for (uint64_t s = 0; s < sequences; ++s) {
      int32_t count = load<int32_t>(sizes + 4 * s);
      int64_t offset = load<int64_t>(pointers + 8 * s);
      EVENFEED_CHECK(
          count >= 0 && offset >= 0 &&
              static_cast<uint64_t>(offset) + static_cast<uint64_t>(count) * kWidth[code] <=
                  bin_size,
          "{}: sequence {} (offset {}, {} tokens) lies outside {} ({} bytes); the pair is "
          "truncated or mismatched",
          where, s, offset, count, bin_path.string(), bin_size);
      docs_.push_back({file, static_cast<uint64_t>(offset), static_cast<uint64_t>(count), s});
    }
  }

  std::vector<int> widths_;
  std::vector<bool> signed_;
};

// ---- llm.c token shards ---------------------------------------------------------

// Header: 256 int32: [0] magic, [1] version, [2] token count; then the tokens.
// 20240520/1 holds uint16 tokens (GPT-2), 20240801/7 uint32 tokens (Llama 3).
class LlmcSource : public MappedTokenSource {
 public:
  LlmcSource(const std::vector<fs::path>& paths, uint32_t eot) : MappedTokenSource("document") {
    for (const fs::path& p : paths) add_file(p, eot);
  }
  const char* format() const override { return "llmc"; }

  std::optional<std::string> read(uint64_t i, std::vector<uint32_t>& tokens,
                                  int32_t& label) const override {
    const DocumentRef& d = docs_[i];
    const std::byte* p = files_[d.file].bytes().data() + d.offset;
    tokens.resize(d.count);
    for (uint64_t k = 0; k < d.count; ++k) {
      tokens[k] = widths_[d.file] == 2 ? load<uint16_t>(p + 2 * k) : load<uint32_t>(p + 4 * k);
    }
    label = -1;
    return std::nullopt;
  }

 private:
  void add_file(const fs::path& path, uint32_t eot) {
    const std::string where = path.string();
    files_.emplace_back(path);
    const uint32_t file = static_cast<uint32_t>(files_.size() - 1);
    auto b = files_.back().bytes();
    EVENFEED_CHECK(b.size() >= 1024, "{}: too short for an llm.c token file (1 KiB header)", where);
    const int32_t magic = load<int32_t>(b.data()), version = load<int32_t>(b.data() + 4);
    int width = 0;
    if (magic == 20240520 && version == 1) width = 2;
    if (magic == 20240801 && version == 7) width = 4;
    EVENFEED_CHECK(width > 0, "{}: not an llm.c token file (magic {}, version {})", where, magic,
                   version);
    widths_.push_back(width);
    const uint64_t count = static_cast<uint32_t>(load<int32_t>(b.data() + 8));
    EVENFEED_CHECK(
        b.size() == 1024 + count * width,
        "{}: header says {} tokens ({} bytes) but the file holds {} bytes after the header; "
        "the file is truncated",
        where, count, count * width, b.size() - 1024);
    uint64_t start = 0, number = 0;
    for (uint64_t k = 0; k <= count; ++k) {
      bool boundary = k == count;
      if (!boundary) {
        const std::byte* q = b.data() + 1024 + k * width;
        boundary = (width == 2 ? load<uint16_t>(q) : load<uint32_t>(q)) == eot;
      }
      if (!boundary) continue;
      if (k > start) docs_.push_back({file, 1024 + start * width, k - start, number++});
      start = k + 1;
    }
  }

  std::vector<int> widths_;
};

std::vector<fs::path> files_with(const fs::path& dir,
                                 std::initializer_list<const char*> extensions) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    for (const char* e : extensions) {
      if (entry.path().extension() == e) out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string detect_format(const fs::path& src) {
  if (fs::is_directory(src)) {
    if (!files_with(src, {".idx"}).empty()) return "megatron";
    if (!files_with(src, {".jsonl", ".json"}).empty()) return "jsonl";
    if (!files_with(src, {".bin"}).empty()) return "llmc";
    fail("{}: no .jsonl, .idx or .bin token files inside; pass a file or --format", src.string());
  }
  const std::string ext = src.extension().string();
  if (ext == ".jsonl" || ext == ".json") return "jsonl";
  if (ext == ".idx") return "megatron";
  if (ext == ".bin") {
    return fs::exists(fs::path(src).replace_extension(".idx")) ? "megatron" : "llmc";
  }
  fail("{}: cannot tell the token format from the name; pass --format jsonl|megatron|llmc",
       src.string());
}

}  // namespace

std::unique_ptr<TokenSource> open_token_source(const fs::path& src, const std::string& format_in,
                                               std::optional<uint32_t> eot) {
  std::error_code ec;
  EVENFEED_CHECK(fs::exists(src, ec), "{}: no such file or directory", src.string());
  const std::string format = format_in == "auto" ? detect_format(src) : format_in;
  const bool dir = fs::is_directory(src, ec);
  if (format == "jsonl") {
    auto files = dir ? files_with(src, {".jsonl", ".json"}) : std::vector<fs::path>{src};
    return std::make_unique<JsonlSource>(files);
  }
  if (format == "megatron") {
    auto files = dir ? files_with(src, {".idx"})
                     : std::vector<fs::path>{fs::path(src).replace_extension(".idx")};
    EVENFEED_CHECK(!files.empty() && fs::exists(files[0]), "{}: no Megatron .idx file found",
                   src.string());
    return std::make_unique<MegatronSource>(files);
  }
  if (format == "llmc") {
    EVENFEED_CHECK(
        eot.has_value(),
        "{}: llm.c token files need --eot ID to split documents (GPT-2's end-of-text is 50256, "
        "Llama 3's 128001)",
        src.string());
    auto files = dir ? files_with(src, {".bin"}) : std::vector<fs::path>{src};
    return std::make_unique<LlmcSource>(files, *eot);
  }
  fail("unknown token format '{}'; use auto, jsonl, megatron or llmc", format);
}

}  // namespace evenfeed
