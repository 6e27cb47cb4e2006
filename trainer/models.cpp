// The two models of `evenfeed train`, built on MlpStack.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/philox.h"
#include "trainer/mlp_stack.h"
#include "trainer/model.h"

namespace evenfeed {
namespace {

class ImageMlp : public Model {
 public:
  ImageMlp(int image_size, int hidden, int classes)
      : input_dim_(3 * image_size * image_size),
        stack_({input_dim_, hidden, hidden, classes}, 0),
        text_(fmt::format("image MLP {}x{}x3 -> {} -> {} -> {} classes", image_size, image_size,
                          hidden, hidden, classes)) {}

  std::string describe() const override { return text_; }
  size_t parameter_count() const override { return stack_.parameter_count(); }
  void initialize(std::span<float> params, uint64_t seed) const override {
    stack_.initialize(params, seed);
  }

  LossSums forward_backward(std::span<const float> params, std::span<float> grads,
                            const ModelInput& input, const GradientsReady& ready) override {
    const LossSums sums =
        stack_.forward(params, input.features, input.count, input.labels, input.valid);
    stack_.backward(params, grads, input.features, input.count, nullptr, ready);
    return sums;
  }
  LossSums evaluate(std::span<const float> params, const ModelInput& input) override {
    return stack_.forward(params, input.features, input.count, input.labels, input.valid);
  }

 private:
  int input_dim_;
  MlpStack stack_;
  std::string text_;
};

class TokenClassifier : public Model {
 public:
  TokenClassifier(uint32_t vocab, int dim, int hidden, int classes)
      : vocab_(vocab),
        dim_(dim),
        stack_({dim, hidden, classes}, static_cast<size_t>(vocab) * dim),
        text_(fmt::format("token classifier: embedding {}x{}, mean pooling, {} -> {} -> {} classes",
                          vocab, dim, dim, hidden, classes)) {}

  std::string describe() const override { return text_; }
  size_t parameter_count() const override { return embedding_size() + stack_.parameter_count(); }
  void initialize(std::span<float> params, uint64_t seed) const override {
    CounterRng rng(seed, RngStream::kModelInit, 1, 0);
    for (size_t i = 0; i < embedding_size(); ++i)
      params[i] = static_cast<float>(rng.normal() * 0.1);
    stack_.initialize(params, seed);
  }

  LossSums forward_backward(std::span<const float> params, std::span<float> grads,
                            const ModelInput& input, const GradientsReady& ready) override {
    pool(params, input);
    const LossSums sums =
        stack_.forward(params, pooled_.data(), input.count, input.labels, input.valid);
    pooled_grad_.resize(pooled_.size());
    stack_.backward(params, grads, pooled_.data(), input.count, pooled_grad_.data(), ready);
    // Each real token's embedding row receives its row's pooled gradient / length.
    for (size_t r = 0; r < input.count; ++r) {
      const float scale = inverse_length_[r];
      if (scale == 0) continue;
      const float* g = pooled_grad_.data() + r * dim_;
      for (uint32_t t = 0; t < input.max_length; ++t) {
        const size_t cell = r * input.max_length + t;
        if (input.mask[cell] == 0) continue;
        float* row = grads.data() + static_cast<size_t>(input.tokens[cell]) * dim_;
        for (int d = 0; d < dim_; ++d) row[d] += g[d] * scale;
      }
    }
    if (ready) ready(0);
    return sums;
  }
  LossSums evaluate(std::span<const float> params, const ModelInput& input) override {
    pool(params, input);
    return stack_.forward(params, pooled_.data(), input.count, input.labels, input.valid);
  }

 private:
  size_t embedding_size() const { return static_cast<size_t>(vocab_) * dim_; }

  // pooled_[r] = mean of the embeddings of row r's real tokens.
  void pool(std::span<const float> params, const ModelInput& input) {
    pooled_.assign(input.count * dim_, 0.0f);
    inverse_length_.assign(input.count, 0.0f);
    for (size_t r = 0; r < input.count; ++r) {
      float* out = pooled_.data() + r * dim_;
      uint32_t real = 0;
      for (uint32_t t = 0; t < input.max_length; ++t) {
        const size_t cell = r * input.max_length + t;
        if (input.mask[cell] == 0) continue;
        const int32_t token = input.tokens[cell];
        EVENFEED_CHECK(token >= 0 && static_cast<uint32_t>(token) < vocab_,
                       "token id {} is outside the model's vocabulary of {}", token, vocab_);
        const float* row = params.data() + static_cast<size_t>(token) * dim_;
        for (int d = 0; d < dim_; ++d) out[d] += row[d];
        ++real;
      }
      if (real == 0 || (input.valid != nullptr && input.valid[r] == 0)) continue;
      inverse_length_[r] = 1.0f / static_cast<float>(real);
      for (int d = 0; d < dim_; ++d) out[d] *= inverse_length_[r];
    }
  }

  uint32_t vocab_;
  int dim_;
  MlpStack stack_;
  std::string text_;
  std::vector<float> pooled_, pooled_grad_, inverse_length_;
};

}  // namespace

std::unique_ptr<Model> make_image_mlp(int image_size, int hidden, int classes) {
  return std::make_unique<ImageMlp>(image_size, hidden, classes);
}

std::unique_ptr<Model> make_token_classifier(uint32_t vocab, int dim, int hidden, int classes) {
  EVENFEED_CHECK(vocab > 0, "the token classifier needs a vocabulary size above 0");
  return std::make_unique<TokenClassifier>(vocab, dim, hidden, classes);
}

}  // namespace evenfeed
