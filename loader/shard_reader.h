// Reads one shard read-only. Shards never change after conversion, so the environment
// is opened without a lock file and every thread can hold its own read transaction;
// record payloads are views into LMDB's map, valid while that transaction lives.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <filesystem>
#include <span>

namespace evenfeed {

class ShardReader {
 public:
  // Opens `path` after checking its size is `expected_bytes` (a truncated or grown file
  // is refused before LMDB maps it, since LMDB trusts its file).
  ShardReader(std::filesystem::path path, uint64_t expected_bytes);
  ~ShardReader();
  ShardReader(const ShardReader&) = delete;
  ShardReader& operator=(const ShardReader&) = delete;

  MDB_txn* begin_read() const;
  // The record stored under `id`, or an empty span when the key is absent.
  std::span<const std::byte> get(MDB_txn* txn, uint64_t id) const;
  uint64_t entries() const;
  // Drops this shard's pages from the process's resident set (they stay in the page
  // cache; the next read faults them back in).
  void release_resident_pages() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  void find_mapping(uint64_t inode);

  std::filesystem::path path_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  void* map_begin_ = nullptr;  // LMDB's read-only map of the file
  size_t map_bytes_ = 0;
};

}  // namespace evenfeed
