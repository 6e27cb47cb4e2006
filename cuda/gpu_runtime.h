// The few CUDA runtime calls the rest of cuda/ is built from, behind a header with no
// CUDA types, so plain C++ (the pinned allocator, the feeder, the tools) can use them
// and a build without nvcc links a host-only version of this file pair.
//
// gpu_visible() is false when the build has no CUDA or no device answers; everything
// else here may then only be called to fail with a clear Error. Streams and events are
// opaque handles (cudaStream_t / cudaEvent_t underneath).
#pragma once

#include <cstddef>

namespace evenfeed {

using GpuStream = void*;
using GpuEvent = void*;

// True when a CUDA device is visible. The first call that finds none logs why, once.
bool gpu_visible();
// Sets the calling thread's device.
void gpu_set_device(int device);

// Pinned (page-locked) host memory, which the GPU's copy engines read directly. The
// free and destroy calls never throw (they run in destructors): failures are logged.
void* gpu_host_alloc(size_t bytes);
void gpu_host_free(void* pointer);
void* gpu_device_alloc(size_t bytes);
void gpu_device_free(void* pointer);

GpuStream gpu_stream_create();  // non-blocking with respect to the legacy stream
void gpu_stream_destroy(GpuStream stream);
void gpu_stream_synchronize(GpuStream stream);
GpuEvent gpu_event_create();  // without timing, the cheap kind
GpuEvent gpu_timing_event_create();
void gpu_event_destroy(GpuEvent event);
void gpu_event_record(GpuEvent event, GpuStream stream);
bool gpu_event_done(GpuEvent event);  // cudaEventQuery
void gpu_event_synchronize(GpuEvent event);
float gpu_event_elapsed_ms(GpuEvent start, GpuEvent end);
// Makes `stream` wait for `event` on the device; the host does not block.
void gpu_stream_wait(GpuStream stream, GpuEvent event);

void gpu_copy_to_device_async(void* device, const void* host, size_t bytes, GpuStream stream);
void gpu_copy_to_host(void* host, const void* device, size_t bytes);
// Sets `bytes` of device memory to `value`, queued on `stream`.
void gpu_memset_async(void* device, int value, size_t bytes, GpuStream stream);
void gpu_copy_to_device(void* device, const void* host, size_t bytes);

}  // namespace evenfeed
