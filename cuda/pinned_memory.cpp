#include "cuda/pinned_memory.h"

#include <sys/mman.h>

#include "core/error.h"
#include "cuda/gpu_runtime.h"

namespace evenfeed {

PinnedBuffer::~PinnedBuffer() {
  release();
}

void PinnedBuffer::release() {
  if (pinned_) {
    gpu_host_free(data_);
  } else if (data_ != nullptr) {
    ::munmap(data_, capacity_);
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
    // Straight from the kernel rather than malloc: page-aligned, and given back to the
    // system whole when the loader that owns it goes (through malloc, freed slots of a
    // few MiB moved glibc's mmap threshold up and later ones were carved from the heap).
    void* memory =
        ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) fail("out of memory allocating a {} byte batch buffer", rounded);
    data_ = static_cast<uint8_t*>(memory);
  }
  capacity_ = rounded;
}

}  // namespace evenfeed
