// Reads one shard read-only. Shards never change after conversion, so the environment
// is opened without a lock file and every thread can hold its own read transaction;
// record payloads are views into LMDB's map, valid while that transaction lives.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <utility>

namespace evenfeed {

// A record as a lookup found it. Both pointers are into the shard's map and stay valid
// while the lookup's transaction lives.
struct StoredRecord {
  std::span<const std::byte> bytes;  // header and payload; empty when the key is absent
  const std::byte* leaf = nullptr;   // the key inside its B-tree leaf page
};

class ShardReader {
 public:
  // Opens `path` after checking its size is `expected_bytes` (a truncated or grown file
  // is refused before LMDB maps it, since LMDB trusts its file).
  ShardReader(std::filesystem::path path, uint64_t expected_bytes);
  ~ShardReader();
  ShardReader(const ShardReader&) = delete;
  ShardReader& operator=(const ShardReader&) = delete;

  MDB_txn* begin_read() const;
  // A cursor on `txn` for get(); closed with mdb_cursor_close before the transaction ends.
  MDB_cursor* open_cursor(MDB_txn* txn) const;
  // The record stored under `id` (empty bytes when the key is absent). Goes through
  // `cursor`, not mdb_get, because only a cursor tells where the key's leaf page is.
  StoredRecord get(MDB_cursor* cursor, uint64_t id) const;
  uint64_t entries() const;
  // Drops this shard's pages from the process's resident set (they stay in the page
  // cache; the next read faults them back in).
  void release_resident_pages() const;
  // Drops, from the resident set, every page of the folio-sized, folio-aligned
  // neighbourhoods that hold [where, where + bytes): a fault on a file mapping maps the
  // whole page-cache folio around the faulting page (up to 2 MiB on Linux 6.x), not
  // only the page, so releasing the touched pages alone leaves the rest mapped. Bytes
  // outside the map (a test's damaged copy) are ignored. Other threads reading in the
  // same neighbourhood lose nothing: their next access faults the pages back in.
  void release_around(const std::byte* where, size_t bytes) const;
  // Whether release_around(where, bytes) also releases the page holding `p`.
  bool same_neighbourhood(const std::byte* p, const std::byte* where, size_t bytes) const;
  // The B-tree's root page in the map (every lookup reads it), or null when LMDB's
  // meta page could not be read with confidence; see find_root_page().
  const std::byte* root_page() const { return root_page_; }
  // The neighbourhood release_around() works in: the largest page-cache folio, which
  // is the PMD size (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size, 2 MiB on x86-64).
  static size_t folio_span();
  const std::filesystem::path& path() const { return path_; }
  // LMDB's read-only map of the whole file (empty if it could not be found).
  std::span<const std::byte> map() const {
    return {static_cast<const std::byte*>(map_begin_), map_bytes_};
  }

 private:
  void find_mapping(uint64_t inode);
  void find_root_page();
  std::optional<std::pair<size_t, size_t>> blocks_of(const std::byte* where, size_t bytes) const;

  std::filesystem::path path_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  void* map_begin_ = nullptr;  // LMDB's read-only map of the file
  size_t map_bytes_ = 0;
  const std::byte* root_page_ = nullptr;
};

}  // namespace evenfeed
