// libyuv's row buffers come from per-thread scratch (loader/libyuv_scratch.h): the
// libyuv linked in is the rewritten copy (its malloc calls arrive here), a warm thread
// resizes without touching the heap, and a request beyond the kept blocks still works.
#include "loader/libyuv_scratch.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/support/resize_whole.h"

namespace evenfeed {
namespace {

// Resizes a w x h RGBX picture (a crop of all of it) to 64 x 64.
void resize(int w, int h) {
  std::vector<uint8_t> pixels(static_cast<size_t>(w) * h * 4);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 31);
  ImageOutput out;
  out.size = 64;
  testing::resize_whole(pixels, w, h, out, true);
}

TEST(LibyuvScratch, ResizingTakesRowBuffersFromTheScratch) {
  const LibyuvScratchStats before = libyuv_scratch_stats();
  resize(150, 97);  // shrinking (bilinear down)
  resize(40, 33);   // growing (bilinear up)
  const LibyuvScratchStats after = libyuv_scratch_stats();
  EXPECT_GE(after.requests - before.requests, 2u) << "libyuv's malloc did not come here";
}

TEST(LibyuvScratch, AWarmThreadResizesWithoutTheHeap) {
  std::thread([] {
    resize(400, 400);  // the widest rows first: the blocks grow to them
    resize(30, 30);
    const LibyuvScratchStats warm = libyuv_scratch_stats();
    for (int w = 31; w < 400; w += 17) resize(w, 450 - w);
    const LibyuvScratchStats after = libyuv_scratch_stats();
    EXPECT_GT(after.requests, warm.requests);
    EXPECT_EQ(after.heap_allocations, warm.heap_allocations);
  }).join();
}

TEST(LibyuvScratch, MoreBuffersAtOnceThanKeptBlocksFallBackToTheHeap) {
  std::vector<void*> held;
  for (int i = 0; i < 6; ++i) {
    held.push_back(evenfeed_libyuv_malloc(1000 + 100 * i));
    ASSERT_NE(held.back(), nullptr);
    std::fill_n(static_cast<char*>(held.back()), 1000 + 100 * i, static_cast<char>(i));
  }
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<char*>(held[i])[999], static_cast<char>(i));
  for (void* p : held) evenfeed_libyuv_free(p);
  evenfeed_libyuv_free(nullptr);
}

}  // namespace
}  // namespace evenfeed
