// A libjpeg decoder object keeps the last image's quantization and Huffman tables; a
// JPEG missing one must be refused by every reader whatever it read before (the jpeg
// fuzz target found one that decoded, to garbage, only after another image).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "loader/crop.h"
#include "loader/jpeg_probe.h"
#include "loader/jpeg_region_decoder.h"
#include "loader/jpeg_restart.h"
#include "tests/support/fixtures.h"

namespace evenfeed {
namespace {

// `jpeg` without its marker segments of type `marker` before the first scan.
std::vector<std::byte> drop_segments(const std::vector<std::byte>& jpeg, unsigned char marker) {
  std::vector<std::byte> out(jpeg.begin(), jpeg.begin() + 2);
  size_t i = 2;
  while (i + 4 <= jpeg.size() && jpeg[i + 1] != std::byte{0xDA}) {
    const size_t length =
        (std::to_integer<size_t>(jpeg[i + 2]) << 8) | std::to_integer<size_t>(jpeg[i + 3]);
    if (jpeg[i + 1] != std::byte{marker})
      out.insert(out.end(), jpeg.begin() + static_cast<long>(i),
                 jpeg.begin() + static_cast<long>(i + 2 + length));
    i += 2 + length;
  }
  out.insert(out.end(), jpeg.begin() + static_cast<long>(i), jpeg.end());
  return out;
}

bool says(const std::optional<std::string>& problem, const std::string& words) {
  return problem && problem->find(words) != std::string::npos;
}

TEST(JpegTables, AMissingTableIsRefusedWhateverWasReadBefore) {
  const auto good = testing::make_jpeg({.width = 48, .height = 32});
  const auto no_dqt = drop_segments(good, 0xDB);
  const auto no_dht = drop_segments(good, 0xC4);
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

}  // namespace
}  // namespace evenfeed
