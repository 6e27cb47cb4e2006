// Memory for libjpeg's per-image allocations that is kept from image to image.
//
// libjpeg allocates its image-lifetime buffers (row groups for the IDCT, the upsampler
// and the colour converter, per-component state) from its JPOOL_IMAGE pool and frees
// that pool at the end of every image: about 6.6 calls to malloc per decoded image in
// the loader, measured with a malloc-counting LD_PRELOAD. This arena takes over those
// allocations (the memory manager's alloc_small, alloc_large, alloc_sarray,
// alloc_barray and free_pool methods) and serves them from one block kept across
// images. An image that needs more than the block holds gets overflow blocks; at the
// end of that image the block grows to what it needed, so once a decoder has seen its
// largest image it allocates nothing more.
//
// Progressive and multi-scan JPEGs keep the whole image's DCT coefficients in virtual
// block arrays, which libjpeg's manager realises with a malloc of its own for every
// image (it calls its internal allocator directly, not the methods above). The arena
// takes over those too (request_virt_barray, realize_virt_arrays,
// access_virt_barray): they are held in memory whole, as libjpeg's manager holds them
// when memory suffices, and pre-zeroed where asked. JPOOL_PERMANENT allocations and
// virtual sample arrays (used only by two-pass colour quantisation, which the loader
// never asks for) stay with libjpeg's own manager.
//
// Rows of sample arrays are padded to 64 bytes and every object is 32-byte aligned,
// as libjpeg-turbo's own manager does for its SIMD routines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include <memory>
#include <vector>

namespace evenfeed {

class JpegImageArena {
 public:
  JpegImageArena() = default;
  JpegImageArena(const JpegImageArena&) = delete;
  JpegImageArena& operator=(const JpegImageArena&) = delete;

  // Takes over `cinfo`'s image-pool allocations; call right after jpeg_create_*. Uses
  // cinfo->client_data. The arena must outlive every use of `cinfo`.
  void install(j_common_ptr cinfo);

  // How many times the kept block had to grow (each growth is one allocation; none
  // once the largest image has been seen).
  uint64_t growths() const { return growths_; }

  // For the memory manager's methods (see the .cpp): `bytes`, 32-byte aligned, from
  // the block or an overflow block; and the end of an image.
  void* allocate(j_common_ptr cinfo, size_t bytes);
  void reset();

  // libjpeg's own methods, for what stays with it.
  decltype(jpeg_memory_mgr::alloc_small) original_alloc_small = nullptr;
  decltype(jpeg_memory_mgr::alloc_large) original_alloc_large = nullptr;
  decltype(jpeg_memory_mgr::alloc_sarray) original_alloc_sarray = nullptr;
  decltype(jpeg_memory_mgr::alloc_barray) original_alloc_barray = nullptr;
  decltype(jpeg_memory_mgr::free_pool) original_free_pool = nullptr;
  decltype(jpeg_memory_mgr::realize_virt_arrays) original_realize_virt_arrays = nullptr;

  // A virtual block array held whole in the arena. Requested while the header is
  // processed, realised by realize_virt_arrays, dropped with the image.
  struct BlockArray {
    JBLOCKARRAY rows = nullptr;  // null until realised
    JDIMENSION blocks_per_row = 0, row_count = 0;
    bool pre_zero = false;
    BlockArray* next = nullptr;
  };
  BlockArray* request_block_array(j_common_ptr cinfo, bool pre_zero, JDIMENSION blocks_per_row,
                                  JDIMENSION row_count);
  void realize_block_arrays(j_common_ptr cinfo);

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  using Block = std::unique_ptr<std::byte, FreeDeleter>;

  Block block_;
  size_t capacity_ = 0, used_ = 0;
  size_t overflow_bytes_ = 0;  // asked for this image beyond the block
  std::vector<Block> overflow_;
  uint64_t growths_ = 0;
  BlockArray* block_arrays_ = nullptr;  // this image's, newest first
};

}  // namespace evenfeed
