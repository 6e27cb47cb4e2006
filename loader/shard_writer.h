// Writes one shard: a single-file LMDB environment whose keys are big-endian sample
// ids, appended in order. Records are committed in batches; the map grows ahead of
// each batch, so the writer never meets MDB_MAP_FULL mid-transaction.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace evenfeed {

class ShardWriter {
 public:
  explicit ShardWriter(std::filesystem::path path);
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // Appends encoded records with ids first_id, first_id+1, ... in one transaction.
  // Ids must continue the previous batch.
  void append(uint64_t first_id, std::span<const std::vector<std::byte>> records);
  // Flushes to disk and closes; returns the file size.
  uint64_t finish();

  uint64_t records() const { return records_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void ensure_room(uint64_t bytes, uint64_t count);

  std::filesystem::path path_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  uint64_t map_size_ = 0;
  uint64_t records_ = 0;
  uint64_t next_id_ = 0;
  bool started_ = false;
};

// The 8-byte big-endian key of a sample id.
void encode_sample_key(uint64_t id, unsigned char key[8]);

}  // namespace evenfeed
