// evenfeed train: the bundled data-parallel trainer. `mpirun -np N evenfeed train ...`
// (or srun) runs N ranks; without a launcher it is a world of one. Prints the
// progress (rank 0, loss and throughput), the held-out accuracy, and the balance
// report: which rank was slowest and whether it was data-, compute- or
// communication-bound.
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "cuda/device_info.h"
#include "cuda/nccl_communicator.h"
#include "tools/commands.h"
#include "tools/ranked.h"
#include "trainer/mpi_communicator.h"
#include "trainer/trainer.h"

namespace evenfeed::cli {
namespace {

struct TrainFlags {
  TrainOptions o;
  std::string optimizer = "sgd", on_bad = "fail", oversize = "error";
  double lr = 0, bucket_mb = 25, first_bucket_mb = 1, timeout = 300;
  bool unbucketed = false, json = false, no_fresh_mates = false, no_cap_trial = false,
       no_fallback_trial = false;
};

void print_result(const TrainResult& r, const TrainFlags& f, const MpiRuntime& mpi) {
  if (f.json) {
    nlohmann::json j = {{"model", r.model},
                        {"steps", r.steps},
                        {"samples", r.samples},
                        {"seconds", r.seconds},
                        {"samples_per_sec", r.samples_per_sec},
                        {"last_loss", r.last_loss},
                        {"eval_accuracy", r.eval_accuracy},
                        {"eval_loss", r.eval_loss},
                        {"stopped_early", r.stopped_early},
                        {"world_size", mpi.world_size()},
                        {"slowest_rank", r.balance.slowest_rank},
                        {"bound", r.balance.bound},
                        {"busy_imbalance", r.balance.busy_imbalance},
                        {"step_imbalance", r.balance.step_imbalance},
                        {"padding_share", r.balance.padding_share},
                        {"exposed_share", r.balance.exposed_share}};
    j["ranks"] = nlohmann::json::array();
    for (const RankTotals& t : r.balance.ranks) {
      j["ranks"].push_back({{"wait", t.sum.wait},
                            {"copy", t.sum.copy},
                            {"compute", t.sum.compute},
                            {"exposed_comm", t.sum.exposed},
                            {"grad_comm", t.sum.grad_comm},
                            {"grad_exposed", t.sum.grad_exposed},
                            {"step", t.sum.step},
                            {"samples", t.sum.samples},
                            {"tokens", t.sum.tokens},
                            {"padding", t.sum.padding}});
    }
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  std::printf(
      "%s, %d rank(s): %lu optimiser steps, %lu samples in %.1f s (%.0f samples/s), last loss "
      "%.4f\n",
      r.model.c_str(), mpi.world_size(), static_cast<unsigned long>(r.steps),
      static_cast<unsigned long>(r.samples), r.seconds, r.samples_per_sec, r.last_loss);
  if (r.eval_accuracy >= 0)
    std::printf("held-out accuracy %.2f%% (loss %.4f)\n", 100 * r.eval_accuracy, r.eval_loss);
  std::printf("%s", balance_table(r.balance).c_str());
  if (r.stopped_early)
    std::printf("%s; resume with --resume\n",
                r.interrupted ? "interrupted: checkpoint written" : "stopped at --stop-at-step");
}

// One GPU per rank on each host: the local rank picks it. --device gpu with fewer GPUs
// than ranks on a host is an error; --device auto then trains on the CPU and says why.
void choose_device(const MpiRuntime& mpi, TrainOptions& o) {
  o.gpu = mpi.local_rank();
  if (o.device == "cpu") return;
  const size_t gpus = query_gpus().devices.size();
  const bool enough = gpus > 0 && static_cast<size_t>(mpi.local_size()) <= gpus;
  if (o.device == "auto") {
    if (gpus > 0 && !enough && mpi.rank() == 0)
      log_warn("{} rank(s) on host {} but {} GPU(s): training on the CPU (start one rank per GPU)",
               mpi.local_size(), mpi.host(), gpus);
    o.device = enough ? "gpu" : "cpu";
    return;
  }
  EVENFEED_CHECK(enough,
                 "--device gpu: {} rank(s) on host {} but {} GPU(s) visible there; start one rank "
                 "per GPU, or train with --device cpu",
                 mpi.local_size(), mpi.host(), gpus);
}

int run_train(MpiRuntime& mpi, TrainFlags& f) {
  TrainOptions o = f.o;
  choose_device(mpi, o);
  o.optimizer.kind = f.optimizer == "adamw" ? OptimizerKind::kAdamW : OptimizerKind::kSgd;
  o.optimizer.lr = f.lr > 0 ? f.lr : (o.optimizer.kind == OptimizerKind::kSgd ? 0.02 : 1e-3);
  o.bucketed = !f.unbucketed;
  o.buckets.bucket_bytes = static_cast<size_t>(f.bucket_mb * (1 << 20));
  o.buckets.first_bucket_bytes = static_cast<size_t>(f.first_bucket_mb * (1 << 20));
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(f.timeout * 1000));
  o.substitute_bad_records = f.on_bad == "substitute";
  o.truncate_oversize = f.oversize == "truncate";
  o.fresh_mates = !f.no_fresh_mates;
  o.cap_trial = !f.no_cap_trial;
  o.fallback_trial = !f.no_fallback_trial;
  std::unique_ptr<Communicator> comm = make_host_communicator(mpi.world_size());
  const bool terminal = mpi.rank() == 0 && ::isatty(STDERR_FILENO) && !quiet() && !f.json;
  auto progress = [terminal](const TrainProgress& p) {
    if (!terminal) return;
    std::fprintf(stderr, "\rstep %lu/%lu  epoch %u  loss %.4f  %.0f samples/s   ",
                 static_cast<unsigned long>(p.step), static_cast<unsigned long>(p.total_steps),
                 p.epoch, p.loss, p.samples_per_sec);
  };
  // GPU gradients go over NCCL, bootstrapped through MPI and ordered after the
  // engine's stream.
  auto nccl = [&o](GpuStream stream) {
    NcclOptions options;
    options.device = o.gpu;
    options.compute_stream = stream;
    options.init_timeout = o.timeout;
    return make_nccl_communicator(MPI_COMM_WORLD, options);
  };
  const TrainResult result = train(o, *comm, mpi.local_size(), progress, nccl);
  if (terminal) std::fprintf(stderr, "\n");
  comm.reset();
  if (mpi.rank() == 0) print_result(result, f, mpi);
  return result.interrupted ? 130 : 0;
}

// The data, the model and the device it runs on.
void add_data_and_model_flags(CLI::App* cmd, TrainFlags& f) {
  TrainOptions& o = f.o;
  cmd->add_option("--data", o.data, "Dataset directory (evenfeed convert)")->required();
  cmd->add_option("--eval-data", o.eval_data, "Held-out dataset, evaluated after each epoch");
  cmd->add_option("--model", o.model, "mlp (images), tokens (token classifier) or auto")
      ->check(CLI::IsMember({"auto", "mlp", "tokens"}));
  cmd->add_option("--device", o.device,
                  "cpu, gpu (one per rank; gradients over NCCL), or auto: gpu when visible")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
}

// The epochs and how each rank's batches are made (as `evenfeed plan` makes them).
void add_batching_flags(CLI::App* cmd, TrainFlags& f) {
  TrainOptions& o = f.o;
  cmd->add_option("--epochs", o.epochs, "Epochs")->check(CLI::Range(1u, 100000u));
  cmd->add_option("--batch-size", o.batch_size, "Samples per rank per micro-step")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  cmd->add_option("--tokens-per-rank", o.tokens_per_rank,
                  "Token budget per rank per micro-step (length bucketing)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_option("--max-batch-size", o.max_batch_size,
                  "With --tokens-per-rank: most samples per batch (0: from the data; a "
                  "cap given is a ceiling for that choice, as in `evenfeed plan`)")
      ->check(kNotNegative);
  cmd->add_option("--oversize", f.oversize,
                  "With --tokens-per-rank, a longer sample: error, or truncate it to the budget")
      ->check(CLI::IsMember({"error", "truncate"}));
  cmd->add_flag("--no-fresh-mates", f.no_fresh_mates,
                "With --tokens-per-rank: deal batches at random rather than away from last "
                "epoch's batch mates (as `evenfeed plan`)");
  cmd->add_flag("--no-cap-trial", f.no_cap_trial,
                "With --tokens-per-rank: keep the automatic sample cap the estimate chose "
                "rather than also trying larger caps at the start (as `evenfeed plan`)");
  cmd->add_flag("--no-fallback-trial", f.no_fallback_trial,
                "With --tokens-per-rank: keep the automatic cap and noise the estimate chose "
                "where it fell back, rather than also trying others at the start (as "
                "`evenfeed plan`)");
}

// Accumulation, the optimiser and its schedule, the seed and the model's sizes.
void add_optimizer_flags(CLI::App* cmd, TrainFlags& f) {
  TrainOptions& o = f.o;
  cmd->add_option("--accum", o.accum, "Micro-steps per optimiser step (gradient accumulation)")
      ->check(CLI::Range(1u, 100000u));
  cmd->add_option("--optimizer", f.optimizer, "sgd (momentum 0.9) or adamw")
      ->check(CLI::IsMember({"sgd", "adamw"}));
  cmd->add_option("--lr", f.lr, "Peak learning rate (default 0.02 for sgd, 1e-3 for adamw)")
      ->check(kAboveZero);
  cmd->add_option("--momentum", o.optimizer.momentum, "SGD momentum")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--weight-decay", o.optimizer.weight_decay, "Weight decay")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--warmup", o.warmup_fraction, "Share of steps for linear warm-up, then cosine")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", o.seed, "Seed of the order, the augmentation and the initial weights")
      ->check(kNotNegative);
  cmd->add_option("--image-size", o.image_size, "Crop size fed to the image MLP")
      ->check(CLI::Range(4, 512));
  cmd->add_option("--hidden", o.hidden, "Hidden width")->check(CLI::Range(1, 65536));
  cmd->add_option("--embed-dim", o.embed_dim, "Token embedding width")->check(CLI::Range(1, 65536));
}

// Checkpoints, resuming, stopping early, the weights written and the logs.
void add_checkpoint_and_log_flags(CLI::App* cmd, TrainFlags& f) {
  TrainOptions& o = f.o;
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir, "Where checkpoint.evf is written");
  cmd->add_option("--checkpoint-every", o.checkpoint_every,
                  "Optimiser steps between checkpoints (0: end only)")
      ->check(kNotNegative);
  cmd->add_flag("--resume", o.resume, "Continue from the checkpoint in --checkpoint-dir");
  cmd->add_option("--stop-at-step", o.stop_at_step, "Checkpoint and stop after this optimiser step")
      ->check(kNotNegative);
  cmd->add_option("--save-weights", o.save_weights, "Write the final parameters as raw float32");
  cmd->add_option("--log", o.log, "Append per-step telemetry as JSON lines");
  cmd->add_option("--log-samples", o.log_samples,
                  "Append each rank's samples per step to PREFIX.rank<R>.jsonl");
}

// The gradients' all-reduce, the loader's threads and bad records, the output.
void add_comm_and_loader_flags(CLI::App* cmd, TrainFlags& f) {
  TrainOptions& o = f.o;
  cmd->add_option("--bucket-mb", f.bucket_mb, "Gradient bucket size, MiB")
      ->check(CLI::Range(0.0001, 4096.0));
  cmd->add_option("--first-bucket-mb", f.first_bucket_mb, "First (last layers') bucket, MiB")
      ->check(CLI::Range(0.0001, 4096.0));
  cmd->add_flag("--unbucketed", f.unbucketed, "One all-reduce of all gradients after backward");
  cmd->add_option("--loader-threads", o.loader_threads,
                  "Loader threads per rank (default: cores / local ranks)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--compute-threads", o.compute_threads, "BLAS threads per rank")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--comm-timeout", f.timeout, "Seconds before a collective is declared hung")
      ->check(CLI::Range(0.1, 86400.0));
  cmd->add_option("--on-bad-record", f.on_bad, "fail, or substitute a damaged sample")
      ->check(CLI::IsMember({"fail", "substitute"}));
  cmd->add_flag("--verify-checksums", o.verify_checksums,
                "Check each record's XXH3 as it is read (catches any changed byte)");
  cmd->add_flag("--json", f.json, "Print the result as one JSON object");
}

}  // namespace

void add_train(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand(
      "train", "Data-parallel training on an evenfeed dataset (mpirun -np N evenfeed train ...)");
  static TrainFlags f;
  add_data_and_model_flags(cmd, f);
  add_batching_flags(cmd, f);
  add_optimizer_flags(cmd, f);
  add_checkpoint_and_log_flags(cmd, f);
  add_comm_and_loader_flags(cmd, f);
  cmd->callback([&run] {
    run = interruptible(
        [] { return run_as_rank([](MpiRuntime& mpi) { return run_train(mpi, f); }); });
  });
}

}  // namespace evenfeed::cli
