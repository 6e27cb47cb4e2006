// The loader: output matches an independent reference (full decode, crop, antialiased
// resize, flip) for every JPEG kind; batches come in plan order and are the same for
// any thread count; the slot pool stays bounded; bad records fail or are substituted;
// destroying a loader mid-epoch neither hangs nor leaks.
#include "loader/loader.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>

#include "core/error.h"
#include "loader/convert.h"
#include "loader/synth.h"
#include "sampler/distributed_sampler.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;

// Bilinear sample of an RGB image at (x, y) in pixel-centre coordinates.
double bilinear(const std::vector<uint8_t>& rgb, int w, int h, double x, double y, int c) {
  x = std::clamp(x, 0.0, w - 1.0);
  y = std::clamp(y, 0.0, h - 1.0);
  const int x0 = static_cast<int>(x), y0 = static_cast<int>(y);
  const int x1 = std::min(x0 + 1, w - 1), y1 = std::min(y0 + 1, h - 1);
  const double fx = x - x0, fy = y - y0;
  auto at = [&](int xx, int yy) {
    return static_cast<double>(rgb[(static_cast<size_t>(yy) * w + xx) * 3 + c]);
  };
  return (at(x0, y0) * (1 - fx) + at(x1, y0) * fx) * (1 - fy) +
         (at(x0, y1) * (1 - fx) + at(x1, y1) * fx) * fy;
}

// The reference: full decode, crop, antialiased resize (supersampled bilinear), flip.
std::vector<uint8_t> reference(std::span<const std::byte> jpeg, const CropBox& crop, int size) {
  tjhandle h = tjInitDecompress();
  int w = 0, hh = 0, ss = 0, cs = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(jpeg.data());
  tjDecompressHeader3(h, data, jpeg.size(), &w, &hh, &ss, &cs);
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * hh * 3);
  if (cs == TJCS_CMYK || cs == TJCS_YCCK) {
    std::vector<uint8_t> cmyk(static_cast<size_t>(w) * hh * 4);
    tjDecompress2(h, data, jpeg.size(), cmyk.data(), w, 0, hh, TJPF_CMYK, 0);
    for (size_t p = 0; p < static_cast<size_t>(w) * hh; ++p) {
      for (int c = 0; c < 3; ++c)
        rgb[p * 3 + c] = static_cast<uint8_t>(cmyk[p * 4 + c] * cmyk[p * 4 + 3] / 255);
    }
  } else {
    tjDecompress2(h, data, jpeg.size(), rgb.data(), w, 0, hh, TJPF_RGB, 0);
  }
  tjDestroy(h);
  std::vector<uint8_t> out(static_cast<size_t>(size) * size * 3);
  const double sx = static_cast<double>(crop.width) / size,
               sy = static_cast<double>(crop.height) / size;
  const int kx = std::max(1, static_cast<int>(std::ceil(sx))),
            ky = std::max(1, static_cast<int>(std::ceil(sy)));
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      for (int c = 0; c < 3; ++c) {
        double sum = 0;
        for (int j = 0; j < ky; ++j) {
          for (int i = 0; i < kx; ++i) {
            sum += bilinear(rgb, w, hh, crop.x + (x + (i + 0.5) / kx) * sx - 0.5,
                            crop.y + (y + (j + 0.5) / ky) * sy - 0.5, c);
          }
        }
        const int ox = crop.flip ? size - 1 - x : x;
        out[(static_cast<size_t>(y) * size + ox) * 3 + c] =
            static_cast<uint8_t>(std::lround(sum / (kx * ky)));
      }
    }
  }
  return out;
}

double psnr(const uint8_t* a, const uint8_t* b, size_t n) {
  double mse = 0;
  for (size_t i = 0; i < n; ++i) mse += (static_cast<double>(a[i]) - b[i]) * (a[i] - b[i]);
  mse /= static_cast<double>(n);
  return mse == 0 ? 99 : 10 * std::log10(255.0 * 255.0 / mse);
}

class LoaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    SynthImagesOptions s;
    s.count = 24;
    s.classes = 4;
    s.min_size = 500;  // large enough for the 1/2, 1/4 and 1/8 DCT scales
    s.max_size = 1300;
    synth_images(*dir_ / "src", s);
    testing::JpegSpec cmyk;
    cmyk.width = 700;
    cmyk.height = 500;
    cmyk.pixel_format = TJPF_CMYK;
    cmyk.smooth = true;
    testing::write_file(*dir_ / "src" / "00_disc" / "zz_cmyk.jpg", testing::make_jpeg(cmyk));
    ConvertOptions o;
    o.shards = 3;
    convert_images(*dir_ / "src", *dir_ / "data", o);
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::vector<Batch> drain(Loader& loader) {
    std::vector<Batch> out;
    while (auto b = loader.next()) out.push_back(std::move(*b));
    return out;
  }

  static testing::TempDir* dir_;
};
testing::TempDir* LoaderTest::dir_ = nullptr;

BatchSource fixed_batches(uint64_t n, uint64_t batch, uint64_t seed = 1, uint32_t epoch = 0) {
  SamplerOptions o;
  o.batch_size = batch;
  auto sampler = std::make_shared<DistributedSampler>(n, 1, o, PlanState{seed, epoch, {}});
  return [sampler](RankBatch& b) {
    PlanStep step;
    if (!sampler->next(step)) return false;
    b = std::move(step.ranks[0]);
    return true;
  };
}

void expect_matches_reference(const Dataset& d, AugmentMode mode) {
  LoaderOptions o;
  o.mode = mode;
  o.image.size = 64;  // crops much larger than the output: scaled and partial decode
  o.prefetch = 2;
  Loader loader(d, o, 3, fixed_batches(d.size(), 5));
  Dataset::ReadSession session(d);
  std::set<int> scales;
  size_t checked = 0;
  while (auto batch = loader.next()) {
    for (size_t i = 0; i < batch->size(); ++i) {
      if (!batch->valid().empty() && !batch->valid()[i]) continue;
      const uint64_t id = batch->sample_ids()[i];
      const CropBox crop = batch->crops()[i];
      auto ref = reference(d.read(session, id).payload, crop, o.image.size);
      const size_t n = ref.size();
      const double p = psnr(batch->images_uint8() + i * n, ref.data(), n);
      EXPECT_GE(p, 28.0) << d.describe(id) << " crop " << crop.x << "," << crop.y << " "
                         << crop.width << "x" << crop.height << " flip " << crop.flip;
      scales.insert(std::min(crop.width, crop.height) / o.image.size >= 8 ? 8 : 0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, d.size());
}

TEST_F(LoaderTest, TrainingCropsMatchTheReferenceForEveryJpegKind) {
  Dataset d(*dir_ / "data");
  expect_matches_reference(d, AugmentMode::kTrain);
}

TEST_F(LoaderTest, EvaluationCropsMatchTheReference) {
  Dataset d(*dir_ / "data");
  expect_matches_reference(d, AugmentMode::kEval);
}

TEST_F(LoaderTest, BatchesArriveInPlanOrderAndAreIdenticalForAnyThreadCount) {
  Dataset d(*dir_ / "data");
  std::vector<std::vector<uint8_t>> images[2];
  for (int t : {1, 2}) {
    LoaderOptions o;
    o.threads = t;
    o.image.size = 32;
    Loader loader(d, o, 0, fixed_batches(d.size(), 4));
    uint64_t expected_index = 0;
    SamplerOptions so;
    so.batch_size = 4;
    DistributedSampler plan(d.size(), 1, so, {1, 0, {}});
    PlanStep step;
    while (auto batch = loader.next()) {
      ASSERT_TRUE(plan.next(step));
      EXPECT_EQ(batch->index(), expected_index++);
      EXPECT_EQ(std::vector<uint64_t>(batch->sample_ids().begin(), batch->sample_ids().end()),
                step.ranks[0].samples);
      images[t - 1].emplace_back(batch->images_uint8(),
                                 batch->images_uint8() + batch->size() * 32 * 32 * 3);
    }
    EXPECT_FALSE(plan.next(step));
  }
  EXPECT_EQ(images[0], images[1]);
}

TEST_F(LoaderTest, FloatOutputIsTheNormalisedUint8Output) {
  Dataset d(*dir_ / "data");
  LoaderOptions a, b;
  a.image.size = b.image.size = 16;
  b.image.layout = ImageLayout::kFloat32NCHW;
  Loader la(d, a, 0, fixed_batches(d.size(), 3)), lb(d, b, 0, fixed_batches(d.size(), 3));
  auto x = la.next(), y = lb.next();
  for (size_t i = 0; i < x->size(); ++i) {
    for (int c = 0; c < 3; ++c) {
      const float v = x->images_uint8()[(i * 256 + 17) * 3 + c] / 255.0f;
      EXPECT_NEAR(y->images_float()[i * 768 + c * 256 + 17], (v - b.image.mean[c]) / b.image.std[c],
                  1e-5);
    }
  }
}

TEST_F(LoaderTest, SlotPoolStaysBoundedAndHoldingEverySlotIsAClearError) {
  Dataset d(*dir_ / "data");
  LoaderOptions o;
  o.prefetch = 2;
  o.image.size = 16;
  Loader loader(d, o, 0, fixed_batches(d.size(), 2));
  std::set<const uint8_t*> buffers;
  auto first = loader.next(), second = loader.next();
  buffers.insert(first->images_uint8());
  buffers.insert(second->images_uint8());
  try {
    loader.next();
    FAIL() << "next() returned while the consumer held every slot";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("drop a Batch"), std::string::npos) << e.what();
  }
  first.reset();
  second.reset();
  while (auto b = loader.next()) buffers.insert(b->images_uint8());
  EXPECT_LE(buffers.size(), 2u);
}

TEST_F(LoaderTest, SlowConsumerGetsEveryBatchInOrder) {
  Dataset d(*dir_ / "data");
  LoaderOptions o;
  o.prefetch = 3;
  o.image.size = 16;
  Loader loader(d, o, 0, fixed_batches(d.size(), 4));
  // Slower than the producer: the pool fills and the producer waits (backpressure);
  // nothing is lost, repeated or reordered.
  uint64_t samples = 0, expected_index = 0;
  std::multiset<uint64_t> ids;
  while (auto b = loader.next()) {
    EXPECT_EQ(b->index(), expected_index++);
    samples += b->size();
    for (size_t i = 0; i < b->size(); ++i) {
      if (b->valid().empty() || b->valid()[i]) ids.insert(b->sample_ids()[i]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  EXPECT_EQ(samples, 28u);  // 25 samples padded to whole batches of 4
  EXPECT_EQ(ids.size(), 25u);
  EXPECT_EQ(std::set<uint64_t>(ids.begin(), ids.end()).size(), 25u);
}

TEST_F(LoaderTest, DestroyingALoaderMidEpochIsClean) {
  Dataset d(*dir_ / "data");
  for (int round = 0; round < 3; ++round) {
    LoaderOptions o;
    o.prefetch = 4;
    o.image.size = 48;
    Loader loader(d, o, 0, fixed_batches(d.size(), 3));
    auto b = loader.next();
    ASSERT_TRUE(b.has_value());
  }  // batches in flight are awaited, nothing leaks (checked under ASan)
}

// A dataset of 8 images whose sample 3 is bad in the way `damage` makes it.
void make_dataset_with_bad_sample(const testing::TempDir& tmp, bool truncate) {
  testing::make_image_tree(tmp / "src", 1, 8);
  ConvertOptions co;
  co.check_decode = false;     // let the damaged JPEG into the dataset
  co.restart_markers = false;  // stored as the sources are, so their bytes can be found
  if (truncate) {
    auto jpeg = testing::make_jpeg({.width = 200, .height = 150});
    jpeg.resize(jpeg.size() * 2 / 5);
    testing::write_file(tmp / "src" / "class0" / "img3.jpg", jpeg);
  }
  convert_images(tmp / "src", tmp / "data", co);
}

void expect_fail_then_substitute(const Dataset& d, LoaderOptions o) {
  {
    Loader loader(d, o, 0, fixed_batches(d.size(), 8));
    try {
      while (loader.next()) {
      }
      FAIL() << "a bad record was loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("class0/img3.jpg"), std::string::npos) << e.what();
    }
  }
  o.on_bad = BadRecordPolicy::kSubstitute;
  Loader loader(d, o, 0, fixed_batches(d.size(), 8));
  auto batch = loader.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->size(), 8u);  // the batch keeps its size
  ASSERT_EQ(batch->substitutions().size(), 1u);
  EXPECT_EQ(batch->substitutions()[0].second, 3u);
  EXPECT_NE(batch->sample_ids()[batch->substitutions()[0].first], 3u);
  EXPECT_EQ(loader.stats().substituted, 1u);
}

TEST(LoaderBadRecords, UndecodableJpegFailsByNameOrIsSubstituted) {
  testing::TempDir tmp;
  make_dataset_with_bad_sample(tmp, /*truncate=*/true);
  Dataset d(tmp / "data");
  LoaderOptions o;
  o.image.size = 24;
  // The centre crop reaches the missing rows. (A crop that ends above them decodes
  // fine: partial decoding never reads what the output does not need.)
  o.mode = AugmentMode::kEval;
  expect_fail_then_substitute(d, o);
}

TEST(LoaderBadRecords, ChangedBytesAreCaughtByTheChecksum) {
  testing::TempDir tmp;
  make_dataset_with_bad_sample(tmp, /*truncate=*/false);
  // Flip a byte of sample 3's payload inside the shard file.
  const auto source = testing::read_file(tmp / "src" / "class0" / "img3.jpg");
  auto shard = testing::read_file(tmp / "data" / "shard-00000.lmdb");
  auto at = std::search(shard.begin(), shard.end(), source.begin() + 100, source.begin() + 132);
  ASSERT_NE(at, shard.end());
  *(at + 3) ^= std::byte{0x20};
  testing::write_file(tmp / "data" / "shard-00000.lmdb", shard);
  Dataset d(tmp / "data");
  LoaderOptions o;
  o.image.size = 24;
  o.verify_checksums = true;
  expect_fail_then_substitute(d, o);
}

TEST(LoaderTokens, CollatesAPaddedBatchWithLengthsAndMask) {
  testing::TempDir tmp;
  testing::write_text(tmp / "t.jsonl",
                      "{\"tokens\":[5,6,7],\"label\":1}\n{\"tokens\":[9]}\n{\"tokens\":[1,2]}\n");
  convert_tokens(tmp / "t.jsonl", tmp / "data", {});
  Dataset d(tmp / "data");
  std::vector<RankBatch> plan = {{{0, 1, 2}, {}}};
  size_t served = 0;
  Loader loader(d, {}, 0, [&](RankBatch& b) {
    if (served == plan.size()) return false;
    b = plan[served++];
    return true;
  });
  auto batch = loader.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->max_length(), 3u);
  EXPECT_EQ(std::vector<int32_t>(batch->tokens().begin(), batch->tokens().end()),
            (std::vector<int32_t>{5, 6, 7, 9, 0, 0, 1, 2, 0}));
  EXPECT_EQ(std::vector<uint32_t>(batch->lengths().begin(), batch->lengths().end()),
            (std::vector<uint32_t>{3, 1, 2}));
  EXPECT_EQ(std::vector<uint8_t>(batch->mask().begin(), batch->mask().end()),
            (std::vector<uint8_t>{1, 1, 1, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(batch->labels()[0], 1);
  EXPECT_EQ(batch->labels()[1], -1);
  EXPECT_FALSE(loader.next().has_value());
}

// A planner with --oversize truncate plans a long sample as cut to the budget; the
// loader cuts it the same way (its first max_tokens tokens), so the batch is the
// shape that was planned.
TEST(LoaderTokens, MaxTokensCutsLongSamplesToTheirFirstTokens) {
  testing::TempDir tmp;
  testing::write_text(tmp / "t.jsonl", "{\"tokens\":[5,6,7,8,9]}\n{\"tokens\":[1,2]}\n");
  convert_tokens(tmp / "t.jsonl", tmp / "data", {});
  Dataset d(tmp / "data");
  bool served = false;
  LoaderOptions o;
  o.max_tokens = 3;
  Loader loader(d, o, 0, [&](RankBatch& b) {
    if (served) return false;
    b = {{0, 1}, {}};
    served = true;
    return true;
  });
  auto batch = loader.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->max_length(), 3u);
  EXPECT_EQ(std::vector<int32_t>(batch->tokens().begin(), batch->tokens().end()),
            (std::vector<int32_t>{5, 6, 7, 1, 2, 0}));
  EXPECT_EQ(std::vector<uint32_t>(batch->lengths().begin(), batch->lengths().end()),
            (std::vector<uint32_t>{3, 2}));
  EXPECT_EQ(std::vector<uint8_t>(batch->mask().begin(), batch->mask().end()),
            (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}));
}

}  // namespace
}  // namespace evenfeed
