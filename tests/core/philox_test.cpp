#include "core/philox.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace evenfeed {
namespace {

// Known answers from Random123's tests/kat_vectors ("philox4x32 10" lines).
TEST(Philox, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(CounterRng, SameKeySameDrawsOtherKeyOtherDraws) {
  CounterRng a(7, RngStream::kOrder, 3, 99), b(7, RngStream::kOrder, 3, 99);
  CounterRng other_epoch(7, RngStream::kOrder, 4, 99), other_stream(7, RngStream::kAugment, 3, 99);
  std::vector<uint64_t> da, db, de, ds;
  for (int i = 0; i < 16; ++i) {
    da.push_back(a.next_u64());
    db.push_back(b.next_u64());
    de.push_back(other_epoch.next_u64());
    ds.push_back(other_stream.next_u64());
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, de);
  EXPECT_NE(da, ds);
}

TEST(CounterRng, BelowStaysInRangeAndCoversIt) {
  CounterRng rng(1, RngStream::kOrder, 0, 0);
  std::set<uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    uint64_t v = rng.below(7);
    ASSERT_LT(v, 7u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(rng.below(1), 0u);
}

TEST(CounterRng, UniformIsInUnitIntervalWithSensibleMean) {
  CounterRng rng(5, RngStream::kAugment, 1, 2);
  double sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.01);
}

}  // namespace
}  // namespace evenfeed
