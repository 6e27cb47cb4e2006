// Where to crop a source image: torchvision's RandomResizedCrop (scale 0.08-1, ratio
// 3/4-4/3, ten tries, then the centre fallback) with a horizontal flip for training,
// and Resize(shorter side to size * 256/224) + CenterCrop(size) for evaluation, both
// expressed in source pixels. Draws come from (seed, epoch, sample id) only.
#pragma once

#include <cstdint>

namespace evenfeed {

struct CropBox {
  int x = 0, y = 0, width = 0, height = 0;  // source pixels
  bool flip = false;
};

// Training crop for a width x height image.
CropBox random_resized_crop(int width, int height, uint64_t seed, uint32_t epoch,
                            uint64_t sample_id);
// Evaluation crop: the centred square that Resize(size*256/224) + CenterCrop(size) keeps.
CropBox center_crop(int width, int height);

}  // namespace evenfeed
