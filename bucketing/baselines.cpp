#include "bucketing/baselines.h"

#include <algorithm>
#include <numeric>

#include "core/philox.h"

namespace evenfeed {

TorchStylePlanner::TorchStylePlanner(uint64_t n, uint32_t world_size, uint64_t batch_size,
                                     uint64_t seed, uint32_t epoch)
    : world_size_(world_size), batch_size_(batch_size), epoch_(epoch) {
  indices_.resize(n);
  std::iota(indices_.begin(), indices_.end(), uint64_t{0});
  CounterRng rng(seed, RngStream::kOrder, epoch, 99);
  for (uint64_t i = n; i > 1; --i) std::swap(indices_[i - 1], indices_[rng.below(i)]);
  per_rank_ = (n + world_size - 1) / world_size;
  for (uint64_t k = 0; indices_.size() < per_rank_ * world_size; ++k)
    indices_.push_back(indices_[k % n]);
}

bool TorchStylePlanner::next(PlanStep& step) {
  const uint64_t begin = step_ * batch_size_;
  if (begin >= per_rank_) return false;
  const uint64_t end = std::min(per_rank_, begin + batch_size_);
  step.epoch = epoch_;
  step.step = step_++;
  step.world_size = world_size_;
  step.ranks.assign(world_size_, {});
  for (uint32_t r = 0; r < world_size_; ++r) {
    for (uint64_t k = begin; k < end; ++k)
      step.ranks[r].samples.push_back(indices_[r + k * world_size_]);
  }
  return true;
}

namespace {

// Counting the lengths takes an array of `most` + 2 counters. It is used while that
// array is at most twice the ids' own (or 64k counters); past that, with a budget far
// above the number of samples, the ids are sorted by comparison instead.
bool counts_lengths(uint64_t most, uint64_t samples) {
  return most < 2 * std::max<uint64_t>(samples, uint64_t{1} << 16);
}

// The ids of the samples no longer than `most`, shortest first, equal lengths in id
// order. A comparison sort reads each length about 2 log2(n) times, and a generated
// length (SyntheticLengths) costs a random draw and a logarithm each time: 10 million
// of them took 49 s this way. Counting reads each length twice.
std::vector<uint64_t> ids_by_length(const LengthSource& lengths, uint64_t most) {
  const uint64_t n = lengths.size();
  std::vector<uint64_t> ids;
  if (!counts_lengths(most, n)) {
    for (uint64_t id = 0; id < n; ++id) {
      if (lengths.length(id) <= most) ids.push_back(id);
    }
    std::stable_sort(ids.begin(), ids.end(),
                     [&](uint64_t a, uint64_t b) { return lengths.length(a) < lengths.length(b); });
    return ids;
  }
  // starts[l + 1] counts length l; after the prefix sum starts[l] is where it begins.
  std::vector<uint64_t> starts(most + 2, 0);
  for (uint64_t id = 0; id < n; ++id) {
    const uint64_t l = lengths.length(id);
    if (l <= most) ++starts[l + 1];
  }
  for (uint64_t l = 1; l < starts.size(); ++l) starts[l] += starts[l - 1];
  ids.resize(starts.back());
  for (uint64_t id = 0; id < n; ++id) {
    const uint64_t l = lengths.length(id);
    if (l <= most) ids[starts[l]++] = id;
  }
  return ids;
}

}  // namespace

SortedBudgetPlanner::SortedBudgetPlanner(const LengthSource& lengths, uint64_t tokens_per_rank,
                                         uint32_t world_size, uint64_t seed, uint32_t epoch)
    : world_size_(world_size), epoch_(epoch) {
  // Samples longer than the budget are dropped.
  const std::vector<uint64_t> ids = ids_by_length(lengths, tokens_per_rank);
  uint64_t longest = 0;
  for (uint64_t id : ids) {
    const uint64_t l = lengths.length(id);
    if (!batches_.empty() &&
        (batches_.back().size() + 1) * std::max(longest, l) <= tokens_per_rank) {
      batches_.back().push_back(id);
      longest = std::max(longest, l);
    } else {
      batches_.push_back({id});
      longest = l;
    }
  }
  CounterRng rng(seed, RngStream::kStepOrder, epoch, 99);
  for (size_t i = batches_.size(); i > 1; --i) std::swap(batches_[i - 1], batches_[rng.below(i)]);
}

bool SortedBudgetPlanner::next(PlanStep& step) {
  const uint64_t begin = step_ * world_size_;
  if (begin >= batches_.size()) return false;
  step.epoch = epoch_;
  step.step = step_++;
  step.world_size = world_size_;
  step.ranks.assign(world_size_, {});
  for (uint32_t r = 0; r < world_size_ && begin + r < batches_.size(); ++r)
    step.ranks[r].samples = batches_[begin + r];
  return true;
}

}  // namespace evenfeed
