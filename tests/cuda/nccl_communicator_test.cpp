// The NCCL communicator (cuda/nccl_communicator.h) across real processes, one GPU per
// rank, on device buffers: all-reduce of sizes 0, 1, odd and large, sum and average,
// float32 and bfloat16; broadcast; all-gather; barrier; many operations in flight.
// Run under mpirun -np 1 and -np 2 by CTest. Every test reports skipped, never passed,
// where this host has no GPU, or fewer GPUs than ranks (NCCL refuses two ranks of one
// communicator on the same device).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <mpi.h>
#include "core/bfloat16.h"
#include "cuda/device_info.h"
#include "cuda/gpu_runtime.h"
#include "cuda/nccl_communicator.h"
#include "tests/support/collective_values.h"

namespace evenfeed {
namespace {

// This rank's index among the ranks of its host, and their number (MPI is initialised
// by tests/trainer/mpi_test_main.cpp around the whole run).
std::pair<int, int> local_rank_and_size() {
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int rank = 0, size = 1;
  MPI_Comm_rank(local, &rank);
  MPI_Comm_size(local, &size);
  MPI_Comm_free(&local);
  return {rank, size};
}

// Why this host cannot run the tests, or "" when it can. Every rank of a host sees
// the same devices and the same local size, so every rank skips or none does.
std::string reason_to_skip(int local_size) {
  const GpuInfo info = query_gpus();
  if (info.devices.empty()) return "no GPU visible: " + info.no_gpu_reason;
  if (static_cast<int>(info.devices.size()) < local_size) {
    return std::to_string(local_size) + " ranks on this host but " +
           std::to_string(info.devices.size()) + " GPU(s): NCCL needs one GPU per rank";
  }
  return "";
}

// A device buffer of `bytes`, freed at the end of the test.
struct DeviceBuffer {
  explicit DeviceBuffer(size_t size) : bytes(size), data(size ? gpu_device_alloc(size) : nullptr) {}
  ~DeviceBuffer() { gpu_device_free(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  size_t bytes;
  void* data;
};

template <typename T>
std::vector<T> to_host(const DeviceBuffer& buffer) {
  std::vector<T> values(buffer.bytes / sizeof(T));
  if (buffer.bytes > 0) gpu_copy_to_host(values.data(), buffer.data, buffer.bytes);
  return values;
}

template <typename T>
std::unique_ptr<DeviceBuffer> to_device(const std::vector<T>& values) {
  auto buffer = std::make_unique<DeviceBuffer>(values.size() * sizeof(T));
  if (buffer->bytes > 0) gpu_copy_to_device(buffer->data, values.data(), buffer->bytes);
  return buffer;
}

using testing::contribution;
using testing::expected_sum;

class NcclCommunicatorTest : public ::testing::Test {
 protected:
  // One communicator for the suite, destroyed before main finalises MPI.
  static void SetUpTestSuite() {
    std::tie(local_rank_, local_size_) = local_rank_and_size();
    skip_ = reason_to_skip(local_size_);
    if (!skip_.empty()) return;
    NcclOptions options;
    options.device = local_rank_;
    gpu_set_device(options.device);
    comm_ = make_nccl_communicator(MPI_COMM_WORLD, options);
  }
  static void TearDownTestSuite() { comm_.reset(); }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  static inline int local_rank_ = 0, local_size_ = 1;
  static inline std::unique_ptr<Communicator> comm_;
  static inline std::string skip_;
};

TEST_F(NcclCommunicatorTest, IsTheNcclBackendOnDeviceBuffers) {
  EXPECT_EQ(comm_->backend(), "nccl");
  EXPECT_TRUE(comm_->device_buffers());
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  EXPECT_EQ(comm_->rank(), rank);
  EXPECT_EQ(comm_->world_size(), world);
}

TEST_F(NcclCommunicatorTest, SumsAndAveragesFloatsOfEverySize) {
  const int rank = comm_->rank(), world = comm_->world_size();
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{1001}, (size_t{1} << 22) + 3}) {
      auto buffer = to_device(contribution(rank, count));
      AllReduceOptions options;
      options.op = op;
      comm_->all_reduce(buffer->data, count, options)->wait();
      const std::vector<float> got = to_host<float>(*buffer);
      for (size_t i = 0; i < count; ++i) {
        const float sum = expected_sum(world, i);
        const float want = op == ReduceOp::kSum ? sum : sum / static_cast<float>(world);
        ASSERT_FLOAT_EQ(got[i], want) << "count " << count << " at " << i;
      }
    }
  }
}

TEST_F(NcclCommunicatorTest, SumsAndAveragesBfloat16) {
  const int rank = comm_->rank(), world = comm_->world_size();
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage}) {
    const std::vector<float> values = contribution(rank, 513);
    std::vector<uint16_t> packed(values.size());
    for (size_t i = 0; i < values.size(); ++i) packed[i] = float_to_bfloat16(values[i]);
    auto buffer = to_device(packed);
    AllReduceOptions options;
    options.type = DataType::kBFloat16;
    options.op = op;
    comm_->all_reduce(buffer->data, packed.size(), options)->wait();
    const std::vector<uint16_t> got = to_host<uint16_t>(*buffer);
    for (size_t i = 0; i < got.size(); ++i) {
      const float sum = expected_sum(world, i);
      const float want = op == ReduceOp::kSum ? sum : sum / static_cast<float>(world);
      // bfloat16 keeps 8 significant bits: the average may round.
      ASSERT_NEAR(bfloat16_to_float(got[i]), want, want / 128.0f) << "at " << i;
    }
  }
}

TEST_F(NcclCommunicatorTest, BroadcastsFromEveryRoot) {
  const int rank = comm_->rank(), world = comm_->world_size();
  for (int root = 0; root < world; ++root) {
    std::vector<int32_t> values(777, rank == root ? 1000 + root : -1);
    auto buffer = to_device(values);
    BroadcastOptions options;
    options.root = root;
    comm_->broadcast(buffer->data, buffer->bytes, options)->wait();
    for (int32_t v : to_host<int32_t>(*buffer)) ASSERT_EQ(v, 1000 + root) << "root " << root;
  }
}

TEST_F(NcclCommunicatorTest, GathersEveryRanksBytesInRankOrder) {
  const int rank = comm_->rank(), world = comm_->world_size();
  const std::vector<int32_t> mine(129, 10 * rank + 3);
  auto sent = to_device(mine);
  DeviceBuffer received(sent->bytes * static_cast<size_t>(world));
  comm_->all_gather(sent->data, received.data, sent->bytes, {})->wait();
  const std::vector<int32_t> all = to_host<int32_t>(received);
  for (int r = 0; r < world; ++r) {
    for (size_t i = 0; i < mine.size(); ++i) ASSERT_EQ(all[r * mine.size() + i], 10 * r + 3);
  }
}

TEST_F(NcclCommunicatorTest, ManyOperationsInFlightFinishInOrder) {
  const int rank = comm_->rank(), world = comm_->world_size();
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<std::unique_ptr<Work>> works;
  for (int k = 0; k < 16; ++k) {
    std::vector<float> values = contribution(rank, 4096 + static_cast<size_t>(k));
    for (float& v : values) v *= static_cast<float>(k + 1);
    buffers.push_back(to_device(values));
    works.push_back(comm_->all_reduce(buffers.back()->data, values.size(), {}));
  }
  comm_->barrier({})->wait();
  for (auto& work : works) work->wait();
  for (int k = 0; k < 16; ++k) {
    const std::vector<float> got = to_host<float>(*buffers[k]);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_FLOAT_EQ(got[i], expected_sum(world, i) * static_cast<float>(k + 1)) << k;
  }
}

}  // namespace
}  // namespace evenfeed
