// The data-parallel trainer behind `evenfeed train`: every rank runs this with its own
// communicator. Per optimiser step: `accum` micro-steps, each loading this rank's
// batch of the plan, forward and backward; on the last micro-step only, gradient
// buckets are all-reduced as backward produces them (the no_sync rule), the summed
// gradients are divided by the global sample count of the step (all ranks, all
// micro-steps), and the optimiser steps. Checkpoints make a stopped run resume
// exactly; telemetry says whether every rank was kept busy.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "cuda/gpu_runtime.h"
#include "trainer/communicator.h"
#include "trainer/grad_buckets.h"
#include "trainer/optimizer.h"
#include "trainer/telemetry.h"

namespace evenfeed {

struct TrainOptions {
  std::string data;            // dataset directory (evenfeed convert)
  std::string eval_data;       // held-out dataset, evaluated after each epoch (optional)
  std::string model = "auto";  // mlp (images), tokens, or auto from the dataset kind
  // Where the model computes: cpu, gpu, or auto (the GPU when one is visible). On a GPU
  // the gradients go through the device communicator given to train() (NCCL).
  std::string device = "auto";
  int gpu = 0;          // this rank's GPU (the tool passes its local rank)
  int image_size = 32;  // image crops are resized to this before the MLP
  int hidden = 256;     // hidden width of both models
  int embed_dim = 64;   // token model embedding width
  uint32_t epochs = 1;
  uint64_t batch_size = 32;        // samples per rank per micro-step ...
  uint64_t tokens_per_rank = 0;    // ... or, when > 0, a token budget (length bucketing)
  uint64_t max_batch_size = 0;     // with a token budget: most samples per batch (0: no cap)
  bool truncate_oversize = false;  // with a token budget: cut longer samples to it, or fail
  // With a token budget: deal each epoch's batches away from the previous epoch's batch
  // mates (BucketingOptions::fresh_mates). Off, no epoch's plan depends on another's.
  bool fresh_mates = true;
  // With a token budget: try twice the automatic sample cap on the first two epochs at
  // the start (BucketingOptions::cap_trial). A resumed run takes its checkpoint's cap.
  bool cap_trial = true;
  // With a token budget: where no sample cap's pairs estimate met the target, try other
  // caps and noises on the first two epochs at the start
  // (BucketingOptions::fallback_trial). A resumed run takes its checkpoint's.
  bool fallback_trial = true;
  uint32_t accum = 1;             // micro-steps per optimiser step
  OptimizerOptions optimizer;     // total_steps is filled in from the plan
  double warmup_fraction = 0.05;  // of all optimiser steps
  uint64_t seed = 0;
  std::string checkpoint_dir;
  uint64_t checkpoint_every = 0;  // optimiser steps; 0: only at the end and when stopped
  bool resume = false;
  uint64_t stop_at_step = 0;  // > 0: checkpoint and stop after this optimiser step
  std::string save_weights;   // raw float32 parameters at the end (rank 0)
  std::string log;            // JSON lines, one per optimiser step (rank 0)
  std::string log_samples;    // PREFIX: each rank's samples per step (trainer/sample_log.h)
  BucketOptions buckets;
  bool bucketed = true;     // false: one all-reduce of all gradients after backward
  int loader_threads = 0;   // 0: cores / ranks on this host
  int compute_threads = 1;  // BLAS threads
  bool substitute_bad_records = false;
  bool verify_checksums = false;  // check each payload's XXH3 as it is read
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

struct TrainProgress {
  uint64_t step = 0, total_steps = 0;
  uint32_t epoch = 0;
  double loss = 0, samples_per_sec = 0;
};

struct TrainResult {
  uint64_t steps = 0;    // optimiser steps taken in total (including before a resume)
  uint64_t samples = 0;  // real samples trained on in this run
  double seconds = 0, samples_per_sec = 0;
  double last_loss = 0;
  double eval_accuracy = -1, eval_loss = -1;  // -1: no held-out data
  bool stopped_early = false;                 // --stop-at-step or an interrupt
  bool interrupted = false;
  std::string model;
  BalanceReport balance;
};

// Makes the communicator for device-memory gradients, ordered after the given GPU
// stream (the GPU engine's); called only when a GPU rank has peers.
using DeviceCommFactory = std::function<std::unique_ptr<Communicator>(GpuStream compute_stream)>;

// Runs the training; throws Error (naming step and rank for a non-finite loss). `comm`
// carries the host exchanges (and the gradients on the CPU).
TrainResult train(const TrainOptions& options, Communicator& comm, int local_ranks,
                  const std::function<void(const TrainProgress&)>& on_step,
                  const DeviceCommFactory& device_comm = {});

}  // namespace evenfeed
