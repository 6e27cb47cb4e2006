// `evenfeed synth`: deterministic synthetic inputs for the demo and the tests, so no
// data is downloaded. Images: an ImageFolder tree of JPEGs whose class decides the hue
// and shape of a figure on a varied background, in varied sizes, aspect ratios and
// JPEG encodings (baseline and progressive; 4:2:0, 4:2:2, 4:4:4, greyscale). Tokens:
// JSON lines with long-tailed lengths and a label carried by class-specific ids.
#pragma once

#include <cstdint>
#include <filesystem>

namespace evenfeed {

struct SynthImagesOptions {
  uint64_t count = 1000;
  int classes = 10;
  uint64_t seed = 0;
  int min_size = 96;  // shorter side range, pixels
  int max_size = 512;
  int threads = 0;
  bool force = false;
};

struct SynthTokensOptions {
  uint64_t count = 1000;
  int classes = 4;
  uint32_t vocab_size = 1000;
  uint64_t seed = 0;
  double median_length = 128;  // log-normal body; 1% of documents are 20-100x the median
  uint64_t max_length = 32768;
  bool force = false;
};

// Writes OUT/NN_shape/img_XXXXXXX.jpg atomically; returns the number of images.
uint64_t synth_images(const std::filesystem::path& out, const SynthImagesOptions& options);
// Writes the JSON-lines file OUT atomically; returns the number of documents.
uint64_t synth_tokens(const std::filesystem::path& out, const SynthTokensOptions& options);

}  // namespace evenfeed
