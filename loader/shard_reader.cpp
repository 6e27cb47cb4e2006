#include "loader/shard_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "loader/lmdb_check.h"
#include "loader/shard_writer.h"

namespace evenfeed {

ShardReader::ShardReader(std::filesystem::path path, uint64_t expected_bytes)
    : path_(std::move(path)) {
  const std::string where = path_.string();
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    fail("{}: shard file is missing or unreadable ({}); re-convert the dataset", where,
         std::strerror(errno));
  }
  EVENFEED_CHECK(static_cast<uint64_t>(st.st_size) == expected_bytes,
                 "{}: shard is {} bytes but the manifest says {}; the file is truncated or was "
                 "changed, re-convert the dataset",
                 where, static_cast<uint64_t>(st.st_size), expected_bytes);
  LMDB_CHECK(mdb_env_create(&env_), where);
  try {
    LMDB_CHECK(mdb_env_set_mapsize(env_, expected_bytes), where);
    LMDB_CHECK(
        mdb_env_open(env_, path_.c_str(), MDB_RDONLY | MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOTLS, 0),
        where);
    MDB_txn* txn = begin_read();
    int rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    mdb_txn_abort(txn);
    LMDB_CHECK(rc, where);
    find_mapping(static_cast<uint64_t>(st.st_ino));
    find_root_page();
  } catch (...) {
    mdb_env_close(env_);
    env_ = nullptr;
    throw;
  }
}

ShardReader::~ShardReader() {
  if (env_ != nullptr) mdb_env_close(env_);
}

MDB_txn* ShardReader::begin_read() const {
  MDB_txn* txn = nullptr;
  LMDB_CHECK(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), path_.string());
  return txn;
}

MDB_cursor* ShardReader::open_cursor(MDB_txn* txn) const {
  MDB_cursor* cursor = nullptr;
  LMDB_CHECK(mdb_cursor_open(txn, dbi_, &cursor), path_.string());
  return cursor;
}

StoredRecord ShardReader::get(MDB_cursor* cursor, uint64_t id) const {
  unsigned char key_bytes[8];
  encode_sample_key(id, key_bytes);
  MDB_val key{8, key_bytes};
  MDB_val value{0, nullptr};
  // A positioned cursor first checks the page it is on, which would touch (and map
  // again) the previous lookup's leaf after its release; renewing unpositions it,
  // without allocating, so the lookup starts from the root as mdb_get's does.
  LMDB_CHECK(mdb_cursor_renew(mdb_cursor_txn(cursor), cursor), path_.string());
  // MDB_SET_KEY returns the stored key, which lives in the leaf page the lookup used.
  int rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_KEY);
  if (rc == MDB_NOTFOUND) return {};
  LMDB_CHECK(rc, path_.string());
  return {{static_cast<const std::byte*>(value.mv_data), value.mv_size},
          static_cast<const std::byte*>(key.mv_data)};
}

uint64_t ShardReader::entries() const {
  MDB_txn* txn = begin_read();
  MDB_stat stat;
  int rc = mdb_stat(txn, dbi_, &stat);
  mdb_txn_abort(txn);
  LMDB_CHECK(rc, path_.string());
  return stat.ms_entries;
}

void ShardReader::release_resident_pages() const {
  if (map_begin_ != nullptr) ::madvise(map_begin_, map_bytes_, MADV_DONTNEED);
}

// The range of folio-span blocks (file offset / span) that [where, where + bytes)
// touches, or nothing when it is not inside the map.
std::optional<std::pair<size_t, size_t>> ShardReader::blocks_of(const std::byte* where,
                                                                size_t bytes) const {
  const auto* map = static_cast<const std::byte*>(map_begin_);
  if (map == nullptr || bytes == 0 || where < map || where + bytes > map + map_bytes_) return {};
  const size_t offset = static_cast<size_t>(where - map);
  return std::pair{offset / folio_span(), (offset + bytes - 1) / folio_span()};
}

void ShardReader::release_around(const std::byte* where, size_t bytes) const {
  const auto blocks = blocks_of(where, bytes);
  if (!blocks) return;
  // Folios are aligned in the file, and the map starts at file offset 0.
  const size_t first = blocks->first * folio_span();
  const size_t end = std::min(map_bytes_, (blocks->second + 1) * folio_span());
  ::madvise(static_cast<std::byte*>(map_begin_) + first, end - first, MADV_DONTNEED);
}

bool ShardReader::same_neighbourhood(const std::byte* p, const std::byte* where,
                                     size_t bytes) const {
  const auto blocks = blocks_of(where, bytes), block = blocks_of(p, 1);
  return blocks && block && block->first >= blocks->first && block->first <= blocks->second;
}

size_t ShardReader::folio_span() {
  static const size_t span = [] {
    size_t bytes = 0;
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    if (!(in >> bytes) || bytes == 0) bytes = size_t{2} << 20;
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return std::max(bytes, page);
  }();
  return span;
}

// LMDB's API does not say where the root page is, and a loader must release it like any
// page it touches: a hot root would otherwise keep its whole page-cache folio (up to
// 2 MiB) mapped for every shard a batch reads. The meta pages (pages 0 and 1, the one
// with the larger transaction id is current) hold it; their layout is LMDB's data
// format version 1, unchanged through LMDB 0.9. It is read only when it agrees with
// mdb_stat() on depth and entries; otherwise the root is left alone (root_page_ null).
void ShardReader::find_root_page() {
  MDB_stat stat;
  MDB_txn* txn = begin_read();
  int rc = mdb_stat(txn, dbi_, &stat);
  mdb_txn_abort(txn);
  if (rc != MDB_SUCCESS || map_begin_ == nullptr) return;
  const size_t page = stat.ms_psize;
  if (page < 256 || page > (size_t{1} << 16) || 2 * page > map_bytes_) return;
  // Read from the file, as LMDB reads its header, not through the map: nothing gets
  // mapped, and a checker that cannot see inside LMDB sees no access to its map.
  std::vector<unsigned char> metas(2 * page);
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t got = ::pread(fd, metas.data(), metas.size(), 0);
  ::close(fd);
  if (got != static_cast<ssize_t>(metas.size())) return;
  // Offsets in a meta page: a 16-byte page header, then magic, version, address,
  // map size, the free DB's record (48 bytes), then the main DB's record.
  constexpr size_t kMagic = 16, kVersion = 20, kMainDb = 88, kTxnId = 144;
  constexpr size_t kDepth = kMainDb + 6, kEntries = kMainDb + 32, kRoot = kMainDb + 40;
  auto field = [&](size_t meta, size_t offset, auto value) {
    std::memcpy(&value, metas.data() + meta * page + offset, sizeof(value));
    return value;
  };
  const size_t meta = field(1, kTxnId, uint64_t{}) > field(0, kTxnId, uint64_t{}) ? 1 : 0;
  const uint64_t root = field(meta, kRoot, uint64_t{});
  const bool agrees = field(meta, kMagic, uint32_t{}) == 0xBEEFC0DEu &&
                      field(meta, kVersion, uint32_t{}) == 1 &&
                      field(meta, kDepth, uint16_t{}) == stat.ms_depth &&
                      field(meta, kEntries, uint64_t{}) == stat.ms_entries && root >= 2 &&
                      (root + 1) * page <= map_bytes_;
  if (agrees) root_page_ = static_cast<const std::byte*>(map_begin_) + root * page;
}

// LMDB does not tell where it mapped the file (mdb_env_info's address is the meta
// page's fixed-map hint), so find the mapping of this file's inode in /proc/self/maps.
void ShardReader::find_mapping(uint64_t inode) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long begin = 0, end = 0, offset = 0, node = 0;
    char perms[8] = {}, device[16] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %15s %llu", &begin, &end, perms, &offset,
                    device, &node) != 6) {
      continue;
    }
    if (node == inode && offset == 0) {
      map_begin_ = reinterpret_cast<void*>(begin);
      map_bytes_ = static_cast<size_t>(end - begin);
      return;
    }
  }
}

}  // namespace evenfeed
