#include "tools/plan_report.h"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <utility>

#include <unistd.h>

#include <tbb/parallel_invoke.h>

#include "bucketing/balance_trial.h"
#include "bucketing/baselines.h"
#include "bucketing/cap_trial.h"
#include "bucketing/imbalance_bound.h"
#include "bucketing/plan_metrics.h"
#include "bucketing/settle_batching.h"
#include "bucketing/token_budget_planner.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/staging_dir.h"
#include "core/text_input.h"

namespace evenfeed::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The --dump file, written beside its destination (core/staging_dir.h's staging_path)
// and renamed into place only when the whole plan is written (commit), so a failure, a
// full disk or an interrupt leaves no half-written plan where a user would read one (the
// temporary file is removed, and one a killed run left is removed by the next). A
// destination that exists and is not a regular file (a pipe, /dev/stdout) is written
// directly: nothing can be renamed onto it.
class DumpWriter {
 public:
  explicit DumpWriter(const std::filesystem::path& path) : path_(path) {
    if (path.empty()) return;
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    const bool direct =
        std::filesystem::exists(status) && !std::filesystem::is_regular_file(status);
    if (!direct) {
      remove_stale_staging_dirs(path);
      temp_ = staging_path(path);
    }
    const std::filesystem::path& target = direct ? path : temp_;
    file_ = std::fopen(target.c_str(), "w");
    if (file_ == nullptr) fail_errno("opening the --dump file for writing", path.string(), errno);
  }
  ~DumpWriter() {
    if (file_ != nullptr) std::fclose(file_);
    if (!temp_.empty()) ::unlink(temp_.c_str());  // nothing once committed
  }
  DumpWriter(const DumpWriter&) = delete;
  DumpWriter& operator=(const DumpWriter&) = delete;

  void write(const PlanStep& step) {
    if (file_ == nullptr) return;
    for (uint32_t r = 0; r < step.ranks.size(); ++r) {
      const RankBatch& b = step.ranks[r];
      nlohmann::json j = {{"epoch", step.epoch},
                          {"step", step.step},
                          {"rank", r},
                          {"world_size", step.world_size},
                          {"samples", b.samples}};
      if (!b.valid.empty()) {
        std::vector<bool> valid(b.valid.begin(), b.valid.end());
        j["valid"] = valid;
      }
      const std::string line = j.dump() + "\n";
      if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) fail_writing(errno);
    }
  }

  // The whole plan is written: flushed, closed and moved into place.
  void commit() {
    if (file_ == nullptr) return;
    FILE* file = std::exchange(file_, nullptr);
    if (std::fflush(file) != 0 || (!temp_.empty() && ::fsync(::fileno(file)) != 0)) {
      const int error = errno;
      std::fclose(file);
      fail_writing(error);
    }
    if (std::fclose(file) != 0) fail_writing(errno);
    if (temp_.empty()) return;
    if (std::rename(temp_.c_str(), path_.c_str()) != 0)
      fail_errno("moving the finished --dump file into place", path_.string(), errno);
    temp_.clear();
  }

 private:
  [[noreturn]] void fail_writing(int error) const {
    fail("writing the --dump file {} failed: {}; free space there or pass another --dump path{}",
         path_.string(), std::strerror(error),
         temp_.empty() ? "" : " (nothing was left at that path)");
  }

  FILE* file_ = nullptr;
  std::filesystem::path path_;
  std::filesystem::path temp_;  // empty when writing directly, or once committed
};

// Serves `limit` steps (or all) from `planner` into metrics and the dump; returns the
// number served and adds the time spent planning to `seconds`.
uint64_t drain(StepPlanner& planner, PlanMetrics& metrics, DumpWriter* dump, double& seconds,
               uint64_t limit = UINT64_MAX, EpochMates* mates = nullptr) {
  PlanStep step;
  uint64_t served = 0;
  while (served < limit) {
    // An interrupt (Ctrl-C, a scheduler's SIGTERM) stops the plan between steps: one
    // step's planning, a window's at its first step, is not broken into.
    throw_if_interrupted("planning");
    const auto start = Clock::now();
    const bool more = planner.next(step);
    seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (!more) break;
    metrics.add(step);
    if (dump != nullptr) dump->write(step);
    if (mates != nullptr) mates->add(step);
    ++served;
  }
  return served;
}

std::unique_ptr<StepPlanner> make_ours(const LengthSource& lengths, const PlanRequest& r,
                                       uint32_t world_size, const PlanState& state,
                                       EpochMatesChain& chain) {
  if (r.bucketing) {
    // The previous epoch at the world size this epoch starts at.
    return std::make_unique<TokenBudgetPlanner>(
        lengths, r.bucketing_options, world_size, state,
        chain.previous(state.epoch, state.world_size_at_start(world_size)));
  }
  return std::make_unique<DistributedSampler>(lengths.size(), world_size, r.sampler_options, state);
}

// With --oversize truncate, every planner's figures count a sample as cut to the budget,
// as the loader cuts it: a user who truncates for us truncates for the baselines too.
uint64_t measured_truncation(const PlanRequest& r) {
  return r.bucketing ? planned_length_cap(r.bucketing_options) : UINT64_MAX;
}

// `lengths` as our planner reads them (it truncates or refuses long samples itself);
// `measured` as every planner's figures count them.
nlohmann::json plan_ours(const LengthSource& lengths, const LengthSource& measured,
                         const PlanRequest& r) {
  PlanMetrics metrics(measured, r.bucketing_options.cost.a);
  DumpWriter dump(r.dump);
  double seconds = 0;
  // Each epoch served whole at one world size is handed to the chain, so the next
  // epoch's deal needs no replanning of it.
  EpochMatesChain chain(lengths, r.bucketing_options, r.seed);
  for (uint32_t epoch = 0; epoch < r.epochs; ++epoch) {
    metrics.begin_epoch();
    PlanState state{r.seed, epoch, {}};
    uint32_t world = r.resume_world_size && epoch > 0 ? *r.resume_world_size : r.world_size;
    if (epoch == 0 && r.resume_at_step) {
      auto before = make_ours(lengths, r, r.world_size, state, chain);
      const uint64_t served = drain(*before, metrics, &dump, seconds, *r.resume_at_step);
      EVENFEED_CHECK(served == *r.resume_at_step,
                     "--resume-at-step {}: epoch 0 has only {} step{} at world size {}; pass "
                     "at most {}",
                     *r.resume_at_step, served, served == 1 ? "" : "s", r.world_size, served);
      state.advance(r.world_size, served);  // what a checkpoint at step K would hold
      world = r.resume_world_size.value_or(r.world_size);
    }
    // An epoch served at two world sizes is not handed over: the chain plans its own.
    auto mates = r.bucketing && chain.active() && state.served.empty()
                     ? std::make_shared<EpochMates>(lengths.size())
                     : nullptr;
    auto planner = make_ours(lengths, r, world, state, chain);
    drain(*planner, metrics, &dump, seconds, UINT64_MAX, mates.get());
    if (mates) chain.remember(epoch, world, std::move(mates));
    metrics.end_epoch();
  }
  dump.commit();
  nlohmann::json j = metrics.report();
  j["plan_seconds"] = seconds;
  return j;
}

template <typename MakePlanner>
nlohmann::json plan_baseline(const LengthSource& measured, const PlanRequest& r, MakePlanner make) {
  PlanMetrics metrics(measured, r.bucketing_options.cost.a);
  double seconds = 0;
  for (uint32_t epoch = 0; epoch < r.epochs; ++epoch) {
    metrics.begin_epoch();
    auto planner = make(epoch);
    drain(*planner, metrics, nullptr, seconds);
    metrics.end_epoch();
  }
  nlohmann::json j = metrics.report();
  j["plan_seconds"] = seconds;
  return j;
}

// How the automatic options were settled (settle_batching.h), for the report.
struct Settled {
  bool doubled = false, fallback_kept = false, raised = false, narrowed = false;
  uint64_t cap_before_raise = 0;
  double noise_cap_before_narrowing = 0;
};

// `request` with its automatic options resolved once for every epoch's planner, as the
// trainer settles them at the start of a run.
PlanRequest settle(const LengthSource& lengths, const PlanRequest& request, Settled& how) {
  PlanRequest r = request;
  if (!r.bucketing) return r;
  const SettledBatching settled = settle_batching(
      lengths, request.bucketing_options,
      {.world_size = r.world_size, .seed = r.seed, .run_both = [](const auto& a, const auto& b) {
         tbb::parallel_invoke(a, b);
       }});
  r.bucketing_options = settled.options;
  how = {.doubled = settled.doubled_by_cap_trial,
         .fallback_kept = settled.kept_by_fallback_trial,
         .raised = settled.raised_by_balance_trial,
         .narrowed = settled.noise_narrowed_by_balance_trial,
         .cap_before_raise = settled.cap_before_balance_trial,
         .noise_cap_before_narrowing = settled.noise_cap_before_balance_trial};
  return r;
}

// One pass over the lengths as planned (after truncation): their mean, their total cost
// and the data's bound on the worst step.
struct LengthFigures {
  double mean = 0, total_cost = 0;
  double worst_step_bound = 1;
  uint64_t samples_alone = 0;
};

LengthFigures length_figures(const LengthSource& measured, const PlanRequest& r,
                             uint64_t cap_given) {
  const BucketingOptions& b = r.bucketing_options;
  ImbalanceBound bound({.world_size = r.world_size,
                        .tokens_per_rank = b.tokens_per_rank,
                        .cost = b.cost,
                        .max_batch_tokens = b.max_batch_tokens,
                        .max_batch_size = cap_given,
                        .padding_share = kPaddingTarget});
  LengthFigures f;
  for (uint64_t id = 0; id < measured.size(); ++id) {
    const uint64_t length = measured.length(id);
    f.mean += static_cast<double>(length);
    f.total_cost += b.cost.per_sample(length);
    if (r.bucketing) bound.add(length);
  }
  f.mean /= static_cast<double>(std::max<uint64_t>(1, measured.size()));
  if (r.bucketing) {
    f.worst_step_bound = bound.worst_step();
    f.samples_alone = bound.lumps();
  }
  return f;
}

// What was planned and how its settings were chosen.
nlohmann::json config_of(const LengthSource& lengths, const PlanRequest& r,
                         const PlanRequest& request, const Settled& how,
                         const LengthFigures& figures) {
  const uint64_t cap = r.bucketing_options.max_batch_size;  // kNoBatchCap: reported as 0
  // Chosen from the data: with no cap given, or one below the cap given (a ceiling).
  const uint64_t cap_given = request.bucketing_options.max_batch_size;
  const bool cap_chosen = r.bucketing && (cap_given == 0 || cap != cap_given);
  nlohmann::json c = {
      {"samples", lengths.size()},
      {"world_size", r.world_size},
      {"planner", r.bucketing ? "token-budget" : "fixed-batch"},
      {"tokens_per_rank", r.bucketing_options.tokens_per_rank},
      {"cost", cost_kind_name(r.bucketing_options.cost.kind)},
      {"quadratic_a", r.bucketing_options.cost.a},
      {"window", r.bucketing_options.window},
      {"noise_cap", r.bucketing_options.noise_cap},
      {"noise_cap_narrowed_by_balance_trial", how.narrowed},
      {"noise_cap_before_balance_trial", how.narrowed ? how.noise_cap_before_narrowing : 0.0},
      {"chosen_by_fallback_trial", how.fallback_kept},
      {"max_batch_size", cap == kNoBatchCap ? 0 : cap},
      {"max_batch_size_automatic", cap_chosen},
      {"max_batch_size_given", cap_given},
      {"max_batch_size_doubled_by_trial", how.doubled},
      {"max_batch_size_raised_by_balance_trial", how.raised},
      {"max_batch_size_before_balance_trial", how.raised ? how.cap_before_raise : 0},
      {"max_batch_tokens", r.bucketing_options.max_batch_tokens},
      {"order", order_kind_name(r.bucketing ? r.bucketing_options.order.kind
                                            : r.sampler_options.order.kind)},
      {"seed", r.seed},
      {"epochs", r.epochs},
      {"mean_length", figures.mean},
      {"truncated", measured_truncation(r) != UINT64_MAX}};
  if (r.bucketing) {
    c["full_budget_steps"] =
        full_budget_steps(figures.total_cost, r.bucketing_options, r.world_size);
    // No plan that pads at most kPaddingTarget has every step below this max/mean
    // (imbalance_bound.h), under the cost in use; and the samples alone in any batch.
    c["worst_step_bound"] = figures.worst_step_bound;
    c["worst_step_bound_padding"] = kPaddingTarget;
    c["samples_alone"] = figures.samples_alone;
    c["mix_batches"] = r.bucketing_options.mix_batches;
    // Whether each epoch's deal steered away from the previous epoch's batch mates.
    c["fresh_mates"] = steers_from_previous_mates(r.bucketing_options, lengths);
    c["padding_guard"] = r.bucketing_options.padding_guard;
  }
  if (r.resume_at_step) {
    c["resume_at_step"] = *r.resume_at_step;
    c["resume_world_size"] = r.resume_world_size.value_or(r.world_size);
  }
  return c;
}

// The baselines planned over the same lengths, in the same run: a PyTorch
// DistributedSampler-style fixed batch (its size from the budget over the mean length,
// unless given) and, for token budgets, a sorted token-budget planner.
void add_baselines(nlohmann::json& report, const LengthSource& lengths,
                   const LengthSource& measured, const PlanRequest& r, double mean) {
  const uint64_t batch =
      !r.bucketing ? r.sampler_options.batch_size
      : r.baseline_batch_size > 0
          ? r.baseline_batch_size
          : std::max<uint64_t>(
                1, static_cast<uint64_t>(static_cast<double>(r.bucketing_options.tokens_per_rank) /
                                         mean));
  report["config"]["baseline_batch_size"] = batch;
  report["torch_distributed_sampler"] = plan_baseline(measured, r, [&](uint32_t epoch) {
    return std::make_unique<TorchStylePlanner>(lengths.size(), r.world_size, batch, r.seed, epoch);
  });
  if (!r.bucketing) return;
  // It drops samples longer than the budget (as fairseq filters them), unless they are
  // cut to it for every planner.
  report["sorted_token_budget"] = plan_baseline(measured, r, [&](uint32_t epoch) {
    return std::make_unique<SortedBudgetPlanner>(measured, r.bucketing_options.tokens_per_rank,
                                                 r.world_size, r.seed, epoch);
  });
}

}  // namespace

nlohmann::json run_plan_report(const LengthSource& lengths, const PlanRequest& request) {
  EVENFEED_CHECK(request.epochs > 0, "--epochs must be at least 1");
  EVENFEED_CHECK(!request.resume_world_size || *request.resume_world_size > 0,
                 "--resume-world-size must be at least 1");
  Settled how;
  const PlanRequest r = settle(lengths, request, how);
  // The mean as planned: after truncation, when samples are cut to the budget. The
  // fixed-batch baseline's batch size comes from it.
  const TruncatedLengths measured(lengths, measured_truncation(r));
  const LengthFigures figures =
      length_figures(measured, r, request.bucketing_options.max_batch_size);
  nlohmann::json report;
  report["config"] = config_of(lengths, r, request, how, figures);
  report["evenfeed"] = plan_ours(lengths, measured, r);
  if (r.baselines) add_baselines(report, lengths, measured, r, figures.mean);
  return report;
}

std::vector<uint64_t> read_lengths_file(const std::filesystem::path& path) {
  std::error_code ec;
  EVENFEED_CHECK(std::filesystem::exists(path, ec),
                 "{}: no such file; --lengths takes a text file of one token count per line",
                 path.string());
  EVENFEED_CHECK(!std::filesystem::is_directory(path, ec),
                 "{}: is a directory; --lengths takes a text file of one token count per line "
                 "(for a dataset directory, give it as `evenfeed plan DIR`)",
                 path.string());
  std::ifstream in(path);
  EVENFEED_CHECK(in.good(), "{}: cannot open the lengths file: {}", path.string(),
                 std::strerror(errno));
  std::vector<uint64_t> lengths;
  std::string line;
  // Line k holds sample k-1: a blank line among lengths would shift every later id, so
  // it is an error; blank lines after the last length change nothing and are skipped.
  uint64_t first_blank = 0;
  for (uint64_t number = 1; std::getline(in, line); ++number) {
    if (number == 1) drop_byte_order_mark(line);
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) {
      if (first_blank == 0) first_blank = number;
      continue;
    }
    EVENFEED_CHECK(first_blank == 0,
                   "{}:{}: blank line among the lengths; line k must hold sample k-1's token "
                   "count (drop empty samples from the dataset, or count them as 1)",
                   path.string(), first_blank);
    const size_t end = line.find_last_not_of(" \t\r") + 1;
    int64_t value = 0;
    auto [ptr, parsed] = std::from_chars(line.data() + begin, line.data() + end, value);
    EVENFEED_CHECK(parsed != std::errc::result_out_of_range,
                   "{}:{}: length '{}' is out of range (at most {} tokens)", path.string(), number,
                   excerpt(std::string_view(line).substr(begin, end - begin)),
                   std::numeric_limits<int64_t>::max());
    EVENFEED_CHECK(parsed == std::errc() && ptr == line.data() + end,
                   "{}:{}: '{}' is not an integer length", path.string(), number,
                   excerpt(std::string_view(line).substr(begin, end - begin)));
    EVENFEED_CHECK(value > 0,
                   "{}:{}: length {} is not positive; every sample needs at least one token",
                   path.string(), number, value);
    lengths.push_back(static_cast<uint64_t>(value));
  }
  EVENFEED_CHECK(!in.bad(), "{}: read error: {}", path.string(), std::strerror(errno));
  EVENFEED_CHECK(!lengths.empty(), "{}: no lengths found; expected one token count per line",
                 path.string());
  return lengths;
}

}  // namespace evenfeed::cli
