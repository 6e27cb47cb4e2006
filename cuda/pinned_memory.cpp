#include "cuda/pinned_memory.h"

#include <cstdlib>

#include "core/error.h"
#include "cuda/gpu_runtime.h"

namespace evenfeed {

PinnedBuffer::~PinnedBuffer() {
  release();
}

void PinnedBuffer::release() {
  if (pinned_) {
    gpu_host_free(data_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  capacity_ = 0;
}

void PinnedBuffer::reserve(size_t bytes) {
  if (bytes <= capacity_) return;
  release();
  constexpr size_t kPage = 4096;
  const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  pinned_ = want_pinned_ && gpu_visible();
  if (pinned_) {
    data_ = static_cast<uint8_t*>(gpu_host_alloc(rounded));
  } else {
    void* memory = nullptr;
    if (posix_memalign(&memory, kPage, rounded) != 0)
      fail("out of memory allocating a {} byte batch buffer", rounded);
    data_ = static_cast<uint8_t*>(memory);
  }
  capacity_ = rounded;
}

}  // namespace evenfeed
