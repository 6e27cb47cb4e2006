#include "loader/crop.h"

#include <algorithm>
#include <cmath>

#include "core/philox.h"

namespace evenfeed {

CropBox random_resized_crop(int width, int height, uint64_t seed, uint32_t epoch,
                            uint64_t sample_id) {
  CounterRng rng(seed, RngStream::kAugment, epoch, sample_id);
  const double area = static_cast<double>(width) * height;
  const double log_lo = std::log(3.0 / 4.0), log_hi = std::log(4.0 / 3.0);
  CropBox box;
  bool found = false;
  for (int attempt = 0; attempt < 10 && !found; ++attempt) {
    const double target = area * rng.uniform(0.08, 1.0);
    const double ratio = std::exp(rng.uniform(log_lo, log_hi));
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      box = {static_cast<int>(rng.below(static_cast<uint64_t>(width - w + 1))),
             static_cast<int>(rng.below(static_cast<uint64_t>(height - h + 1))), w, h};
      found = true;
    }
  }
  if (!found) {  // torchvision's fallback: the centre crop at the nearest allowed ratio
    const double in_ratio = static_cast<double>(width) / height;
    int w = width, h = height;
    if (in_ratio < 3.0 / 4.0) h = static_cast<int>(std::lround(w / (3.0 / 4.0)));
    if (in_ratio > 4.0 / 3.0) w = static_cast<int>(std::lround(h * (4.0 / 3.0)));
    box = {(width - w) / 2, (height - h) / 2, w, h};
  }
  box.flip = rng.uniform() < 0.5;
  return box;
}

CropBox center_crop(int width, int height) {
  const int side =
      std::max(1, static_cast<int>(std::lround(std::min(width, height) * 224.0 / 256.0)));
  return {(width - side) / 2, (height - side) / 2, side, side, false};
}

}  // namespace evenfeed
