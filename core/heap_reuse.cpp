#include "core/heap_reuse.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc's

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace evenfeed {

void keep_freed_heap_for_reuse() {
#if defined(__GLIBC__)
  // 32 MiB is the ceiling glibc's own adjustment raises the mmap threshold to on 64-bit
  // systems (DEFAULT_MMAP_THRESHOLD_MAX): set at once, not as blocks happen to be freed.
  // Setting either value also stops glibc from adjusting them itself.
  constexpr int kMmapThreshold = 32 << 20;
  constexpr int kTrimThreshold = 512 << 20;
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
#endif
}

}  // namespace evenfeed
