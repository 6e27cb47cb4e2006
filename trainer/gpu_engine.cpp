// The GPU engine: parameters, gradients and optimiser state in device memory; the
// loader's batches go through the DeviceFeeder (copied ahead on its own stream, the
// compute stream waiting on each copy's event, no host synchronisation) and are
// normalised on the device; the models are cuBLAS plus cuda/train_kernels.
#include <chrono>
#include <cmath>
#include <deque>
#include <tuple>

#include "core/error.h"
#include "core/log.h"
#include "cuda/device_array.h"
#include "cuda/device_feeder.h"
#include "cuda/normalize.h"
#include "cuda/train_kernels.h"
#include "trainer/compute_engine.h"
#include "trainer/gpu_models.h"

namespace evenfeed {
namespace {

// What the loop needs about a batch after its host memory has gone back to the
// loader: recorded when the feeder takes the batch, used when it hands it out.
struct HostFacts {
  std::vector<uint64_t> sample_ids;
  std::vector<uint8_t> valid;  // empty: every slot real
  double tokens = 0, padding = 0;
  size_t count = 0;
  uint32_t max_length = 0;
};

// What a prepared batch keeps alive: its device buffer and the facts its views show.
struct HeldBatch {
  DeviceBatch device;
  HostFacts facts;
};

// The feeder's parts of a batch, in this order.
enum Part : size_t { kPayload = 0, kLabels = 1, kValid = 2, kMask = 3 };

template <typename T>
std::span<const std::byte> bytes_of(std::span<const T> values) {
  return std::as_bytes(values);
}

class GpuEngine : public ComputeEngine {
 public:
  GpuEngine(const ModelSpec& spec, const EngineOptions& options)
      : options_(options), image_size_(spec.image_size), stream_(make_stream(options.device)) {
    model_ = spec.name == "mlp"
                 ? make_gpu_image_mlp(spec.image_size, spec.hidden, spec.classes, stream_)
                 : make_gpu_token_classifier(spec.vocab, spec.embed_dim, spec.hidden, spec.classes,
                                             stream_);
    const size_t n = model_->parameter_count();
    params_.grow(n);
    grads_.grow(n);
    optimizer_state_.resize(options.optimizer.kind == OptimizerKind::kSgd ? 1 : 2);
    for (DeviceArray<float>& s : optimizer_state_) {
      s.grow(n);
      gpu_memset_async(s.data(), 0, n * sizeof(float), stream_);
    }
    gpu_stream_synchronize(stream_);
  }

  ~GpuEngine() override {
    feeder_.reset();
    model_.reset();  // its cuBLAS handle is bound to the stream
    try {
      gpu_stream_synchronize(stream_);
    } catch (const Error& e) {
      log_warn("GPU engine: {}", e.what());
    }
    gpu_stream_destroy(stream_);
  }

  std::string where() const override { return "gpu " + std::to_string(options_.device); }
  std::string describe_model() const override { return model_->describe(); }
  std::span<float> gradients() override { return grads_.span(); }
  void* stream() override { return stream_; }
  void initialize(uint64_t seed) override { model_->initialize(params_.span(), seed); }
  void zero_gradients() override {
    gpu_memset_async(grads_.data(), 0, grads_.size() * sizeof(float), stream_);
  }

  void attach(Loader& loader, const Dataset& dataset) override {
    detach();
    images_ = dataset.manifest().kind == DatasetKind::kImage;
    FeederOptions feeder;
    feeder.device = options_.device;
    feeder.depth = 2;
    feeder.compute_stream = stream_;
    feeder_ = std::make_unique<DeviceFeeder>([this, &loader] { return take(loader); }, feeder);
  }

  // Waits for the copies in flight and drops the host batches the feeder still holds.
  void detach() override {
    feeder_.reset();
    facts_.clear();
  }

  std::optional<PreparedBatch> next() override {
    std::optional<DeviceBatch> device = feeder_->next();
    if (!device) return std::nullopt;
    EVENFEED_CHECK(!facts_.empty(), "the device feeder handed out a batch it was never given");
    const auto start = std::chrono::steady_clock::now();
    // Dropping the batch returns its device buffer once the stream has used it.
    auto held =
        std::make_shared<HeldBatch>(HeldBatch{std::move(*device), std::move(facts_.front())});
    facts_.pop_front();
    const DeviceBatch& batch = held->device;
    const HostFacts& facts = held->facts;
    batch.wait_on(stream_);  // the compute stream starts after the copy, host not blocked
    PreparedBatch prepared;
    prepared.sample_ids = facts.sample_ids;
    prepared.valid = facts.valid;
    prepared.tokens = facts.tokens;
    prepared.padding = facts.padding;
    ModelInput& in = prepared.input;
    in.count = facts.count;
    in.labels = static_cast<const int32_t*>(batch.part(kLabels));
    in.valid = facts.valid.empty() ? nullptr : static_cast<const uint8_t*>(batch.part(kValid));
    if (images_) {
      const int s = image_size_;
      features_.grow(in.count * 3 * static_cast<size_t>(s) * s);
      normalize_on_gpu(static_cast<const uint8_t*>(batch.part(kPayload)), {in.count, s, s}, nullptr,
                       {}, DataType::kFloat32, features_.data(), stream_);
      in.features = features_.data();
    } else {
      in.tokens = static_cast<const int32_t*>(batch.part(kPayload));
      in.mask = static_cast<const uint8_t*>(batch.part(kMask));
      in.max_length = facts.max_length;
    }
    prepared.keep_alive = std::move(held);
    prepared.prepare_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return prepared;
  }

  LossSums forward_backward(const ModelInput& input, const GradientsReady& ready) override {
    return model_->forward_backward(params_.span(), grads_.span(), input, ready);
  }
  LossSums evaluate(const ModelInput& input) override {
    return model_->evaluate(params_.span(), input);
  }

  // The same formulas as Optimizer::step, one kernel over the flat buffers.
  void apply(float scale, uint64_t step) override {
    const size_t n = params_.size();
    gpu_scale(grads_.data(), n, scale, stream_);
    const OptimizerOptions& o = options_.optimizer;
    const float lr = static_cast<float>(learning_rate(o, step));
    const float decay = static_cast<float>(o.weight_decay);
    if (o.kind == OptimizerKind::kSgd) {
      gpu_sgd_step(params_.data(), grads_.data(), optimizer_state_[0].data(), n, lr,
                   static_cast<float>(o.momentum), decay, stream_);
    } else {
      const double t = static_cast<double>(step + 1);
      gpu_adamw_step(params_.data(), grads_.data(), optimizer_state_[0].data(),
                     optimizer_state_[1].data(), n, lr, static_cast<float>(o.beta1),
                     static_cast<float>(o.beta2), static_cast<float>(1.0 - std::pow(o.beta1, t)),
                     static_cast<float>(1.0 - std::pow(o.beta2, t)), static_cast<float>(o.epsilon),
                     decay, stream_);
    }
  }

  std::vector<std::vector<float>> state() override {
    gpu_stream_synchronize(stream_);
    std::vector<std::vector<float>> arrays{params_.download(params_.size())};
    for (const DeviceArray<float>& s : optimizer_state_) arrays.push_back(s.download(s.size()));
    return arrays;
  }
  void set_state(std::vector<std::vector<float>> arrays) override {
    gpu_stream_synchronize(stream_);
    params_.upload(arrays[0]);
    for (size_t i = 0; i < optimizer_state_.size(); ++i) optimizer_state_[i].upload(arrays[i + 1]);
  }
  size_t state_arrays() const override { return 1 + optimizer_state_.size(); }

 private:
  static GpuStream make_stream(int device) {
    EVENFEED_CHECK(gpu_visible(), "--device gpu needs a GPU, and none is visible");
    gpu_set_device(device);
    return gpu_stream_create();
  }

  // The feeder's source: the loader's next batch as parts for the copy, and the facts
  // the loop needs about it once its host slot has been recycled.
  std::optional<HostBatch> take(Loader& loader) {
    std::optional<Batch> loaded = loader.next();
    if (!loaded) return std::nullopt;
    auto batch = std::make_shared<Batch>(std::move(*loaded));
    HostFacts facts;
    // Copied: the host batch goes back to the loader once its copy is done.
    facts.sample_ids.assign(batch->sample_ids().begin(), batch->sample_ids().end());
    facts.valid.assign(batch->valid().begin(), batch->valid().end());
    std::tie(facts.tokens, facts.padding) = tokens_and_padding(*batch, !images_);
    facts.count = batch->size();
    HostBatch host;
    host.index = batch->index();
    const size_t s = static_cast<size_t>(image_size_);
    if (images_) {
      host.parts.push_back(
          {reinterpret_cast<const std::byte*>(batch->images_uint8()), facts.count * s * s * 3});
    } else {
      facts.max_length = batch->max_length();
      host.parts.push_back(bytes_of(batch->tokens()));
    }
    host.parts.push_back(bytes_of(batch->labels()));
    host.parts.push_back(bytes_of(batch->valid()));
    if (!images_) host.parts.push_back(bytes_of(batch->mask()));
    host.owner = std::move(batch);
    facts_.push_back(std::move(facts));
    return host;
  }

  EngineOptions options_;
  int image_size_;  // image models: the loader's crop size
  GpuStream stream_;
  std::unique_ptr<Model> model_;
  DeviceArray<float> params_, grads_, features_;
  std::vector<DeviceArray<float>> optimizer_state_;
  std::unique_ptr<DeviceFeeder> feeder_;
  std::deque<HostFacts> facts_;
  bool images_ = true;
};

}  // namespace

std::unique_ptr<ComputeEngine> make_gpu_engine(const ModelSpec& model,
                                               const EngineOptions& options) {
  return std::make_unique<GpuEngine>(model, options);
}

}  // namespace evenfeed
