// The CPU engine: host memory, the models through OpenBLAS, images normalised on the
// host. The reference every other path is compared with.
#include <algorithm>
#include <chrono>
#include <tuple>

#include "core/error.h"
#include "cuda/normalize.h"
#include "trainer/compute_engine.h"

namespace evenfeed {
namespace {

class CpuEngine : public ComputeEngine {
 public:
  CpuEngine(const ModelSpec& spec, const EngineOptions& options)
      : image_size_(spec.image_size),
        model_(make_cpu_model(spec)),
        params_(model_->parameter_count()),
        grads_(params_.size()),
        optimizer_(options.optimizer, params_.size()) {}

  std::string where() const override { return "cpu"; }
  std::string describe_model() const override { return model_->describe(); }
  std::span<float> gradients() override { return grads_; }
  void* stream() override { return nullptr; }
  void initialize(uint64_t seed) override { model_->initialize(params_, seed); }
  void zero_gradients() override { std::fill(grads_.begin(), grads_.end(), 0.0f); }

  void attach(Loader& loader, const Dataset& dataset) override {
    loader_ = &loader;
    images_ = dataset.manifest().kind == DatasetKind::kImage;
  }
  void detach() override { loader_ = nullptr; }

  // The input points into the batch (tokens) or into features_ (images), valid until
  // the next call.
  std::optional<PreparedBatch> next() override {
    std::optional<Batch> loaded = loader_->next();
    if (!loaded) return std::nullopt;
    const auto start = std::chrono::steady_clock::now();
    auto batch = std::make_shared<Batch>(std::move(*loaded));
    PreparedBatch prepared;
    prepared.sample_ids = batch->sample_ids();
    prepared.valid = batch->valid();
    std::tie(prepared.tokens, prepared.padding) = tokens_and_padding(*batch, !images_);
    ModelInput& in = prepared.input;
    in.count = batch->size();
    in.labels = batch->labels().data();
    in.valid = batch->valid().empty() ? nullptr : batch->valid().data();
    if (images_) {
      features_.resize(in.count * 3 * static_cast<size_t>(image_size_) * image_size_);
      normalize_reference(batch->images_uint8(), {in.count, image_size_, image_size_}, nullptr, {},
                          DataType::kFloat32, features_.data());
      in.features = features_.data();
    } else {
      in.tokens = batch->tokens().data();
      in.mask = batch->mask().data();
      in.max_length = batch->max_length();
    }
    prepared.keep_alive = std::move(batch);
    prepared.prepare_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return prepared;
  }

  LossSums forward_backward(const ModelInput& input, const GradientsReady& ready) override {
    return model_->forward_backward(params_, grads_, input, ready);
  }
  LossSums evaluate(const ModelInput& input) override { return model_->evaluate(params_, input); }

  void apply(float scale, uint64_t step) override {
    for (float& g : grads_) g *= scale;
    optimizer_.step(params_, grads_, step);
  }

  std::vector<std::vector<float>> state() override {
    std::vector<std::vector<float>> arrays{params_};
    for (const auto& s : optimizer_.state()) arrays.push_back(s);
    return arrays;
  }
  void set_state(std::vector<std::vector<float>> arrays) override {
    params_ = std::move(arrays[0]);
    for (size_t i = 0; i < optimizer_.state().size(); ++i)
      optimizer_.state()[i] = std::move(arrays[i + 1]);
  }
  size_t state_arrays() const override { return 1 + optimizer_.state().size(); }

 private:
  int image_size_;
  std::unique_ptr<Model> model_;
  std::vector<float> params_, grads_, features_;
  Optimizer optimizer_;
  Loader* loader_ = nullptr;
  bool images_ = true;
};

}  // namespace

std::unique_ptr<Model> make_cpu_model(const ModelSpec& spec) {
  return spec.name == "mlp"
             ? make_image_mlp(spec.image_size, spec.hidden, spec.classes)
             : make_token_classifier(spec.vocab, spec.embed_dim, spec.hidden, spec.classes);
}

std::unique_ptr<ComputeEngine> make_cpu_engine(const ModelSpec& model,
                                               const EngineOptions& options) {
  return std::make_unique<CpuEngine>(model, options);
}

}  // namespace evenfeed
