// The device feeder: in order, contents intact, host batches released, on the GPU
// (where one is visible) and as the pass-through everywhere else.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "cuda/device_feeder.h"
#include "cuda/gpu_runtime.h"
#include "cuda/pinned_memory.h"

namespace evenfeed {
namespace {

// A source of `count` host batches; batch i holds two parts filled with i and i + 100.
// `alive` counts the host batches whose owner has not been released yet.
DeviceFeeder::Source make_source(int count, size_t bytes, std::shared_ptr<std::atomic<int>> alive) {
  auto next = std::make_shared<int>(0);
  return [=]() -> std::optional<HostBatch> {
    if (*next == count) return std::nullopt;
    const int i = (*next)++;
    struct Owner {
      PinnedBuffer a, b;
      std::shared_ptr<std::atomic<int>> alive;
      ~Owner() { --*alive; }
    };
    auto owner = std::make_shared<Owner>();
    owner->alive = alive;
    ++*alive;
    owner->a.reserve(bytes);
    owner->b.reserve(bytes / 2 + 1);
    std::memset(owner->a.data(), i, bytes);
    std::memset(owner->b.data(), i + 100, bytes / 2 + 1);
    HostBatch batch;
    batch.index = static_cast<uint64_t>(i);
    batch.parts = {{reinterpret_cast<const std::byte*>(owner->a.data()), bytes},
                   {reinterpret_cast<const std::byte*>(owner->b.data()), bytes / 2 + 1}};
    batch.owner = owner;
    return batch;
  };
}

std::vector<uint8_t> read_part(const DeviceBatch& batch, size_t part) {
  std::vector<uint8_t> bytes(batch.part_bytes(part));
  if (batch.on_device()) {
    gpu_event_synchronize(batch.ready());
    gpu_copy_to_host(bytes.data(), batch.part(part), bytes.size());
  } else {
    std::memcpy(bytes.data(), batch.part(part), bytes.size());
  }
  return bytes;
}

TEST(DeviceFeeder, DeliversEveryBatchInOrderWithItsContents) {
  auto alive = std::make_shared<std::atomic<int>>(0);
  {
    DeviceFeeder feeder(make_source(9, 5000, alive), {});
    EXPECT_EQ(feeder.on_gpu(), gpu_visible());
    uint64_t expected = 0;
    while (auto batch = feeder.next()) {
      ASSERT_EQ(batch->index(), expected);
      ASSERT_EQ(batch->parts(), 2u);
      EXPECT_EQ(read_part(*batch, 0), std::vector<uint8_t>(5000, static_cast<uint8_t>(expected)));
      EXPECT_EQ(read_part(*batch, 1),
                std::vector<uint8_t>(2501, static_cast<uint8_t>(expected + 100)));
      ++expected;
    }
    EXPECT_EQ(expected, 9u);
    EXPECT_EQ(feeder.stats().batches, 9u);
  }
  EXPECT_EQ(alive->load(), 0) << "every host batch is released by the end";
}

TEST(DeviceFeeder, HoldsOnlyABoundedNumberOfHostBatches) {
  auto alive = std::make_shared<std::atomic<int>>(0);
  FeederOptions options;
  options.depth = 2;
  DeviceFeeder feeder(make_source(20, 1 << 16, alive), options);
  int max_alive = 0;
  while (auto batch = feeder.next()) max_alive = std::max(max_alive, alive->load());
  // Pass-through holds only the batch in hand; on a GPU, the one in hand plus `depth`
  // copies ahead, plus copies not yet confirmed finished.
  EXPECT_LE(max_alive, feeder.on_gpu() ? 2 * options.depth + 1 : 1);
}

TEST(DeviceFeeder, PassThroughPointsAtTheHostMemory) {
  if (gpu_visible()) GTEST_SKIP() << "a GPU is visible: the feeder copies";
  auto alive = std::make_shared<std::atomic<int>>(0);
  DeviceFeeder feeder(make_source(1, 64, alive), {});
  auto batch = feeder.next();
  ASSERT_TRUE(batch);
  EXPECT_FALSE(batch->on_device());
  EXPECT_EQ(batch->ready(), nullptr);
  EXPECT_EQ(alive->load(), 1);
  batch.reset();
  EXPECT_EQ(alive->load(), 0) << "dropping the device batch releases the host batch";
  EXPECT_EQ(feeder.stats().host_batches_released, 1u);
}

TEST(DeviceFeeder, CopiesOverlapTheConsumersWork) {
  if (!gpu_visible()) GTEST_SKIP() << "no GPU visible";
  // The consumer spends host time per batch; the next batches' copies must already be
  // done when it asks for them, so waiting on `ready` costs (almost) nothing.
  auto alive = std::make_shared<std::atomic<int>>(0);
  DeviceFeeder feeder(make_source(12, 32 << 20, alive), {});
  double waited = 0;
  int batches = 0;
  while (auto batch = feeder.next()) {
    if (batches++ > 0) {
      const auto start = std::chrono::steady_clock::now();
      gpu_event_synchronize(batch->ready());
      waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // "compute"
  }
  EXPECT_LT(waited, 0.02 * 11 * 0.25) << "copies must run while the consumer works";
  EXPECT_GT(feeder.stats().bytes_copied, 0u);
}

TEST(PinnedBuffer, IsPinnedExactlyWhenAGpuIsVisible) {
  PinnedBuffer buffer;
  buffer.reserve(100);
  EXPECT_EQ(buffer.pinned(), gpu_visible());
  EXPECT_EQ(buffer.capacity(), 4096u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 4096, 0u);
  buffer.reserve(50);
  EXPECT_EQ(buffer.capacity(), 4096u) << "never shrinks";
}

}  // namespace
}  // namespace evenfeed
