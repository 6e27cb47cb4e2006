// The sorted token-budget baseline against a plain reference: the samples within the
// budget, stable-sorted by length with a comparison sort, packed greedily. Its batches
// must be those runs, whichever way it sorts (counting lengths, or comparing them when
// the budget is far above the number of samples).
#include "bucketing/baselines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace evenfeed {
namespace {

std::vector<std::vector<uint64_t>> reference_batches(const std::vector<uint64_t>& lengths,
                                                     uint64_t budget) {
  std::vector<uint64_t> ids;
  for (uint64_t id = 0; id < lengths.size(); ++id) {
    if (lengths[id] <= budget) ids.push_back(id);
  }
  std::stable_sort(ids.begin(), ids.end(),
                   [&](uint64_t a, uint64_t b) { return lengths[a] < lengths[b]; });
  std::vector<std::vector<uint64_t>> batches;
  uint64_t longest = 0;
  for (uint64_t id : ids) {
    const uint64_t l = lengths[id];
    if (!batches.empty() && (batches.back().size() + 1) * std::max(longest, l) <= budget) {
      batches.back().push_back(id);
      longest = std::max(longest, l);
    } else {
      batches.push_back({id});
      longest = l;
    }
  }
  return batches;
}

// Every batch the planner deals over one epoch, in any order (epochs shuffle them).
std::vector<std::vector<uint64_t>> planned_batches(const std::vector<uint64_t>& lengths,
                                                   uint64_t budget, uint32_t world_size) {
  SpanLengths source(lengths);
  SortedBudgetPlanner planner(source, budget, world_size, 7, 3);
  std::vector<std::vector<uint64_t>> batches;
  PlanStep step;
  while (planner.next(step)) {
    EXPECT_EQ(step.ranks.size(), world_size);
    for (const RankBatch& b : step.ranks) {
      if (!b.samples.empty()) batches.push_back(b.samples);
    }
  }
  return batches;
}

void expect_same_batches(std::vector<std::vector<uint64_t>> got,
                         std::vector<std::vector<uint64_t>> want) {
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

TEST(SortedBudgetPlanner, CountedSortPacksTheStableOrder) {
  std::mt19937_64 rng(11);
  for (uint64_t budget : {1, 7, 64, 300, 5000}) {
    std::vector<uint64_t> lengths(2000);
    // Many ties, some samples over the budget (dropped).
    for (uint64_t& l : lengths) l = 1 + rng() % (budget + budget / 4 + 1);
    expect_same_batches(planned_batches(lengths, budget, 5), reference_batches(lengths, budget));
  }
}

TEST(SortedBudgetPlanner, ComparedSortWhenTheBudgetDwarfsTheSamples) {
  std::mt19937_64 rng(12);
  const uint64_t budget = uint64_t{1} << 40;  // far more lengths than samples to count
  std::vector<uint64_t> lengths(500);
  for (uint64_t& l : lengths) l = 1 + rng() % (uint64_t{1} << 38) * (rng() % 3 == 0 ? 0 : 1);
  lengths[17] = budget + 1;  // dropped
  expect_same_batches(planned_batches(lengths, budget, 4), reference_batches(lengths, budget));
}

}  // namespace
}  // namespace evenfeed
