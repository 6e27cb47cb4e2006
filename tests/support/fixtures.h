// Inputs for tests, made on the spot with the real libraries: JPEGs of every kind
// that matters (baseline and progressive; 4:4:4, 4:2:2, 4:2:0, greyscale, CMYK), PNGs,
// image trees and files.
#pragma once

#include <turbojpeg.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace evenfeed::testing {

struct JpegSpec {
  int width = 64;
  int height = 48;
  int subsampling = TJSAMP_420;
  int pixel_format = TJPF_RGB;  // TJPF_GRAY for greyscale, TJPF_CMYK for CMYK
  bool progressive = false;
  int quality = 90;
  uint64_t seed = 1;    // picture content
  bool smooth = false;  // gradients and a disc (photo-like) instead of sharp ramps
};

std::vector<std::byte> make_jpeg(const JpegSpec& spec);
std::vector<std::byte> make_png(int width, int height, uint64_t seed);
// A 16-bit greyscale PNG of one sample value, with no gAMA or sRGB chunk (as most
// tools write them).
std::vector<std::byte> make_png16_grey(int width, int height, uint16_t value);
// `jpeg` without its marker segments of type `marker` before the first scan (0xC4 drops
// the Huffman tables, as a Motion-JPEG frame leaves them out; 0xDB the quantization ones).
std::vector<std::byte> drop_jpeg_segments(const std::vector<std::byte>& jpeg, unsigned char marker);

void write_file(const std::filesystem::path& path, const std::vector<std::byte>& bytes);
void write_text(const std::filesystem::path& path, const std::string& text);
std::vector<std::byte> read_file(const std::filesystem::path& path);

// Short entries with a few lumps (3% of 1,000-7,000 tokens, 0.4% of 9,000): log-normal
// around 40 otherwise, from a fixed hash so the lengths are the same everywhere. At 8
// ranks and 8,192 tokens under quadratic cost the automatic sample cap binds.
std::vector<uint64_t> lumpy_lengths(size_t n);

// Log-normal lengths, `median` x exp(sigma x z), at least 1, from the same fixed hash:
// 3,000 of median 300 and sigma 1.6 are a small corpus of source-file-like lengths.
std::vector<uint64_t> log_normal_file_lengths(size_t n, double median, double sigma);

// An ImageFolder tree: `classes` subfolders with `per_class` JPEGs of varied kinds each.
void make_image_tree(const std::filesystem::path& root, int classes, int per_class);

}  // namespace evenfeed::testing
