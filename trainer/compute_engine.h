// Where one rank's model computes and its state lives. The training loop is written
// once against this interface; two engines implement it:
//   - the CPU engine: parameters, gradients and optimiser state in host memory, the
//     model through OpenBLAS, images normalised on the host (the reference path);
//   - the GPU engine: all of those in device memory, the model through cuBLAS and
//     cuda/train_kernels, batches copied ahead by the DeviceFeeder on its own stream
//     and normalised on the device (uint8 over PCIe, 4x fewer bytes than float).
// Both take the loader's batches in plan order and give the model the same numbers
// up to rounding, so a run moves between them through its checkpoint.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "loader/dataset.h"
#include "loader/loader.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"

namespace evenfeed {

// One loaded batch, ready for the model, with what the loop records about it.
struct PreparedBatch {
  ModelInput input;  // pointers into the engine's memory (host or device)
  // Views into memory that keep_alive holds (the host batch itself on the CPU).
  std::span<const uint64_t> sample_ids;
  std::span<const uint8_t> valid;  // empty: every slot real
  double tokens = 0, padding = 0;  // real token cells (samples for images) and padding
  // Of the time next() took, the part spent preparing the batch (normalising, queueing
  // copies) rather than waiting for the loader.
  double prepare_seconds = 0;
  std::shared_ptr<void> keep_alive;  // whatever owns the memory behind `input`
};

struct EngineOptions {
  OptimizerOptions optimizer;
  int device = 0;  // GPU engine: this rank's GPU
};

class ComputeEngine {
 public:
  virtual ~ComputeEngine() = default;
  // "cpu", or "gpu N (name)".
  virtual std::string where() const = 0;
  virtual std::string describe_model() const = 0;
  // The gradients in the engine's memory; GradBuckets reduce them in place (so a GPU
  // engine pairs with a device-buffer communicator).
  virtual std::span<float> gradients() = 0;
  // The GPU engine's stream (collectives are ordered after it); nullptr on the CPU.
  virtual void* stream() = 0;

  virtual void initialize(uint64_t seed) = 0;
  virtual void zero_gradients() = 0;
  // Begins taking batches from `loader` (an epoch's, or an evaluation's); detach()
  // lets go of every batch taken from it, and must come before the loader goes.
  virtual void attach(Loader& loader, const Dataset& dataset) = 0;
  virtual void detach() = 0;
  // The next batch in order, or nothing at the end; blocks while the loader works.
  virtual std::optional<PreparedBatch> next() = 0;
  // The model on a prepared batch: forward and backward adding into the gradients
  // (announcing finished ones to `ready`), or forward only. Return once computed.
  virtual LossSums forward_backward(const ModelInput& input, const GradientsReady& ready) = 0;
  virtual LossSums evaluate(const ModelInput& input) = 0;
  // Turns the summed gradients into the mean (x scale) and steps the optimiser.
  virtual void apply(float scale, uint64_t step) = 0;

  // Parameters then optimiser state, as host arrays (checkpoints, --save-weights).
  virtual std::vector<std::vector<float>> state() = 0;
  virtual void set_state(std::vector<std::vector<float>> arrays) = 0;
  virtual size_t state_arrays() const = 0;
};

// Attaches an engine to a loader for one scope (declare it after the loader).
class EngineAttachment {
 public:
  EngineAttachment(ComputeEngine& engine, Loader& loader, const Dataset& dataset)
      : engine_(engine) {
    engine_.attach(loader, dataset);
  }
  ~EngineAttachment() { engine_.detach(); }
  EngineAttachment(const EngineAttachment&) = delete;
  EngineAttachment& operator=(const EngineAttachment&) = delete;

 private:
  ComputeEngine& engine_;
};

// The models by name ("mlp" or "tokens"), sized for `dataset`.
struct ModelSpec {
  std::string name;
  int image_size = 32, hidden = 256, embed_dim = 64, classes = 2;
  uint32_t vocab = 0;
};

// Real token cells and padding cells of a loaded batch (samples and padding slots for
// images).
std::pair<double, double> tokens_and_padding(const Batch& batch, bool tokens);

// The CPU model `spec` names: the reference the CPU engine computes with, and what sizes
// a model before any of its memory is taken.
std::unique_ptr<Model> make_cpu_model(const ModelSpec& spec);

std::unique_ptr<ComputeEngine> make_cpu_engine(const ModelSpec& model,
                                               const EngineOptions& options);
// Throws Error when no GPU is visible or the build has no CUDA.
std::unique_ptr<ComputeEngine> make_gpu_engine(const ModelSpec& model,
                                               const EngineOptions& options);

}  // namespace evenfeed
