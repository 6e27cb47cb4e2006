// Host memory for batches on their way to a GPU: pinned (cudaHostAlloc) when a GPU is
// visible, so cudaMemcpyAsync runs on the copy engine at full speed and truly in the
// background; page-aligned ordinary memory otherwise. The loader's slot pool is made
// of these.
#pragma once

#include <cstddef>
#include <cstdint>

namespace evenfeed {

class PinnedBuffer {
 public:
  // `pin`: use page-locked memory when a GPU is visible (false: always ordinary).
  explicit PinnedBuffer(bool pin = true) : want_pinned_(pin) {}
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  // Grows to at least `bytes` (rounded up to pages), discarding the contents; never
  // shrinks, so a slot stops allocating once it has held its largest batch.
  void reserve(size_t bytes);
  uint8_t* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  bool pinned() const { return pinned_; }

 private:
  void release();
  bool want_pinned_;
  bool pinned_ = false;
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace evenfeed
