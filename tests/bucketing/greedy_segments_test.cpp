// GreedySegments against the plain scan it replaces (scan_segment_end): the same end
// and longest sample for every start, at every level, under every kind of limit, in
// the orders the planner cuts (noisy longest-first) and in others; and the same counts.
#include "bucketing/greedy_segments.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace evenfeed {
namespace {

const CostModel kLinear{CostKind::kLinear, 0};
const CostModel kQuadratic{CostKind::kQuadratic, 2048};

// Long-tailed lengths with many ties (the same document installed twice, one-word
// lines), as the real corpora have.
std::vector<uint64_t> tailed_lengths(size_t n, std::mt19937_64& rng) {
  std::lognormal_distribution<double> body(std::log(200.0), 1.4);
  std::uniform_int_distribution<int> tie(0, 9);
  std::vector<uint64_t> lengths(n);
  for (uint64_t& l : lengths) {
    l = tie(rng) == 0 ? 7 : std::clamp<uint64_t>(static_cast<uint64_t>(body(rng)), 1, 8192);
  }
  return lengths;
}

// The orders cut: random, longest first, and longest first with noise (the planner's).
std::vector<std::vector<uint64_t>> orders_of(std::vector<uint64_t> lengths, std::mt19937_64& rng) {
  std::vector<std::vector<uint64_t>> orders{lengths};
  std::sort(lengths.begin(), lengths.end(), std::greater<>());
  orders.push_back(lengths);
  std::uniform_real_distribution<double> noise(0, 0.5);
  std::vector<std::pair<double, uint64_t>> keyed;
  for (uint64_t l : lengths) keyed.push_back({std::log(static_cast<double>(l)) + noise(rng), l});
  std::sort(keyed.begin(), keyed.end(), std::greater<>());
  for (size_t k = 0; k < keyed.size(); ++k) lengths[k] = keyed[k].second;
  orders.push_back(lengths);
  return orders;
}

size_t scan_count(const std::vector<uint64_t>& lengths, double level, const BatchLimits& limits,
                  size_t most) {
  size_t count = 0;
  uint64_t longest = 0;
  for (size_t next = 0; next < lengths.size() && count <= most; ++count) {
    next = scan_segment_end(
        lengths.size(), next, level, limits, [&](size_t k) { return lengths[k]; }, longest);
  }
  return count;
}

// count_at's range, checked with the plain scan: the count is the same from the cost of
// the dearest segment up to `level` (where it counted every segment), and from `level`
// to just below the level at which one of its segments would lengthen.
void expect_count_holds_between(const std::vector<uint64_t>& lengths, const BatchLimits& limits,
                                double level, size_t most) {
  const GreedySegments::Count c = GreedySegments(lengths, limits).count_at(level, most);
  const size_t counted = scan_count(lengths, level, limits, most);
  ASSERT_EQ(c.segments, counted);
  if (c.segments <= most && c.dearest <= level) {
    ASSERT_EQ(scan_count(lengths, c.dearest, limits, most), counted) << "level " << level;
  }
  if (c.lengthens_at == std::numeric_limits<double>::infinity()) return;
  ASSERT_GT(c.lengthens_at, level);
  const double below = std::nextafter(c.lengthens_at, 0.0);
  ASSERT_EQ(scan_count(lengths, below, limits, most), counted) << "level " << level;
  ASSERT_EQ(scan_count(lengths, 0.5 * (level + c.lengthens_at), limits, most), counted);
}

void expect_same_as_scan(const std::vector<uint64_t>& lengths, const BatchLimits& limits,
                         double level) {
  const GreedySegments greedy(lengths, limits);
  for (size_t begin = 0; begin < lengths.size(); ++begin) {
    uint64_t scanned_longest = 0, jumped_longest = 0;
    const size_t scanned = scan_segment_end(
        lengths.size(), begin, level, limits, [&](size_t k) { return lengths[k]; },
        scanned_longest);
    ASSERT_EQ(greedy.end(begin, level, jumped_longest), scanned)
        << "begin " << begin << " level " << level << " cap " << limits.cap;
    ASSERT_EQ(jumped_longest, scanned_longest) << "begin " << begin;
  }
  for (size_t most : {size_t{0}, size_t{3}, size_t{40}, SIZE_MAX}) {
    ASSERT_EQ(greedy.count(level, most), scan_count(lengths, level, limits, most));
    expect_count_holds_between(lengths, limits, level, most);
  }
}

TEST(GreedySegments, AgreeWithTheScanEverywhere) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 3; ++round) {
    for (const std::vector<uint64_t>& lengths : orders_of(tailed_lengths(300, rng), rng)) {
      for (const CostModel& cost : {kLinear, kQuadratic}) {
        for (uint64_t cap : {UINT64_MAX, uint64_t{1}, uint64_t{3}, uint64_t{64}}) {
          for (uint64_t bound : {uint64_t{0}, uint64_t{12000}}) {
            const BatchLimits limits{
                .cost = cost, .budget = cost.budget(8192), .cap = cap, .token_bound = bound};
            // Levels from below one short sample's cost to past the budget.
            std::uniform_real_distribution<double> exponent(-6, 0.2);
            for (int k = 0; k < 12; ++k)
              expect_same_as_scan(lengths, limits, limits.budget * std::pow(10.0, exponent(rng)));
          }
        }
      }
    }
  }
}

// A run of the order is cut as that run alone would be: the same ends, longest samples
// and counts (count_at's three figures) as a GreedySegments of the run's own lengths,
// for prefixes, suffixes and middles, where the whole order's next longer sample lies
// inside the run and where it lies past its end.
TEST(GreedySegments, ARunIsCutAsIfItWereTheWholeOrder) {
  std::mt19937_64 rng(11);
  for (const std::vector<uint64_t>& lengths : orders_of(tailed_lengths(240, rng), rng)) {
    for (const CostModel& cost : {kLinear, kQuadratic}) {
      for (uint64_t cap : {UINT64_MAX, uint64_t{3}, uint64_t{64}}) {
        const BatchLimits limits{.cost = cost, .budget = cost.budget(8192), .cap = cap};
        const GreedySegments whole(lengths, limits);
        const size_t n = lengths.size();
        for (const GreedySegments::Run run :
             {GreedySegments::Run{0, n / 3}, GreedySegments::Run{n / 3, n},
              GreedySegments::Run{n / 5, n - n / 4}}) {
          const std::vector<uint64_t> own(lengths.begin() + static_cast<long>(run.from),
                                          lengths.begin() + static_cast<long>(run.to));
          const GreedySegments alone(own, limits);
          std::uniform_real_distribution<double> exponent(-5, 0.2);
          for (int k = 0; k < 8; ++k) {
            const double level = limits.budget * std::pow(10.0, exponent(rng));
            for (size_t begin = run.from; begin < run.to; ++begin) {
              uint64_t in_run = 0, in_own = 0;
              ASSERT_EQ(whole.end(begin, run, level, in_run) - run.from,
                        alone.end(begin - run.from, level, in_own))
                  << "begin " << begin << " level " << level;
              ASSERT_EQ(in_run, in_own);
            }
            for (size_t most : {size_t{2}, size_t{30}, SIZE_MAX}) {
              const GreedySegments::Count a = whole.count_at(run, level, most);
              const GreedySegments::Count b = alone.count_at(level, most);
              ASSERT_EQ(a.segments, b.segments);
              ASSERT_EQ(a.dearest, b.dearest);
              ASSERT_EQ(a.lengthens_at, b.lengthens_at);
              ASSERT_EQ(whole.count_at(run, level, most).segments, b.segments);
            }
          }
        }
      }
    }
  }
}

// least_level skips the midpoints an earlier count decides: it must end where counting
// every midpoint ends, over whole orders and runs, with and without a tolerance.
TEST(GreedySegments, LeastLevelEndsWhereCountingEveryMidpointEnds) {
  std::mt19937_64 rng(13);
  for (const std::vector<uint64_t>& lengths : orders_of(tailed_lengths(400, rng), rng)) {
    for (const CostModel& cost : {kLinear, kQuadratic}) {
      for (uint64_t cap : {UINT64_MAX, uint64_t{16}}) {
        const BatchLimits limits{.cost = cost, .budget = cost.budget(8192), .cap = cap};
        const GreedySegments greedy(lengths, limits);
        for (const GreedySegments::Run run : {greedy.all(), GreedySegments::Run{57, 311}}) {
          for (size_t most : {size_t{1}, size_t{8}, size_t{64}, size_t{300}}) {
            for (const auto& [halvings, tolerance] : {std::pair{30, 0.0}, std::pair{60, 1e-9}}) {
              double lo = 0, hi = limits.budget;
              for (int k = 0; k < halvings && hi - lo > tolerance * hi; ++k) {
                const double mid = 0.5 * (lo + hi);
                (greedy.count_at(run, mid, most).segments <= most ? hi : lo) = mid;
              }
              EXPECT_EQ(greedy.least_level(run, most, 0, limits.budget, halvings, tolerance), hi)
                  << "most " << most << " halvings " << halvings;
            }
          }
        }
      }
    }
  }
}

// The jump: a later, longer sample raises every earlier sample's padding, so the
// segment stops before it when the count times its cost passes the level.
TEST(GreedySegments, ALongerSampleLaterEndsTheSegmentBeforeIt) {
  const BatchLimits limits{.cost = kLinear, .budget = 2000};
  const std::vector<uint64_t> lengths{100, 90, 80, 300, 10, 10};
  const GreedySegments greedy(lengths, limits);
  uint64_t longest = 0;
  // 100 x 3 = 300 fits 1,000; with the 300, 4 x 300 = 1,200 does not.
  EXPECT_EQ(greedy.end(0, 1000, longest), 3u);
  EXPECT_EQ(longest, 100u);
  // From the 80: 2 x 300 = 600 and 3 x 300 fit 1,000; 4 x 300 fits 1,200 only.
  EXPECT_EQ(greedy.end(2, 1000, longest), 5u);
  EXPECT_EQ(longest, 300u);
  EXPECT_EQ(greedy.end(2, 1200, longest), 6u);
  // A first sample dearer than the level is a segment alone.
  EXPECT_EQ(greedy.end(3, 250, longest), 4u);
  EXPECT_EQ(longest, 300u);
  EXPECT_EQ(greedy.count(1000), 2u);
}

TEST(GreedySegments, EqualLengthsDoNotEndASegment) {
  const BatchLimits limits{.cost = kQuadratic, .budget = kQuadratic.budget(4096), .cap = 5};
  const std::vector<uint64_t> lengths(23, 512);
  const GreedySegments greedy(lengths, limits);
  uint64_t longest = 0;
  EXPECT_EQ(greedy.end(0, limits.budget, longest), 5u);  // the cap, not the ties
  EXPECT_EQ(greedy.count(limits.budget), 5u);            // 5 + 5 + 5 + 5 + 3
  EXPECT_EQ(greedy.count(limits.budget, 2), 3u);         // counting stops past `most`
}

}  // namespace
}  // namespace evenfeed
