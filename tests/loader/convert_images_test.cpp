// convert images: a round trip is byte-exact, every bad input a user meets is named,
// and a failed conversion leaves nothing behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <span>

#include "core/error.h"
#include "loader/convert.h"
#include "loader/dataset.h"
#include "loader/jpeg_encode.h"
#include "loader/jpeg_probe.h"
#include "loader/jpeg_restart.h"
#include "loader/verify.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;
using testing::JpegSpec;

ConvertOptions quiet_options() {
  ConvertOptions o;
  o.threads = 2;
  return o;
}

std::vector<std::byte> read_file_for(const fs::path& root, const Dataset& d, uint64_t id) {
  return testing::read_file(root / std::string(d.index().source_name(id)));
}

// Full decode in the image's own colour space, for comparing pixels.
std::vector<unsigned char> decode_pixels(std::span<const std::byte> jpeg) {
  tjhandle h = tjInitDecompress();
  int w = 0, hh = 0, ss = 0, cs = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(jpeg.data());
  tjDecompressHeader3(h, data, jpeg.size(), &w, &hh, &ss, &cs);
  const int format = native_pixel_format(cs);
  std::vector<unsigned char> out(static_cast<size_t>(w) * hh * tjPixelSize[format]);
  tjDecompress2(h, data, jpeg.size(), out.data(), w, 0, hh, format, 0);
  tjDestroy(h);
  return out;
}

// Every record's payload decodes to its source's pixels; without restart markers it is
// the source file itself (progressive sources aside), with them it has the restart
// layout. Label and size agree with the index.
void expect_round_trip(const fs::path& src_root, const fs::path& out, bool restart_markers) {
  Dataset dataset(out);
  Dataset::ReadSession session(dataset);
  TjHandle decompressor(TjHandle::Mode::kDecompress);
  std::vector<unsigned char> scratch;
  for (uint64_t id = 0; id < dataset.size(); ++id) {
    RecordView view = dataset.read(session, id, /*verify_checksum=*/true);
    const auto source = read_file_for(src_root, dataset, id);
    JpegInfo source_info;
    ASSERT_FALSE(probe_jpeg(decompressor, source, false, source_info, scratch).has_value());
    McuLayout layout;
    EXPECT_EQ(read_mcu_layout(view.payload, layout), restart_markers) << dataset.describe(id);
    if (source_info.progressive || restart_markers) {
      // Rewritten losslessly: other bytes, identical pixels.
      EXPECT_EQ(decode_pixels(view.payload), decode_pixels(source)) << dataset.describe(id);
    } else {
      ASSERT_EQ(view.payload.size(), source.size()) << dataset.describe(id);
      EXPECT_TRUE(std::equal(view.payload.begin(), view.payload.end(), source.begin()))
          << dataset.describe(id);
    }
    JpegInfo info;
    ASSERT_FALSE(probe_jpeg(decompressor, view.payload, true, info, scratch).has_value());
    EXPECT_EQ(dataset.index().widths()[id], static_cast<uint32_t>(info.width));
    EXPECT_EQ(dataset.index().heights()[id], static_cast<uint32_t>(info.height));
    EXPECT_EQ(dataset.index().lengths()[id], static_cast<uint64_t>(info.width) * info.height);
  }
}

TEST(ConvertImages, FolderTreeRoundTripsByteExactAcrossShards) {
  testing::TempDir tmp;
  testing::make_image_tree(tmp / "src", 3, 7);
  ConvertOptions o = quiet_options();
  o.shards = 3;
  ConvertReport r = convert_images(tmp / "src", tmp / "out", o);
  EXPECT_EQ(r.samples, 21u);
  EXPECT_EQ(r.shards, 3u);
  EXPECT_TRUE(r.skipped.empty());
  Dataset d(tmp / "out");
  EXPECT_EQ(d.manifest().classes, (std::vector<std::string>{"class0", "class1", "class2"}));
  EXPECT_EQ(d.manifest().shards[1].first_id, 7u);
  EXPECT_EQ(d.shard_of(6), 0u);
  EXPECT_EQ(d.shard_of(7), 1u);
  EXPECT_EQ(d.shard_of(20), 2u);
  for (uint64_t id = 0; id < d.size(); ++id) {
    const std::string source(d.index().source_name(id));
    EXPECT_EQ(d.index().labels()[id], source[5] - '0') << source;  // "classK/..."
  }
  expect_round_trip(tmp / "src", tmp / "out", true);
  EXPECT_TRUE(verify_dataset(tmp / "out", {.decode = true, .threads = 2}).ok());
  EXPECT_EQ(r.with_restart_markers, 21u);
  o.restart_markers = false;
  convert_images(tmp / "src", tmp / "plain", o);
  expect_round_trip(tmp / "src", tmp / "plain", false);
}

TEST(ConvertImages, KeepProgressiveStoresEveryFileByteExact) {
  testing::TempDir tmp;
  testing::write_file(tmp / "src" / "c" / "p.jpg",
                      testing::make_jpeg({.width = 90, .height = 70, .progressive = true}));
  ConvertOptions o = quiet_options();
  o.baseline = false;
  ConvertReport r = convert_images(tmp / "src", tmp / "out", o);
  EXPECT_EQ(r.rewritten_as_baseline, 0u);
  Dataset d(tmp / "out");
  Dataset::ReadSession session(d);
  auto stored = d.read(session, 0).payload;
  auto source = testing::read_file(tmp / "src" / "c" / "p.jpg");
  EXPECT_TRUE(std::equal(stored.begin(), stored.end(), source.begin(), source.end()));
}

TEST(ConvertImages, MotionJpegFramesAreStoredWithTheStandardHuffmanTables) {
  // A frame without Huffman tables decodes with the standard ones in a fresh decoder
  // (as PIL and torchvision decode it); stored, it must give the same pixels.
  testing::TempDir tmp;
  const auto good = testing::make_jpeg({.width = 70, .height = 50});
  const auto mjpeg = testing::drop_jpeg_segments(good, 0xC4);
  ASSERT_LT(mjpeg.size(), good.size());
  testing::write_file(tmp / "src" / "c" / "frame.jpg", mjpeg);
  for (bool restart_markers : {true, false}) {
    SCOPED_TRACE(restart_markers);
    ConvertOptions o = quiet_options();
    o.restart_markers = restart_markers;
    o.force = true;
    ConvertReport r = convert_images(tmp / "src", tmp / "out", o);
    EXPECT_EQ(r.samples, 1u);
    EXPECT_EQ(r.with_default_huffman_tables, 1u);
    Dataset d(tmp / "out");
    Dataset::ReadSession session(d);
    const auto stored = d.read(session, 0, true).payload;
    EXPECT_FALSE(missing_jpeg_tables(stored));
    EXPECT_EQ(decode_pixels(stored), decode_pixels(good));
    EXPECT_EQ(decode_pixels(mjpeg), decode_pixels(good));
    EXPECT_TRUE(verify_dataset(tmp / "out", {.decode = true, .threads = 1}).ok());
  }
}

TEST(ConvertImages, SameOutputWhateverTheThreadCount) {
  testing::TempDir tmp;
  testing::make_image_tree(tmp / "src", 2, 9);
  ConvertOptions one = quiet_options(), two = quiet_options();
  one.threads = 1;
  convert_images(tmp / "src", tmp / "a", one);
  convert_images(tmp / "src", tmp / "b", two);
  EXPECT_EQ(testing::read_file(tmp / "a" / "index.bin"),
            testing::read_file(tmp / "b" / "index.bin"));
  Dataset a(tmp / "a"), b(tmp / "b");
  EXPECT_EQ(a.manifest().shards[0].checksum, b.manifest().shards[0].checksum);
}

TEST(ConvertImages, ListFileWithRelativePathsSpacesAndLabels) {
  testing::TempDir tmp;
  testing::write_file(tmp / "imgs" / "a b.jpg", testing::make_jpeg({.width = 30, .height = 20}));
  testing::write_file(tmp / "imgs" / "c.jpg",
                      testing::make_jpeg({.width = 8, .height = 9, .progressive = true}));
  testing::write_text(tmp / "list.txt", "# comment\nimgs/a b.jpg 4\n\nimgs/c.jpg\t0\n");
  ConvertReport r = convert_images(tmp / "list.txt", tmp / "out", quiet_options());
  EXPECT_EQ(r.source_format, "imagelist");
  Dataset d(tmp / "out");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.index().source_name(0), "imgs/a b.jpg");
  EXPECT_EQ(d.index().labels()[0], 4);
  EXPECT_EQ(d.index().labels()[1], 0);
  EXPECT_EQ(d.index().widths()[0], 30u);
  EXPECT_TRUE(d.manifest().classes.empty());
}

// A list saved by a Windows editor may begin with a UTF-8 byte-order mark: it is not
// part of the first path.
TEST(ConvertImages, ListFileMayBeginWithAByteOrderMark) {
  testing::TempDir tmp;
  testing::write_file(tmp / "imgs" / "c.jpg", testing::make_jpeg({.width = 8, .height = 9}));
  testing::write_text(tmp / "list.txt",
                      "\xEF\xBB\xBF"
                      "imgs/c.jpg 2\r\n");
  convert_images(tmp / "list.txt", tmp / "out", quiet_options());
  Dataset d(tmp / "out");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.index().source_name(0), "imgs/c.jpg");
  EXPECT_EQ(d.index().labels()[0], 2);
}

TEST(ConvertImages, MalformedListLineIsNamed) {
  testing::TempDir tmp;
  testing::write_text(tmp / "list.txt", "a.jpg 1\nb.jpg cat\n");
  try {
    convert_images(tmp / "list.txt", tmp / "out", quiet_options());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("list.txt:2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

// A tree with one good image and each kind of bad input.
std::map<std::string, std::string> make_bad_tree(const fs::path& root) {
  auto good = testing::make_jpeg({.width = 120, .height = 90});
  testing::write_file(root / "c" / "0good.jpg", good);
  auto truncated = good;
  truncated.resize(good.size() / 2);
  testing::write_file(root / "c" / "truncated.jpg", truncated);
  auto damaged = good;
  for (size_t k = good.size() / 3; k < good.size() / 3 + 64; ++k)
    damaged[k] = std::byte{static_cast<unsigned char>(k * 151)};
  testing::write_file(root / "c" / "damaged.jpg", damaged);
  testing::write_file(root / "c" / "empty.jpg", {});
  // A 12-bit JPEG (valid, but not for an 8-bit decoder): the frame header's precision.
  auto twelve_bit = good;
  for (size_t k = 0; k + 4 < twelve_bit.size(); ++k) {
    if (twelve_bit[k] == std::byte{0xFF} && twelve_bit[k + 1] == std::byte{0xC0}) {
      twelve_bit[k + 4] = std::byte{12};
      break;
    }
  }
  testing::write_file(root / "c" / "twelve_bit.jpg", twelve_bit);
  // Legal sampling factors TurboJPEG has no name for: Y 2x2, Cb 1x1, Cr 2x2.
  auto odd_sampling = testing::make_jpeg({.width = 32, .height = 32, .subsampling = TJSAMP_444});
  for (size_t k = 0; k + 18 < odd_sampling.size(); ++k) {
    if (odd_sampling[k] == std::byte{0xFF} && odd_sampling[k + 1] == std::byte{0xC0}) {
      odd_sampling[k + 11] = odd_sampling[k + 17] = std::byte{0x22};  // (C, H << 4 | V, Tq)
      break;
    }
  }
  testing::write_file(root / "c" / "odd_sampling.jpg", odd_sampling);
  testing::write_text(root / "c" / "notes.jpg", "not an image at all");
  testing::write_file(root / "c" / "picture.png", testing::make_png(10, 10, 1));
  testing::write_text(root / "c" / "y_animation.gif", "GIF89a and the rest of a GIF");
  // A good image after the bad ones: a decoder left broken by an error would fail it.
  testing::write_file(root / "c" / "zgood.jpg",
                      testing::make_jpeg({.width = 20, .height = 30, .progressive = true}));
  return {{"c/truncated.jpg", "truncated JPEG"},
          {"c/damaged.jpg", "corrupt JPEG"},
          {"c/empty.jpg", "empty file"},
          {"c/twelve_bit.jpg", "unsupported JPEG: Unsupported JPEG data precision 12"},
          {"c/odd_sampling.jpg", "unsupported JPEG: its chroma subsampling is none of"},
          {"c/notes.jpg", "not a JPEG (unknown file type)"},
          {"c/picture.png", "not a JPEG but PNG; pass --reencode"},
          {"c/y_animation.gif", "not a JPEG but GIF, which evenfeed cannot read; convert it"}};
}

TEST(ConvertImages, SkipListsEveryBadInputWithItsReason) {
  testing::TempDir tmp;
  auto expected = make_bad_tree(tmp / "src");
  ConvertOptions o = quiet_options();
  o.on_error = OnError::kSkip;
  o.threads = 1;  // one decoder sees every input, bad and good
  ConvertReport r = convert_images(tmp / "src", tmp / "out", o);
  EXPECT_EQ(r.samples, 2u);
  ASSERT_EQ(r.skipped.size(), expected.size());
  for (const SkippedInput& s : r.skipped) {
    ASSERT_TRUE(expected.count(s.source)) << s.source;
    EXPECT_NE(s.reason.find(expected[s.source]), std::string::npos) << s.source << ": " << s.reason;
  }
  Dataset d(tmp / "out");
  EXPECT_EQ(d.index().source_name(0), "c/0good.jpg");
  EXPECT_EQ(d.index().source_name(1), "c/zgood.jpg");
}

TEST(ConvertImages, FailStopsAtTheFirstBadInputAndWritesNothing) {
  testing::TempDir tmp;
  make_bad_tree(tmp / "src");
  try {
    convert_images(tmp / "src", tmp / "out", quiet_options());
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("c/damaged.jpg"), std::string::npos)
        << what;  // first bad one in sorted order
    EXPECT_NE(what.find("--on-error skip"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(tmp / "out"));
  for (const auto& entry : fs::directory_iterator(tmp.path())) {
    EXPECT_EQ(entry.path().filename(), "src") << "left behind: " << entry.path();
  }
}

// A tree that works with torchvision's ImageFolder converts here too: files are taken
// by image extension (in any case), and the rest is counted in one warning rather than
// stopping the conversion.
TEST(ConvertImages, FilesWithoutAnImageExtensionAreIgnoredWithAWarning) {
  testing::TempDir tmp;
  const auto jpeg = testing::make_jpeg({.width = 40, .height = 30});
  testing::write_file(tmp / "src" / "a" / "one.JPEG", jpeg);
  testing::write_file(tmp / "src" / "a" / "two.jpg", jpeg);
  testing::write_text(tmp / "src" / "a" / "README.txt", "about class a");
  testing::write_text(tmp / "src" / "b" / "Thumbs.db", "windows thumbnails");
  testing::write_file(tmp / "src" / "b" / "three.Jpg", jpeg);
  ConvertReport r = convert_images(tmp / "src", tmp / "out", quiet_options());
  EXPECT_EQ(r.samples, 3u);
  EXPECT_TRUE(r.skipped.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(
      r.warnings[0].find("ignored 2 file(s) without an image extension (first: a/README.txt)"),
      std::string::npos)
      << r.warnings[0];
  Dataset d(tmp / "out");
  EXPECT_EQ(d.index().source_name(0), "a/one.JPEG");
  EXPECT_EQ(d.index().source_name(2), "b/three.Jpg");
  EXPECT_EQ(d.index().labels()[2], 1);

  // Nothing but such files: the error says what was passed over.
  testing::write_text(tmp / "only" / "c" / "labels.csv", "x,1");
  try {
    convert_images(tmp / "only", tmp / "out2", quiet_options());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no images found (ignored 1 file(s) without an image "
                                         "extension (first: c/labels.csv))"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp / "out2"));
}

// Converts `tmp`/src holding one image, `image`, with --reencode into `tmp`/out.
void convert_one_reencoded(const fs::path& tmp, const std::vector<std::byte>& image) {
  testing::write_file(tmp / "src" / "c" / "image.png", image);
  ConvertOptions o = quiet_options();
  o.reencode = true;
  convert_images(tmp / "src", tmp / "out", o);
}

TEST(ConvertImages, ReencodeStoresOtherFormatsAsJpeg) {
  testing::TempDir tmp;
  convert_one_reencoded(tmp.path(), testing::make_png(33, 21, 2));
  Dataset d(tmp / "out");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.index().widths()[0], 33u);
  EXPECT_EQ(d.index().heights()[0], 21u);
  EXPECT_TRUE(verify_dataset(tmp / "out", {.decode = true}).ok());
}

TEST(ConvertImages, SixteenBitPngsAreReadAsSrgbNotLinear) {
  // 0x8080 is mid-grey in sRGB: 128 in 8 bits. Taken as linear light it would come
  // out at 188 (libpng's simplified reader assumes linear without a gAMA chunk).
  testing::TempDir tmp;
  convert_one_reencoded(tmp.path(), testing::make_png16_grey(32, 24, 0x8080));
  Dataset d(tmp / "out");
  Dataset::ReadSession session(d);
  const auto pixels = decode_pixels(d.read(session, 0).payload);
  ASSERT_FALSE(pixels.empty());
  for (unsigned char p : pixels) ASSERT_NEAR(p, 128, 2);
}

// A BMP or PPM header is cheap to forge, and TurboJPEG's loader allocates what it
// declares before reading a pixel: the fuzzer found a 17-byte PPM asking for 4 GB. Such
// sizes are refused from the header, as PNG's are.
TEST(ConvertImages, ForgedBmpAndPpmSizesAreRefusedBeforeDecoding) {
  testing::TempDir tmp;
  std::string bmp(54, '\0');
  bmp[0] = 'B';
  bmp[1] = 'M';
  bmp[14] = 40;  // BITMAPINFOHEADER; width 100,000, height -100,000 (top-down)
  const unsigned char size[8] = {0xA0, 0x86, 0x01, 0x00, 0x60, 0x79, 0xFE, 0xFF};
  for (int k = 0; k < 8; ++k) bmp[18 + k] = static_cast<char>(size[k]);
  const std::vector<std::pair<std::string, std::string>> forged = {
      {"huge.ppm", "P622222M62222 1e]"},  // as rdppm.c reads it: 22,222 x 62,222
      {"huge.bmp", bmp},
  };
  for (const auto& [name, text] : forged) {
    testing::write_text(tmp / name, text);
    const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
    RgbImage image;
    const auto problem = read_rgb_image(tmp / name, bytes, sniff_image_format(bytes), image);
    ASSERT_TRUE(problem.has_value()) << name;
    EXPECT_NE(problem->find("larger than 268 megapixels; resize it first"), std::string::npos)
        << *problem;
    EXPECT_TRUE(image.rgb.empty());
  }
  const std::string cut = "P6 12";
  testing::write_text(tmp / "cut.ppm", cut);
  RgbImage image;
  const auto problem = read_rgb_image(
      tmp / "cut.ppm", std::as_bytes(std::span(cut.data(), cut.size())), "PPM", image);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("unreadable PPM"), std::string::npos) << *problem;
}

TEST(ConvertImages, ExistingOutputNeedsForceAndIsReplacedWhole) {
  testing::TempDir tmp;
  testing::make_image_tree(tmp / "src", 1, 3);
  convert_images(tmp / "src", tmp / "out", quiet_options());
  EXPECT_THROW(convert_images(tmp / "src", tmp / "out", quiet_options()), Error);
  testing::make_image_tree(tmp / "src", 2, 3);
  ConvertOptions o = quiet_options();
  o.force = true;
  convert_images(tmp / "src", tmp / "out", o);
  EXPECT_EQ(Dataset(tmp / "out").size(), 6u);
}

TEST(ConvertImages, MissingOrEmptySourcesAreClearErrors) {
  testing::TempDir tmp;
  EXPECT_THROW(convert_images(tmp / "nope", tmp / "out", quiet_options()), Error);
  fs::create_directories(tmp / "empty" / "class");
  EXPECT_THROW(convert_images(tmp / "empty", tmp / "out", quiet_options()), Error);
  testing::write_text(tmp / "bad" / "c" / "x.jpg", "nope");
  ConvertOptions o = quiet_options();
  o.on_error = OnError::kSkip;
  try {
    convert_images(tmp / "bad", tmp / "out", o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("none of the 1 inputs"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

// The message of the Error that converting `src` throws, or "" when none is thrown.
std::string conversion_error(const fs::path& src, const fs::path& out) {
  try {
    convert_images(src, out, quiet_options());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConvertImages, AnImageOrABinaryFileGivenAsTheListIsNamedAsSuch) {
  testing::TempDir tmp;
  testing::write_file(tmp / "one.jpg", testing::make_jpeg({}));
  EXPECT_NE(conversion_error(tmp / "one.jpg", tmp / "out").find("is a JPEG image, not a folder"),
            std::string::npos);
  // A binary file read as a list: its bytes are quoted escaped and cut short, so the
  // error stays one readable line.
  std::string binary = "\x01\x02\x1b[2J";
  binary += std::string(500, '\xfe');
  testing::write_text(tmp / "files.lst", binary);
  const std::string message = conversion_error(tmp / "files.lst", tmp / "out");
  EXPECT_NE(message.find("expected `path label`, got '\\x01\\x02\\x1b[2J\\xfe"), std::string::npos)
      << message;
  EXPECT_LT(message.size(), 400u);
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "out"));
  // A list whose first path begins like a BMP's or PPM's magic is still a list.
  for (const std::string first : {"BMW", "P3"}) {
    testing::write_file(tmp / (first + "_cars") / "a.jpg", testing::make_jpeg({}));
    testing::write_text(tmp / "cars.lst", first + "_cars/a.jpg 1\n");
    EXPECT_EQ(conversion_error(tmp / "cars.lst", tmp / ("out_" + first)), "") << first;
  }
}

}  // namespace
}  // namespace evenfeed
