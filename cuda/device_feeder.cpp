#include "cuda/device_feeder.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace evenfeed {
namespace {

// Parts start at this alignment in a device buffer, enough for any vector load.
constexpr size_t kPartAlignment = 256;

size_t align_up(size_t value) {
  return (value + kPartAlignment - 1) / kPartAlignment * kPartAlignment;
}

}  // namespace

// A device buffer of the ring and the events that say when it may be touched again.
struct DeviceFeeder::RingSlot {
  void* device = nullptr;
  size_t capacity = 0;
  GpuEvent copy_done = nullptr;  // recorded on the copy stream after the copy into it
  GpuEvent consumed = nullptr;   // recorded on the compute stream when it was dropped
  bool consumed_recorded = false;
  bool busy = false;  // copying into it, or held by a DeviceBatch
};

// A host batch whose copy has started; its owner is kept until the copy is done.
struct DeviceFeeder::InFlight {
  int slot = -1;
  HostBatch host;
  std::vector<size_t> offsets;
};

DeviceFeeder::DeviceFeeder(Source source, const FeederOptions& options)
    : source_(std::move(source)), options_(options) {
  EVENFEED_CHECK(options.depth >= 1, "the device feeder needs a depth of at least 1, got {}",
                 options.depth);
  on_gpu_ = gpu_visible();
  if (!on_gpu_) return;
  gpu_set_device(options.device);
  copy_stream_ = gpu_stream_create();
  for (int i = 0; i <= options.depth; ++i) {
    auto slot = std::make_unique<RingSlot>();
    slot->copy_done = gpu_event_create();
    slot->consumed = gpu_event_create();
    ring_.push_back(std::move(slot));
  }
}

DeviceFeeder::~DeviceFeeder() {
  if (!on_gpu_) return;
  try {
    gpu_stream_synchronize(copy_stream_);
  } catch (const Error&) {
    // The context is broken; nothing more to wait for.
  }
  in_flight_.clear();
  awaiting_release_.clear();
  for (auto& slot : ring_) {
    gpu_device_free(slot->device);
    gpu_event_destroy(slot->copy_done);
    gpu_event_destroy(slot->consumed);
  }
  gpu_stream_destroy(copy_stream_);
}

std::optional<DeviceBatch> DeviceFeeder::next() {
  if (!on_gpu_) {
    std::optional<HostBatch> host = source_();
    if (!host) return std::nullopt;
    DeviceBatch batch;
    batch.feeder_ = this;
    batch.index_ = host->index;
    batch.parts_ = std::move(host->parts);
    batch.host_owner_ = std::move(host->owner);
    ++stats_.batches;
    return batch;
  }
  reclaim_host_batches();
  top_up();
  if (in_flight_.empty()) return std::nullopt;
  InFlight flight = std::move(in_flight_.front());
  in_flight_.erase(in_flight_.begin());
  RingSlot& slot = *ring_[static_cast<size_t>(flight.slot)];
  DeviceBatch batch;
  batch.feeder_ = this;
  batch.ring_slot_ = flight.slot;
  batch.index_ = flight.host.index;
  batch.ready_ = slot.copy_done;
  for (size_t i = 0; i < flight.host.parts.size(); ++i) {
    batch.parts_.emplace_back(static_cast<const std::byte*>(slot.device) + flight.offsets[i],
                              flight.host.parts[i].size());
  }
  awaiting_release_.push_back(std::move(flight));
  ++stats_.batches;
  top_up();  // start the next copy now that the batch before this one is gone
  return batch;
}

// Releases host batches whose copies have finished (their loader slots are refilled).
void DeviceFeeder::reclaim_host_batches() {
  std::erase_if(awaiting_release_, [&](InFlight& flight) {
    if (!gpu_event_done(ring_[static_cast<size_t>(flight.slot)]->copy_done)) return false;
    ++stats_.host_batches_released;
    return true;
  });
}

void DeviceFeeder::top_up() {
  while (!source_done_ && in_flight_.size() < static_cast<size_t>(options_.depth)) {
    const bool free_slot =
        std::any_of(ring_.begin(), ring_.end(), [](auto& s) { return !s->busy; });
    if (!free_slot) return;
    std::optional<HostBatch> host = source_();
    if (!host) {
      source_done_ = true;
      return;
    }
    start_copy(std::move(*host));
  }
}

void DeviceFeeder::start_copy(HostBatch host) {
  const auto found = std::find_if(ring_.begin(), ring_.end(), [](auto& s) { return !s->busy; });
  const int index = static_cast<int>(found - ring_.begin());
  RingSlot& slot = **found;
  // A host batch whose copy into this slot is still running is released first: this
  // only happens when the consumer outpaces the copies, and then waiting is right.
  std::erase_if(awaiting_release_, [&](InFlight& flight) {
    if (flight.slot != index) return false;
    gpu_event_synchronize(slot.copy_done);
    ++stats_.host_batches_released;
    return true;
  });
  InFlight flight{index, std::move(host), {}};
  size_t total = 0;
  for (const auto& part : flight.host.parts) {
    flight.offsets.push_back(total);
    total += align_up(part.size());
  }
  if (total > slot.capacity) {
    if (slot.consumed_recorded) gpu_event_synchronize(slot.consumed);  // growing is rare
    gpu_device_free(slot.device);
    slot.device = gpu_device_alloc(total);
    slot.capacity = total;
  }
  if (slot.consumed_recorded) gpu_stream_wait(copy_stream_, slot.consumed);
  for (size_t i = 0; i < flight.host.parts.size(); ++i) {
    const auto& part = flight.host.parts[i];
    if (part.empty()) continue;
    gpu_copy_to_device_async(static_cast<std::byte*>(slot.device) + flight.offsets[i], part.data(),
                             part.size(), copy_stream_);
    stats_.bytes_copied += part.size();
  }
  gpu_event_record(slot.copy_done, copy_stream_);
  slot.busy = true;
  in_flight_.push_back(std::move(flight));
}

void DeviceFeeder::give_back(int ring_slot) {
  RingSlot& slot = *ring_[static_cast<size_t>(ring_slot)];
  gpu_event_record(slot.consumed, options_.compute_stream);
  slot.consumed_recorded = true;
  slot.busy = false;
}

DeviceBatch::DeviceBatch(DeviceBatch&& other) noexcept {
  *this = std::move(other);
}

DeviceBatch& DeviceBatch::operator=(DeviceBatch&& other) noexcept {
  if (this == &other) return *this;
  release();
  feeder_ = std::exchange(other.feeder_, nullptr);
  ring_slot_ = std::exchange(other.ring_slot_, -1);
  index_ = other.index_;
  parts_ = std::move(other.parts_);
  ready_ = std::exchange(other.ready_, nullptr);
  host_owner_ = std::move(other.host_owner_);
  return *this;
}

DeviceBatch::~DeviceBatch() {
  release();
}

void DeviceBatch::release() {
  if (feeder_ == nullptr) return;
  if (ring_slot_ >= 0) {
    try {
      feeder_->give_back(ring_slot_);
    } catch (const Error&) {
      // A broken context: the feeder's destructor reports nothing more useful.
    }
  } else if (host_owner_) {
    ++feeder_->stats_.host_batches_released;
  }
  host_owner_.reset();
  feeder_ = nullptr;
  ring_slot_ = -1;
}

void DeviceBatch::wait_on(GpuStream stream) const {
  if (ready_ != nullptr) gpu_stream_wait(stream, ready_);
}

}  // namespace evenfeed
