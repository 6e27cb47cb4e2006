#include <atomic>
#include <mutex>

#include "core/log.h"
#include "cuda/cuda_check.h"
#include "cuda/gpu_runtime.h"

namespace evenfeed {
namespace {

// Frees and destroys run in destructors, so they report a failure instead of throwing.
void warn_on_error(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) log_warn("CUDA {} failed: {}", call, cudaGetErrorString(rc));
}

}  // namespace

bool gpu_visible() {
  static const bool visible = [] {
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess || count == 0) {
      cudaGetLastError();  // clear the sticky error
      log_info("no GPU visible ({}): using host memory and the MPI communicator",
               rc != cudaSuccess ? cudaGetErrorString(rc) : "no CUDA devices");
      return false;
    }
    return true;
  }();
  return visible;
}

namespace {
// The device this process last chose. Pinned memory allocated from threads that never
// chose one (the loader's workers) would otherwise make a context on GPU 0 for every
// rank of a multi-GPU host: hundreds of MB of GPU 0's memory each.
std::atomic<int> home_device{-1};
}  // namespace

void gpu_set_device(int device) {
  CUDA_CHECK(cudaSetDevice(device));
  home_device = device;
}

void* gpu_host_alloc(size_t bytes) {
  void* pointer = nullptr;
  if (const int home = home_device; home >= 0) CUDA_CHECK(cudaSetDevice(home));
  CUDA_CHECK(cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable));
  return pointer;
}

void gpu_host_free(void* pointer) {
  if (pointer != nullptr) warn_on_error(cudaFreeHost(pointer), "cudaFreeHost");
}

void* gpu_device_alloc(size_t bytes) {
  void* pointer = nullptr;
  CUDA_CHECK(cudaMalloc(&pointer, bytes));
  return pointer;
}

void gpu_device_free(void* pointer) {
  if (pointer != nullptr) warn_on_error(cudaFree(pointer), "cudaFree");
}

GpuStream gpu_stream_create() {
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return stream;
}

void gpu_stream_destroy(GpuStream stream) {
  if (stream != nullptr)
    warn_on_error(cudaStreamDestroy(static_cast<cudaStream_t>(stream)), "cudaStreamDestroy");
}

void gpu_stream_synchronize(GpuStream stream) {
  CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

GpuEvent gpu_event_create() {
  cudaEvent_t event = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

GpuEvent gpu_timing_event_create() {
  cudaEvent_t event = nullptr;
  CUDA_CHECK(cudaEventCreate(&event));
  return event;
}

void gpu_event_destroy(GpuEvent event) {
  if (event != nullptr)
    warn_on_error(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
}

void gpu_event_record(GpuEvent event, GpuStream stream) {
  CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}

bool gpu_event_done(GpuEvent event) {
  const cudaError_t rc = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (rc == cudaErrorNotReady) return false;
  CUDA_CHECK(rc);
  return true;
}

void gpu_event_synchronize(GpuEvent event) {
  CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}

float gpu_event_elapsed_ms(GpuEvent start, GpuEvent end) {
  float ms = 0;
  CUDA_CHECK(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
  return ms;
}

void gpu_stream_wait(GpuStream stream, GpuEvent event) {
  CUDA_CHECK(
      cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
}

void gpu_copy_to_device_async(void* device, const void* host, size_t bytes, GpuStream stream) {
  CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                             static_cast<cudaStream_t>(stream)));
}

void gpu_copy_to_host(void* host, const void* device, size_t bytes) {
  CUDA_CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
}

void gpu_memset_async(void* device, int value, size_t bytes, GpuStream stream) {
  if (bytes > 0)
    CUDA_CHECK(cudaMemsetAsync(device, value, bytes, static_cast<cudaStream_t>(stream)));
}

void gpu_copy_to_device(void* device, const void* host, size_t bytes) {
  CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
}

}  // namespace evenfeed
