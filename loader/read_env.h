// Where record bytes come from: the injectable I/O layer between a Dataset and its
// shards (LevelDB's Env idea, narrowed to the one read the loader does per sample).
// The default reads in place from the shard's LMDB map, without a copy. Tests put a
// FaultyReadEnv in its place to make chosen reads fail, come back short, or come back
// with a flipped bit, and check that the loader's bad-record policies hold.
#pragma once

#include <lmdb.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "loader/shard_reader.h"

namespace evenfeed {

class ReadEnv {
 public:
  virtual ~ReadEnv() = default;
  // The stored bytes (header and payload) of sample `id` in `shard`, empty when the
  // shard holds no such record, read through `cursor` (see ShardReader::get). Valid
  // while the cursor's transaction lives and until this thread's next read. Throws
  // Error when the read itself fails.
  virtual StoredRecord read_record(const ShardReader& shard, MDB_cursor* cursor, uint64_t id) = 0;
};

// Reads in place from the shard's map: what every Dataset uses unless told otherwise.
ReadEnv& default_read_env();

enum class ReadFault {
  kFail,     // the read throws an Error, as an I/O error would
  kShort,    // only the first `byte` bytes come back
  kFlipBit,  // byte `byte` of the record comes back with its lowest bit flipped
};

struct ReadFaultRule {
  uint64_t id = 0;  // the sample whose reads are damaged (every read of it)
  ReadFault fault = ReadFault::kFail;
  size_t byte = 0;  // see ReadFault
};

// Passes reads through to `base`, damaging those of the samples named by the rules.
class FaultyReadEnv : public ReadEnv {
 public:
  explicit FaultyReadEnv(std::vector<ReadFaultRule> rules, ReadEnv& base = default_read_env());
  StoredRecord read_record(const ShardReader& shard, MDB_cursor* cursor, uint64_t id) override;
  // Reads damaged so far, over every thread.
  uint64_t faults_served() const { return faults_served_.load(); }

 private:
  std::vector<ReadFaultRule> rules_;
  ReadEnv& base_;
  std::atomic<uint64_t> faults_served_{0};
};

}  // namespace evenfeed
