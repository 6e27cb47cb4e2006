#include "sampler/global_order.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/philox.h"
#include "sampler/keyed_permutation.h"

namespace evenfeed {
namespace {

uint64_t order_key(uint64_t seed, uint32_t epoch, uint64_t salt) {
  CounterRng rng(seed, RngStream::kOrder, epoch, salt);
  return rng.next_u64();
}

class SequentialOrder : public GlobalOrder {
 public:
  explicit SequentialOrder(uint64_t n) : n_(n) {}
  uint64_t size() const override { return n_; }
  uint64_t at(uint64_t position) const override { return position; }

 private:
  uint64_t n_;
};

class FullShuffleOrder : public GlobalOrder {
 public:
  FullShuffleOrder(uint64_t n, uint64_t seed, uint32_t epoch) : order_(n) {
    std::iota(order_.begin(), order_.end(), uint64_t{0});
    CounterRng rng(seed, RngStream::kOrder, epoch, 0);
    for (uint64_t i = n; i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
  }
  uint64_t size() const override { return order_.size(); }
  uint64_t at(uint64_t position) const override { return order_[position]; }

 private:
  std::vector<uint64_t> order_;
};

class KeyedOrder : public GlobalOrder {
 public:
  KeyedOrder(uint64_t n, uint64_t seed, uint32_t epoch)
      : permutation_(n, order_key(seed, epoch, 0)) {}
  uint64_t size() const override { return permutation_.size(); }
  uint64_t at(uint64_t position) const override { return permutation_(position); }

 private:
  KeyedPermutation permutation_;
};

// Shards are shuffled, consecutive shuffled shards form windows, and inside each
// window the samples are permuted with a keyed permutation. Memory O(shards).
class ShardBlockOrder : public GlobalOrder {
 public:
  ShardBlockOrder(const OrderOptions& o, uint64_t n, uint64_t seed, uint32_t epoch) : n_(n) {
    const size_t shards = o.shard_sizes.size();
    std::vector<uint64_t> first(shards + 1, 0);
    for (size_t s = 0; s < shards; ++s) first[s + 1] = first[s] + o.shard_sizes[s];
    EVENFEED_CHECK(first[shards] == n, "shard sizes add up to {} but the dataset holds {} samples",
                   first[shards], n);
    std::vector<uint32_t> shard_order(shards);
    std::iota(shard_order.begin(), shard_order.end(), 0u);
    CounterRng rng(seed, RngStream::kOrder, epoch, 1);
    for (size_t i = shards; i > 1; --i) std::swap(shard_order[i - 1], shard_order[rng.below(i)]);
    const uint32_t per_window = std::max<uint32_t>(1, o.shards_per_window);
    uint64_t position = 0;
    for (size_t begin = 0; begin < shards; begin += per_window) {
      Window w;
      w.position = position;
      for (size_t k = begin; k < std::min<size_t>(shards, begin + per_window); ++k) {
        const uint32_t s = shard_order[k];
        w.pieces.push_back({w.size, first[s], o.shard_sizes[s]});
        w.size += o.shard_sizes[s];
      }
      w.permutation = KeyedPermutation(w.size, order_key(seed, epoch, 2 + windows_.size()));
      position += w.size;
      windows_.push_back(std::move(w));
    }
  }
  uint64_t size() const override { return n_; }
  uint64_t at(uint64_t position) const override {
    auto it = std::upper_bound(windows_.begin(), windows_.end(), position,
                               [](uint64_t p, const Window& w) { return p < w.position; });
    const Window& w = *(it - 1);
    const uint64_t inside = w.permutation(position - w.position);
    auto piece = std::upper_bound(w.pieces.begin(), w.pieces.end(), inside,
                                  [](uint64_t v, const Piece& p) { return v < p.offset; }) -
                 1;
    return piece->first_id + (inside - piece->offset);
  }

 private:
  struct Piece {
    uint64_t offset, first_id, count;
  };
  struct Window {
    uint64_t position = 0, size = 0;
    std::vector<Piece> pieces;
    KeyedPermutation permutation{0, 0};
  };
  uint64_t n_;
  std::vector<Window> windows_;
};

}  // namespace

OrderKind parse_order_kind(const std::string& name) {
  if (name == "sequential") return OrderKind::kSequential;
  if (name == "full") return OrderKind::kFullShuffle;
  if (name == "keyed") return OrderKind::kKeyed;
  if (name == "shard-blocks") return OrderKind::kShardBlocks;
  fail("unknown order '{}'; use sequential, full, keyed or shard-blocks", name);
}

const char* order_kind_name(OrderKind kind) {
  switch (kind) {
    case OrderKind::kSequential:
      return "sequential";
    case OrderKind::kFullShuffle:
      return "full";
    case OrderKind::kKeyed:
      return "keyed";
    case OrderKind::kShardBlocks:
      return "shard-blocks";
  }
  return "?";
}

std::unique_ptr<GlobalOrder> make_global_order(const OrderOptions& options, uint64_t n,
                                               uint64_t seed, uint32_t epoch) {
  switch (options.kind) {
    case OrderKind::kSequential:
      return std::make_unique<SequentialOrder>(n);
    case OrderKind::kFullShuffle:
      return std::make_unique<FullShuffleOrder>(n, seed, epoch);
    case OrderKind::kKeyed:
      return std::make_unique<KeyedOrder>(n, seed, epoch);
    case OrderKind::kShardBlocks:
      if (options.shard_sizes.empty()) return std::make_unique<KeyedOrder>(n, seed, epoch);
      return std::make_unique<ShardBlockOrder>(options, n, seed, epoch);
  }
  fail("unknown order kind");
}

}  // namespace evenfeed
