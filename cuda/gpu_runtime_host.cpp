// The host-only build of gpu_runtime (nvcc not found at configure time): no GPU is
// ever visible, and every device call fails with a clear Error.
#include "core/error.h"
#include "core/log.h"
#include "cuda/gpu_runtime.h"

namespace evenfeed {
namespace {

[[noreturn]] void no_cuda(const char* call) {
  fail("{} needs a GPU, but evenfeed was built without CUDA (nvcc not found at configure time)",
       call);
}

}  // namespace

bool gpu_visible() {
  static const bool logged = [] {
    log_info("no GPU visible (built without CUDA): using host memory and the MPI communicator");
    return true;
  }();
  (void)logged;
  return false;
}

void gpu_set_device(int) {
  no_cuda("gpu_set_device");
}
void* gpu_host_alloc(size_t) {
  no_cuda("gpu_host_alloc");
}
void gpu_host_free(void* pointer) {
  if (pointer != nullptr) log_warn("gpu_host_free called in a build without CUDA");
}
void* gpu_device_alloc(size_t) {
  no_cuda("gpu_device_alloc");
}
void gpu_device_free(void* pointer) {
  if (pointer != nullptr) log_warn("gpu_device_free called in a build without CUDA");
}
GpuStream gpu_stream_create() {
  no_cuda("gpu_stream_create");
}
void gpu_stream_destroy(GpuStream stream) {
  if (stream != nullptr) log_warn("gpu_stream_destroy called in a build without CUDA");
}
void gpu_stream_synchronize(GpuStream) {
  no_cuda("gpu_stream_synchronize");
}
GpuEvent gpu_event_create() {
  no_cuda("gpu_event_create");
}
GpuEvent gpu_timing_event_create() {
  no_cuda("gpu_timing_event_create");
}
void gpu_event_destroy(GpuEvent event) {
  if (event != nullptr) log_warn("gpu_event_destroy called in a build without CUDA");
}
void gpu_event_record(GpuEvent, GpuStream) {
  no_cuda("gpu_event_record");
}
bool gpu_event_done(GpuEvent) {
  no_cuda("gpu_event_done");
}
void gpu_event_synchronize(GpuEvent) {
  no_cuda("gpu_event_synchronize");
}
float gpu_event_elapsed_ms(GpuEvent, GpuEvent) {
  no_cuda("gpu_event_elapsed_ms");
}
void gpu_stream_wait(GpuStream, GpuEvent) {
  no_cuda("gpu_stream_wait");
}
void gpu_memset_async(void*, int, size_t, GpuStream) {
  no_cuda("gpu_memset_async");
}
void gpu_copy_to_device_async(void*, const void*, size_t, GpuStream) {
  no_cuda("gpu_copy_to_device_async");
}
void gpu_copy_to_host(void*, const void*, size_t) {
  no_cuda("gpu_copy_to_host");
}
void gpu_copy_to_device(void*, const void*, size_t) {
  no_cuda("gpu_copy_to_device");
}

}  // namespace evenfeed
