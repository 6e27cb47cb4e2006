#include "loader/jpeg_image_arena.h"

#include <jerror.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace evenfeed {
namespace {

constexpr size_t kAlign = 32;                 // libjpeg-turbo's ALIGN_SIZE on x86-64 and Arm
constexpr size_t kRowAlign = 2 * kAlign;      // sample rows: upsamplers may run past the width
constexpr size_t kLargest = size_t{1} << 30;  // one request; more means a broken header

size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

JpegImageArena& arena_of(j_common_ptr cinfo) {
  return *static_cast<JpegImageArena*>(cinfo->client_data);
}

void* arena_alloc_small(j_common_ptr cinfo, int pool_id, size_t bytes) {
  JpegImageArena& arena = arena_of(cinfo);
  if (pool_id != JPOOL_IMAGE) return arena.original_alloc_small(cinfo, pool_id, bytes);
  return arena.allocate(cinfo, bytes);
}

void* arena_alloc_large(j_common_ptr cinfo, int pool_id, size_t bytes) {
  JpegImageArena& arena = arena_of(cinfo);
  if (pool_id != JPOOL_IMAGE) return arena.original_alloc_large(cinfo, pool_id, bytes);
  return arena.allocate(cinfo, bytes);
}

// Row pointers, then the rows, each padded to kRowAlign bytes (as libjpeg-turbo's own
// alloc_sarray pads them).
JSAMPARRAY arena_alloc_sarray(j_common_ptr cinfo, int pool_id, JDIMENSION samplesperrow,
                              JDIMENSION numrows) {
  JpegImageArena& arena = arena_of(cinfo);
  if (pool_id != JPOOL_IMAGE)
    return arena.original_alloc_sarray(cinfo, pool_id, samplesperrow, numrows);
  const size_t row = round_up(static_cast<size_t>(samplesperrow) * sizeof(JSAMPLE), kRowAlign);
  if (row > kLargest / std::max<size_t>(numrows, 1)) ERREXIT(cinfo, JERR_WIDTH_OVERFLOW);
  auto rows = static_cast<JSAMPARRAY>(arena.allocate(cinfo, numrows * sizeof(JSAMPROW)));
  auto* samples = static_cast<JSAMPLE*>(arena.allocate(cinfo, row * numrows));
  for (JDIMENSION r = 0; r < numrows; ++r) rows[r] = samples + r * (row / sizeof(JSAMPLE));
  return rows;
}

JBLOCKARRAY arena_alloc_barray(j_common_ptr cinfo, int pool_id, JDIMENSION blocksperrow,
                               JDIMENSION numrows) {
  JpegImageArena& arena = arena_of(cinfo);
  if (pool_id != JPOOL_IMAGE)
    return arena.original_alloc_barray(cinfo, pool_id, blocksperrow, numrows);
  const size_t row = static_cast<size_t>(blocksperrow) * sizeof(JBLOCK);
  if (row > kLargest / std::max<size_t>(numrows, 1)) ERREXIT(cinfo, JERR_WIDTH_OVERFLOW);
  auto rows = static_cast<JBLOCKARRAY>(arena.allocate(cinfo, numrows * sizeof(JBLOCKROW)));
  auto* blocks = static_cast<JBLOCKROW>(arena.allocate(cinfo, row * numrows));
  for (JDIMENSION r = 0; r < numrows; ++r) rows[r] = blocks + r * blocksperrow;
  return rows;
}

// Virtual block arrays (progressive and multi-scan images). libjpeg-turbo's own manager
// supports image-lifetime arrays only, and so does this.
jvirt_barray_ptr arena_request_virt_barray(j_common_ptr cinfo, int pool_id, boolean pre_zero,
                                           JDIMENSION blocksperrow, JDIMENSION numrows,
                                           JDIMENSION /*maxaccess: the whole array is held*/) {
  if (pool_id != JPOOL_IMAGE) ERREXIT1(cinfo, JERR_BAD_POOL_ID, pool_id);
  auto* array =
      arena_of(cinfo).request_block_array(cinfo, pre_zero != FALSE, blocksperrow, numrows);
  return reinterpret_cast<jvirt_barray_ptr>(array);
}

void arena_realize_virt_arrays(j_common_ptr cinfo) {
  JpegImageArena& arena = arena_of(cinfo);
  arena.original_realize_virt_arrays(cinfo);  // libjpeg's own (sample arrays), if any
  arena.realize_block_arrays(cinfo);
}

// Rows [start_row, start_row + num_rows) of a whole array held in memory: the same
// checks as libjpeg's manager, no backing store to page through.
JBLOCKARRAY arena_access_virt_barray(j_common_ptr cinfo, jvirt_barray_ptr ptr, JDIMENSION start_row,
                                     JDIMENSION num_rows, boolean /*writable*/) {
  auto* array = reinterpret_cast<JpegImageArena::BlockArray*>(ptr);
  if (array->rows == nullptr || num_rows > array->row_count ||
      start_row > array->row_count - num_rows)
    ERREXIT(cinfo, JERR_BAD_VIRTUAL_ACCESS);
  return array->rows + start_row;
}

// libjpeg frees its image pool at the end of every image (jpeg_abort, jpeg_finish_*):
// its own part first (virtual arrays live there), then the arena starts over.
void arena_free_pool(j_common_ptr cinfo, int pool_id) {
  JpegImageArena& arena = arena_of(cinfo);
  arena.original_free_pool(cinfo, pool_id);
  if (pool_id == JPOOL_IMAGE) arena.reset();
}

}  // namespace

void JpegImageArena::FreeDeleter::operator()(void* p) const {
  std::free(p);
}

void JpegImageArena::install(j_common_ptr cinfo) {
  jpeg_memory_mgr* mem = cinfo->mem;
  original_alloc_small = mem->alloc_small;
  original_alloc_large = mem->alloc_large;
  original_alloc_sarray = mem->alloc_sarray;
  original_alloc_barray = mem->alloc_barray;
  original_free_pool = mem->free_pool;
  original_realize_virt_arrays = mem->realize_virt_arrays;
  cinfo->client_data = this;
  mem->alloc_small = arena_alloc_small;
  mem->alloc_large = arena_alloc_large;
  mem->alloc_sarray = arena_alloc_sarray;
  mem->alloc_barray = arena_alloc_barray;
  mem->free_pool = arena_free_pool;
  mem->request_virt_barray = arena_request_virt_barray;
  mem->realize_virt_arrays = arena_realize_virt_arrays;
  mem->access_virt_barray = arena_access_virt_barray;
}

JpegImageArena::BlockArray* JpegImageArena::request_block_array(j_common_ptr cinfo, bool pre_zero,
                                                                JDIMENSION blocks_per_row,
                                                                JDIMENSION row_count) {
  auto* array = new (allocate(cinfo, sizeof(BlockArray))) BlockArray{};
  array->blocks_per_row = blocks_per_row;
  array->row_count = row_count;
  array->pre_zero = pre_zero;
  array->next = block_arrays_;
  block_arrays_ = array;
  return array;
}

void JpegImageArena::realize_block_arrays(j_common_ptr cinfo) {
  for (BlockArray* array = block_arrays_; array != nullptr; array = array->next) {
    if (array->rows != nullptr) continue;
    array->rows = arena_alloc_barray(cinfo, JPOOL_IMAGE, array->blocks_per_row, array->row_count);
    if (array->pre_zero && array->row_count > 0) {
      // arena_alloc_barray lays the rows out back to back.
      std::memset(array->rows[0], 0,
                  static_cast<size_t>(array->blocks_per_row) * array->row_count * sizeof(JBLOCK));
    }
  }
}

void* JpegImageArena::allocate(j_common_ptr cinfo, size_t bytes) {
  if (bytes > kLargest) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
  bytes = round_up(std::max<size_t>(bytes, 1), kAlign);
  if (used_ + bytes <= capacity_) {
    void* p = block_.get() + used_;
    used_ += bytes;
    return p;
  }
  // Past the block: an overflow block for this image only, remembered for the growth.
  void* p = std::aligned_alloc(kAlign, bytes);
  if (p == nullptr) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 11);
  try {
    overflow_.emplace_back(static_cast<std::byte*>(p));
  } catch (const std::bad_alloc&) {  // no exception may cross libjpeg's C frames
    std::free(p);
    ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 12);
  }
  overflow_bytes_ += bytes;
  return p;
}

void JpegImageArena::reset() {
  if (overflow_bytes_ > 0) {
    // Grow to what this image needed in all (plus a quarter), in one allocation.
    const size_t wanted = round_up((capacity_ + overflow_bytes_) * 5 / 4, 4096);
    overflow_.clear();
    block_.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, wanted)));
    capacity_ = block_ ? wanted : 0;
    ++growths_;
  }
  used_ = 0;
  overflow_bytes_ = 0;
  block_arrays_ = nullptr;  // they lived in the arena
}

}  // namespace evenfeed
