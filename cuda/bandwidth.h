// Host-to-device copy bandwidth, pinned against pageable, as `evenfeed doctor` and
// `evenfeed bench h2d` report it: the figure that says whether the feeder can keep up.
#pragma once

#include <cstddef>

namespace evenfeed {

struct H2dBandwidth {
  double pinned_gbps = 0;    // GB/s (1e9 bytes) from page-locked memory
  double pageable_gbps = 0;  // from ordinary malloc'd memory
};

// Copies `bytes` to `device` `repeats` times from each kind of memory, timed with CUDA
// events after one warm-up copy. Throws Error when no GPU is visible.
H2dBandwidth measure_h2d(int device, size_t bytes, int repeats);

}  // namespace evenfeed
