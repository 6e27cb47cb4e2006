#include "cuda/bandwidth.h"

#include <cstring>
#include <memory>
#include <vector>

#include "core/error.h"
#include "cuda/gpu_runtime.h"

namespace evenfeed {
namespace {

double time_copies(void* device, const void* host, size_t bytes, int repeats, GpuStream stream) {
  gpu_copy_to_device_async(device, host, bytes, stream);  // warm-up: first-touch, TLBs
  GpuEvent start = gpu_timing_event_create(), end = gpu_timing_event_create();
  gpu_event_record(start, stream);
  for (int i = 0; i < repeats; ++i) gpu_copy_to_device_async(device, host, bytes, stream);
  gpu_event_record(end, stream);
  gpu_event_synchronize(end);
  const double seconds = gpu_event_elapsed_ms(start, end) / 1000.0;
  gpu_event_destroy(start);
  gpu_event_destroy(end);
  return static_cast<double>(bytes) * repeats / seconds / 1e9;
}

}  // namespace

H2dBandwidth measure_h2d(int device, size_t bytes, int repeats) {
  EVENFEED_CHECK(gpu_visible(),
                 "measuring host-to-device bandwidth needs a GPU, and none is visible");
  EVENFEED_CHECK(bytes > 0 && repeats > 0, "bandwidth test needs bytes and repeats above 0");
  gpu_set_device(device);
  GpuStream stream = gpu_stream_create();
  void* target = gpu_device_alloc(bytes);
  void* pinned = gpu_host_alloc(bytes);
  std::vector<unsigned char> pageable(bytes, 1);
  std::memset(pinned, 1, bytes);
  H2dBandwidth result;
  result.pinned_gbps = time_copies(target, pinned, bytes, repeats, stream);
  result.pageable_gbps = time_copies(target, pageable.data(), bytes, repeats, stream);
  gpu_host_free(pinned);
  gpu_device_free(target);
  gpu_stream_destroy(stream);
  return result;
}

}  // namespace evenfeed
