// Fuzz target: the loader's JPEG path. The first 6 bytes choose the crop (as shares of
// the image) and the output size; the rest is the JPEG. Write in missing standard
// Huffman tables, probe, rewrite with restart markers as convert does, choose the DCT
// scale, decode only the crop's region (a window of MCUs when the input has the
// restart layout), then resize and store, as Loader does per sample.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "loader/crop.h"
#include "loader/image_transform.h"
#include "loader/jpeg_default_tables.h"
#include "loader/jpeg_probe.h"
#include "loader/jpeg_region_decoder.h"
#include "loader/jpeg_restart.h"
#include "loader/turbojpeg_handle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6) return 0;
  std::span<const std::byte> jpeg(reinterpret_cast<const std::byte*>(data + 6), size - 6);
  static std::vector<std::byte> with_tables;
  if (evenfeed::add_default_huffman_tables(jpeg, with_tables)) jpeg = with_tables;
  static evenfeed::TjHandle probe(evenfeed::TjHandle::Mode::kDecompress);
  static evenfeed::JpegRegionDecoder decoder;
  static std::vector<unsigned char> scratch;
  evenfeed::JpegInfo info;
  if (evenfeed::probe_jpeg(probe, jpeg, /*check_decode=*/false, info, scratch)) return 0;
  if (info.width <= 0 || info.height <= 0 || info.width > 8192 || info.height > 8192) return 0;

  // The crop: x, y, width, height as shares (1/256) of the image; never empty.
  evenfeed::CropBox crop;
  crop.x = info.width * data[0] / 256;
  crop.y = info.height * data[1] / 256;
  crop.width = std::max(1, (info.width - crop.x) * (data[2] + 1) / 256);
  crop.height = std::max(1, (info.height - crop.y) * (data[3] + 1) / 256);
  crop.flip = (data[4] & 1) != 0;
  const int out = 1 + data[5] % 96;
  const int d = evenfeed::dct_denominator(crop, out, out);
  crop = evenfeed::snap_to_dct_grid(crop, d, info.width, info.height);

  // convert's lossless rewrite with restart markers must survive any input the probe
  // accepts (it reports damage, never crashes).
  static evenfeed::JpegTranscoder restarts;
  static std::vector<std::byte> restarted;
  (void)restarts.rewrite(jpeg, true, restarted);

  evenfeed::DecodedRegion region;
  if (decoder.decode(jpeg, crop, out, out, region)) return 0;
  evenfeed::ImageOutput output;
  output.size = out;
  output.layout =
      (data[4] & 2) ? evenfeed::ImageLayout::kFloat32NCHW : evenfeed::ImageLayout::kUint8NHWC;
  static std::vector<uint8_t> resize_scratch;
  std::vector<uint8_t> destination(output.sample_bytes());
  evenfeed::resize_and_store(region, crop.flip, output, resize_scratch, destination.data());
  return 0;
}
