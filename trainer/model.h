// The trainer's models and what they see. A model's parameters and gradients are one
// flat float32 buffer each, laid out layer by layer in forward order, so backward
// finishes gradients from the end of the buffer towards the start and the gradient
// buckets can be all-reduced while the earlier layers are still being computed.
//
// forward_backward adds the gradient of the *sum* of per-sample losses over the real
// (valid) samples: the caller divides by the global sample count once all ranks'
// sums are in, which is what makes uneven per-rank batches average correctly.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace evenfeed {

struct ModelInput {
  size_t count = 0;                 // rows, padding rows included
  const float* features = nullptr;  // image models: count x input_dim, normalised
  const int32_t* tokens = nullptr;  // token models: count x max_length, with a mask
  const uint8_t* mask = nullptr;
  uint32_t max_length = 0;
  const int32_t* labels = nullptr;
  const uint8_t* valid = nullptr;  // 0 marks a padding row; nullptr: all real
};

struct LossSums {
  double loss = 0;  // summed cross-entropy over real samples
  uint64_t samples = 0, correct = 0;
};

// Called during backward with `begin`: gradients [begin, parameter_count()) are final.
using GradientsReady = std::function<void(size_t begin)>;

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string describe() const = 0;
  virtual size_t parameter_count() const = 0;
  // Deterministic from the seed alone (Philox stream kModelInit).
  virtual void initialize(std::span<float> params, uint64_t seed) const = 0;
  // Forward, loss, and backward adding into `grads` (not zeroed here).
  virtual LossSums forward_backward(std::span<const float> params, std::span<float> grads,
                                    const ModelInput& input, const GradientsReady& ready) = 0;
  // Forward only: loss and correct predictions over the real samples.
  virtual LossSums evaluate(std::span<const float> params, const ModelInput& input) = 0;
};

// Image classifier: an MLP over the flattened, normalised size x size x 3 crop:
// input -> hidden -> hidden -> classes, ReLU between.
std::unique_ptr<Model> make_image_mlp(int image_size, int hidden, int classes);
// Token classifier: embedding (vocab x dim), masked mean pooling, then dim -> hidden
// -> classes with a ReLU.
std::unique_ptr<Model> make_token_classifier(uint32_t vocab, int dim, int hidden, int classes);

}  // namespace evenfeed
