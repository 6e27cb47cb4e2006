// The trainer's parts on their own: analytic gradients against finite differences,
// bucket layout and launch order, the learning-rate schedule, checkpoint files.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <vector>

#include "core/error.h"
#include "tests/support/temp_dir.h"
#include "trainer/checkpoint.h"
#include "trainer/grad_buckets.h"
#include "trainer/local_communicator.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"
#include "trainer/telemetry.h"

namespace evenfeed {
namespace {

// Compares d(loss sum)/d(param) with central differences in double-checked float32:
// every parameter of a small model, relative error under 2% or absolute under 2e-3.
void expect_gradients_match(Model& model, const ModelInput& input) {
  std::vector<float> params(model.parameter_count()), grads(params.size(), 0.0f);
  model.initialize(params, 3);
  size_t last_ready = params.size();
  model.forward_backward(params, grads, input, [&](size_t begin) {
    EXPECT_LE(begin, last_ready) << "gradients must finish from the end of the buffer backwards";
    last_ready = begin;
  });
  EXPECT_EQ(last_ready, 0u) << "every gradient must be announced";
  const float eps = 1e-2f;
  int checked = 0;
  for (size_t i = 0; i < params.size(); i += 7) {
    const float saved = params[i];
    params[i] = saved + eps;
    const double up = model.evaluate(params, input).loss;
    params[i] = saved - eps;
    const double down = model.evaluate(params, input).loss;
    params[i] = saved;
    const double numeric = (up - down) / (2 * eps);
    const double error = std::abs(numeric - grads[i]);
    EXPECT_TRUE(error < 2e-3 || error < 0.02 * std::abs(numeric))
        << "param " << i << ": analytic " << grads[i] << " numeric " << numeric;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(Gradients, ImageMlpMatchesFiniteDifferences) {
  auto model = make_image_mlp(3, 8, 5);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> features(6 * 27);
  for (float& f : features) f = normal(rng);
  std::vector<int32_t> labels{0, 1, 2, 3, 4, 1};
  std::vector<uint8_t> valid{1, 1, 1, 1, 1, 0};  // the padding row must not count
  ModelInput in;
  in.count = 6;
  in.features = features.data();
  in.labels = labels.data();
  in.valid = valid.data();
  expect_gradients_match(*model, in);
  std::vector<float> params(model->parameter_count());
  model->initialize(params, 3);
  EXPECT_EQ(model->evaluate(params, in).samples, 5u);
}

TEST(Gradients, TokenClassifierMatchesFiniteDifferences) {
  auto model = make_token_classifier(20, 6, 8, 3);
  std::vector<int32_t> tokens{1, 5, 7, 0, 3, 3, 19, 2, 4, 0, 0, 0};
  std::vector<uint8_t> mask{1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 0};
  std::vector<int32_t> labels{2, 0, 1};
  ModelInput in;
  in.count = 3;
  in.tokens = tokens.data();
  in.mask = mask.data();
  in.max_length = 4;
  in.labels = labels.data();
  expect_gradients_match(*model, in);
}

TEST(GradBuckets, CutFromTheEndWithASmallFirstBucket) {
  std::vector<float> grads(1000, 1.0f);
  LocalCommunicator comm;
  BucketOptions options;
  options.first_bucket_bytes = 100 * 4;
  options.bucket_bytes = 300 * 4;
  GradBuckets buckets(grads, options, comm);
  ASSERT_EQ(buckets.bucket_count(), 4u);  // 100 + 3 x 300 = 1000
  EXPECT_EQ(buckets.bucket(0), (std::pair<size_t, size_t>{900, 1000}));
  EXPECT_EQ(buckets.bucket(1), (std::pair<size_t, size_t>{600, 900}));
  EXPECT_EQ(buckets.bucket(3).first, 0u);
  buckets.begin(true);
  buckets.ready_from(650);  // only buckets wholly ready go out
  EXPECT_EQ(buckets.launched_total(), 1u);
  buckets.ready_from(600);
  EXPECT_EQ(buckets.launched_total(), 2u);
  buckets.finish();
  EXPECT_EQ(buckets.launched_total(), 4u);
  buckets.begin(false);  // an accumulation micro-step: nothing is communicated
  buckets.ready_from(0);
  EXPECT_EQ(buckets.finish(), 0.0);
  EXPECT_EQ(buckets.launched_total(), 4u);
}

TEST(Communicator, CoveredSecondsCountsOverlapsOnce) {
  EXPECT_EQ(covered_seconds({}), 0.0);
  // [1, 3] and [2, 5] overlap: 4 s; [6, 7] apart: 1 s; [6.5, 6.8] inside it; empty spans
  // (operations that moved nothing) add nothing.
  EXPECT_DOUBLE_EQ(covered_seconds({{6, 7}, {2, 5}, {0, 0}, {1, 3}, {6.5, 6.8}}), 5.0);
  EXPECT_DOUBLE_EQ(covered_seconds({{1, 2}}), 1.0);
}

TEST(Schedule, WarmsUpLinearlyThenFollowsACosine) {
  OptimizerOptions o;
  o.lr = 1.0;
  o.warmup_steps = 4;
  o.total_steps = 14;
  EXPECT_DOUBLE_EQ(learning_rate(o, 0), 0.25);
  EXPECT_DOUBLE_EQ(learning_rate(o, 3), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate(o, 4), 1.0);
  EXPECT_NEAR(learning_rate(o, 9), 0.5, 1e-12);
  EXPECT_NEAR(learning_rate(o, 13), 0.5 * (1 + std::cos(M_PI * 0.9)), 1e-12);
}

TEST(Checkpoint, RoundTripsAndRejectsDamage) {
  testing::TempDir dir;
  const auto file = dir / "c.evf";
  Checkpoint c;
  c.meta = {{"step", 7}};
  c.arrays = {{1.0f, 2.5f}, {}, {-3.0f}};
  write_checkpoint(file, c);
  Checkpoint back = read_checkpoint(file);
  EXPECT_EQ(back.meta["step"], 7);
  EXPECT_EQ(back.arrays, c.arrays);
  // Flip one byte: the checksum catches it.
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('X');
  }
  EXPECT_THROW(read_checkpoint(file), Error);
  std::filesystem::resize_file(file, 10);
  EXPECT_THROW(read_checkpoint(file), Error);
  EXPECT_THROW(read_checkpoint(dir / "missing.evf"), Error);
}

TEST(Telemetry, NamesTheSlowestRankAndWhatBoundsIt) {
  Telemetry t(2);
  RankStep fast{0.01, 0.01, 0.10, 0.08, 0.20, 16, 16, 0};
  RankStep slow{0.15, 0.01, 0.04, 0.00, 0.20, 16, 16, 0};  // waiting on its loader
  t.record(1, 0, std::vector<RankStep>{fast, slow}, 1.0, 0.1);
  const BalanceReport r = t.report();
  EXPECT_EQ(r.slowest_rank, 1);
  EXPECT_EQ(r.bound, "data");
  EXPECT_NEAR(r.busy_imbalance, 0.20 / 0.16, 1e-9);
}

}  // namespace
}  // namespace evenfeed
