// The trainer's GPU path against its CPU reference, wherever a GPU is visible (every
// test reports skipped elsewhere): cuBLAS products against cblas_sgemm, the optimiser
// kernels against Optimizer, the GPU models' loss and gradients against the CPU
// models', and `evenfeed train --device gpu` against `--device cpu` end to end.
#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "core/error.h"
#include "cuda/device_array.h"
#include "cuda/gpu_blas.h"
#include "cuda/gpu_runtime.h"
#include "cuda/train_kernels.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/train_test_values.h"
#include "trainer/gpu_models.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"

namespace evenfeed {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!gpu_visible()) GTEST_SKIP() << "no GPU visible"

using testing::random_floats;

template <typename T>
DeviceArray<T> on_device(const std::vector<T>& host) {
  DeviceArray<T> device;
  device.upload(host);
  return device;
}

// Largest |a - b| over the largest |a|: rounding-level differences stay near 1e-6.
double relative_gap(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double gap = 0, scale = 1e-12;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    gap = std::max(gap, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(a[i])));
  }
  return gap / scale;
}

TEST(GpuBlas, RowMajorProductsMatchCblasForEveryTranspose) {
  SKIP_WITHOUT_GPU();
  const GpuStream stream = gpu_stream_create();
  GpuBlas blas(stream);
  const int m = 37, n = 19, k = 23;  // odd sizes: no accidental square symmetry
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // Row-major A is m x k (k x m when transposed), B is k x n (n x k).
      const int lda = ta ? m : k, ldb = tb ? k : n;
      const auto a = random_floats(static_cast<size_t>(m) * k, 1);
      const auto b = random_floats(static_cast<size_t>(k) * n, 2);
      auto c = random_floats(static_cast<size_t>(m) * n, 3);
      auto da = on_device(a), db = on_device(b), dc = on_device(c);
      blas.sgemm(ta, tb, m, n, k, 0.5f, da.data(), lda, db.data(), ldb, 2.0f, dc.data(), n);
      gpu_stream_synchronize(stream);
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m,
                  n, k, 0.5f, a.data(), lda, b.data(), ldb, 2.0f, c.data(), n);
      EXPECT_LT(relative_gap(c, dc.download(c.size())), 1e-5) << "ta " << ta << " tb " << tb;
    }
  }
  gpu_stream_destroy(stream);
}

// Three steps of each optimiser with decay: the kernels use the CPU's exact
// operation order without fused multiply-adds, so the results agree to a few ulps.
TEST(TrainKernels, OptimizerStepsMatchTheCpuOptimizer) {
  SKIP_WITHOUT_GPU();
  const GpuStream stream = gpu_stream_create();
  const size_t n = 1000;
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
    const OptimizerOptions o = testing::optimizer_with_every_term(kind);
    Optimizer cpu(o, n);
    std::vector<float> params = random_floats(n, 4);
    auto dparams = on_device(params);
    std::vector<DeviceArray<float>> state;
    for (size_t i = 0; i < cpu.state().size(); ++i) state.push_back(on_device(cpu.state()[i]));
    for (uint64_t step = 0; step < 3; ++step) {
      std::vector<float> grads = random_floats(n, 10 + static_cast<uint32_t>(step));
      auto dgrads = on_device(grads);
      const float scale = 0.25f;
      for (float& g : grads) g *= scale;
      cpu.step(params, grads, step);
      gpu_scale(dgrads.data(), n, scale, stream);
      const float lr = static_cast<float>(learning_rate(o, step));
      if (kind == OptimizerKind::kSgd) {
        gpu_sgd_step(dparams.data(), dgrads.data(), state[0].data(), n, lr,
                     static_cast<float>(o.momentum), static_cast<float>(o.weight_decay), stream);
      } else {
        const double t = static_cast<double>(step + 1);
        gpu_adamw_step(dparams.data(), dgrads.data(), state[0].data(), state[1].data(), n, lr,
                       static_cast<float>(o.beta1), static_cast<float>(o.beta2),
                       static_cast<float>(1 - std::pow(o.beta1, t)),
                       static_cast<float>(1 - std::pow(o.beta2, t)), static_cast<float>(o.epsilon),
                       static_cast<float>(o.weight_decay), stream);
      }
      gpu_stream_synchronize(stream);
    }
    const std::vector<float> gpu = dparams.download(n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_FLOAT_EQ(gpu[i], params[i])
          << (kind == OptimizerKind::kSgd ? "sgd" : "adamw") << " parameter " << i;
  }
  gpu_stream_destroy(stream);
}

// One model on both devices: the same parameters and batch give the same loss sums,
// the same gradients up to rounding, and the same announcements to `ready`.
void expect_gpu_matches_cpu(Model& cpu, Model& gpu, const ModelInput& host_input,
                            const ModelInput& device_input) {
  ASSERT_EQ(cpu.describe(), gpu.describe());
  ASSERT_EQ(cpu.parameter_count(), gpu.parameter_count());
  const size_t n = cpu.parameter_count();
  std::vector<float> params(n), grads(n, 0.0f);
  cpu.initialize(params, 7);
  DeviceArray<float> dparams(n), dgrads(n);
  gpu.initialize(dparams.span(), 7);
  EXPECT_EQ(dparams.download(n), params) << "initialisation must be the CPU model's";
  const std::vector<float> zeros(n, 0.0f);
  dgrads.upload(zeros);

  std::vector<size_t> cpu_ready, gpu_ready;
  const LossSums c = cpu.forward_backward(params, grads, host_input,
                                          [&](size_t begin) { cpu_ready.push_back(begin); });
  const LossSums g = gpu.forward_backward(dparams.span(), dgrads.span(), device_input,
                                          [&](size_t begin) { gpu_ready.push_back(begin); });
  EXPECT_EQ(g.samples, c.samples);
  EXPECT_EQ(g.correct, c.correct);
  EXPECT_NEAR(g.loss, c.loss, 1e-5 * std::abs(c.loss));
  EXPECT_EQ(gpu_ready, cpu_ready);
  EXPECT_LT(relative_gap(grads, dgrads.download(n)), 1e-4);
  const LossSums e = gpu.evaluate(dparams.span(), device_input);
  EXPECT_NEAR(e.loss, c.loss, 1e-5 * std::abs(c.loss));
}

TEST(GpuModels, ImageMlpMatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  const GpuStream stream = gpu_stream_create();
  {
    auto cpu = make_image_mlp(8, 48, 10);
    auto gpu = make_gpu_image_mlp(8, 48, 10, stream);
    const size_t rows = 33;
    const std::vector<float> features = random_floats(rows * 3 * 8 * 8, 5);
    std::vector<int32_t> labels(rows);
    std::vector<uint8_t> valid(rows, 1);
    for (size_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 7) % 10);
    valid[rows - 1] = valid[rows - 2] = 0;  // padding rows count for nothing
    ModelInput host;
    host.count = rows;
    host.features = features.data();
    host.labels = labels.data();
    host.valid = valid.data();
    auto dfeatures = on_device(features);
    auto dlabels = on_device(labels);
    auto dvalid = on_device(valid);
    ModelInput device = host;
    device.features = dfeatures.data();
    device.labels = dlabels.data();
    device.valid = dvalid.data();
    expect_gpu_matches_cpu(*cpu, *gpu, host, device);
  }
  gpu_stream_destroy(stream);
}

TEST(GpuModels, TokenClassifierMatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  const GpuStream stream = gpu_stream_create();
  {
    const uint32_t vocab = 50, max_length = 12;
    auto cpu = make_token_classifier(vocab, 16, 24, 5);
    auto gpu = make_gpu_token_classifier(vocab, 16, 24, 5, stream);
    const testing::TokenBatch batch(9, max_length, vocab, 5, 6, /*empty_row=*/3,
                                    /*padding_row=*/8);
    const ModelInput host = batch.input();
    auto dtokens = on_device(batch.tokens);
    auto dmask = on_device(batch.mask);
    auto dlabels = on_device(batch.labels);
    auto dvalid = on_device(batch.valid);
    ModelInput device = host;
    device.tokens = dtokens.data();
    device.mask = dmask.data();
    device.labels = dlabels.data();
    device.valid = dvalid.data();
    expect_gpu_matches_cpu(*cpu, *gpu, host, device);
  }
  gpu_stream_destroy(stream);
}

TEST(GpuModels, ALabelOutsideTheClassesIsAnError) {
  SKIP_WITHOUT_GPU();
  const GpuStream stream = gpu_stream_create();
  {
    auto gpu = make_gpu_image_mlp(2, 4, 3, stream);
    const std::vector<float> features = random_floats(2 * 12, 8);
    const std::vector<int32_t> labels{1, 3};  // 3 is not a class of 3
    auto dfeatures = on_device(features);
    auto dlabels = on_device(labels);
    DeviceArray<float> params(gpu->parameter_count());
    gpu->initialize(params.span(), 1);
    ModelInput in;
    in.count = 2;
    in.features = dfeatures.data();
    in.labels = dlabels.data();
    EXPECT_THROW(gpu->evaluate(params.span(), in), Error);
  }
  gpu_stream_destroy(stream);
}

// The whole GPU path (DeviceFeeder, GPU normalise, GPU models, GPU optimiser) against
// the CPU path on the same data, seed and flags: a few dozen SGD steps stay within
// rounding of each other, and the telemetry of the GPU run adds up.
TEST(GpuTrain, DeviceGpuEndsWhereDeviceCpuEnds) {
  SKIP_WITHOUT_GPU();
  testing::TempDir dir;
  using testing::evenfeed_bin;
  using testing::run_command;
  const std::string src = (dir / "src").string(), data = (dir / "data").string();
  ASSERT_EQ(run_command(evenfeed_bin() + " -q synth images " + src +
                        " --count 200 --classes 4 --min-size 32 --max-size 64")
                .exit_code,
            0);
  ASSERT_EQ(run_command(evenfeed_bin() + " -q convert images " + src + " " + data).exit_code, 0);
  nlohmann::json results[2];
  const char* devices[2] = {"cpu", "gpu"};
  for (int i = 0; i < 2; ++i) {
    const auto r = run_command(evenfeed_bin() + " -q train --json --data " + data +
                               " --image-size 8 --hidden 32 --epochs 2 --batch-size 16 --seed 3 " +
                               "--device " + devices[i] + " --save-weights " +
                               (dir / devices[i]).string() + ".bin");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    results[i] = nlohmann::json::parse(r.out);
  }
  EXPECT_EQ(results[1]["steps"], results[0]["steps"]);
  EXPECT_EQ(results[1]["samples"], results[0]["samples"]);
  EXPECT_NEAR(results[1]["last_loss"].get<double>(), results[0]["last_loss"].get<double>(), 1e-3);
  auto read = [&](const char* name) {
    std::ifstream in(dir / (std::string(name) + ".bin"), std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    std::vector<float> w(bytes.size() / 4);
    std::memcpy(w.data(), bytes.data(), w.size() * 4);
    return w;
  };
  const std::vector<float> cpu = read("cpu"), gpu = read("gpu");
  ASSERT_FALSE(cpu.empty());
  EXPECT_LT(relative_gap(cpu, gpu), 1e-3);
  const auto& rank = results[1]["ranks"][0];
  const double parts = rank["wait"].get<double>() + rank["copy"].get<double>() +
                       rank["compute"].get<double>() + rank["exposed_comm"].get<double>();
  EXPECT_GT(rank["compute"].get<double>(), 0);
  EXPECT_NEAR(parts, rank["step"].get<double>(), 0.05 * rank["step"].get<double>() + 0.01);
}

}  // namespace
}  // namespace evenfeed
