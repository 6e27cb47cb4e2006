// The device feeder: takes host batches in order and hands the consumer device
// batches, with the host-to-device copy of the next batches overlapping the
// consumer's work on the current one.
//
// Copies run with cudaMemcpyAsync on the feeder's own stream into a small ring of
// device buffers, and each records an event. The consumer makes its compute stream
// wait on that event (DeviceBatch::wait_on, cudaStreamWaitEvent): no host
// synchronisation on the hot path. A host batch is released (its loader slot goes
// back to the pool) only once its copy has finished, and a device buffer is reused
// only once the compute stream has passed the point where the consumer dropped it.
//
// Without a GPU the feeder is a pass-through: device batches point at the host
// memory, which they keep alive; gpu_visible() says so once in the log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cuda/gpu_runtime.h"

namespace evenfeed {

// A batch in host memory: its regions (images, labels, ...) and whatever keeps them
// alive (the loader's Batch, for one).
struct HostBatch {
  uint64_t index = 0;
  std::vector<std::span<const std::byte>> parts;
  std::shared_ptr<void> owner;
};

struct FeederOptions {
  int device = 0;
  // Batches copied ahead of the one the consumer holds; the ring has depth + 1
  // device buffers.
  int depth = 2;
  // The consumer's stream: a dropped device buffer is reused only after the work the
  // consumer queued on it so far. nullptr: the legacy default stream.
  GpuStream compute_stream = nullptr;
};

struct FeederStats {
  uint64_t batches = 0;
  uint64_t bytes_copied = 0;           // 0 in pass-through
  uint64_t host_batches_released = 0;  // owners dropped once their copy finished
};

class DeviceFeeder;

// One batch ready for the consumer. Move-only; dropping it returns its device buffer.
class DeviceBatch {
 public:
  DeviceBatch(DeviceBatch&& other) noexcept;
  DeviceBatch& operator=(DeviceBatch&& other) noexcept;
  ~DeviceBatch();
  DeviceBatch(const DeviceBatch&) = delete;
  DeviceBatch& operator=(const DeviceBatch&) = delete;

  uint64_t index() const { return index_; }
  bool on_device() const { return ready_ != nullptr; }
  size_t parts() const { return parts_.size(); }
  // Device pointer to part i (host pointer in pass-through), and its size.
  const void* part(size_t i) const { return parts_[i].data(); }
  size_t part_bytes(size_t i) const { return parts_[i].size(); }
  // The copy's event (nullptr in pass-through).
  GpuEvent ready() const { return ready_; }
  // Orders `stream` after the copy without blocking the host; no-op in pass-through.
  void wait_on(GpuStream stream) const;

 private:
  friend class DeviceFeeder;
  DeviceBatch() = default;
  void release();
  DeviceFeeder* feeder_ = nullptr;
  int ring_slot_ = -1;
  uint64_t index_ = 0;
  std::vector<std::span<const std::byte>> parts_;
  GpuEvent ready_ = nullptr;
  std::shared_ptr<void> host_owner_;  // pass-through only
};

class DeviceFeeder {
 public:
  // Pulls host batches from `source` until it returns nothing.
  using Source = std::function<std::optional<HostBatch>()>;
  DeviceFeeder(Source source, const FeederOptions& options);
  ~DeviceFeeder();  // waits for copies in flight; every DeviceBatch must be gone
  DeviceFeeder(const DeviceFeeder&) = delete;
  DeviceFeeder& operator=(const DeviceFeeder&) = delete;

  bool on_gpu() const { return on_gpu_; }
  // The next batch in order, or nothing at the end.
  std::optional<DeviceBatch> next();
  FeederStats stats() const { return stats_; }

 private:
  friend class DeviceBatch;
  struct RingSlot;
  struct InFlight;
  void reclaim_host_batches();
  void top_up();
  void start_copy(HostBatch host);
  void give_back(int ring_slot);

  Source source_;
  FeederOptions options_;
  bool on_gpu_ = false;
  bool source_done_ = false;
  GpuStream copy_stream_ = nullptr;
  std::vector<std::unique_ptr<RingSlot>> ring_;
  std::vector<InFlight> in_flight_;         // copies started, not yet handed out
  std::vector<InFlight> awaiting_release_;  // handed out, host memory still being read
  FeederStats stats_;
};

}  // namespace evenfeed
