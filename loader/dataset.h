// A dataset opened read-only: the manifest, the memory-mapped index and the shards
// (opened on first use, so one damaged shard does not stop the others being read).
// Records are read through a per-thread ReadSession and returned as views into the
// shard's map, without copying the payload.
#pragma once

#include <lmdb.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loader/index.h"
#include "loader/manifest.h"
#include "loader/read_env.h"
#include "loader/record.h"

namespace evenfeed {

class ShardReader;

struct RecordView {
  uint64_t id = 0;
  uint32_t shard = 0;
  RecordHeader header;
  std::span<const std::byte> payload;  // valid while the ReadSession lives
  const std::byte* leaf = nullptr;     // where the lookup's B-tree leaf lies in the map
};

class Dataset {
 public:
  // Loads the manifest and the index; throws Error naming the file on any problem.
  // Records are read through `env` (tests pass a FaultyReadEnv), which must outlive
  // the dataset.
  explicit Dataset(std::filesystem::path dir, ReadEnv& env = default_read_env());
  ~Dataset();
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const Manifest& manifest() const { return manifest_; }
  const IndexReader& index() const { return *index_; }
  uint64_t size() const { return manifest_.num_samples; }
  // The shard holding `id` (binary search over first ids).
  uint32_t shard_of(uint64_t id) const;
  // Opens shard `shard` if not yet open; throws Error when the shard is damaged.
  const ShardReader& shard(uint32_t shard) const;

  // One read transaction per shard, begun on first use; one session per thread.
  class ReadSession {
   public:
    explicit ReadSession(const Dataset& dataset);
    ~ReadSession();
    ReadSession(const ReadSession&) = delete;
    ReadSession& operator=(const ReadSession&) = delete;
    // This thread's cursor on `shard`, in a read transaction begun on first use.
    MDB_cursor* cursor(uint32_t shard);

   private:
    struct Open {
      MDB_txn* txn = nullptr;
      MDB_cursor* cursor = nullptr;
    };
    const Dataset& dataset_;
    std::vector<Open> open_;
  };

  // Reads and checks a record: returns a description of what is wrong (missing,
  // bad header, disagreeing with the index, checksum mismatch) or nothing.
  std::optional<std::string> try_read(ReadSession& session, uint64_t id, bool verify_checksum,
                                      RecordView& out) const;
  // As try_read, but throws an Error naming the sample, shard and source.
  RecordView read(ReadSession& session, uint64_t id, bool verify_checksum = false) const;

  // Drops the opened shards' and the index's pages from the resident set (see
  // ShardReader), so a reader's memory does not grow with the dataset it has touched.
  void release_resident_pages() const;
  // Drops the pages a read of `view` mapped (record, B-tree leaf and, `with_root`, the
  // root) with their whole page-cache folios (see ShardReader::release_around). A
  // loader calls it once a sample is decoded, so its resident memory is bounded by the
  // samples in flight. Readers of many small records pass with_root = false: every
  // lookup would fault the root back in, and the per-batch release drops it anyway.
  void release_record_pages(const RecordView& view, bool with_root = true) const;

  // "sample 12 (shard-00000.lmdb, source cats/1.jpg)": for error messages.
  std::string describe(uint64_t id) const;
  RecordKind expected_record_kind() const;

 private:
  struct ShardSlot {
    std::once_flag once;
    std::unique_ptr<ShardReader> reader;
    std::string error;
    std::atomic<bool> opened{false};  // reader is set and may be used without call_once
  };

  std::filesystem::path dir_;
  ReadEnv& env_;
  Manifest manifest_;
  std::unique_ptr<IndexReader> index_;
  std::unique_ptr<ShardSlot[]> shards_;
};

}  // namespace evenfeed
