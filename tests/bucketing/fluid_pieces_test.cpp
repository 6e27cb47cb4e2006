// cut_fluid_pieces: pieces of coarse samples reach costs a cut in length order misses,
// pieces of fine ones go on to their target, never pass their ceiling, and hold every
// sample at most once; on random cases, a piece
// falls short of its target only when no length left could reach it.
#include "bucketing/fluid_pieces.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace evenfeed {
namespace {

const CostModel kQuadratic{CostKind::kQuadratic, 2048};

double piece_cost(const std::vector<uint64_t>& lengths, const std::vector<size_t>& piece) {
  uint64_t longest = 0;
  for (size_t k : piece) longest = std::max(longest, lengths[k]);
  return piece.empty() ? 0.0 : kQuadratic.batch(piece.size(), longest);
}

uint64_t unlimited(uint64_t) {
  return UINT64_MAX;
}

// The changelog case from fluid_pieces.h: the longest samples cost 0.45 of the budget
// each, so a piece cut in length order to 0.8 is one of them (two cost 0.9); the pieces
// must instead be pairs of the 0.39 ones or runs of shorter samples.
TEST(FluidPieces, ReachTargetsThatTheLongestSamplesWouldMiss) {
  const double budget = kQuadratic.budget(8192);
  std::vector<uint64_t> lengths(10, 5300);                   // 0.45 each
  lengths.insert(lengths.end(), 20, 4800);                   // 0.39 each
  lengths.insert(lengths.end(), 200, 1000);                  // 0.036 each
  ASSERT_GT(2 * kQuadratic.per_sample(5300), 0.8 * budget);  // the premise
  const std::vector<PieceRequest> requests(12, {0.8 * budget, 0.8 * budget});
  for (const bool to_target : {false, true}) {
    const auto pieces =
        cut_fluid_pieces(lengths, requests, {0.95, to_target}, kQuadratic, unlimited);
    ASSERT_EQ(pieces.size(), requests.size());
    for (const auto& piece : pieces) {
      const double cost = piece_cost(lengths, piece);
      EXPECT_LE(cost, 0.8 * budget);
      EXPECT_GE(cost, 0.95 * 0.8 * budget);
    }
  }
}

// A length qualifies by reaching near_enough of the target, but the piece then goes on
// to the target itself as far as the ceiling allows: pieces of fine samples that stopped
// at 0.85 of their target left a step of lumps that much below its dearest.
TEST(FluidPieces, PiecesOfFineSamplesGoOnToTheirTarget) {
  const double budget = kQuadratic.budget(8192);
  const std::vector<uint64_t> lengths(200, 1000);  // 0.036 of the budget each
  const double each = kQuadratic.per_sample(1000);
  const std::vector<PieceRequest> requests{{0.5 * budget, 0.5 * budget},
                                           {0.4 * budget, 0.6 * budget}};
  // As few as reach 0.85 of the target: 12 samples, short of the ceiling by more than one.
  const auto fewest = cut_fluid_pieces(lengths, requests, {0.85, false}, kQuadratic, unlimited);
  EXPECT_LT(piece_cost(lengths, fewest[0]), 0.5 * budget - each);
  const auto pieces = cut_fluid_pieces(lengths, requests, {0.85, true}, kQuadratic, unlimited);
  // At the ceiling: within one sample of it, never over.
  EXPECT_LE(piece_cost(lengths, pieces[0]), 0.5 * budget);
  EXPECT_GT(piece_cost(lengths, pieces[0]), 0.5 * budget - each);
  // Room above the target: at least the target, by less than one sample.
  EXPECT_GE(piece_cost(lengths, pieces[1]), 0.4 * budget);
  EXPECT_LT(piece_cost(lengths, pieces[1]), 0.4 * budget + each);
}

// Pieces with room above their target take the longest samples, so the fine ones stay
// for the tight pieces and for what is cut after.
TEST(FluidPieces, RoomyPiecesTakeTheLongest) {
  const double budget = kQuadratic.budget(8192);
  std::vector<uint64_t> lengths(4, 5300);
  lengths.insert(lengths.end(), 100, 1000);
  const std::vector<PieceRequest> requests{{0.2 * budget, budget}, {0.3 * budget, 0.3 * budget}};
  const auto pieces = cut_fluid_pieces(lengths, requests, {0.95, false}, kQuadratic, unlimited);
  ASSERT_EQ(pieces[0].size(), 1u);
  EXPECT_EQ(lengths[pieces[0][0]], 5300u);
  for (size_t k : pieces[1]) EXPECT_EQ(lengths[k], 1000u);  // 5300 costs 0.46
  EXPECT_GE(piece_cost(lengths, pieces[1]), 0.95 * 0.3 * budget);
  EXPECT_LE(piece_cost(lengths, pieces[1]), 0.3 * budget);
}

// The tightest pieces are cut first: here the tight one needs both 4,800-token samples,
// and the roomy one, listed first, would take one of them were it cut first.
TEST(FluidPieces, TheTightestAreCutFirst) {
  const double budget = kQuadratic.budget(8192);
  const std::vector<uint64_t> lengths{4800, 4800};
  const std::vector<PieceRequest> requests{{0.3 * budget, budget}, {0.78 * budget, 0.8 * budget}};
  const auto pieces = cut_fluid_pieces(lengths, requests, {0.95, false}, kQuadratic, unlimited);
  EXPECT_EQ(pieces[1].size(), 2u);
  EXPECT_TRUE(pieces[0].empty());
}

// The per-batch limit (a sample cap, a token bound) is kept: with at most 4 samples a
// batch, 1,000-token samples cannot reach 0.5 of the budget, so the piece is the dearest
// allowed, 4 of them.
TEST(FluidPieces, KeepTheLimitPerBatch) {
  const double budget = kQuadratic.budget(8192);
  const std::vector<uint64_t> lengths(50, 1000);
  const std::vector<PieceRequest> requests{{0.5 * budget, 0.5 * budget}};
  const auto pieces = cut_fluid_pieces(lengths, requests, {0.95, false}, kQuadratic,
                                       [](uint64_t) { return uint64_t{4}; });
  EXPECT_EQ(pieces[0].size(), 4u);
}

// When every sample left costs more than the ceiling, the piece is the cheapest one;
// when none is left, the piece is empty.
TEST(FluidPieces, CheapestSampleWhenAllAreDearerAndEmptyWhenSpent) {
  const double budget = kQuadratic.budget(8192);
  const std::vector<uint64_t> lengths{7000, 6000};
  const std::vector<PieceRequest> requests(3, {0.1 * budget, 0.2 * budget});
  const auto pieces = cut_fluid_pieces(lengths, requests, {0.95, false}, kQuadratic, unlimited);
  ASSERT_EQ(pieces[0].size(), 1u);
  EXPECT_EQ(lengths[pieces[0][0]], 6000u);
  ASSERT_EQ(pieces[1].size(), 1u);
  EXPECT_EQ(lengths[pieces[1][0]], 7000u);
  EXPECT_TRUE(pieces[2].empty());
}

uint64_t next_random(uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state >> 33;
}

// Random long-tailed lengths and requests: no sample twice, every ceiling kept, and a
// piece short of its target only when, with the samples left at its turn, no length
// could reach it within the ceiling (checked by redoing the turns in the same order).
TEST(FluidPieces, RandomCasesKeepEveryPromise) {
  const double budget = kQuadratic.budget(8192);
  uint64_t state = 42;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint64_t> lengths;
    const size_t n = 5 + next_random(state) % 300;
    for (size_t k = 0; k < n; ++k)
      lengths.push_back(1 + static_cast<uint64_t>(
                                std::exp(static_cast<double>(next_random(state) % 9000) / 1000)));
    std::vector<PieceRequest> requests;
    const size_t m = 1 + next_random(state) % 20;
    for (size_t r = 0; r < m; ++r) {
      const double target = budget * static_cast<double>(1 + next_random(state) % 100) / 100;
      const double room = budget * static_cast<double>(next_random(state) % 30) / 100;
      requests.push_back({target, std::min(budget, target + room)});
    }
    const bool to_target = trial % 2 == 1;  // both ways of counting a piece
    const auto pieces =
        cut_fluid_pieces(lengths, requests, {0.9, to_target}, kQuadratic, unlimited);
    std::set<size_t> seen;
    for (size_t r = 0; r < m; ++r) {
      for (size_t k : pieces[r]) EXPECT_TRUE(seen.insert(k).second) << "trial " << trial;
      const double cost = piece_cost(lengths, pieces[r]);
      if (pieces[r].size() > 1) {
        EXPECT_LE(cost, requests[r].ceiling * (1 + 1e-12));
      }
    }
    // Redo the turns (tightest first, as documented) and check each short piece.
    std::vector<size_t> turn(m);
    for (size_t r = 0; r < m; ++r) turn[r] = r;
    auto room = [&](size_t r) {
      return (requests[r].ceiling - requests[r].target) / requests[r].ceiling;
    };
    std::stable_sort(turn.begin(), turn.end(),
                     [&](size_t a, size_t b) { return room(a) < room(b); });
    std::vector<bool> taken(n, false);
    for (size_t r : turn) {
      const double cost = piece_cost(lengths, pieces[r]);
      if (cost < 0.9 * requests[r].target) {
        std::vector<uint64_t> left;
        for (size_t k = 0; k < n; ++k)
          if (!taken[k]) left.push_back(lengths[k]);
        std::sort(left.begin(), left.end());
        for (size_t below = 0; below < left.size(); ++below) {
          const double each = kQuadratic.per_sample(left[below]);
          const double count = std::ceil(0.9 * requests[r].target / each);
          const bool reachable =
              count <= static_cast<double>(below + 1) && count * each <= requests[r].ceiling;
          EXPECT_FALSE(reachable) << "trial " << trial << " request " << r << " length "
                                  << left[below];
        }
      }
      for (size_t k : pieces[r]) taken[k] = true;
    }
  }
}

}  // namespace
}  // namespace evenfeed
