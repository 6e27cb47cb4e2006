// Restart-indexed JPEGs: convert's lossless rewrite keeps every pixel and gives every
// MCU its own segment; a window of MCUs decodes to exactly the pixels the whole image
// has there; anything else (plain, progressive, truncated, damaged) is decoded whole or
// reported, never misread.
#include "loader/jpeg_restart.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <vector>

#include "core/philox.h"
#include "loader/jpeg_region_decoder.h"
#include "tests/support/fixtures.h"

namespace evenfeed {
namespace {

std::vector<unsigned char> decode_pixels(std::span<const std::byte> jpeg, int& width, int& height) {
  tjhandle h = tjInitDecompress();
  int subsampling = 0, colorspace = 0;
  EXPECT_EQ(tjDecompressHeader3(h, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(),
                                &width, &height, &subsampling, &colorspace),
            0);
  // TurboJPEG has no CMYK -> RGB: compare inks as they are.
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  const int format = cmyk ? TJPF_CMYK : TJPF_RGB;
  std::vector<unsigned char> out(static_cast<size_t>(width) * height * tjPixelSize[format]);
  EXPECT_EQ(tjDecompress2(h, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(),
                          out.data(), width, 0, height, format, 0),
            0)
      << tjGetErrorStr2(h);
  tjDestroy(h);
  return out;
}

std::vector<std::byte> with_restarts(const std::vector<std::byte>& jpeg) {
  JpegTranscoder writer;
  std::vector<std::byte> out;
  EXPECT_FALSE(writer.rewrite(jpeg, true, out).has_value());
  return out;
}

// Odd sizes (partial MCUs at the right and bottom), every subsampling, greyscale,
// CMYK and progressive sources.
const testing::JpegSpec kSpecs[] = {
    {.width = 400, .height = 350, .smooth = true},
    {.width = 333, .height = 211, .subsampling = TJSAMP_422},
    {.width = 97, .height = 61, .subsampling = TJSAMP_444},
    {.width = 130, .height = 90, .subsampling = TJSAMP_GRAY, .pixel_format = TJPF_GRAY},
    {.width = 120, .height = 100, .subsampling = TJSAMP_444, .pixel_format = TJPF_CMYK},
    {.width = 250, .height = 190, .progressive = true, .smooth = true},
    {.width = 17, .height = 9},
};

TEST(JpegRestart, RewriteKeepsEveryPixelAndGivesEveryMcuItsOwnSegment) {
  for (const testing::JpegSpec& spec : kSpecs) {
    SCOPED_TRACE(::testing::Message()
                 << spec.width << "x" << spec.height << " sampling " << spec.subsampling
                 << (spec.progressive ? " progressive" : ""));
    const auto source = testing::make_jpeg(spec);
    const auto rewritten = with_restarts(source);
    int w0 = 0, h0 = 0, w1 = 0, h1 = 0;
    EXPECT_EQ(decode_pixels(rewritten, w1, h1), decode_pixels(source, w0, h0));
    EXPECT_EQ(std::make_pair(w1, h1), std::make_pair(w0, h0));

    McuLayout layout;
    EXPECT_FALSE(read_mcu_layout(source, layout)) << "the source has no restart markers";
    ASSERT_TRUE(read_mcu_layout(rewritten, layout));
    EXPECT_EQ(layout.width, spec.width);
    EXPECT_EQ(layout.height, spec.height);
    EXPECT_EQ(layout.segment_columns, 1);
    const int mcu_w = spec.subsampling == TJSAMP_GRAY || spec.subsampling == TJSAMP_444 ? 8 : 16;
    const int mcu_h = spec.subsampling == TJSAMP_420 ? 16 : 8;
    EXPECT_EQ(layout.mcu_width, mcu_w);
    EXPECT_EQ(layout.mcu_height, mcu_h);
    EXPECT_EQ(layout.begin.size(), static_cast<size_t>((spec.width + mcu_w - 1) / mcu_w) *
                                       static_cast<size_t>((spec.height + mcu_h - 1) / mcu_h));
  }
}

// The crop's pixels from a window of MCUs equal those from the whole image (the
// source without restart markers goes the whole-image way): the margin MCU keeps
// upsampling at the crop's edges identical. Many crops, every DCT scale.
TEST(JpegRestart, WindowDecodesTheCropExactlyAsTheWholeImageDoes) {
  JpegRegionDecoder whole_decoder, window_decoder;
  for (const testing::JpegSpec& spec : kSpecs) {
    const auto source = testing::make_jpeg(spec);
    const auto rewritten = with_restarts(source);
    for (uint64_t k = 0; k < 40; ++k) {
      CounterRng rng(17, RngStream::kSynth, 3, k);
      CropBox crop;
      crop.width = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(spec.width)));
      crop.height = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(spec.height)));
      crop.x = static_cast<int>(rng.below(static_cast<uint64_t>(spec.width - crop.width + 1)));
      crop.y = static_cast<int>(rng.below(static_cast<uint64_t>(spec.height - crop.height + 1)));
      const int out = 1 + static_cast<int>(rng.below(64));
      const int d = dct_denominator(crop, out, out);
      crop = snap_to_dct_grid(crop, d, spec.width, spec.height);
      SCOPED_TRACE(::testing::Message()
                   << spec.width << "x" << spec.height << " crop " << crop.x << "," << crop.y << " "
                   << crop.width << "x" << crop.height << " out " << out);
      DecodedRegion a, b;
      ASSERT_FALSE(whole_decoder.decode(source, crop, out, out, a).has_value());
      ASSERT_FALSE(window_decoder.decode(rewritten, crop, out, out, b).has_value());
      ASSERT_EQ(a.scale_denominator, b.scale_denominator);
      ASSERT_EQ(a.crop_width, b.crop_width);
      ASSERT_EQ(a.crop_height, b.crop_height);
      const int width = static_cast<int>(a.crop_width), height = static_cast<int>(a.crop_height);
      for (int y = 0; y < height; ++y) {
        const uint8_t* row_a =
            a.pixels + static_cast<size_t>(a.y + y) * a.stride + static_cast<size_t>(a.x) * 4;
        const uint8_t* row_b =
            b.pixels + static_cast<size_t>(b.y + y) * b.stride + static_cast<size_t>(b.x) * 4;
        ASSERT_TRUE(std::equal(row_a, row_a + static_cast<size_t>(width) * 4, row_b))
            << "row " << y;
      }
    }
  }
}

// Metadata survives the rewrite: an EXIF (APP1) segment and a comment are copied as
// they were, and the JFIF header libjpeg writes itself is not doubled.
TEST(JpegRestart, RewriteKeepsApplicationMarkersAndComments) {
  auto jpeg = testing::make_jpeg({.width = 64, .height = 48});
  auto segment = [](uint8_t marker, const std::string& body) {
    std::vector<std::byte> out = {std::byte{0xFF}, std::byte{marker},
                                  std::byte(((body.size() + 2) >> 8) & 0xFF),
                                  std::byte((body.size() + 2) & 0xFF)};
    for (char c : body) out.push_back(std::byte(static_cast<unsigned char>(c)));
    return out;
  };
  static constexpr char kExif[] = "Exif\0\0orientation=6;camera=test";  // NULs inside
  const auto exif = segment(0xE1, std::string(kExif, sizeof(kExif) - 1));
  const auto comment = segment(0xFE, "made by evenfeed's tests");
  jpeg.insert(jpeg.begin() + 2, comment.begin(), comment.end());
  jpeg.insert(jpeg.begin() + 2, exif.begin(), exif.end());
  const auto rewritten = with_restarts(jpeg);
  auto count = [&](const std::vector<std::byte>& needle) {
    int n = 0;
    for (auto at = rewritten.begin();
         (at = std::search(at, rewritten.end(), needle.begin(), needle.end())) != rewritten.end();
         ++at)
      ++n;
    return n;
  };
  EXPECT_EQ(count(exif), 1);
  EXPECT_EQ(count(comment), 1);
  const std::string jfif = "JFIF";
  std::vector<std::byte> jfif_bytes;
  for (char c : jfif) jfif_bytes.push_back(std::byte(static_cast<unsigned char>(c)));
  EXPECT_EQ(count(jfif_bytes), 1);
}

TEST(JpegRestart, WindowHoldsOnlyTheCropsMcusAndAMargin) {
  const auto rewritten = with_restarts(testing::make_jpeg({.width = 400, .height = 352}));
  McuLayout layout;
  ASSERT_TRUE(read_mcu_layout(rewritten, layout));
  const McuWindow w = window_for_crop(layout, {.x = 160, .y = 96, .width = 64, .height = 64});
  EXPECT_EQ(w.column0, 9);   // 160 / 16 = 10, less the margin
  EXPECT_EQ(w.column1, 15);  // (160 + 64) / 16 = 14, plus the margin
  EXPECT_EQ(w.row0, 5);
  EXPECT_EQ(w.row1, 11);
  std::vector<std::byte> window;
  cut_mcu_window(rewritten, layout, w, window);
  EXPECT_LT(window.size(), rewritten.size() / 3);
  McuLayout inner;
  ASSERT_TRUE(read_mcu_layout(window, inner)) << "a window is a restart-layout JPEG itself";
  EXPECT_EQ(inner.width, 6 * 16);
  EXPECT_EQ(inner.height, 6 * 16);
  int width = 0, height = 0;
  EXPECT_EQ(decode_pixels(window, width, height).size(), 96u * 96 * 3);
}

TEST(JpegRestart, TruncatedOrDamagedDataIsReportedNotMisread) {
  const auto rewritten = with_restarts(testing::make_jpeg({.width = 320, .height = 240}));
  McuLayout layout;
  auto truncated = rewritten;
  truncated.resize(rewritten.size() * 2 / 3);
  EXPECT_FALSE(read_mcu_layout(truncated, layout)) << "no EOI: decoded whole, and reported";
  JpegRegionDecoder decoder;
  DecodedRegion region;
  const CropBox bottom{.x = 0, .y = 200, .width = 320, .height = 40};
  auto problem = decoder.decode(truncated, bottom, 32, 32, region);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("truncated JPEG"), std::string::npos) << *problem;

  // Garbage inside the window's segments: an error, and the decoder still works after.
  ASSERT_TRUE(read_mcu_layout(rewritten, layout));
  auto damaged = rewritten;
  const size_t middle = layout.begin[layout.begin.size() / 2];
  for (size_t k = middle; k < middle + 200 && k < damaged.size() - 2; ++k)
    damaged[k] = std::byte{static_cast<unsigned char>(k * 151 % 255)};
  const CropBox centre{.x = 100, .y = 80, .width = 120, .height = 80};
  EXPECT_TRUE(decoder.decode(damaged, centre, 32, 32, region).has_value());
  EXPECT_FALSE(decoder.decode(rewritten, centre, 32, 32, region).has_value());
}

}  // namespace
}  // namespace evenfeed
