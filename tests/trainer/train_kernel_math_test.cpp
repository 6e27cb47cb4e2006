// The per-thread arithmetic of the GPU kernels (cuda/train_kernel_math.h), run on the
// CPU against the CPU reference: the same functions the kernels call, so their
// indexing and rounding are checked on every build even where no GPU ever runs them.
// Where the operations are the same, the results must be the same bits.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cuda/train_kernel_math.h"
#include "tests/support/train_test_values.h"
#include "trainer/mlp_stack.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"

namespace evenfeed {
namespace {

namespace km = kernel_math;

using testing::random_floats;

// A one-layer stack whose weights are the identity and biases zero passes its input
// through as logits, so its forward gives the reference loss of those logits, and its
// backward gives the reference delta (as d(input)) and bias gradient (column sums).
class IdentityStack {
 public:
  explicit IdentityStack(int classes)
      : classes_(classes), stack_({classes, classes}, 0), params_(stack_.parameter_count(), 0.0f) {
    for (int c = 0; c < classes; ++c) params_[static_cast<size_t>(c) * classes + c] = 1.0f;
  }
  LossSums forward(const std::vector<float>& logits, const std::vector<int32_t>& labels,
                   const std::vector<uint8_t>& valid) {
    rows_ = labels.size();
    logits_ = logits;
    return stack_.forward(params_, logits_.data(), rows_, labels.data(), valid.data());
  }
  // d(loss sum)/d(logits) and the bias gradient.
  std::pair<std::vector<float>, std::vector<float>> backward() {
    std::vector<float> grads(params_.size(), 0.0f), delta(rows_ * classes_);
    stack_.backward(params_, grads, logits_.data(), rows_, delta.data(), {});
    const auto bias = grads.begin() + static_cast<ptrdiff_t>(classes_) * classes_;
    return {delta, std::vector<float>(bias, bias + classes_)};
  }

 private:
  int classes_;
  MlpStack stack_;
  std::vector<float> params_, logits_;
  size_t rows_ = 0;
};

TEST(TrainKernelMath, SoftmaxCrossEntropyRowsAreTheCpuStacksLossAndDelta) {
  const int classes = 7;
  const size_t rows = 40;
  const std::vector<float> logits = random_floats(rows * classes, 1, 3.0f);
  std::vector<int32_t> labels(rows);
  std::vector<uint8_t> valid(rows, 1);
  for (size_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 5) % classes);
  valid[3] = valid[17] = 0;

  IdentityStack reference(classes);
  const LossSums expected = reference.forward(logits, labels, valid);
  const auto [expected_delta, expected_bias] = reference.backward();

  std::vector<float> delta(rows * classes, -1.0f);
  std::vector<double> row_loss(rows);
  std::vector<int32_t> flags(rows);
  for (size_t r = 0; r < rows; ++r)
    km::softmax_cross_entropy_row(r, logits.data(), labels.data(), valid.data(), classes,
                                  delta.data(), row_loss.data(), flags.data());
  double loss = 0;
  uint64_t samples = 0, correct = 0;
  for (size_t r = 0; r < rows; ++r) {
    loss += row_loss[r];
    samples += (flags[r] & km::kCounted) != 0;
    correct += (flags[r] & km::kCorrect) != 0;
  }
  EXPECT_EQ(loss, expected.loss);
  EXPECT_EQ(samples, expected.samples);
  EXPECT_EQ(correct, expected.correct);
  EXPECT_GT(correct, 0u);
  EXPECT_EQ(delta, expected_delta);

  std::vector<float> bias(classes, 0.0f);
  for (int j = 0; j < classes; ++j) km::add_column_sum(j, delta.data(), rows, classes, bias.data());
  EXPECT_EQ(bias, expected_bias);
}

TEST(TrainKernelMath, ALabelOutsideTheClassesIsFlaggedAndPassesNoGradient) {
  const std::vector<float> logits{1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> labels{2, 3};  // 3 is not one of 3 classes
  std::vector<float> delta(6, -1.0f);
  std::vector<double> loss(2);
  std::vector<int32_t> flags(2);
  for (size_t r = 0; r < 2; ++r)
    km::softmax_cross_entropy_row(r, logits.data(), labels.data(), nullptr, 3, delta.data(),
                                  loss.data(), flags.data());
  EXPECT_EQ(flags[0], km::kCounted | km::kCorrect);
  EXPECT_EQ(flags[1], km::kBadLabel);
  EXPECT_EQ(loss[1], 0.0);
  for (int c = 3; c < 6; ++c) EXPECT_EQ(delta[static_cast<size_t>(c)], 0.0f);
}

// Three steps of each optimiser with weight decay and warm-up: bit for bit.
TEST(TrainKernelMath, OptimizerElementsAreOptimizerStepBitForBit) {
  const size_t n = 513;
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
    const OptimizerOptions o = testing::optimizer_with_every_term(kind);
    Optimizer cpu(o, n);
    std::vector<float> expected = random_floats(n, 2), params = expected;
    std::vector<std::vector<float>> state(cpu.state().size(), std::vector<float>(n, 0.0f));
    for (uint64_t step = 0; step < 3; ++step) {
      const std::vector<float> grads = random_floats(n, 10 + static_cast<uint32_t>(step));
      cpu.step(expected, grads, step);
      const float lr = static_cast<float>(learning_rate(o, step));
      const double t = static_cast<double>(step + 1);
      for (size_t i = 0; i < n; ++i) {
        if (kind == OptimizerKind::kSgd) {
          km::sgd_element(i, params.data(), grads.data(), state[0].data(), lr,
                          static_cast<float>(o.momentum), static_cast<float>(o.weight_decay));
        } else {
          km::adamw_element(i, params.data(), grads.data(), state[0].data(), state[1].data(), lr,
                            static_cast<float>(o.beta1), static_cast<float>(o.beta2),
                            static_cast<float>(1 - std::pow(o.beta1, t)),
                            static_cast<float>(1 - std::pow(o.beta2, t)),
                            static_cast<float>(o.epsilon), static_cast<float>(o.weight_decay));
        }
      }
    }
    EXPECT_EQ(params, expected) << (kind == OptimizerKind::kSgd ? "sgd" : "adamw");
    EXPECT_EQ(state, cpu.state());
  }
}

// The kernels' pooling feeds the token classifier's own stack: the loss must be the
// CPU model's to the bit, over rows with padding, no tokens, and a padding slot.
TEST(TrainKernelMath, EmbeddingMeanGivesTheTokenClassifiersLoss) {
  const uint32_t vocab = 40, max_length = 10;
  const int dim = 12, hidden = 16, classes = 4;
  const size_t rows = 8;
  auto model = make_token_classifier(vocab, dim, hidden, classes);
  std::vector<float> params(model->parameter_count());
  model->initialize(params, 5);

  const testing::TokenBatch batch(rows, max_length, vocab, classes, 3, /*empty_row=*/2,
                                  /*padding_row=*/5);
  const ModelInput in = batch.input();
  const LossSums expected = model->evaluate(params, in);

  std::vector<float> pooled(rows * dim);
  for (size_t r = 0; r < rows; ++r) {
    uint32_t bad = 7;
    const float scale = km::embedding_row_scale(r, batch.tokens.data(), batch.mask.data(),
                                                batch.valid.data(), max_length, vocab, &bad);
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(scale == 0.0f, r == 2 || r == 5) << "row " << r;
    for (int d = 0; d < dim; ++d)
      pooled[r * dim + d] = km::embedding_mean_cell(r, d, params.data(), dim, batch.tokens.data(),
                                                    batch.mask.data(), max_length, vocab, scale);
  }
  MlpStack stack({dim, hidden, classes}, static_cast<size_t>(vocab) * dim);
  const LossSums got =
      stack.forward(params, pooled.data(), rows, batch.labels.data(), batch.valid.data());
  EXPECT_EQ(got.loss, expected.loss);
  EXPECT_EQ(got.samples, expected.samples);
  EXPECT_EQ(got.correct, expected.correct);
}

TEST(TrainKernelMath, TokensOutsideTheVocabularyAreCountedNotPooled) {
  const std::vector<int32_t> tokens{1, 99, -1, 2};
  const std::vector<uint8_t> mask{1, 1, 1, 1};
  const std::vector<float> table{0, 0, 10, 20, 30, 40};  // vocab 3, dim 2
  uint32_t bad = 0;
  const float scale = km::embedding_row_scale(0, tokens.data(), mask.data(), nullptr, 4, 3, &bad);
  EXPECT_EQ(bad, 2u);
  EXPECT_EQ(scale, 0.5f);
  EXPECT_EQ(km::embedding_mean_cell(0, 0, table.data(), 2, tokens.data(), mask.data(), 4, 3, scale),
            (10.0f + 30.0f) * 0.5f);
}

}  // namespace
}  // namespace evenfeed
