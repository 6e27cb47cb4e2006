// The dataset manifest, `evenfeed.json` (docs/format.md, "The manifest"): what the
// dataset is and how to check each of its files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace evenfeed {

enum class DatasetKind { kImage, kTokens };
enum class TokenDtype { kNone, kUint16, kUint32 };

const char* dataset_kind_name(DatasetKind kind);
const char* token_dtype_name(TokenDtype dtype);
size_t token_dtype_bytes(TokenDtype dtype);

struct FileEntry {
  std::string file;
  uint64_t bytes = 0;
  uint64_t checksum = 0;
};

struct ShardEntry {
  std::string file;
  uint64_t first_id = 0;
  uint64_t count = 0;
  uint64_t bytes = 0;          // file size
  uint64_t payload_bytes = 0;  // sum of record payloads
  uint64_t checksum = 0;       // XXH3-64 of the file
};

struct Manifest {
  static constexpr int kFormatVersion = 1;
  static constexpr const char* kFileName = "evenfeed.json";

  DatasetKind kind = DatasetKind::kImage;
  uint64_t num_samples = 0;
  uint64_t total_bytes = 0;
  std::vector<std::string> classes;
  TokenDtype token_dtype = TokenDtype::kNone;
  uint64_t vocab_size = 0;
  FileEntry index;
  std::vector<ShardEntry> shards;
  std::string source_path;
  std::string source_format;
  std::string created_by;

  std::string to_json() const;
  // Parses and checks the manifest (known format and version, shards tiling the ids);
  // `where` names the file in errors.
  static Manifest from_json(const std::string& text, const std::string& where);
  static Manifest load(const std::filesystem::path& dataset_dir);
};

}  // namespace evenfeed
