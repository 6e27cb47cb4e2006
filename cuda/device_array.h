// A typed buffer in device memory that owns its allocation (cudaMalloc underneath,
// through gpu_runtime.h, so plain C++ can hold one). Sized once or grown on demand;
// growing discards the contents, as the model's per-batch scratch wants.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cuda/gpu_runtime.h"

namespace evenfeed {

template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(size_t count) { grow(count); }
  ~DeviceArray() { gpu_device_free(data_); }
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }

  // Makes room for at least `count` elements; the contents are lost if it reallocates.
  void grow(size_t count) {
    if (count <= size_) return;
    gpu_device_free(data_);
    data_ = nullptr;
    size_ = 0;
    data_ = static_cast<T*>(gpu_device_alloc(count * sizeof(T)));
    size_ = count;
  }
  T* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<T> span() const { return {data_, size_}; }

  // Synchronous copies on the legacy stream: for set-up and checkpoints, not the hot
  // path. Synchronise the stream that wrote the buffer before reading it back.
  void upload(std::span<const T> host) {
    grow(host.size());
    if (!host.empty()) gpu_copy_to_device(data_, host.data(), host.size_bytes());
  }
  std::vector<T> download(size_t count) const {
    std::vector<T> host(count);
    if (count > 0) gpu_copy_to_host(host.data(), data_, count * sizeof(T));
    return host;
  }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace evenfeed
