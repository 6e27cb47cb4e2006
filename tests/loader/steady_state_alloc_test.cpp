// The loader allocates nothing per sample once it is warm (issue 4): every call to
// malloc and its relatives in this process is counted, on every thread, while a warm
// loader delivers batches; what it may allocate is a few blocks per batch, never one
// per sample. The datasets hold what makes per-sample allocations likely: images of
// many sizes (libyuv's row buffers, libjpeg's per-image pools), progressive JPEGs kept
// as they are (libjpeg's whole-image coefficient arrays) and token documents of many
// lengths.
//
// This executable replaces malloc, calloc, realloc, aligned_alloc, posix_memalign and
// memalign with counting wrappers over glibc's own (__libc_*). It is not built with the
// sanitizers, which replace them too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "loader/convert.h"
#include "loader/loader.h"
#include "loader/synth.h"
#include "tests/support/temp_dir.h"

extern "C" {
void* __libc_malloc(size_t bytes);
void* __libc_calloc(size_t count, size_t bytes);
void* __libc_realloc(void* pointer, size_t bytes);
void* __libc_memalign(size_t alignment, size_t bytes);
}

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};

void count_one() {
  if (g_counting.load(std::memory_order_relaxed))
    g_allocations.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

extern "C" {
void* malloc(size_t bytes) {
  count_one();
  return __libc_malloc(bytes);
}
void* calloc(size_t count, size_t bytes) {
  count_one();
  return __libc_calloc(count, bytes);
}
void* realloc(void* pointer, size_t bytes) {
  count_one();
  return __libc_realloc(pointer, bytes);
}
void* memalign(size_t alignment, size_t bytes) {
  count_one();
  return __libc_memalign(alignment, bytes);
}
void* aligned_alloc(size_t alignment, size_t bytes) {
  count_one();
  return __libc_memalign(alignment, bytes);
}
int posix_memalign(void** out, size_t alignment, size_t bytes) {
  count_one();
  void* p = __libc_memalign(alignment, bytes);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}

namespace evenfeed {
namespace {

constexpr size_t kBatchSize = 16;
constexpr int kPasses = 4;  // over the dataset, in one loader; the first warms it up,
                            // the others are counted one by one
// A generous allowance per batch (the loader's own bookkeeping measured 2-3); a
// per-sample allocation would add at least kBatchSize.
constexpr uint64_t kAllowedPerBatch = 6;

// kPasses passes over the dataset in batches of kBatchSize, in a fixed shuffled order.
std::vector<RankBatch> passes(uint64_t samples) {
  std::vector<uint64_t> order(samples);
  for (uint64_t i = 0; i < samples; ++i) order[i] = (i * 7919) % samples;
  std::vector<RankBatch> batches;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (uint64_t first = 0; first + kBatchSize <= samples; first += kBatchSize) {
      RankBatch b;
      b.samples.assign(order.begin() + first, order.begin() + first + kBatchSize);
      batches.push_back(std::move(b));
    }
  }
  return batches;
}

// Allocations counted in each pass after the first, which warms the loader up.
struct Counted {
  uint64_t batches_per_pass = 0;
  std::vector<uint64_t> per_pass;
};

// Runs a loader over the passes and counts allocations in each pass after the first.
Counted count_steady_state(const Dataset& dataset, const LoaderOptions& options) {
  const std::vector<RankBatch> batches = passes(dataset.size());
  const uint64_t per_pass = batches.size() / kPasses;
  // The source hands out batches allocated here, before counting began (the loader
  // moves from them); what the loader does with them counts.
  auto pending = std::make_shared<std::vector<RankBatch>>(batches);
  auto next_index = std::make_shared<size_t>(0);
  Loader loader(dataset, options, 0, [pending, next_index](RankBatch& b) {
    if (*next_index == pending->size()) return false;
    std::swap(b, (*pending)[(*next_index)++]);
    return true;
  });
  Counted counted;
  counted.batches_per_pass = per_pass;
  if (per_pass == 0) return counted;  // too few samples for a pass: the caller fails
  std::vector<uint64_t> at_pass_end;  // the counter at the end of each counted pass
  uint64_t delivered = 0;
  while (auto batch = loader.next()) {
    if (++delivered % per_pass != 0) continue;
    if (delivered == per_pass) {
      g_allocations = 0;
      g_counting = true;
    } else {
      at_pass_end.push_back(g_allocations);
    }
  }
  g_counting = false;
  for (size_t k = 0; k < at_pass_end.size(); ++k)
    counted.per_pass.push_back(at_pass_end[k] - (k == 0 ? 0 : at_pass_end[k - 1]));
  return counted;
}

class SteadyState : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    SynthImagesOptions images;
    images.count = 96;
    images.classes = 3;
    images.min_size = 64;  // every DCT scale and many resize ratios
    images.max_size = 900;
    synth_images(*dir_ / "images_src", images);
    ConvertOptions keep;
    keep.baseline = false;  // progressive JPEGs stay progressive
    keep.shards = 2;
    convert_images(*dir_ / "images_src", *dir_ / "images", keep);
    SynthTokensOptions tokens;
    tokens.count = 400;
    tokens.median_length = 60;
    tokens.max_length = 4000;
    synth_tokens(*dir_ / "tokens.jsonl", tokens);
    convert_tokens(*dir_ / "tokens.jsonl", *dir_ / "tokens", ConvertOptions{});
  }
  static void TearDownTestSuite() { delete dir_; }
  static testing::TempDir* dir_;
};
testing::TempDir* SteadyState::dir_ = nullptr;

// A per-sample allocation shows in every pass; a worker thread that TBB brings into the
// loader's arena late is cold in the pass it joins (its libjpeg arena grows as it meets
// larger images: 90-110 allocations in that pass of 6 batches, 1-8 in the others, with
// the machine's cores busy elsewhere). So the least pass must be within the allowance.
void expect_no_per_sample_allocations(const Counted& c) {
  ASSERT_GT(c.batches_per_pass, 0u);
  ASSERT_EQ(c.per_pass.size(), static_cast<size_t>(kPasses - 1));
  const uint64_t least = *std::min_element(c.per_pass.begin(), c.per_pass.end());
  EXPECT_LE(least, kAllowedPerBatch * c.batches_per_pass)
      << least << " allocations in the least pass of " << c.batches_per_pass << " warm batches of "
      << kBatchSize << " samples";
  std::printf("allocations per pass of %llu warm batches of %zu samples:",
              static_cast<unsigned long long>(c.batches_per_pass), kBatchSize);
  for (uint64_t n : c.per_pass) std::printf(" %llu", static_cast<unsigned long long>(n));
  std::printf("\n");
}

TEST_F(SteadyState, ImageBatchesAllocateNothingPerSample) {
  Dataset d(*dir_ / "images");
  for (ImageLayout layout : {ImageLayout::kUint8NHWC, ImageLayout::kFloat32NCHW}) {
    for (AugmentMode mode : {AugmentMode::kTrain, AugmentMode::kEval}) {
      LoaderOptions o;
      o.threads = 2;
      o.image.size = 96;
      o.image.layout = layout;
      o.mode = mode;
      SCOPED_TRACE(::testing::Message() << "float " << (layout == ImageLayout::kFloat32NCHW)
                                        << " eval " << (mode == AugmentMode::kEval));
      expect_no_per_sample_allocations(count_steady_state(d, o));
    }
  }
}

TEST_F(SteadyState, TokenBatchesAllocateNothingPerSample) {
  Dataset d(*dir_ / "tokens");
  LoaderOptions o;
  o.threads = 2;
  expect_no_per_sample_allocations(count_steady_state(d, o));
}

// The counter itself: an allocation per sample would be seen (so the tests above can
// fail).
TEST(SteadyStateCounter, SeesAllocationsOnEveryThread) {
  g_allocations = 0;
  g_counting = true;
  std::thread([] { std::free(std::malloc(100)); }).join();
  void* p = nullptr;
  EXPECT_EQ(posix_memalign(&p, 64, 128), 0);
  std::free(p);
  g_counting = false;
  EXPECT_GE(g_allocations.load(), 2u);
}

}  // namespace
}  // namespace evenfeed
