// evenfeed plan [DIR | --lengths FILE | --synthetic N]: plan epochs and report how
// even, unpadded, random and exactly-once they are, beside the usual baselines.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/heap_reuse.h"
#include "loader/dataset.h"
#include "tools/commands.h"
#include "tools/plan_report.h"
#include "tools/plan_report_text.h"

namespace evenfeed::cli {
namespace {

// The flags of `evenfeed plan`, as given; request_of makes the planner's request of
// them.
struct PlanFlags {
  std::string dir, lengths_file, cost = "linear", order = "keyed", oversize = "error", dump;
  uint64_t synthetic = 0, tokens_per_rank = 0, batch_size = 0, resume_at = 0;
  uint32_t resume_world = 0;
  bool json = false, no_baselines = false, drop_last = false, no_mix = false,
       no_fresh_mates = false, no_cap_trial = false, no_fallback_trial = false;
  bool resume_given = false;  // --resume-at-step given (0 is a step to resume at)
  PlanRequest request;        // the fields that flags set directly
};

// Where the lengths come from: a dataset, a file or a generator.
void add_source_flags(CLI::App* cmd, PlanFlags& f) {
  cmd->add_option("DIR", f.dir, "Dataset directory (lengths from its index)");
  cmd->add_option("--lengths", f.lengths_file, "A file of lengths, one positive integer per line");
  cmd->add_option("--synthetic", f.synthetic,
                  "N synthetic long-tailed lengths (generated, not stored)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 42));
}

// The budget, the cost model, the epochs and how batches are capped.
void add_batching_flags(CLI::App* cmd, PlanFlags& f) {
  cmd->add_option("--world-size", f.request.world_size, "Number of ranks W")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--tokens-per-rank", f.tokens_per_rank,
                  "Token budget per rank per step (length bucketing)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_option("--batch-size", f.batch_size,
                  "Samples per rank per step: the plain sampler; with --tokens-per-rank, the "
                  "baseline's batch size")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  cmd->add_option("--cost", f.cost,
                  "Cost model: linear (padded tokens) or quadratic (a*L + L^2 per padded sample)")
      ->check(CLI::IsMember({"linear", "quadratic"}));
  cmd->add_option("--quadratic-a", f.request.bucketing_options.cost.a,
                  "The a of the quadratic cost (about 6 x model width)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--seed", f.request.seed, "Seed")->check(kNotNegative);
  cmd->add_option("--epochs", f.request.epochs, "Epochs to plan")->check(CLI::Range(1u, 100000u));
  cmd->add_option("--window", f.request.bucketing_options.window,
                  "Samples per planning window (0: from the data)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  cmd->add_option("--max-batch-size", f.request.bucketing_options.max_batch_size,
                  "Most samples in one batch (0: from the data, a cap only when full "
                  "batches would repeat more than 1.25 x --pairs-target of their pairs; "
                  "a cap given is a ceiling and the same choice is made below it, exact "
                  "with --pairs-target 0)")
      ->check(kNotNegative);
  cmd->add_option("--pairs-target", f.request.bucketing_options.repeated_pairs_target,
                  "Share of re-batched pairs the automatic sample cap aims under (0: no "
                  "automatic cap)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--no-cap-trial", f.no_cap_trial,
                "Keep the automatic sample cap the estimate chose (by default twice it is "
                "also planned for the first two epochs at this world size and seed, and "
                "kept when it meets every target and runs faster, or meets them where the "
                "estimate's cap does not; and where an epoch of few steps misses only "
                "balance, 2, 4 and 8 times the cap and none are planned too, the one that "
                "meets every target with the fewest pairs again kept)");
  cmd->add_flag("--no-fallback-trial", f.no_fallback_trial,
                "Keep the automatic cap and noise the estimate chose (by default, where no "
                "sample cap's estimate met --pairs-target, the first two epochs are planned "
                "at this world size and seed, and when they miss the padding or pairs "
                "target, so are wider noises and smaller caps, and the first that meets "
                "every target is kept)");
  cmd->add_option("--least-cap-share", f.request.bucketing_options.least_cap_share,
                  "When no cap meets --pairs-target, the cap with the least estimate is "
                  "chosen if it is below this share of full batches' (0: keep them full)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--max-batch-tokens", f.request.bucketing_options.max_batch_tokens,
                  "Most padded tokens (count x longest) in one batch; bounds memory under "
                  "--cost quadratic (0: only the budget's cost)")
      ->check(kNotNegative);
}

// The global order, and the noise and levelling that shape the batches.
void add_order_and_noise_flags(CLI::App* cmd, PlanFlags& f) {
  cmd->add_option("--order", f.order,
                  "Global order: keyed (O(1) memory), full, shard-blocks, sequential")
      ->check(CLI::IsMember({"keyed", "full", "shard-blocks", "sequential"}));
  cmd->add_option("--oversize", f.oversize,
                  "A sample longer than the budget: error, or truncate it to the budget")
      ->check(CLI::IsMember({"error", "truncate"}));
  cmd->add_option("--noise", f.request.bucketing_options.noise,
                  "Noisy sort reach, in batches (0: plain sort)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--noise-padding", f.request.bucketing_options.noise_padding,
                  "Most padding the noise may cost a sample, as a fraction of the mean length")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--noise-cap", f.request.bucketing_options.noise_cap,
                  "Widest noise in log length at the median's batch size (0: from the data)")
      ->check(CLI::Range(0.0, 8.0));
  cmd->add_option("--noise-cap-padding", f.request.bucketing_options.noise_cap_padding,
                  "Padding the automatic noise cap may spend on the noise alone")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--noise-cap-padding-for-pairs",
                  f.request.bucketing_options.noise_cap_padding_for_pairs,
                  "... and what it may spend when no sample cap meets --pairs-target otherwise")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--padding-guard", f.request.bucketing_options.padding_guard,
                  "A window padding more than this share is planned again with half the "
                  "noise (and, still above 2%, a narrower noise cap), keeping the less "
                  "padded plan (0: never)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--level-tolerance", f.request.bucketing_options.level_tolerance,
                  "Cost spread allowed within a step (an epoch's last window whose worst step "
                  "is above 1.04 is also planned at 0.05 when this is wider, the more level "
                  "plan kept)")
      ->check(CLI::Range(0.0, 0.5));
  cmd->add_flag("--no-mix", f.no_mix,
                "Keep each batch a run of like lengths (by default a window's samples are "
                "dealt among its batches at random, each keeping its count and longest)");
  cmd->add_flag("--no-fresh-mates", f.no_fresh_mates,
                "Deal each epoch without regard to the previous epoch's batch mates (by "
                "default the deal steers samples away from them, up to 4,194,304 samples)");
}

// The plain sampler's last batch, the baselines, the report, the dump and the resume.
void add_output_flags(CLI::App* cmd, PlanFlags& f) {
  cmd->add_flag("--drop-last", f.drop_last,
                "Plain sampler: drop the last partial global batch instead of padding it");
  cmd->add_flag("--no-baselines", f.no_baselines, "Plan only ours");
  cmd->add_flag("--json", f.json, "Print the report as one JSON object");
  cmd->add_option("--dump", f.dump, "Write our plan as JSON lines, one per (epoch, step, rank)");
  cmd->add_option("--resume-at-step", f.resume_at,
                  "Plan epoch 0 as a run stopped after K steps and resumed")
      ->check(kNotNegative);
  cmd->add_option("--resume-world-size", f.resume_world, "... at this world size")
      ->check(CLI::Range(1u, 1u << 20));
}

// The planner's request: what the flags set directly, and what follows from the others.
PlanRequest request_of(const PlanFlags& f) {
  EVENFEED_CHECK((f.tokens_per_rank > 0) || (f.batch_size > 0),
                 "pass --tokens-per-rank T or --batch-size B");
  PlanRequest r = f.request;
  r.bucketing = f.tokens_per_rank > 0;
  BucketingOptions& b = r.bucketing_options;
  b.tokens_per_rank = f.tokens_per_rank > 0 ? f.tokens_per_rank : 1;
  b.cost.kind = parse_cost_kind(f.cost);
  b.oversize = f.oversize == "truncate" ? OversizePolicy::kTruncate : OversizePolicy::kError;
  b.order.kind = parse_order_kind(f.order);
  b.mix_batches = !f.no_mix;
  b.fresh_mates = !f.no_fresh_mates;
  b.cap_trial = !f.no_cap_trial;
  b.fallback_trial = !f.no_fallback_trial;
  r.sampler_options.order.kind = parse_order_kind(f.order);
  r.sampler_options.batch_size = f.batch_size > 0 ? f.batch_size : 1;
  r.sampler_options.drop_last = f.drop_last;
  r.baseline_batch_size = r.bucketing ? f.batch_size : 0;
  r.baselines = !f.no_baselines;
  r.dump = f.dump;
  if (f.resume_given) r.resume_at_step = f.resume_at;
  if (f.resume_world > 0) r.resume_world_size = f.resume_world;
  EVENFEED_CHECK(r.resume_world_size.has_value() <= r.resume_at_step.has_value(),
                 "--resume-world-size needs --resume-at-step K");
  return r;
}

// The lengths to plan, from the one source given; a dataset's shards also set the
// orders' shard sizes in `r`. `dataset` and `stored` keep what the lengths point into.
std::unique_ptr<LengthSource> lengths_of(const PlanFlags& f, PlanRequest& r,
                                         std::unique_ptr<Dataset>& dataset,
                                         std::vector<uint64_t>& stored) {
  if (!f.dir.empty()) {
    dataset = std::make_unique<Dataset>(f.dir);
    EVENFEED_CHECK(f.tokens_per_rank == 0 || dataset->manifest().kind == DatasetKind::kTokens,
                   "--tokens-per-rank plans token datasets, but {} is an image dataset; use "
                   "--batch-size",
                   f.dir);
    for (const ShardEntry& s : dataset->manifest().shards)
      r.bucketing_options.order.shard_sizes.push_back(s.count);
    r.sampler_options.order.shard_sizes = r.bucketing_options.order.shard_sizes;
    return std::make_unique<SpanLengths>(dataset->index().lengths());
  }
  if (!f.lengths_file.empty()) {
    stored = read_lengths_file(f.lengths_file);
    return std::make_unique<SpanLengths>(stored);
  }
  return std::make_unique<SyntheticLengths>(f.synthetic, r.seed);
}

int run_plan(const PlanFlags& f) {
  const int sources = !f.dir.empty() + !f.lengths_file.empty() + (f.synthetic > 0);
  EVENFEED_CHECK(sources == 1, "plan needs exactly one of DIR, --lengths FILE or --synthetic N");
  PlanRequest r = request_of(f);
  std::unique_ptr<Dataset> dataset;
  std::vector<uint64_t> stored;
  const std::unique_ptr<LengthSource> lengths = lengths_of(f, r, dataset, stored);
  keep_freed_heap_for_reuse();  // the planner frees and refills a window's vectors
  const nlohmann::json report = run_plan_report(*lengths, r);
  if (f.json) {
    std::printf("%s\n", report.dump().c_str());
  } else {
    std::printf("%s", plan_report_text(report).c_str());
  }
  return 0;
}

}  // namespace

void add_plan(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand(
      "plan", "Plan epochs for W ranks and report balance, padding, randomness and coverage");
  static PlanFlags f;
  add_source_flags(cmd, f);
  add_batching_flags(cmd, f);
  add_order_and_noise_flags(cmd, f);
  add_output_flags(cmd, f);
  cmd->callback([&run, cmd] {
    f.resume_given = cmd->count("--resume-at-step") > 0;
    run = interruptible([] { return run_plan(f); });
  });
}

}  // namespace evenfeed::cli
