#include "bucketing/recent_results.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace evenfeed {
namespace {

using Results = RecentResults<int, std::string>;

// An input is found only with its own items and hash; a hash shared by other items
// (a collision) finds nothing.
TEST(RecentResults, FindsAnInputByItsItemsNotItsHashAlone) {
  Results kept(4, 100);
  kept.keep({1, 2, 3}, 7, "a");
  ASSERT_NE(kept.find({1, 2, 3}, 7), nullptr);
  EXPECT_EQ(*kept.find({1, 2, 3}, 7), "a");
  EXPECT_EQ(kept.find({3, 2, 1}, 7), nullptr);
  EXPECT_EQ(kept.find({1, 2, 3}, 8), nullptr);
  kept.keep({3, 2, 1}, 7, "b");
  EXPECT_EQ(*kept.find({1, 2, 3}, 7), "a");
  EXPECT_EQ(*kept.find({3, 2, 1}, 7), "b");
}

// At most `most_results` inputs: the least recently used (kept or found) goes first.
TEST(RecentResults, DropsTheLeastRecentlyUsedPastItsCount) {
  Results kept(2, 100);
  kept.keep({1}, 1, "one");
  kept.keep({2}, 2, "two");
  ASSERT_NE(kept.find({1}, 1), nullptr);  // {2} is now the least recently used
  kept.keep({3}, 3, "three");
  EXPECT_NE(kept.find({1}, 1), nullptr);
  EXPECT_EQ(kept.find({2}, 2), nullptr);
  EXPECT_NE(kept.find({3}, 3), nullptr);
}

// At most `most_items` items between the inputs; an input larger than that alone is
// not kept, and nothing is dropped for it.
TEST(RecentResults, HoldsAtMostItsItems) {
  Results kept(10, 5);
  kept.keep({1, 1}, 1, "a");
  kept.keep({2, 2}, 2, "b");
  kept.keep({3, 3}, 3, "c");  // 6 items: {1, 1} goes
  EXPECT_EQ(kept.find({1, 1}, 1), nullptr);
  EXPECT_NE(kept.find({2, 2}, 2), nullptr);
  EXPECT_NE(kept.find({3, 3}, 3), nullptr);
  kept.keep({4, 4, 4, 4, 4, 4}, 4, "too large");
  EXPECT_EQ(kept.find({4, 4, 4, 4, 4, 4}, 4), nullptr);
  EXPECT_NE(kept.find({2, 2}, 2), nullptr);
  EXPECT_NE(kept.find({3, 3}, 3), nullptr);
}

}  // namespace
}  // namespace evenfeed
