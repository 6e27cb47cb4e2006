// The CPU reference of the normalise kernel against values worked out by hand, and
// the GPU kernel against the reference wherever a GPU is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/bfloat16.h"
#include "cuda/gpu_runtime.h"
#include "cuda/normalize.h"

namespace evenfeed {
namespace {

TEST(NormalizeReference, LaysOutChannelsFirstAndAppliesMeanAndStd) {
  // One 1x2 image: pixel (0,0) = (0, 128, 255), pixel (0,1) = (255, 0, 51).
  const std::vector<uint8_t> nhwc{0, 128, 255, 255, 0, 51};
  NormalizeParams params;
  params.mean = {0.5f, 0.25f, 0.0f};
  params.std = {0.5f, 0.25f, 1.0f};
  std::vector<float> out(6);
  normalize_reference(nhwc.data(), {1, 1, 2}, nullptr, params, DataType::kFloat32, out.data());
  const float expected[6] = {(0 / 255.f - 0.5f) / 0.5f,
                             (255 / 255.f - 0.5f) / 0.5f,
                             (128 / 255.f - 0.25f) / 0.25f,
                             (0 / 255.f - 0.25f) / 0.25f,
                             255 / 255.f,
                             51 / 255.f};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << "element " << i;
}

TEST(NormalizeReference, FlipsOnlyTheImagesAskedFor) {
  // Two 1x3 images with distinct red values; flip the second.
  std::vector<uint8_t> nhwc(2 * 3 * 3, 0);
  for (int n = 0; n < 2; ++n)
    for (int x = 0; x < 3; ++x) nhwc[(n * 3 + x) * 3] = static_cast<uint8_t>(10 * n + x);
  const uint8_t flip[2] = {0, 1};
  NormalizeParams identity;
  identity.mean = {0, 0, 0};
  identity.std = {1.f / 255, 1.f / 255, 1.f / 255};  // out = x
  std::vector<float> out(2 * 3 * 3);
  normalize_reference(nhwc.data(), {2, 1, 3}, flip, identity, DataType::kFloat32, out.data());
  EXPECT_FLOAT_EQ(out[0], 0);
  EXPECT_FLOAT_EQ(out[2], 2);
  EXPECT_FLOAT_EQ(out[9 + 0], 12);  // second image, red plane, x = 0 holds source x = 2
  EXPECT_FLOAT_EQ(out[9 + 2], 10);
}

TEST(NormalizeReference, BfloatOutputIsTheRoundedFloatOutput) {
  std::mt19937 rng(7);
  std::vector<uint8_t> nhwc(4 * 5 * 6 * 3);
  for (auto& v : nhwc) v = static_cast<uint8_t>(rng());
  const ImageBatchShape shape{4, 5, 6};
  std::vector<float> f32(nhwc.size());
  std::vector<uint16_t> bf16(nhwc.size());
  normalize_reference(nhwc.data(), shape, nullptr, {}, DataType::kFloat32, f32.data());
  normalize_reference(nhwc.data(), shape, nullptr, {}, DataType::kBFloat16, bf16.data());
  for (size_t i = 0; i < f32.size(); ++i) ASSERT_EQ(bf16[i], float_to_bfloat16(f32[i]));
}

TEST(Bfloat16, RoundsToNearestEven) {
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.0f)), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even one, 1.
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(std::nanf("")))));
}

TEST(NormalizeOnGpu, MatchesTheReferenceBitForBit) {
  if (!gpu_visible()) GTEST_SKIP() << "no GPU visible";
  std::mt19937 rng(11);
  const ImageBatchShape shape{8, 37, 53};
  std::vector<uint8_t> nhwc(shape.count * 37 * 53 * 3), flip(shape.count);
  for (auto& v : nhwc) v = static_cast<uint8_t>(rng());
  for (auto& f : flip) f = static_cast<uint8_t>(rng() & 1);
  for (DataType type : {DataType::kFloat32, DataType::kBFloat16}) {
    const size_t out_bytes = nhwc.size() * element_size(type);
    std::vector<uint8_t> expected(out_bytes), got(out_bytes);
    normalize_reference(nhwc.data(), shape, flip.data(), {}, type, expected.data());
    void* d_in = gpu_device_alloc(nhwc.size());
    void* d_flip = gpu_device_alloc(flip.size());
    void* d_out = gpu_device_alloc(out_bytes);
    gpu_copy_to_device(d_in, nhwc.data(), nhwc.size());
    gpu_copy_to_device(d_flip, flip.data(), flip.size());
    GpuStream stream = gpu_stream_create();
    normalize_on_gpu(static_cast<uint8_t*>(d_in), shape, static_cast<uint8_t*>(d_flip), {}, type,
                     d_out, stream);
    gpu_stream_synchronize(stream);
    gpu_copy_to_host(got.data(), d_out, out_bytes);
    EXPECT_EQ(got, expected) << data_type_name(type);
    gpu_stream_destroy(stream);
    gpu_device_free(d_in);
    gpu_device_free(d_flip);
    gpu_device_free(d_out);
  }
}

}  // namespace
}  // namespace evenfeed
