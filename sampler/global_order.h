// The global order of one epoch: which sample is at each position. It depends only
// on (seed, epoch) and the dataset, never on the world size, so every rank computes it
// alone and a run resumed at another world size sees the same order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace evenfeed {

enum class OrderKind {
  kSequential,   // 0, 1, 2, ... (evaluation)
  kFullShuffle,  // a stored Fisher-Yates shuffle: O(n) memory
  kKeyed,        // the keyed Feistel permutation: O(1) memory
  kShardBlocks,  // shard order shuffled, then samples shuffled inside windows of shards
};

OrderKind parse_order_kind(
    const std::string& name);  // "sequential", "full", "keyed", "shard-blocks"
const char* order_kind_name(OrderKind kind);

struct OrderOptions {
  OrderKind kind = OrderKind::kKeyed;
  // kShardBlocks: samples per shard, in id order (shards hold contiguous ids), and how
  // many shards form one shuffle window (more mixes better, fewer reads stay local).
  std::vector<uint64_t> shard_sizes;
  uint32_t shards_per_window = 4;
};

class GlobalOrder {
 public:
  virtual ~GlobalOrder() = default;
  virtual uint64_t size() const = 0;
  // The sample id at `position` (< size()).
  virtual uint64_t at(uint64_t position) const = 0;
};

std::unique_ptr<GlobalOrder> make_global_order(const OrderOptions& options, uint64_t num_samples,
                                               uint64_t seed, uint32_t epoch);

}  // namespace evenfeed
