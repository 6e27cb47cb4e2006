// libjpeg's per-image memory served from a kept arena (loader/jpeg_image_arena.h):
// once a decoder has seen its largest image it allocates nothing more, and what it
// decodes is the same as a fresh decoder's (whose arena starts empty and grows on
// every new size), for every JPEG kind, progressive and CMYK included, and after a
// corrupt image has aborted a decode half-way. Progressive images, whose whole-image
// coefficient arrays the arena holds, decode exactly as TurboJPEG (libjpeg's own
// memory manager) decodes them.
#include <gtest/gtest.h>

#include <turbojpeg.h>

#include <cstring>
#include <vector>

#include "loader/jpeg_region_decoder.h"
#include "tests/support/fixtures.h"

namespace evenfeed {
namespace {

std::vector<std::vector<std::byte>> jpegs_of_every_kind() {
  std::vector<std::vector<std::byte>> jpegs;
  uint64_t seed = 1;
  for (int sampling : {TJSAMP_420, TJSAMP_444, TJSAMP_422}) {
    for (bool progressive : {false, true}) {
      testing::JpegSpec spec;
      spec.width = 200 + 37 * static_cast<int>(seed);
      spec.height = 150 + 23 * static_cast<int>(seed);
      spec.subsampling = sampling;
      spec.progressive = progressive;
      spec.seed = seed++;
      jpegs.push_back(testing::make_jpeg(spec));
    }
  }
  for (int format : {TJPF_GRAY, TJPF_CMYK}) {
    testing::JpegSpec spec;
    spec.width = 320;
    spec.height = 240;
    spec.pixel_format = format;
    spec.subsampling = format == TJPF_GRAY ? TJSAMP_GRAY : TJSAMP_444;
    spec.seed = seed++;
    jpegs.push_back(testing::make_jpeg(spec));
  }
  return jpegs;
}

// The decoded crop's rows, copied out of the decoder's buffer.
std::vector<uint8_t> decode(JpegRegionDecoder& decoder, const std::vector<std::byte>& jpeg,
                            const CropBox& crop) {
  DecodedRegion region;
  auto problem = decoder.decode(jpeg, crop, 64, 64, region);
  EXPECT_FALSE(problem) << *problem;
  if (problem) return {};
  std::vector<uint8_t> rows;
  for (int r = 0; r < region.height; ++r) {
    const uint8_t* row = region.pixels + static_cast<size_t>(r) * region.stride;
    rows.insert(rows.end(), row, row + static_cast<size_t>(region.width) * 4);
  }
  return rows;
}

TEST(JpegImageArena, StopsGrowingOnceTheLargestImageIsSeen) {
  const auto jpegs = jpegs_of_every_kind();
  const CropBox crop{20, 10, 120, 100, false};
  JpegRegionDecoder decoder;
  for (const auto& jpeg : jpegs) decode(decoder, jpeg, crop);
  const uint64_t grown = decoder.memory_growths();
  EXPECT_GE(grown, 1u);  // it did start empty
  for (int pass = 0; pass < 3; ++pass) {
    for (const auto& jpeg : jpegs) decode(decoder, jpeg, crop);
  }
  EXPECT_EQ(decoder.memory_growths(), grown) << "a decoder that has seen every image grew";
}

TEST(JpegImageArena, ReusedMemoryDecodesExactlyAsFreshMemory) {
  const auto jpegs = jpegs_of_every_kind();
  JpegRegionDecoder reused;
  for (const auto& jpeg : jpegs) decode(reused, jpeg, {0, 0, 180, 140, false});  // warm up
  for (const CropBox& crop : {CropBox{0, 0, 180, 140, false}, CropBox{33, 17, 90, 77, false}}) {
    for (size_t k = 0; k < jpegs.size(); ++k) {
      JpegRegionDecoder fresh;
      EXPECT_EQ(decode(reused, jpegs[k], crop), decode(fresh, jpegs[k], crop)) << "image " << k;
    }
  }
}

TEST(JpegImageArena, ACorruptImageLeavesTheDecoderUsable) {
  const auto jpegs = jpegs_of_every_kind();
  const CropBox crop{10, 10, 100, 80, false};
  JpegRegionDecoder decoder, fresh;
  const std::vector<uint8_t> expected = decode(fresh, jpegs[0], crop);
  std::vector<std::byte> truncated(jpegs[0].begin(), jpegs[0].begin() + jpegs[0].size() / 3);
  DecodedRegion region;
  EXPECT_TRUE(decoder.decode(truncated, {10, 100, 100, 40, false}, 64, 64, region));
  EXPECT_EQ(decode(decoder, jpegs[0], crop), expected);
}

// The whole image at 1/denominator scale through TurboJPEG, RGBX rows.
std::vector<uint8_t> turbojpeg_decode(const std::vector<std::byte>& jpeg, int denominator) {
  tjhandle h = tjInitDecompress();
  const auto* data = reinterpret_cast<const unsigned char*>(jpeg.data());
  int w = 0, hh = 0, ss = 0, cs = 0;
  EXPECT_EQ(tjDecompressHeader3(h, data, jpeg.size(), &w, &hh, &ss, &cs), 0);
  w = (w + denominator - 1) / denominator;
  hh = (hh + denominator - 1) / denominator;
  std::vector<uint8_t> rgbx(static_cast<size_t>(w) * hh * 4);
  EXPECT_EQ(tjDecompress2(h, data, jpeg.size(), rgbx.data(), w, 0, hh, TJPF_RGBX, 0), 0)
      << tjGetErrorStr2(h);
  tjDestroy(h);
  return rgbx;
}

TEST(JpegImageArena, ProgressiveImagesDecodeAsLibjpegsOwnMemoryDoes) {
  const auto jpegs = jpegs_of_every_kind();
  JpegRegionDecoder decoder;
  for (const auto& jpeg : jpegs) decode(decoder, jpeg, {0, 0, 180, 140, false});  // dirty memory
  testing::JpegSpec big;
  big.width = 720;
  big.height = 560;
  big.progressive = true;
  big.smooth = true;
  const auto progressive = testing::make_jpeg(big);
  for (int denominator : {1, 2, 4}) {
    const CropBox whole{0, 0, big.width, big.height, false};
    DecodedRegion region;
    ASSERT_FALSE(decoder.decode(progressive, whole, big.width / denominator,
                                big.height / denominator, region));
    ASSERT_EQ(region.scale_denominator, denominator);
    const std::vector<uint8_t> expected = turbojpeg_decode(progressive, denominator);
    ASSERT_EQ(expected.size(), static_cast<size_t>(region.width) * region.height * 4);
    for (int r = 0; r < region.height; ++r) {
      const uint8_t* row = region.pixels + static_cast<size_t>(r) * region.stride;
      ASSERT_EQ(std::memcmp(row, expected.data() + static_cast<size_t>(r) * region.width * 4,
                            static_cast<size_t>(region.width) * 4),
                0)
          << "row " << r << " at 1/" << denominator;
    }
  }
}

}  // namespace
}  // namespace evenfeed
