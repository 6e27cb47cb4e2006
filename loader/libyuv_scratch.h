// Memory for libyuv's row buffers that is kept from call to call.
//
// libyuv's scalers take a row buffer from malloc on every call and free it before
// returning (its align_buffer_64 macro): ARGBScale allocates once per resized sample.
// evenfeed links a private copy of Debian's static libyuv in which the calls to malloc
// and free are renamed (objcopy --redefine-sym, loader/CMakeLists.txt) to the two
// functions below. They serve each request from a few blocks kept per thread, so once a
// thread has resized its largest crop, resizing allocates nothing more.
//
// libyuv frees every row buffer on the thread that took it, before the call returns,
// and holds at most two at once; a request that finds every kept block in use falls
// back to the heap (and is counted as a heap allocation).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
void* evenfeed_libyuv_malloc(size_t bytes);
void evenfeed_libyuv_free(void* pointer);
}

namespace evenfeed {

struct LibyuvScratchStats {
  uint64_t requests = 0;          // calls libyuv made to malloc, all threads
  uint64_t heap_allocations = 0;  // of which the heap served (a block grew, or none free)
};

// Process-wide counts since start.
LibyuvScratchStats libyuv_scratch_stats();

}  // namespace evenfeed
