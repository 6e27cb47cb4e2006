#include "loader/shard_writer.h"

#include <sys/stat.h>

#include <string>

#include "core/error.h"
#include "loader/lmdb_check.h"

namespace evenfeed {
namespace {
constexpr uint64_t kInitialMapSize = uint64_t{64} << 20;
}

void encode_sample_key(uint64_t id, unsigned char key[8]) {
  for (int i = 7; i >= 0; --i) {
    key[i] = static_cast<unsigned char>(id & 0xff);
    id >>= 8;
  }
}

ShardWriter::ShardWriter(std::filesystem::path path) : path_(std::move(path)) {
  const std::string where = path_.string();
  LMDB_CHECK(mdb_env_create(&env_), where);
  map_size_ = kInitialMapSize;
  LMDB_CHECK(mdb_env_set_mapsize(env_, map_size_), where);
  // NOLOCK: we are the only user of a file nobody else can see yet; NOSYNC: one
  // fsync at finish() instead of one per batch.
  LMDB_CHECK(mdb_env_open(env_, path_.c_str(), MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC, 0644),
             where);
  MDB_txn* txn = nullptr;
  LMDB_CHECK(mdb_txn_begin(env_, nullptr, 0, &txn), where);
  int rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
  if (rc != MDB_SUCCESS) mdb_txn_abort(txn);
  LMDB_CHECK(rc, where);
  LMDB_CHECK(mdb_txn_commit(txn), where);
}

ShardWriter::~ShardWriter() {
  if (env_ != nullptr) mdb_env_close(env_);
}

void ShardWriter::ensure_room(uint64_t bytes, uint64_t count) {
  MDB_envinfo info;
  MDB_stat stat;
  LMDB_CHECK(mdb_env_info(env_, &info), path_.string());
  LMDB_CHECK(mdb_env_stat(env_, &stat), path_.string());
  const uint64_t page = stat.ms_psize;
  // Worst case per record: its value rounded up to pages plus a leaf slot; branch
  // pages and the copy-on-write of touched pages fit in the slack.
  const uint64_t need =
      (info.me_last_pgno + 1) * page + bytes + count * (page + 64) + (uint64_t{4} << 20);
  if (need <= map_size_) return;
  while (map_size_ < need + need / 2) map_size_ *= 2;
  LMDB_CHECK(mdb_env_set_mapsize(env_, map_size_), path_.string());
}

void ShardWriter::append(uint64_t first_id, std::span<const std::vector<std::byte>> records) {
  const std::string where = path_.string();
  EVENFEED_CHECK(!started_ || first_id == next_id_, "{}: records must be appended in id order",
                 where);
  uint64_t bytes = 0;
  for (const auto& r : records) bytes += r.size();
  ensure_room(bytes, records.size());
  MDB_txn* txn = nullptr;
  LMDB_CHECK(mdb_txn_begin(env_, nullptr, 0, &txn), where);
  try {
    for (size_t i = 0; i < records.size(); ++i) {
      unsigned char key_bytes[8];
      encode_sample_key(first_id + i, key_bytes);
      MDB_val key{8, key_bytes};
      MDB_val value{records[i].size(), const_cast<std::byte*>(records[i].data())};
      LMDB_CHECK(mdb_put(txn, dbi_, &key, &value, MDB_APPEND), where);
    }
  } catch (...) {
    mdb_txn_abort(txn);
    throw;
  }
  // mdb_txn_commit frees the transaction whether or not it succeeds.
  LMDB_CHECK(mdb_txn_commit(txn), where);
  started_ = true;
  next_id_ = first_id + records.size();
  records_ += records.size();
}

uint64_t ShardWriter::finish() {
  const std::string where = path_.string();
  LMDB_CHECK(mdb_env_sync(env_, 1), where);
  mdb_env_close(env_);
  env_ = nullptr;
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) fail_errno("stat", where, errno);
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace evenfeed
