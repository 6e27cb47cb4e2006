#include "trainer/trainer.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <tbb/parallel_for.h>

#include "bucketing/length_source.h"
#include "bucketing/settle_batching.h"
#include "bucketing/token_budget_planner.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "cuda/gpu_runtime.h"
#include "loader/dataset.h"
#include "loader/loader.h"
#include "sampler/distributed_sampler.h"
#include "trainer/checkpoint.h"
#include "trainer/compute_engine.h"
#include "trainer/sample_log.h"

namespace evenfeed {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What every rank sends at each optimiser step: this step's sums and flags, and the
// previous step's timings (the current step's are not known until it ends).
struct Exchange {
  double loss = 0, samples = 0, correct = 0, tokens = 0, padding = 0;
  double nonfinite = 0, interrupted = 0;
  RankStep previous;
};

// One epoch's plan for this dataset and these options, from a plan state.
class PlanFactory {
 public:
  PlanFactory(const Dataset& dataset, const TrainOptions& options)
      : dataset_(dataset), options_(options), lengths_(dataset.index().lengths()) {
    const bool tokens = dataset.manifest().kind == DatasetKind::kTokens;
    EVENFEED_CHECK(options_.tokens_per_rank == 0 || tokens,
                   "--tokens-per-rank plans token datasets, but {} is an image dataset; use "
                   "--batch-size",
                   options_.data);
    EVENFEED_CHECK(options_.tokens_per_rank > 0 || options_.max_batch_size == 0,
                   "--max-batch-size caps token-budget batches; without --tokens-per-rank every "
                   "batch has --batch-size samples");
    EVENFEED_CHECK(options_.tokens_per_rank > 0 || options_.fresh_mates,
                   "--no-fresh-mates changes how token-budget batches are dealt; without "
                   "--tokens-per-rank nothing is dealt");
    if (options_.tokens_per_rank > 0) {
      bucketing_.tokens_per_rank = options_.tokens_per_rank;
      bucketing_.max_batch_size = options_.max_batch_size;
      if (options_.truncate_oversize) bucketing_.oversize = OversizePolicy::kTruncate;
      bucketing_.fresh_mates = options_.fresh_mates;
      bucketing_.cap_trial = options_.cap_trial;
      bucketing_.fallback_trial = options_.fallback_trial;
    }
  }

  // Settles what the planner chooses from the data, once, before anything is planned:
  // the window, the noise and the sample cap. A resumed run takes them from its
  // checkpoint's batching (`recorded`), since the cap trial depends on the world size it
  // is made at (bucketing/cap_trial.h) and the served steps must replay as planned; the
  // signature check then still refuses a checkpoint of other flags or another plan
  // revision. A new run settles them at `world` as `evenfeed plan` does
  // (bucketing/settle_batching.h); a resumed run whose record cannot be taken makes no
  // trial, since that check refuses it anyway.
  void settle(uint32_t world, const nlohmann::json* recorded) {
    if (options_.tokens_per_rank == 0) return;
    BucketingOptions given = bucketing_;
    if (recorded != nullptr && recorded->contains("chosen_max_batch_size") &&
        recorded->value("plan_revision", 0) == kTokenBudgetPlanRevision) {
      const uint64_t cap = recorded->at("chosen_max_batch_size").get<uint64_t>();
      bucketing_.window = recorded->at("window").get<uint64_t>();
      bucketing_.noise_cap = recorded->at("noise_cap").get<double>();
      bucketing_.max_batch_size = cap == 0 ? kNoBatchCap : cap;
      bucketing_.max_batch_size_resolved = true;
      return;
    }
    if (recorded != nullptr) given.cap_trial = given.fallback_trial = false;
    const SettledBatching settled =
        settle_batching(lengths_, given, {.world_size = world, .seed = options_.seed});
    bucketing_ = settled.options;
    doubled_by_trial_ = settled.doubled_by_cap_trial;
    fallback_kept_ = settled.kept_by_fallback_trial;
    raised_by_balance_trial_ = settled.raised_by_balance_trial;
    noise_narrowed_by_balance_trial_ = settled.noise_narrowed_by_balance_trial;
  }
  // One line for the log: what the plan settled on, and why the cap when a trial set it.
  std::string describe() const {
    if (options_.tokens_per_rank == 0)
      return fmt::format("{} samples per rank", options_.batch_size);
    const std::string cap =
        bucketing_.max_batch_size == kNoBatchCap
            ? "no sample cap"
            : fmt::format("at most {} samples per batch", bucketing_.max_batch_size);
    std::string why;
    if (raised_by_balance_trial_)
      why = " (raised by the balance trial: the cap before it missed balance)";
    else if (doubled_by_trial_)
      why = " (twice the estimate's, kept by the cap trial)";
    std::string noise_why;
    if (noise_narrowed_by_balance_trial_)
      noise_why = " (narrowed by the balance trial: the noise before it missed balance)";
    else if (fallback_kept_)
      noise_why = " (cap and noise kept by the fallback trial)";
    return fmt::format("{} tokens per rank, {}{}, window {}, noise cap {:.4g}{}",
                       options_.tokens_per_rank, cap, why, bucketing_.window, bucketing_.noise_cap,
                       noise_why);
  }

  std::unique_ptr<StepPlanner> make(uint32_t world, const PlanState& state) const {
    if (options_.tokens_per_rank > 0) {
      // The deal steers away from the previous epoch's batch mates, as planned at the
      // world size this epoch started at (EpochMatesChain).
      return std::make_unique<TokenBudgetPlanner>(
          lengths_, bucketing_, world, state,
          chain(state.seed).previous(state.epoch, state.world_size_at_start(world)));
    }
    SamplerOptions s;
    s.batch_size = options_.batch_size;
    return std::make_unique<DistributedSampler>(dataset_.size(), world, s, state);
  }
  // What a plan depends on besides its state (seed, epoch, steps served): a resumed
  // run replays the served steps through a planner made from these, so they must
  // match the checkpoint's or samples are silently skipped or served twice.
  nlohmann::json signature() const {
    nlohmann::json j = {{"samples", dataset_.size()}};
    if (options_.tokens_per_rank > 0) {
      j["tokens_per_rank"] = options_.tokens_per_rank;
      j["max_batch_size"] = options_.max_batch_size;
      j["truncate_oversize"] = options_.truncate_oversize;
      j["fresh_mates"] = options_.fresh_mates;
      // What the planner chose from the data, and the plan's revision: a build that
      // chooses or plans otherwise would replay other steps.
      j["plan_revision"] = kTokenBudgetPlanRevision;
      j["window"] = bucketing_.window;
      j["noise_cap"] = bucketing_.noise_cap;
      j["chosen_max_batch_size"] =
          bucketing_.max_batch_size == kNoBatchCap ? 0 : bucketing_.max_batch_size;
    } else {
      j["batch_size"] = options_.batch_size;
    }
    return j;
  }
  // Whether each epoch's plan is independent of the others': the plain sampler's, and a
  // token plan whose deal is not steered from the previous epoch (fresh_mates off, or
  // more samples than the chain keeps). Then epochs may be planned in any order, at once.
  bool epochs_independent(uint64_t seed) const {
    return options_.tokens_per_rank == 0 || !chain(seed).active();
  }
  // Counting a whole epoch plans it: its batches become the chain's next link.
  uint64_t count_steps(uint32_t world, const PlanState& state) const {
    auto planner = make(world, state);
    const bool whole =
        options_.tokens_per_rank > 0 && state.served.empty() && chain(state.seed).active();
    auto mates = whole ? std::make_shared<EpochMates>(lengths_.size()) : nullptr;
    PlanStep step;
    uint64_t n = 0;
    for (; planner->next(step); ++n) {
      if (mates) mates->add(step);
    }
    if (mates) chain(state.seed).remember(state.epoch, world, std::move(mates));
    return n;
  }

 private:
  EpochMatesChain& chain(uint64_t seed) const {
    if (!chain_ || chain_seed_ != seed) {
      chain_.emplace(lengths_, bucketing_, seed);
      chain_seed_ = seed;
    }
    return *chain_;
  }

  const Dataset& dataset_;
  const TrainOptions& options_;
  SpanLengths lengths_;
  BucketingOptions bucketing_;
  bool doubled_by_trial_ = false;  // settle(): the trial doubled the cap
  bool fallback_kept_ = false;     // settle(): the fallback trial replaced the estimate's choice
  bool raised_by_balance_trial_ = false;          // settle(): the balance trial raised the cap
  bool noise_narrowed_by_balance_trial_ = false;  // settle(): ... or narrowed the noise cap
  mutable std::optional<EpochMatesChain> chain_;  // made on first use, per seed
  mutable uint64_t chain_seed_ = 0;
};

int count_classes(const Dataset& dataset) {
  int32_t top = -1;
  for (int32_t label : dataset.index().labels()) top = std::max(top, label);
  EVENFEED_CHECK(top >= 0, "{}: the dataset has no labels; the trainer's models are classifiers",
                 dataset.dir().string());
  return top + 1;
}

// Fault injection for the reliability tests (RELIABILITY.md): with
// EVENFEED_FAULT_KILL_AFTER_STEP=R:S in the environment, rank R kills itself (SIGKILL,
// no cleanup, as a crash or an OOM kill would) right after optimiser step S. 0: never.
uint64_t injected_kill_step(int rank) {
  const char* spec = std::getenv("EVENFEED_FAULT_KILL_AFTER_STEP");
  int victim = -1;
  unsigned long long step = 0;
  if (spec == nullptr || std::sscanf(spec, "%d:%llu", &victim, &step) != 2) return 0;
  return victim == rank ? step : 0;
}

class Run {
 public:
  Run(const TrainOptions& options, Communicator& comm, int local_ranks,
      const DeviceCommFactory& device_comm)
      : o_(options),
        comm_(comm),
        rank_(comm.rank()),
        world_(comm.world_size()),
        dataset_(options.data),
        plans_(dataset_, o_),
        telemetry_(world_),
        samples_log_(options.log_samples, comm.rank()),
        kill_after_step_(injected_kill_step(comm.rank())),
        device_comm_(device_comm) {
    openblas_set_num_threads(std::max(1, options.compute_threads));
    const bool images = dataset_.manifest().kind == DatasetKind::kImage;
    const std::string model = o_.model == "auto" ? (images ? "mlp" : "tokens") : o_.model;
    EVENFEED_CHECK(model == (images ? "mlp" : "tokens"),
                   "--model {} does not fit {} ({} dataset); use --model {}", model, o_.data,
                   images ? "an image" : "a token", images ? "mlp" : "tokens");
    spec_.name = model;
    spec_.classes = count_classes(dataset_);
    spec_.image_size = o_.image_size;
    spec_.hidden = o_.hidden;
    spec_.embed_dim = o_.embed_dim;
    spec_.vocab = static_cast<uint32_t>(dataset_.manifest().vocab_size);
    loader_.threads =
        o_.loader_threads > 0
            ? o_.loader_threads
            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local_ranks);
    loader_.seed = o_.seed;
    loader_.image.size = o_.image_size;
    loader_.image.layout = ImageLayout::kUint8NHWC;
    loader_.on_bad =
        o_.substitute_bad_records ? BadRecordPolicy::kSubstitute : BadRecordPolicy::kFail;
    loader_.verify_checksums = o_.verify_checksums;
    if (o_.tokens_per_rank > 0 && o_.truncate_oversize)
      loader_.max_tokens =
          static_cast<uint32_t>(std::min<uint64_t>(o_.tokens_per_rank, UINT32_MAX));
    check_eval_data();
    check_checkpoint_dir();
    if (!o_.log.empty() && rank_ == 0) telemetry_.open_log(o_.log);
  }

  TrainResult execute(const std::function<void(const TrainProgress&)>& on_step);

 private:
  void check_eval_data() const;
  void check_model_fits() const;
  void check_checkpoint_dir() const;
  void plan_schedule();
  void make_engine();
  std::optional<Checkpoint> read_resumed() const;
  void start_or_resume(std::optional<Checkpoint> resumed);
  bool train_epoch(uint32_t epoch, PlanState state,
                   const std::function<void(const TrainProgress&)>& on_step);
  BucketOptions bucket_options_for(size_t gradients) const;
  Exchange run_micro_steps(uint64_t count, RankStep& timing, GradBuckets& buckets);
  void record_step(uint32_t epoch, RankStep timing, const Exchange& mine,
                   const std::vector<Exchange>& all, const Exchange& global, double lr,
                   const std::function<void(const TrainProgress&)>& on_step);
  bool checkpoint_or_stop(uint32_t epoch, bool finished_epoch, const PlanState& state,
                          const Exchange& global);
  std::vector<Exchange> exchange(const Exchange& mine);
  void check_finite(const std::vector<Exchange>& all) const;
  void save_checkpoint(uint32_t epoch, const PlanState& state) const;
  void evaluate(TrainResult& result);

  TrainOptions o_;
  Communicator& comm_;
  int rank_, world_;
  Dataset dataset_;
  PlanFactory plans_;
  Telemetry telemetry_;
  SampleLog samples_log_;
  uint64_t kill_after_step_;  // 0: never (see injected_kill_step)
  const DeviceCommFactory& device_comm_;
  ModelSpec spec_;
  std::unique_ptr<ComputeEngine> engine_;
  // The gradients' communicator: comm_ itself on the CPU, a device-buffer one (NCCL)
  // for the GPU engine; comm_ keeps carrying the small host exchanges.
  std::unique_ptr<Communicator> device_comm_owned_;
  Communicator* grad_comm_ = nullptr;
  LoaderOptions loader_;
  uint64_t step_ = 0;  // optimiser steps so far, all runs
  PlanState first_state_;
  // The last step's figures: its timings travel on the next step's exchange, so it is
  // logged one step late, with its own epoch, loss and learning rate.
  struct PendingStep {
    RankStep timing;
    uint32_t epoch = 0;
    double loss = 0, lr = 0;
  };
  std::optional<PendingStep> pending_;
  TrainResult result_;
  Clock::time_point start_ = Clock::now();
};

// The schedule needs the run's optimiser steps before the first, and counting an epoch's
// steps plans it whole: about half a second per million samples. Where the epochs'
// plans are independent (past 4,194,304 samples, where planning costs most), each rank
// counts every world-th epoch, those at once on TBB's threads, and the counts are
// gathered; otherwise every rank counts them all in order, each the next one's
// reference.
void Run::plan_schedule() {
  const auto world = static_cast<uint32_t>(world_);
  std::vector<uint64_t> micro(o_.epochs, 0);
  if (plans_.epochs_independent(o_.seed)) {
    std::vector<uint32_t> mine;
    for (auto e = static_cast<uint32_t>(rank_); e < o_.epochs; e += world) mine.push_back(e);
    tbb::parallel_for(size_t{0}, mine.size(), [&](size_t k) {
      micro[mine[k]] = plans_.count_steps(world, {o_.seed, mine[k], {}});
    });
    std::vector<uint64_t> all(micro.size() * world);
    AllGatherOptions options;
    options.timeout = o_.timeout;
    comm_.all_gather(micro.data(), all.data(), micro.size() * sizeof(uint64_t), options)->wait();
    for (uint32_t e = 0; e < o_.epochs; ++e) micro[e] = all[(e % world) * micro.size() + e];
  } else {
    for (uint32_t e = 0; e < o_.epochs; ++e) micro[e] = plans_.count_steps(world, {o_.seed, e, {}});
  }
  uint64_t total = 0;
  for (const uint64_t steps : micro) total += (steps + o_.accum - 1) / o_.accum;
  o_.optimizer.total_steps = std::max<uint64_t>(total, 1);
  o_.optimizer.warmup_steps =
      static_cast<uint64_t>(o_.warmup_fraction * static_cast<double>(total));
  make_engine();
}

// Parameters, gradients and optimiser state in float32 must fit in this host's memory
// (a token id of 4e9 makes a 4e9-row embedding): said before allocating, naming what
// makes the model large, rather than std::bad_alloc.
void Run::check_model_fits() const {
  const auto model = make_cpu_model(spec_);
  const double copies = o_.optimizer.kind == OptimizerKind::kSgd ? 3 : 4;
  const double bytes = static_cast<double>(model->parameter_count()) * sizeof(float) * copies;
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                        static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  EVENFEED_CHECK(memory <= 0 || bytes <= memory,
                 "{} needs {:.1f} GiB for its parameters, gradients and optimiser state, more "
                 "than this machine's {:.1f} GiB; {}",
                 model->describe(), bytes / (1 << 30), memory / (1 << 30),
                 spec_.name == "mlp" ? "lower --image-size or --hidden"
                                     : "the vocabulary is the largest token id + 1: renumber the "
                                       "ids into a dense range, or lower --embed-dim");
}

// --device auto takes the GPU when one is visible; a GPU rank reduces its gradients
// through the device communicator the caller makes (NCCL), ordered after the engine's
// stream.
void Run::make_engine() {
  check_model_fits();
  EngineOptions options;
  options.optimizer = o_.optimizer;
  options.device = o_.gpu;
  const bool gpu = o_.device == "gpu" || (o_.device == "auto" && gpu_visible());
  engine_ = gpu ? make_gpu_engine(spec_, options) : make_cpu_engine(spec_, options);
  grad_comm_ = &comm_;
  if (gpu && world_ > 1) {
    EVENFEED_CHECK(static_cast<bool>(device_comm_),
                   "rank {}: the GPU engine needs a device communicator for {} ranks", rank_,
                   world_);
    device_comm_owned_ = device_comm_(engine_->stream());
    grad_comm_ = device_comm_owned_.get();
  }
  if (rank_ == 0)
    log_info("training on {} ({}), gradients over {}", engine_->where(), engine_->describe_model(),
             grad_comm_->backend());
}

// Held-out data the model cannot read (another kind, labels beyond its classes, token
// ids beyond its embedding table) is refused before training, not after it.
void Run::check_eval_data() const {
  if (o_.eval_data.empty()) return;
  const Dataset eval(o_.eval_data);
  const bool images = dataset_.manifest().kind == DatasetKind::kImage;
  EVENFEED_CHECK(eval.manifest().kind == dataset_.manifest().kind,
                 "--eval-data {} is {} dataset, but --data {} is {}; hold out data of the same "
                 "kind",
                 o_.eval_data, images ? "a token" : "an image", o_.data,
                 images ? "an image dataset" : "a token dataset");
  const int classes = count_classes(eval);
  EVENFEED_CHECK(classes <= spec_.classes,
                 "--eval-data {} has {} classes, but the model learns the {} of --data {}; hold "
                 "out data labelled like the training data",
                 o_.eval_data, classes, spec_.classes, o_.data);
  EVENFEED_CHECK(eval.manifest().vocab_size <= dataset_.manifest().vocab_size,
                 "--eval-data {} has token ids up to {}, but the embedding of --data {} has {}; "
                 "hold out data of the same vocabulary",
                 o_.eval_data, eval.manifest().vocab_size, o_.data, dataset_.manifest().vocab_size);
}

// A checkpoint directory that cannot be written would fail at the first checkpoint,
// after the training it was to keep: every rank checks it before the first step.
void Run::check_checkpoint_dir() const {
  if (o_.checkpoint_dir.empty()) return;
  const std::filesystem::path dir(o_.checkpoint_dir);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  EVENFEED_CHECK(!error, "--checkpoint-dir {}: cannot create it ({}); choose a writable directory",
                 o_.checkpoint_dir, error.message());
  const std::filesystem::path probe = dir / (".write-probe.rank" + std::to_string(rank_));
  std::FILE* f = std::fopen(probe.c_str(), "w");
  const int probe_error = errno;
  EVENFEED_CHECK(f != nullptr,
                 "--checkpoint-dir {}: cannot write in it ({}); choose a writable "
                 "directory",
                 o_.checkpoint_dir, std::strerror(probe_error));
  std::fclose(f);
  std::filesystem::remove(probe, error);
}

std::optional<Checkpoint> Run::read_resumed() const {
  if (!o_.resume) return std::nullopt;
  EVENFEED_CHECK(!o_.checkpoint_dir.empty(), "--resume needs --checkpoint-dir");
  return read_checkpoint(std::filesystem::path(o_.checkpoint_dir) / "checkpoint.evf");
}

void Run::start_or_resume(std::optional<Checkpoint> resumed) {
  first_state_ = {o_.seed, 0, {}};
  const std::filesystem::path file = std::filesystem::path(o_.checkpoint_dir) / "checkpoint.evf";
  if (!resumed) {
    engine_->initialize(o_.seed);
    return;
  }
  Checkpoint& c = *resumed;
  EVENFEED_CHECK(
      c.meta.value("model", "") == engine_->describe_model(),
      "{}: the checkpoint is of \"{}\", but these flags make \"{}\"; resume with the flags of "
      "the original run",
      file.string(), c.meta.value("model", ""), engine_->describe_model());
  EVENFEED_CHECK(
      c.arrays.size() == engine_->state_arrays() &&
          c.arrays[0].size() == engine_->gradients().size(),
      "{}: the checkpoint's optimiser or parameter count does not match --optimizer and the model",
      file.string());
  const nlohmann::json planned = plans_.signature();
  EVENFEED_CHECK(c.meta.value("batching", planned) == planned,
                 "{}: the checkpoint was planned with {}, but these flags and --data plan {}; "
                 "resume with the original run's --data, --batch-size, --tokens-per-rank, "
                 "--max-batch-size and --oversize (the world size and --accum may change) "
                 "and an evenfeed that plans as the one that wrote it (same plan_revision)",
                 file.string(), c.meta["batching"].dump(), planned.dump());
  engine_->set_state(std::move(c.arrays));
  step_ = c.meta.at("step").get<uint64_t>();
  first_state_ = PlanState::from_json(c.meta.at("plan").dump());
  log_info("resumed from {} at optimiser step {}, epoch {}, {} micro-steps into it", file.string(),
           step_, first_state_.epoch, first_state_.steps_served());
}

void Run::save_checkpoint(uint32_t epoch, const PlanState& state) const {
  if (rank_ != 0 || o_.checkpoint_dir.empty()) return;
  std::filesystem::create_directories(o_.checkpoint_dir);
  Checkpoint c;
  c.arrays = engine_->state();
  c.meta = {{"version", 1},
            {"model", engine_->describe_model()},
            {"parameters", c.arrays[0].size()},
            {"optimizer", o_.optimizer.kind == OptimizerKind::kSgd ? "sgd" : "adamw"},
            {"seed", o_.seed},
            {"step", step_},
            {"epoch", epoch},
            {"plan", nlohmann::json::parse(state.to_json())},
            {"world_size", world_},
            {"accum", o_.accum},
            {"batching", plans_.signature()}};
  write_checkpoint(std::filesystem::path(o_.checkpoint_dir) / "checkpoint.evf", c);
}

std::vector<Exchange> Run::exchange(const Exchange& mine) {
  std::vector<Exchange> all(static_cast<size_t>(world_));
  AllGatherOptions options;
  options.timeout = o_.timeout;
  comm_.all_gather(&mine, all.data(), sizeof(Exchange), options)->wait();
  return all;
}

void Run::check_finite(const std::vector<Exchange>& all) const {
  for (int r = 0; r < world_; ++r) {
    if (all[static_cast<size_t>(r)].nonfinite != 0)
      fail(
          "the loss became {} at optimiser step {} on rank {}; lower --lr or check that rank's "
          "data",
          "NaN or infinite", step_ + 1, r);
  }
}

Exchange Run::run_micro_steps(uint64_t count, RankStep& timing, GradBuckets& buckets) {
  Exchange mine;
  for (uint64_t k = 0; k < count; ++k) {
    auto t = Clock::now();
    std::optional<PreparedBatch> batch = engine_->next();
    const double in_next = since(t);
    EVENFEED_CHECK(batch.has_value(), "the plan ended before the steps it counted (rank {})",
                   rank_);
    timing.wait += in_next - batch->prepare_seconds;
    timing.copy += batch->prepare_seconds;
    samples_log_.add(batch->sample_ids, batch->valid);
    t = Clock::now();
    const bool last = k + 1 == count;
    buckets.begin(last);
    GradientsReady ready;
    if (last && o_.bucketed) ready = [&](size_t begin) { buckets.ready_from(begin); };
    const LossSums sums = engine_->forward_backward(batch->input, ready);
    timing.compute += since(t);
    mine.loss += sums.loss;
    mine.samples += static_cast<double>(sums.samples);
    mine.correct += static_cast<double>(sums.correct);
    mine.tokens += batch->tokens;
    mine.padding += batch->padding;
  }
  mine.nonfinite = std::isfinite(mine.loss) ? 0 : 1;
  return mine;
}

// The gradients' buckets for an epoch: all-reduce in buckets overlapped with backward,
// or (not bucketed) one bucket holding every gradient, sent after backward.
BucketOptions Run::bucket_options_for(size_t gradients) const {
  BucketOptions options = o_.buckets;
  if (!o_.bucketed) {
    options.bucket_bytes = options.first_bucket_bytes =
        std::max<size_t>(gradients, 1) * sizeof(float);
  }
  options.timeout = o_.timeout;
  return options;
}

// Every rank's exchange summed: the step's loss, samples, correct answers and how many
// ranks were interrupted.
static Exchange summed(const std::vector<Exchange>& all) {
  Exchange global;
  for (const Exchange& e : all) {
    global.loss += e.loss, global.samples += e.samples, global.correct += e.correct;
    global.interrupted += e.interrupted;
  }
  return global;
}

// After an optimiser step: the previous step's timings, which came with this step's
// exchange, go to the telemetry; this step's wait for the next; the loss and samples
// go to the result and the progress callback (rank 0).
void Run::record_step(uint32_t epoch, RankStep timing, const Exchange& mine,
                      const std::vector<Exchange>& all, const Exchange& global, double lr,
                      const std::function<void(const TrainProgress&)>& on_step) {
  timing.samples = mine.samples, timing.tokens = mine.tokens, timing.padding = mine.padding;
  if (pending_) {
    std::vector<RankStep> previous;
    for (const Exchange& e : all) previous.push_back(e.previous);
    telemetry_.record(step_ - 1, pending_->epoch, previous, pending_->loss, pending_->lr);
  }
  result_.last_loss = global.loss / std::max(1.0, global.samples);
  pending_ = PendingStep{timing, epoch, result_.last_loss, lr};
  result_.samples += static_cast<uint64_t>(global.samples);
  if (on_step && rank_ == 0)
    on_step({step_, o_.optimizer.total_steps, epoch, result_.last_loss,
             result_.samples / since(start_)});
}

// Saves a checkpoint where one is due or the run stops here (the step asked for, or a
// rank interrupted), with the plan state a resumed run starts from; returns whether to
// stop.
bool Run::checkpoint_or_stop(uint32_t epoch, bool finished_epoch, const PlanState& state,
                             const Exchange& global) {
  const PlanState saved = finished_epoch ? PlanState{o_.seed, epoch + 1, {}} : state;
  const bool stop = (o_.stop_at_step > 0 && step_ >= o_.stop_at_step) || global.interrupted > 0;
  if (stop || (o_.checkpoint_every > 0 && step_ % o_.checkpoint_every == 0))
    save_checkpoint(finished_epoch ? epoch + 1 : epoch, saved);
  if (step_ == kill_after_step_) std::raise(SIGKILL);
  if (stop) {
    result_.stopped_early = true;
    result_.interrupted = global.interrupted > 0;
  }
  return stop;
}

bool Run::train_epoch(uint32_t epoch, PlanState state,
                      const std::function<void(const TrainProgress&)>& on_step) {
  const uint64_t remaining = plans_.count_steps(static_cast<uint32_t>(world_), state);
  auto planner = plans_.make(static_cast<uint32_t>(world_), state);
  Loader loader(dataset_, loader_, epoch, batches_of_rank(*planner, static_cast<uint32_t>(rank_)));
  const EngineAttachment attached(*engine_, loader, dataset_);
  const std::span<float> grads = engine_->gradients();
  GradBuckets buckets(grads, bucket_options_for(grads.size()), *grad_comm_);
  uint64_t served = state.steps_served();
  for (uint64_t done = 0; done < remaining;) {
    const auto step_start = Clock::now();
    // Micro-steps to the next accumulation boundary (fewer at the end of the epoch).
    const uint64_t group = std::min<uint64_t>(o_.accum - served % o_.accum, remaining - done);
    engine_->zero_gradients();
    RankStep timing;
    Exchange mine = run_micro_steps(group, timing, buckets);
    mine.interrupted = interrupted() ? 1 : 0;
    if (pending_) mine.previous = pending_->timing;
    const auto comm_start = Clock::now();
    timing.grad_exposed = buckets.finish();
    timing.grad_comm = buckets.communicated();
    const std::vector<Exchange> all = exchange(mine);
    timing.exposed = since(comm_start);
    check_finite(all);
    const Exchange global = summed(all);
    auto t = Clock::now();
    if (global.samples > 0) engine_->apply(static_cast<float>(1.0 / global.samples), step_);
    timing.compute += since(t);
    const double lr = learning_rate(o_.optimizer, step_);
    ++step_;
    samples_log_.commit(step_, epoch);
    done += group;
    served += group;
    state.advance(static_cast<uint32_t>(world_), group);
    timing.step = since(step_start);
    record_step(epoch, timing, mine, all, global, lr, on_step);
    if (checkpoint_or_stop(epoch, done == remaining, state, global)) return false;
  }
  return true;
}

void Run::evaluate(TrainResult& result) {
  Dataset eval(o_.eval_data);
  SamplerOptions s;
  s.batch_size = 256;
  s.order.kind = OrderKind::kSequential;
  DistributedSampler plan(eval.size(), static_cast<uint32_t>(world_), s, {o_.seed, 0, {}});
  LoaderOptions options = loader_;
  options.mode = AugmentMode::kEval;
  Loader loader(eval, options, 0, batches_of_rank(plan, static_cast<uint32_t>(rank_)));
  const EngineAttachment attached(*engine_, loader, eval);
  Exchange mine;
  while (auto batch = engine_->next()) {
    const LossSums sums = engine_->evaluate(batch->input);
    mine.loss += sums.loss, mine.samples += static_cast<double>(sums.samples);
    mine.correct += static_cast<double>(sums.correct);
  }
  Exchange global;
  for (const Exchange& e : exchange(mine))
    global.loss += e.loss, global.samples += e.samples, global.correct += e.correct;
  result.eval_accuracy = global.correct / std::max(1.0, global.samples);
  result.eval_loss = global.loss / std::max(1.0, global.samples);
}

TrainResult Run::execute(const std::function<void(const TrainProgress&)>& on_step) {
  std::optional<Checkpoint> resumed = read_resumed();
  const nlohmann::json* recorded = nullptr;
  if (resumed && resumed->meta.contains("batching")) recorded = &resumed->meta["batching"];
  plans_.settle(static_cast<uint32_t>(world_), recorded);
  if (rank_ == 0) log_info("batches: {}", plans_.describe());
  plan_schedule();
  start_or_resume(std::move(resumed));
  result_.model = engine_->describe_model();
  bool completed = true;
  for (uint32_t epoch = first_state_.epoch; epoch < o_.epochs && completed; ++epoch) {
    const PlanState state =
        epoch == first_state_.epoch ? first_state_ : PlanState{o_.seed, epoch, {}};
    completed = train_epoch(epoch, state, on_step);
    if (completed && !o_.eval_data.empty()) evaluate(result_);
  }
  // The last step's timings have not been sent yet: one more gather for the report.
  if (pending_) {
    Exchange last;
    last.previous = pending_->timing;
    std::vector<RankStep> ranks;
    for (const Exchange& e : exchange(last)) ranks.push_back(e.previous);
    telemetry_.record(step_, pending_->epoch, ranks, pending_->loss, pending_->lr);
  }
  if (completed) save_checkpoint(o_.epochs, {o_.seed, o_.epochs, {}});
  if (!o_.save_weights.empty() && rank_ == 0) {
    const std::vector<float> params = std::move(engine_->state()[0]);
    std::ofstream out(o_.save_weights, std::ios::binary);
    out.write(reinterpret_cast<const char*>(params.data()),
              static_cast<std::streamsize>(params.size() * 4));
    EVENFEED_CHECK(out.good(), "cannot write the weights to {}", o_.save_weights);
  }
  result_.steps = step_;
  result_.seconds = since(start_);
  result_.samples_per_sec = result_.samples / result_.seconds;
  result_.balance = telemetry_.report();
  return result_;
}

}  // namespace

TrainResult train(const TrainOptions& options, Communicator& comm, int local_ranks,
                  const std::function<void(const TrainProgress&)>& on_step,
                  const DeviceCommFactory& device_comm) {
  EVENFEED_CHECK(options.accum >= 1, "--accum must be at least 1");
  EVENFEED_CHECK(options.epochs >= 1, "--epochs must be at least 1");
  EVENFEED_CHECK(options.device == "auto" || options.device == "cpu" || options.device == "gpu",
                 "--device must be auto, cpu or gpu, got {}", options.device);
  Run run(options, comm, std::max(1, local_ranks), device_comm);
  return run.execute(on_step);
}

}  // namespace evenfeed
