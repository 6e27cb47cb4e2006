#include "loader/read_env.h"

#include <algorithm>

#include "core/error.h"
#include "loader/shard_reader.h"

namespace evenfeed {
namespace {

class MapReadEnv : public ReadEnv {
 public:
  StoredRecord read_record(const ShardReader& shard, MDB_cursor* cursor, uint64_t id) override {
    return shard.get(cursor, id);
  }
};

}  // namespace

ReadEnv& default_read_env() {
  static MapReadEnv env;
  return env;
}

FaultyReadEnv::FaultyReadEnv(std::vector<ReadFaultRule> rules, ReadEnv& base)
    : rules_(std::move(rules)), base_(base) {}

StoredRecord FaultyReadEnv::read_record(const ShardReader& shard, MDB_cursor* cursor, uint64_t id) {
  const auto rule = std::find_if(rules_.begin(), rules_.end(),
                                 [id](const ReadFaultRule& r) { return r.id == id; });
  StoredRecord record = base_.read_record(shard, cursor, id);
  if (rule == rules_.end()) return record;
  const std::span<const std::byte> bytes = record.bytes;
  ++faults_served_;
  switch (rule->fault) {
    case ReadFault::kFail:
      fail("{}: injected read failure at sample {}", shard.path().string(), id);
    case ReadFault::kShort:
      record.bytes = bytes.first(std::min(rule->byte, bytes.size()));
      return record;
    case ReadFault::kFlipBit: {
      // The map is read-only: damage a per-thread copy instead.
      thread_local std::vector<std::byte> copy;
      copy.assign(bytes.begin(), bytes.end());
      if (rule->byte < copy.size()) copy[rule->byte] ^= std::byte{1};
      record.bytes = copy;
      return record;
    }
  }
  return record;
}

}  // namespace evenfeed
