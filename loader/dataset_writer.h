// Builds a dataset directory (docs/format.md): records go to shards in id order, a
// new shard starting when the current one is full; commit() writes the index and the
// manifest with every file's checksum, then renames the whole directory into place.
// Until commit() the output lives in a staging directory that is removed on failure.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/staging_dir.h"
#include "loader/index.h"
#include "loader/manifest.h"
#include "loader/record.h"

namespace evenfeed {

class ShardWriter;

struct DatasetWriterOptions {
  DatasetKind kind = DatasetKind::kImage;
  TokenDtype token_dtype = TokenDtype::kNone;  // tokens only
  uint64_t vocab_size = 0;                     // tokens only
  std::vector<std::string> classes;            // class names, label i = classes[i]
  std::string source_path;
  std::string source_format;
  uint64_t samples_per_shard = 1;  // shard capacity; the last shard may hold fewer
  bool replace_existing = false;   // --force
};

// One sample ready to store: the encoded record and its index entry.
struct PreparedSample {
  std::vector<std::byte> record;
  IndexEntry entry;
};

class DatasetWriter {
 public:
  DatasetWriter(std::filesystem::path out, DatasetWriterOptions options);
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  // Appends the next sample (id = samples() before the call). The record is moved.
  void add(PreparedSample&& sample, std::string_view source_name);
  uint64_t samples() const { return index_.size(); }
  // Finishes every file, checksums them, writes the manifest and renames the staging
  // directory to the output. Returns the manifest written.
  Manifest commit();

 private:
  void flush_pending();
  void finish_shard();

  DatasetWriterOptions options_;
  StagingDir staging_;
  Manifest manifest_;
  IndexWriter index_;
  std::unique_ptr<ShardWriter> shard_;
  std::vector<std::vector<std::byte>> pending_;
  uint64_t pending_first_id_ = 0;
  uint64_t pending_bytes_ = 0;
};

std::string shard_file_name(size_t shard);

}  // namespace evenfeed
