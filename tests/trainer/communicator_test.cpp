// The MPI communicator across real processes (run under mpirun -np 2 and -np 4): sizes
// 0, 1, odd and large; sum and average; float32 and bfloat16; broadcast, all-gather,
// barrier; many operations in flight at once.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/bfloat16.h"
#include "core/error.h"
#include "tests/support/collective_values.h"
#include "trainer/mpi_communicator.h"

namespace evenfeed {
namespace {

class MpiCommunicatorTest : public ::testing::Test {
 protected:
  MpiCommunicator comm;
  int rank = comm.rank(), world = comm.world_size();
};

using testing::contribution;
using testing::expected_sum;

TEST_F(MpiCommunicatorTest, SumsFloatsOfEverySize) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{1001}, (size_t{1} << 22) + 3}) {
    std::vector<float> values = contribution(rank, count);
    comm.all_reduce(values.data(), count, {})->wait();
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(values[i], expected_sum(world, i)) << "count " << count << " at " << i;
  }
}

TEST_F(MpiCommunicatorTest, AveragesFloats) {
  std::vector<float> values = contribution(rank, 999);
  AllReduceOptions options;
  options.op = ReduceOp::kAverage;
  comm.all_reduce(values.data(), values.size(), options)->wait();
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_FLOAT_EQ(values[i], expected_sum(world, i) / static_cast<float>(world));
}

TEST_F(MpiCommunicatorTest, SumsAndAveragesBfloat16) {
  // Small integers are exact in bfloat16, so the expected sums are exact too.
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage}) {
    std::vector<float> wanted = contribution(rank, 513);
    std::vector<uint16_t> values(wanted.size());
    for (size_t i = 0; i < values.size(); ++i) values[i] = float_to_bfloat16(wanted[i]);
    AllReduceOptions options;
    options.type = DataType::kBFloat16;
    options.op = op;
    comm.all_reduce(values.data(), values.size(), options)->wait();
    for (size_t i = 0; i < values.size(); ++i) {
      float expected = expected_sum(world, i);
      if (op == ReduceOp::kAverage)
        expected = bfloat16_to_float(float_to_bfloat16(expected / static_cast<float>(world)));
      ASSERT_EQ(bfloat16_to_float(values[i]), expected) << "element " << i;
    }
  }
}

TEST_F(MpiCommunicatorTest, ManyOperationsInFlightCompleteInOrder) {
  std::vector<std::vector<float>> buffers;
  std::vector<std::unique_ptr<Work>> works;
  for (int k = 0; k < 16; ++k)
    buffers.push_back(std::vector<float>(1000 + k, static_cast<float>(rank * k)));
  for (auto& b : buffers) works.push_back(comm.all_reduce(b.data(), b.size(), {}));
  for (auto& w : works) w->wait();
  for (int k = 0; k < 16; ++k) {
    ASSERT_EQ(buffers[k].size(), 1000u + k);
    EXPECT_EQ(buffers[k][0], static_cast<float>(k * world * (world - 1) / 2));
  }
}

TEST_F(MpiCommunicatorTest, BroadcastsFromAnyRoot) {
  for (int root = 0; root < world; ++root) {
    std::vector<int> values(257, rank == root ? root * 10 + 1 : -1);
    BroadcastOptions options;
    options.root = root;
    comm.broadcast(values.data(), values.size() * sizeof(int), options)->wait();
    for (int v : values) ASSERT_EQ(v, root * 10 + 1);
  }
  BroadcastOptions bad;
  bad.root = world;
  EXPECT_THROW(comm.broadcast(nullptr, 0, bad), Error);
}

TEST_F(MpiCommunicatorTest, GathersInRankOrder) {
  const double mine[2] = {static_cast<double>(rank), rank * 0.5};
  std::vector<double> all(2 * static_cast<size_t>(world));
  comm.all_gather(mine, all.data(), sizeof(mine), {})->wait();
  for (int r = 0; r < world; ++r) {
    EXPECT_EQ(all[2 * r], r);
    EXPECT_EQ(all[2 * r + 1], r * 0.5);
  }
  comm.barrier({})->wait();
}

TEST_F(MpiCommunicatorTest, DoneBecomesTrueWithoutWaiting) {
  std::vector<float> values(10, 1.0f);
  auto work = comm.all_reduce(values.data(), values.size(), {});
  while (!work->done()) {
  }
  work->wait();
  EXPECT_EQ(values[0], static_cast<float>(world));
}

}  // namespace
}  // namespace evenfeed
