// evenfeed plan [DIR | --lengths FILE | --synthetic N]: plan epochs and report how
// even, unpadded, random and exactly-once they are, beside the usual baselines.
#include <cstdio>
#include <memory>
#include <optional>

#include "core/error.h"
#include "core/heap_reuse.h"
#include "loader/dataset.h"
#include "tools/commands.h"
#include "tools/plan_report.h"
#include "tools/plan_report_text.h"

namespace evenfeed::cli {

void add_plan(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand(
      "plan", "Plan epochs for W ranks and report balance, padding, randomness and coverage");
  static std::string dir, lengths_file, cost = "linear", order = "keyed", oversize = "error";
  static uint64_t synthetic = 0, tokens_per_rank = 0, batch_size = 0, resume_at = 0;
  static uint32_t resume_world = 0;
  static bool json = false, no_baselines = false, drop_last = false, no_mix = false,
              no_fresh_mates = false, no_cap_trial = false, no_fallback_trial = false;
  static std::string dump;
  static PlanRequest r;
  cmd->add_option("DIR", dir, "Dataset directory (lengths from its index)");
  cmd->add_option("--lengths", lengths_file, "A file of lengths, one positive integer per line");
  cmd->add_option("--synthetic", synthetic,
                  "N synthetic long-tailed lengths (generated, not stored)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 42));
  cmd->add_option("--world-size", r.world_size, "Number of ranks W")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--tokens-per-rank", tokens_per_rank,
                  "Token budget per rank per step (length bucketing)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_option("--batch-size", batch_size,
                  "Samples per rank per step: the plain sampler; with --tokens-per-rank, the "
                  "baseline's batch size")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  cmd->add_option("--cost", cost,
                  "Cost model: linear (padded tokens) or quadratic (a*L + L^2 per padded sample)")
      ->check(CLI::IsMember({"linear", "quadratic"}));
  cmd->add_option("--quadratic-a", r.bucketing_options.cost.a,
                  "The a of the quadratic cost (about 6 x model width)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--seed", r.seed, "Seed")->check(kNotNegative);
  cmd->add_option("--epochs", r.epochs, "Epochs to plan")->check(CLI::Range(1u, 100000u));
  cmd->add_option("--window", r.bucketing_options.window,
                  "Samples per planning window (0: from the data)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  cmd->add_option("--max-batch-size", r.bucketing_options.max_batch_size,
                  "Most samples in one batch (0: from the data, a cap only when full "
                  "batches would repeat more than 1.25 x --pairs-target of their pairs; "
                  "a cap given is a ceiling and the same choice is made below it, exact "
                  "with --pairs-target 0)")
      ->check(kNotNegative);
  cmd->add_option("--pairs-target", r.bucketing_options.repeated_pairs_target,
                  "Share of re-batched pairs the automatic sample cap aims under (0: no "
                  "automatic cap)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--no-cap-trial", no_cap_trial,
                "Keep the automatic sample cap the estimate chose (by default twice it is "
                "also planned for the first two epochs at this world size and seed, and "
                "kept when it meets every target and runs faster, or meets them where the "
                "estimate's cap does not; and where an epoch of few steps misses only "
                "balance, 2, 4 and 8 times the cap and none are planned too, the one that "
                "meets every target with the fewest pairs again kept)");
  cmd->add_flag("--no-fallback-trial", no_fallback_trial,
                "Keep the automatic cap and noise the estimate chose (by default, where no "
                "sample cap's estimate met --pairs-target, the first two epochs are planned "
                "at this world size and seed, and when they miss the padding or pairs "
                "target, so are wider noises and smaller caps, and the first that meets "
                "every target is kept)");
  cmd->add_option("--least-cap-share", r.bucketing_options.least_cap_share,
                  "When no cap meets --pairs-target, the cap with the least estimate is "
                  "chosen if it is below this share of full batches' (0: keep them full)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--max-batch-tokens", r.bucketing_options.max_batch_tokens,
                  "Most padded tokens (count x longest) in one batch; bounds memory under "
                  "--cost quadratic (0: only the budget's cost)")
      ->check(kNotNegative);
  cmd->add_option("--order", order,
                  "Global order: keyed (O(1) memory), full, shard-blocks, sequential")
      ->check(CLI::IsMember({"keyed", "full", "shard-blocks", "sequential"}));
  cmd->add_option("--oversize", oversize,
                  "A sample longer than the budget: error, or truncate it to the budget")
      ->check(CLI::IsMember({"error", "truncate"}));
  cmd->add_option("--noise", r.bucketing_options.noise,
                  "Noisy sort reach, in batches (0: plain sort)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--noise-padding", r.bucketing_options.noise_padding,
                  "Most padding the noise may cost a sample, as a fraction of the mean length")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--noise-cap", r.bucketing_options.noise_cap,
                  "Widest noise in log length at the median's batch size (0: from the data)")
      ->check(CLI::Range(0.0, 8.0));
  cmd->add_option("--noise-cap-padding", r.bucketing_options.noise_cap_padding,
                  "Padding the automatic noise cap may spend on the noise alone")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--noise-cap-padding-for-pairs", r.bucketing_options.noise_cap_padding_for_pairs,
                  "... and what it may spend when no sample cap meets --pairs-target otherwise")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--padding-guard", r.bucketing_options.padding_guard,
                  "A window padding more than this share is planned again with half the "
                  "noise (and, still above 2%, a narrower noise cap), keeping the less "
                  "padded plan (0: never)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--level-tolerance", r.bucketing_options.level_tolerance,
                  "Cost spread allowed within a step (an epoch's last window whose worst step "
                  "is above 1.04 is also planned at 0.05 when this is wider, the more level "
                  "plan kept)")
      ->check(CLI::Range(0.0, 0.5));
  cmd->add_flag("--no-mix", no_mix,
                "Keep each batch a run of like lengths (by default a window's samples are "
                "dealt among its batches at random, each keeping its count and longest)");
  cmd->add_flag("--no-fresh-mates", no_fresh_mates,
                "Deal each epoch without regard to the previous epoch's batch mates (by "
                "default the deal steers samples away from them, up to 4,194,304 samples)");
  cmd->add_flag("--drop-last", drop_last,
                "Plain sampler: drop the last partial global batch instead of padding it");
  cmd->add_flag("--no-baselines", no_baselines, "Plan only ours");
  cmd->add_flag("--json", json, "Print the report as one JSON object");
  cmd->add_option("--dump", dump, "Write our plan as JSON lines, one per (epoch, step, rank)");
  cmd->add_option("--resume-at-step", resume_at,
                  "Plan epoch 0 as a run stopped after K steps and resumed")
      ->check(kNotNegative);
  cmd->add_option("--resume-world-size", resume_world, "... at this world size")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->callback([&run, cmd] {
    run = [cmd] {
      const int sources = !dir.empty() + !lengths_file.empty() + (synthetic > 0);
      EVENFEED_CHECK(sources == 1,
                     "plan needs exactly one of DIR, --lengths FILE or --synthetic N");
      EVENFEED_CHECK((tokens_per_rank > 0) || (batch_size > 0),
                     "pass --tokens-per-rank T or --batch-size B");
      r.bucketing = tokens_per_rank > 0;
      r.bucketing_options.tokens_per_rank = tokens_per_rank > 0 ? tokens_per_rank : 1;
      r.bucketing_options.cost.kind = parse_cost_kind(cost);
      r.bucketing_options.oversize =
          oversize == "truncate" ? OversizePolicy::kTruncate : OversizePolicy::kError;
      r.bucketing_options.order.kind = parse_order_kind(order);
      r.sampler_options.order.kind = parse_order_kind(order);
      r.sampler_options.batch_size = batch_size > 0 ? batch_size : 1;
      r.sampler_options.drop_last = drop_last;
      r.bucketing_options.mix_batches = !no_mix;
      r.bucketing_options.fresh_mates = !no_fresh_mates;
      r.bucketing_options.cap_trial = !no_cap_trial;
      r.bucketing_options.fallback_trial = !no_fallback_trial;
      r.baseline_batch_size = r.bucketing ? batch_size : 0;
      r.baselines = !no_baselines;
      r.dump = dump;
      if (cmd->count("--resume-at-step") > 0) r.resume_at_step = resume_at;
      if (resume_world > 0) r.resume_world_size = resume_world;
      EVENFEED_CHECK(r.resume_world_size.has_value() <= r.resume_at_step.has_value(),
                     "--resume-world-size needs --resume-at-step K");

      std::unique_ptr<Dataset> dataset;
      std::vector<uint64_t> stored;
      std::unique_ptr<LengthSource> lengths;
      if (!dir.empty()) {
        dataset = std::make_unique<Dataset>(dir);
        EVENFEED_CHECK(tokens_per_rank == 0 || dataset->manifest().kind == DatasetKind::kTokens,
                       "--tokens-per-rank plans token datasets, but {} is an image dataset; use "
                       "--batch-size",
                       dir);
        for (const ShardEntry& s : dataset->manifest().shards)
          r.bucketing_options.order.shard_sizes.push_back(s.count);
        r.sampler_options.order.shard_sizes = r.bucketing_options.order.shard_sizes;
        lengths = std::make_unique<SpanLengths>(dataset->index().lengths());
      } else if (!lengths_file.empty()) {
        stored = read_lengths_file(lengths_file);
        lengths = std::make_unique<SpanLengths>(stored);
      } else {
        lengths = std::make_unique<SyntheticLengths>(synthetic, r.seed);
      }
      keep_freed_heap_for_reuse();  // the planner frees and refills a window's vectors
      nlohmann::json report = run_plan_report(*lengths, r);
      if (json) {
        std::printf("%s\n", report.dump().c_str());
      } else {
        std::printf("%s", plan_report_text(report).c_str());
      }
      return 0;
    };
  });
}

}  // namespace evenfeed::cli
