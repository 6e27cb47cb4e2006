// The GPU models: GpuMlpStack for the layers, the CPU twin for what needs no GPU
// (description, initialisation on the host, then one copy up).
#include "trainer/gpu_models.h"

#include <vector>

#include "core/error.h"
#include "trainer/gpu_mlp_stack.h"

namespace evenfeed {
namespace {

// Initialises on the host with the CPU model, then copies the parameters up.
void initialize_through(const Model& cpu_twin, std::span<float> device_params, uint64_t seed) {
  std::vector<float> host(cpu_twin.parameter_count());
  cpu_twin.initialize(host, seed);
  gpu_copy_to_device(device_params.data(), host.data(), host.size() * sizeof(float));
}

class GpuImageMlp : public Model {
 public:
  GpuImageMlp(int image_size, int hidden, int classes, GpuStream stream)
      : cpu_twin_(make_image_mlp(image_size, hidden, classes)),
        stack_({3 * image_size * image_size, hidden, hidden, classes}, 0, stream) {}

  std::string describe() const override { return cpu_twin_->describe(); }
  size_t parameter_count() const override { return stack_.parameter_count(); }
  void initialize(std::span<float> params, uint64_t seed) const override {
    initialize_through(*cpu_twin_, params, seed);
  }
  LossSums forward_backward(std::span<const float> params, std::span<float> grads,
                            const ModelInput& input, const GradientsReady& ready) override {
    stack_.forward(params.data(), input.features, input.count, input.labels, input.valid);
    stack_.backward(params.data(), grads.data(), input.features, input.count, nullptr, ready);
    return stack_.collect();
  }
  LossSums evaluate(std::span<const float> params, const ModelInput& input) override {
    stack_.forward(params.data(), input.features, input.count, input.labels, input.valid);
    return stack_.collect();
  }

 private:
  std::unique_ptr<Model> cpu_twin_;
  GpuMlpStack stack_;
};

class GpuTokenClassifier : public Model {
 public:
  GpuTokenClassifier(uint32_t vocab, int dim, int hidden, int classes, GpuStream stream)
      : cpu_twin_(make_token_classifier(vocab, dim, hidden, classes)),
        vocab_(vocab),
        dim_(dim),
        stream_(stream),
        stack_({dim, hidden, classes}, static_cast<size_t>(vocab) * dim, stream),
        bad_tokens_(1) {
    reset_bad_tokens();
  }

  std::string describe() const override { return cpu_twin_->describe(); }
  size_t parameter_count() const override { return cpu_twin_->parameter_count(); }
  void initialize(std::span<float> params, uint64_t seed) const override {
    initialize_through(*cpu_twin_, params, seed);
  }
  LossSums forward_backward(std::span<const float> params, std::span<float> grads,
                            const ModelInput& input, const GradientsReady& ready) override {
    pool(params, input);
    stack_.forward(params.data(), pooled_.data(), input.count, input.labels, input.valid);
    pooled_grad_.grow(input.count * dim_);
    stack_.backward(params.data(), grads.data(), pooled_.data(), input.count, pooled_grad_.data(),
                    ready);
    // The embedding rows are the first parameters: their gradients start at 0.
    gpu_embedding_mean_backward(pooled_grad_.data(), inverse_length_.data(), dim_, input.tokens,
                                input.mask, input.count, input.max_length, vocab_, grads.data(),
                                stream_);
    if (ready) ready(0);
    return collect();
  }
  LossSums evaluate(std::span<const float> params, const ModelInput& input) override {
    pool(params, input);
    stack_.forward(params.data(), pooled_.data(), input.count, input.labels, input.valid);
    return collect();
  }

 private:
  void pool(std::span<const float> params, const ModelInput& input) {
    pooled_.grow(input.count * dim_);
    inverse_length_.grow(input.count);
    gpu_embedding_mean(params.data(), vocab_, dim_, input.tokens, input.mask, input.valid,
                       input.count, input.max_length, pooled_.data(), inverse_length_.data(),
                       bad_tokens_.data(), stream_);
  }
  void reset_bad_tokens() {
    const uint64_t zero = 0;
    bad_tokens_.upload(std::span<const uint64_t>(&zero, 1));
  }
  LossSums collect() {
    const LossSums sums = stack_.collect();  // waits for the stream
    const uint64_t bad = bad_tokens_.download(1)[0];
    if (bad > 0) reset_bad_tokens();
    EVENFEED_CHECK(bad == 0, "{} token id(s) are outside the model's vocabulary of {}", bad,
                   vocab_);
    return sums;
  }

  std::unique_ptr<Model> cpu_twin_;
  uint32_t vocab_;
  int dim_;
  GpuStream stream_;
  GpuMlpStack stack_;
  DeviceArray<float> pooled_, pooled_grad_, inverse_length_;
  DeviceArray<uint64_t> bad_tokens_;
};

}  // namespace

std::unique_ptr<Model> make_gpu_image_mlp(int image_size, int hidden, int classes,
                                          GpuStream stream) {
  return std::make_unique<GpuImageMlp>(image_size, hidden, classes, stream);
}

std::unique_ptr<Model> make_gpu_token_classifier(uint32_t vocab, int dim, int hidden, int classes,
                                                 GpuStream stream) {
  EVENFEED_CHECK(vocab > 0, "the token classifier needs a vocabulary size above 0");
  return std::make_unique<GpuTokenClassifier>(vocab, dim, hidden, classes, stream);
}

}  // namespace evenfeed
