// A libjpeg decoder object keeps the last image's quantization and Huffman tables; a
// JPEG missing one must be refused by every reader whatever it read before (the jpeg
// fuzz target found one that decoded, to garbage, only after another image).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "loader/crop.h"
#include "loader/jpeg_default_tables.h"
#include "loader/jpeg_probe.h"
#include "loader/jpeg_region_decoder.h"
#include "loader/jpeg_restart.h"
#include "tests/support/fixtures.h"

namespace evenfeed {
namespace {

bool says(const std::optional<std::string>& problem, const std::string& words) {
  return problem && problem->find(words) != std::string::npos;
}

TEST(JpegTables, AMissingTableIsRefusedWhateverWasReadBefore) {
  const auto good = testing::make_jpeg({.width = 48, .height = 32});
  const auto no_dqt = testing::drop_jpeg_segments(good, 0xDB);
  const auto no_dht = testing::drop_jpeg_segments(good, 0xC4);
  ASSERT_LT(no_dqt.size(), good.size());
  ASSERT_LT(no_dht.size(), good.size());
  const std::string no_quant = "Quantization table 0x00 was not defined";
  const std::string no_huffman = "without Huffman tables";
  EXPECT_FALSE(missing_jpeg_tables(good));
  EXPECT_TRUE(says(missing_jpeg_tables(no_dqt), no_quant));
  EXPECT_TRUE(says(missing_jpeg_tables(no_dht), no_huffman));
  // Progressive and restart-marked JPEGs define what they use.
  EXPECT_FALSE(missing_jpeg_tables(testing::make_jpeg({.progressive = true})));
  JpegTranscoder transcoder;
  std::vector<std::byte> restarted;
  ASSERT_FALSE(transcoder.rewrite(good, true, restarted));
  EXPECT_FALSE(missing_jpeg_tables(restarted));

  // Each reader, right after reading the good image (whose tables it keeps).
  TjHandle probe(TjHandle::Mode::kDecompress);
  JpegInfo info;
  std::vector<unsigned char> scratch;
  ASSERT_FALSE(probe_jpeg(probe, good, true, info, scratch));
  EXPECT_TRUE(says(probe_jpeg(probe, no_dqt, true, info, scratch), no_quant));
  JpegRegionDecoder decoder;
  DecodedRegion region;
  const CropBox crop{.x = 0, .y = 0, .width = 48, .height = 32};
  for (const auto* bad : {&no_dqt, &no_dht}) {
    ASSERT_FALSE(decoder.decode(good, crop, 16, 16, region));
    EXPECT_TRUE(decoder.decode(*bad, crop, 16, 16, region)) << "decoded with stale tables";
    ASSERT_FALSE(transcoder.rewrite(good, true, restarted));
    EXPECT_TRUE(transcoder.rewrite(*bad, true, restarted)) << "rewritten with stale tables";
  }
}

// The pixels the region decoder gives for the whole of `jpeg` (w x h, RGBX rows).
std::vector<uint8_t> decode_whole(JpegRegionDecoder& decoder, const std::vector<std::byte>& jpeg,
                                  int w, int h) {
  DecodedRegion region;
  if (decoder.decode(jpeg, CropBox{.x = 0, .y = 0, .width = w, .height = h}, w, h, region))
    return {};
  std::vector<uint8_t> pixels;
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = region.pixels + (y + static_cast<int>(region.y)) * region.stride;
    pixels.insert(pixels.end(), row, row + static_cast<size_t>(w) * 4);
  }
  return pixels;
}

TEST(JpegTables, AMotionJpegFrameGetsTheStandardHuffmanTables) {
  // TurboJPEG writes the standard tables (it optimises none unless asked), so the same
  // file without its DHT segments, the defaults written back in, decodes to the same
  // pixels: with a fresh decoder and with one that has just read other tables.
  for (int format : {TJPF_RGB, TJPF_GRAY}) {
    SCOPED_TRACE(format);
    const auto good = testing::make_jpeg({.width = 48, .height = 32, .pixel_format = format});
    const auto mjpeg = testing::drop_jpeg_segments(good, 0xC4);
    std::vector<std::byte> repaired, optimised;
    ASSERT_TRUE(add_default_huffman_tables(mjpeg, repaired));
    EXPECT_FALSE(missing_jpeg_tables(repaired));
    // All four standard tables, as libjpeg fills its empty slots (greyscale uses two).
    EXPECT_EQ(repaired.size() - mjpeg.size(), 4u + 2 * (17 + 12) + 2 * (17 + 162));
    JpegTranscoder transcoder;  // its rewrite optimises the tables: other tables
    ASSERT_FALSE(transcoder.rewrite(good, true, optimised));

    JpegRegionDecoder fresh, used;
    const auto expected = decode_whole(fresh, good, 48, 32);
    ASSERT_FALSE(expected.empty());
    ASSERT_FALSE(decode_whole(used, optimised, 48, 32).empty());
    EXPECT_EQ(decode_whole(used, repaired, 48, 32), expected);
  }
}

TEST(JpegTables, OnlyMissingStandardSlotsAreFilled) {
  const auto good = testing::make_jpeg({.width = 16, .height = 16});
  std::vector<std::byte> out;
  EXPECT_FALSE(add_default_huffman_tables(good, out));  // nothing missing
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(
      add_default_huffman_tables(testing::drop_jpeg_segments(good, 0xDB), out));  // DQT only
  // A scan naming DC table 2, which has no standard default, stays refused.
  auto slot2 = testing::drop_jpeg_segments(good, 0xC4);
  size_t i = 2;  // to the SOS segment: FF DA, length, Ns, then (Cs, Td << 4 | Ta) each
  while (slot2[i + 1] != std::byte{0xDA})
    i += 2 + ((std::to_integer<size_t>(slot2[i + 2]) << 8) | std::to_integer<size_t>(slot2[i + 3]));
  slot2[i + 6] = std::byte{0x20};  // first component: Td = 2, Ta = 0
  EXPECT_FALSE(add_default_huffman_tables(slot2, out));
  EXPECT_TRUE(says(missing_jpeg_tables(slot2), "without Huffman tables"));
}

}  // namespace
}  // namespace evenfeed
