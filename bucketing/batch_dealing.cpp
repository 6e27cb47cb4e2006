#include "bucketing/batch_dealing.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <unordered_map>

#include "core/error.h"

namespace evenfeed {

namespace {

// Free places per batch, in a Fenwick tree over the batches ordered longest first, to
// draw a place among the first k batches and take it in O(log n).
class PlaceTree {
 public:
  explicit PlaceTree(const std::vector<uint64_t>& counts) : tree_(counts.size() + 1, 0) {
    for (size_t i = 0; i < counts.size(); ++i) add(i, static_cast<int64_t>(counts[i]));
  }
  void add(size_t i, int64_t delta) {
    for (size_t k = i + 1; k < tree_.size(); k += k & (~k + 1)) tree_[k] += delta;
  }
  uint64_t prefix(size_t count) const {  // places in the first `count` batches
    int64_t sum = 0;
    for (size_t k = count; k > 0; k -= k & (~k + 1)) sum += tree_[k];
    return static_cast<uint64_t>(sum);
  }
  // The batch holding place number `rank` (0-based, counting batches in order).
  size_t find(uint64_t rank) const {
    size_t at = 0;
    size_t step = 1;
    while (step * 2 < tree_.size()) step *= 2;
    int64_t left = static_cast<int64_t>(rank);
    for (; step > 0; step /= 2) {
      if (at + step < tree_.size() && tree_[at + step] <= left) {
        at += step;
        left -= tree_[at];
      }
    }
    return at;  // 0-based index of the batch: `at` batches lie wholly before the place
  }

 private:
  std::vector<int64_t> tree_;
};

// How many samples of each group (previous-epoch batch) each batch holds so far.
class GroupCounts {
 public:
  explicit GroupCounts(size_t expected) { counts_.reserve(expected); }
  void add(uint32_t batch, uint32_t group) {
    if (group != DealSteer::kNoGroup) ++counts_[key(batch, group)];
  }
  uint32_t count(uint32_t batch, uint32_t group) const {
    const auto it = counts_.find(key(batch, group));
    return it == counts_.end() ? 0 : it->second;
  }

 private:
  static uint64_t key(uint32_t batch, uint32_t group) {
    return static_cast<uint64_t>(batch) << 32 | group;
  }
  std::unordered_map<uint64_t, uint32_t> counts_;
};

// Of `first` and up to draws - 1 more places drawn among the first `free`, the first
// whose batch holds none of the sample's group (met_there == 0), else the one holding
// fewest (the earliest of those): its position in the tree's batch order.
template <typename MetThere>
size_t steered_place(const PlaceTree& tree, uint64_t free, size_t first, uint32_t draws,
                     MetThere met_there, CounterRng& rng) {
  size_t best = first;
  uint32_t fewest = met_there(first);
  for (uint32_t draw = 1; draw < draws && fewest > 0; ++draw) {
    const size_t other = tree.find(rng.below(free));
    if (const uint32_t there = met_there(other); there < fewest) {
      fewest = there;
      best = other;
    }
  }
  return best;
}

}  // namespace

std::vector<uint32_t> deal_to_places(const std::vector<uint64_t>& pool,
                                     const std::vector<uint64_t>& longest,
                                     const std::vector<uint64_t>& places, CounterRng& rng,
                                     const DealSteer* steer) {
  std::vector<uint32_t> batch_order(longest.size());
  std::iota(batch_order.begin(), batch_order.end(), 0u);
  std::stable_sort(batch_order.begin(), batch_order.end(),
                   [&](uint32_t a, uint32_t b) { return longest[a] > longest[b]; });
  std::vector<uint64_t> ordered_places(longest.size()), descending(longest.size());
  for (size_t k = 0; k < batch_order.size(); ++k) {
    ordered_places[k] = places[batch_order[k]];
    descending[k] = longest[batch_order[k]];
  }
  PlaceTree tree(ordered_places);

  // Each sample's fitting batches are the first `fitting` in that order. Dealt in order
  // of fitting (most constrained first; a counting sort, by position within), which is
  // longest first up to samples with the same fitting batches.
  std::vector<uint32_t> fitting(pool.size());
  std::vector<size_t> starts(batch_order.size() + 2, 0);
  for (size_t s = 0; s < pool.size(); ++s) {
    fitting[s] = static_cast<uint32_t>(
        std::upper_bound(descending.begin(), descending.end(), pool[s], std::greater<>()) -
        descending.begin());
    ++starts[fitting[s] + 1];
  }
  for (size_t k = 1; k < starts.size(); ++k) starts[k] += starts[k - 1];
  std::vector<uint32_t> sample_order(pool.size());
  for (uint32_t s = 0; s < pool.size(); ++s) sample_order[starts[fitting[s]]++] = s;
  GroupCounts met(steer != nullptr ? pool.size() + longest.size() : 0);
  if (steer != nullptr) {
    for (uint32_t b = 0; b < longest.size(); ++b) met.add(b, steer->batch_group[b]);
  }
  std::vector<uint32_t> dealt(pool.size());
  for (uint32_t s : sample_order) {
    const uint64_t free = tree.prefix(fitting[s]);
    EVENFEED_CHECK(free > 0,
                   "no place left for a sample of length {} when dealing a window's "
                   "batches; the places do not hold their pool",
                   pool[s]);
    const uint32_t group = steer != nullptr ? steer->pool_group[s] : DealSteer::kNoGroup;
    size_t k = tree.find(rng.below(free));
    if (group != DealSteer::kNoGroup) {
      auto met_there = [&](size_t place_batch) {
        return met.count(batch_order[place_batch], group);
      };
      k = steered_place(tree, free, k, steer->draws, met_there, rng);
    }
    tree.add(k, -1);
    dealt[s] = batch_order[k];
    if (steer != nullptr) met.add(dealt[s], group);
  }
  return dealt;
}

}  // namespace evenfeed
