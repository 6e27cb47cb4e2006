#include "bucketing/evenly_spread.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace evenfeed {
namespace {

std::vector<size_t> iota(size_t n, size_t first = 0) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(EvenlySpread, KeepsEverythingUpToTheLimit) {
  for (size_t n : {0u, 1u, 2u, 63u, 64u}) EXPECT_EQ(evenly_spread(iota(n, 7), 64), iota(n, 7));
}

// Past the limit: exactly `most` values, in order, none twice, the first and the last
// among them, and no gap between neighbours wider than an even spread allows.
TEST(EvenlySpread, KeepsTheEndsAndSpreadsTheRestEvenly) {
  for (size_t n : {65u, 100u, 127u, 1023u, 4096u}) {
    for (size_t most : {2u, 3u, 64u}) {
      const std::vector<size_t> values = iota(n, 1000);
      const std::vector<size_t> kept = evenly_spread(values, most);
      ASSERT_EQ(kept.size(), most) << n << " " << most;
      EXPECT_EQ(kept.front(), values.front());
      EXPECT_EQ(kept.back(), values.back());
      const size_t widest = (n - 1 + most - 2) / (most - 1);
      for (size_t k = 1; k < kept.size(); ++k) {
        EXPECT_GT(kept[k], kept[k - 1]) << n << " " << most << " at " << k;
        EXPECT_LE(kept[k] - kept[k - 1], widest) << n << " " << most << " at " << k;
      }
    }
  }
}

}  // namespace
}  // namespace evenfeed
