#include "bucketing/batch_dealing.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <unordered_map>

#include "core/error.h"

namespace evenfeed {

namespace {

// Samples drawn by reduce_repeats for each sample dealt beside a former mate.
constexpr int kRepeatDraws = 4;
// reduce_repeats runs when the deal left at least this share of the pairs sharing a
// batch as pairs of former mates: a window of a corpus many times its size holds few
// of a sample's former mates, and there the swaps gain little (2 million synthetic
// lengths: under 0.1 points) and cost 7% of the planning time.
constexpr double kRepeatsWorthReducing = 0.01;

// The sample pairs sharing a batch, when the batches keep one sample each and deal
// places[b] more to batch b.
double pairs_in(const std::vector<uint64_t>& places) {
  double pairs = 0;
  for (uint64_t p : places) pairs += 0.5 * static_cast<double>(p + 1) * static_cast<double>(p);
  return pairs;
}

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
  void remove(uint32_t batch, uint32_t group) {
    if (group != DealSteer::kNoGroup) --counts_[key(batch, group)];
  }
  // Pairs of one group sharing a batch, over all batches.
  double repeated_pairs() const {
    double pairs = 0;
    for (const auto& [key, count] : counts_) pairs += 0.5 * count * (count - 1.0);
    return pairs;
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
// fewest (the earliest of those): its position in the tree's batch order. `fewest` is
// set to how many of the group that batch holds.
template <typename MetThere>
size_t steered_place(const PlaceTree& tree, uint64_t free, size_t first, uint32_t draws,
                     MetThere met_there, CounterRng& rng, uint32_t& fewest) {
  size_t best = first;
  fewest = met_there(first);
  for (uint32_t draw = 1; draw < draws && fewest > 0; ++draw) {
    const size_t other = tree.find(rng.below(free));
    if (const uint32_t there = met_there(other); there < fewest) {
      fewest = there;
      best = other;
    }
  }
  return best;
}

// After the deal, swaps of two dealt samples between their batches, each fitting the
// other's, where that lowers the pairs of last epoch's mates that meet again. The deal
// places the most constrained samples first, each beside the fewest former mates it
// finds then; later samples take what is left and may land beside mates. Each sample
// that did (`beside_mates`: those the deal placed beside a mate; every repeated pair
// has one) draws kRepeatDraws samples from batches it fits and whose longest it does
// not pass (batches no longer than its own, down to its length), and the swap that
// removes most pairs, if any, is made. No batch's count or longest changes, so costs
// and padding do not. On Python and C sources (quadratic, 64 ranks, 4,096 tokens)
// re-batched pairs 3.0% -> 2.3%, with one pass; sixteen draws and two passes over
// every sample gave 2.0%, but planning took 30-60% longer.
void reduce_repeats(const std::vector<uint64_t>& longest, const std::vector<uint32_t>& batch_order,
                    const std::vector<uint32_t>& fitting, std::span<const uint32_t> beside_mates,
                    std::span<const uint32_t> group_of, GroupCounts& met,
                    std::vector<uint32_t>& dealt, CounterRng& rng) {
  const size_t batches = batch_order.size();
  std::vector<uint32_t> position_of(batches);  // a batch's position in batch_order
  for (uint32_t k = 0; k < batches; ++k) position_of[batch_order[k]] = k;
  // Per position, the first position whose batch is no longer (ties share it).
  std::vector<uint32_t> first_no_longer(batches);
  for (uint32_t k = 0; k < batches; ++k) {
    const bool tie = k > 0 && longest[batch_order[k - 1]] == longest[batch_order[k]];
    first_no_longer[k] = tie ? first_no_longer[k - 1] : k;
  }
  // The dealt samples grouped by their batch's position, and where each one is.
  std::vector<size_t> start(batches + 1, 0);
  for (uint32_t b : dealt) ++start[position_of[b] + 1];
  for (size_t k = 1; k <= batches; ++k) start[k] += start[k - 1];
  std::vector<uint32_t> slots(dealt.size()), where(dealt.size());
  std::vector<size_t> next(start.begin(), start.end() - 1);
  for (uint32_t s = 0; s < dealt.size(); ++s) {
    where[s] = static_cast<uint32_t>(next[position_of[dealt[s]]]++);
    slots[where[s]] = s;
  }
  auto count = [&](uint32_t batch, uint32_t group) {
    return group == DealSteer::kNoGroup ? 0 : static_cast<int>(met.count(batch, group));
  };
  for (uint32_t a : beside_mates) {
    const uint32_t group_a = group_of[a], x = dealt[a];
    if (count(x, group_a) < 2) continue;  // its mates there have moved away since
    const size_t first = start[first_no_longer[position_of[x]]], end = start[fitting[a]];
    int best_gain = 0;
    uint32_t best = 0;
    for (int draw = 0; draw < kRepeatDraws && end > first; ++draw) {
      const uint32_t b = slots[first + rng.below(end - first)];
      const uint32_t group_b = group_of[b], y = dealt[b];
      if (y == x || group_b == group_a) continue;
      // The pairs a and b leave, less those they join.
      const int gain = count(x, group_a) - 1 +
                       (group_b == DealSteer::kNoGroup ? 0 : count(y, group_b) - 1) -
                       count(y, group_a) - count(x, group_b);
      if (gain > best_gain) {
        best_gain = gain;
        best = b;
      }
    }
    if (best_gain == 0) continue;
    const uint32_t y = dealt[best], group_b = group_of[best];
    met.remove(x, group_a);
    met.add(y, group_a);
    met.remove(y, group_b);
    met.add(x, group_b);
    std::swap(slots[where[a]], slots[where[best]]);
    std::swap(where[a], where[best]);
    std::swap(dealt[a], dealt[best]);
  }
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
  std::vector<uint32_t> dealt(pool.size()), beside_mates;
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
      uint32_t mates = 0;
      k = steered_place(tree, free, k, steer->draws, met_there, rng, mates);
      if (mates > 0) beside_mates.push_back(s);
    }
    tree.add(k, -1);
    dealt[s] = batch_order[k];
    if (steer != nullptr) met.add(dealt[s], group);
  }
  if (steer != nullptr && steer->swap_apart && !beside_mates.empty() &&
      met.repeated_pairs() > kRepeatsWorthReducing * pairs_in(places)) {
    reduce_repeats(longest, batch_order, fitting, beside_mates, steer->pool_group, met, dealt, rng);
  }
  return dealt;
}

}  // namespace evenfeed
