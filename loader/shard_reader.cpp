#include "loader/shard_reader.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

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

std::span<const std::byte> ShardReader::get(MDB_txn* txn, uint64_t id) const {
  unsigned char key_bytes[8];
  encode_sample_key(id, key_bytes);
  MDB_val key{8, key_bytes};
  MDB_val value{0, nullptr};
  int rc = mdb_get(txn, dbi_, &key, &value);
  if (rc == MDB_NOTFOUND) return {};
  LMDB_CHECK(rc, path_.string());
  return {static_cast<const std::byte*>(value.mv_data), value.mv_size};
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
