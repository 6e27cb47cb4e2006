#include "tools/plan_report_text.h"

#include <fmt/format.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "bucketing/balance_trial.h"

namespace evenfeed::cli {
namespace {

// The report's text names the bound above this: below, the data does not stand in the
// way of level steps and the line would say nothing.
constexpr double kBoundWorthSaying = 1.01;

std::string percent(const nlohmann::json& v) {
  return fmt::format("{:.2f}%", 100 * v.get<double>());
}

std::string cap_phrase(uint64_t cap) {
  return cap > 0 ? fmt::format("at most {} samples per batch", cap) : std::string("no sample cap");
}

// What was planned: the samples, the world size, the planner and its budget.
std::string header_line(const nlohmann::json& c) {
  return fmt::format(
      "{} samples (mean length {:.1f}{}), world size {}, {} planner, {} tokens per rank, {} cost, "
      "{} epoch(s), seed {}\n",
      c["samples"].get<uint64_t>(), c["mean_length"].get<double>(),
      c.value("truncated", false) ? ", cut to the budget" : "", c["world_size"].get<uint32_t>(),
      c["planner"].get<std::string>(), c["tokens_per_rank"].get<uint64_t>(),
      c["cost"].get<std::string>(), c["epochs"].get<uint32_t>(), c["seed"].get<uint64_t>());
}

// The cap line where the balance trial raised the cap (balance_trial.h).
std::string balance_trial_line(const nlohmann::json& c) {
  const uint64_t before = c["max_batch_size_before_balance_trial"].get<uint64_t>();
  return fmt::format(
      "{} (chosen by the balance trial: at most {} a batch planned the first two epochs over "
      "the imbalance targets, in few steps, and this, tried after it, met every target; "
      "--no-cap-trial keeps {})\n",
      cap_phrase(c["max_batch_size"].get<uint64_t>()), before, before);
}

// Why the sample cap is what it is, where it was chosen by the estimate or its trial of
// twice the estimate (cap_trial.h); empty where it was given and kept.
std::string why_this_cap(const nlohmann::json& c) {
  const uint64_t given = c.value("max_batch_size_given", uint64_t{0});
  if (c.value("max_batch_size_doubled_by_trial", false)) {
    const uint64_t estimated = c["max_batch_size"].get<uint64_t>() / 2;
    return fmt::format(
        " (chosen from the data: the estimate took {}, and twice it, tried on the first two "
        "epochs, met every target and ran faster or met them where {} did not; "
        "--no-cap-trial keeps {}, --pairs-target 0 keeps {})",
        estimated, estimated, estimated, given == 0 ? "batches full" : "the cap given");
  }
  if (!c.value("max_batch_size_automatic", false)) return "";
  if (given == 0) {
    return " (chosen from the data: full batches would batch too many of the same samples "
           "together again; --pairs-target 0 keeps them full)";
  }
  return fmt::format(
      " (chosen under --max-batch-size {}: batches of up to {} would batch too many of the "
      "same samples together again; --pairs-target 0 keeps the cap given)",
      given, given);
}

// The cap chosen by the fallback trial, with the noise cap chosen with it
// (fallback_trial.h).
std::string fallback_trial_line(const nlohmann::json& c) {
  return fmt::format(
      "{}, noise cap {} (chosen by the fallback trial: no sample cap's estimate met the "
      "pairs target, the estimate's choice planned the first two epochs over the padding "
      "or pairs target, and this one, tried after it, met every target; "
      "--no-fallback-trial keeps the estimate's)\n",
      cap_phrase(c["max_batch_size"].get<uint64_t>()), c["noise_cap"].get<double>());
}

// The sample cap's line: which trial chose it, or why the estimate did; none where the
// token-budget planner runs without a cap.
std::string sample_cap_line(const nlohmann::json& c) {
  if (c.value("max_batch_size_raised_by_balance_trial", false)) return balance_trial_line(c);
  if (c.value("chosen_by_fallback_trial", false)) return fallback_trial_line(c);
  if (c["planner"] != "token-budget" || c["max_batch_size"].get<uint64_t>() == 0) return "";
  return fmt::format("at most {} samples per batch{}\n", c["max_batch_size"].get<uint64_t>(),
                     why_this_cap(c));
}

// The noise cap, where the balance trial narrowed it (balance_trial.h); empty otherwise.
std::string noise_trial_line(const nlohmann::json& c) {
  if (!c.value("noise_cap_narrowed_by_balance_trial", false)) return "";
  const double before = c["noise_cap_before_balance_trial"].get<double>();
  return fmt::format(
      "noise cap {:.4g} (chosen by the balance trial: noise cap {:.4g} planned the first "
      "two epochs over the imbalance targets, in few steps, and this narrower one, tried "
      "after it, met every target; --noise-cap {:.4g} plans as before it)\n",
      c["noise_cap"].get<double>(), before, before);
}

std::string epoch_work_line(const nlohmann::json& c) {
  if (!c.contains("full_budget_steps")) return "";
  const double steps = c["full_budget_steps"].get<double>();
  return fmt::format("the epoch's work fills {:.1f} steps at the full budget{}\n", steps,
                     steps < kFewBudgetSteps
                         ? " (few: the samples that fill a rank alone decide each step's "
                           "balance; fewer --tokens-per-rank give more steps to level them)"
                         : "");
}

// The data's bound on the worst step (imbalance_bound.h), where it is worth saying.
std::string bound_line(const nlohmann::json& c) {
  if (!c.contains("worst_step_bound") || c["worst_step_bound"].get<double>() <= kBoundWorthSaying)
    return "";
  const uint64_t alone = c["samples_alone"].get<uint64_t>();
  return fmt::format(
      "the data bounds balance: any plan padding at most {:.0f}% has a step at max/mean {:.3f} "
      "or more ({} cost; {})\n",
      100 * c["worst_step_bound_padding"].get<double>(), c["worst_step_bound"].get<double>(),
      c["cost"].get<std::string>(),
      alone > 0 ? fmt::format("{} sample{} too dear to share a batch", alone, alone == 1 ? "" : "s")
                : std::string("too little work for every rank"));
}

std::string settings_lines(const nlohmann::json& c) {
  std::string out = header_line(c) + sample_cap_line(c) + noise_trial_line(c) + epoch_work_line(c) +
                    bound_line(c);
  if (!c.value("mix_batches", true))
    out +=
        "batches kept as runs of like lengths (--no-mix: not dealt among the window's batches)\n";
  return out;
}

uint64_t total(const nlohmann::json& per_epoch) {
  uint64_t sum = 0;
  for (const auto& v : per_epoch) sum += v.get<uint64_t>();
  return sum;
}

// Our figures and each baseline's, a column each, a row per figure.
class FiguresTable {
 public:
  explicit FiguresTable(const nlohmann::json& report) {
    columns_.push_back({"evenfeed", &report["evenfeed"]});
    if (report.contains("torch_distributed_sampler")) {
      columns_.push_back(
          {fmt::format("torch B={}", report["config"]["baseline_batch_size"].get<uint64_t>()),
           &report["torch_distributed_sampler"]});
    }
    if (report.contains("sorted_token_budget"))
      columns_.push_back({"sorted budget", &report["sorted_token_budget"]});
  }

  template <typename Cell>
  void row(const std::string& name, Cell cell) {
    out_ += fmt::format("{:<34}", name);
    for (const auto& column : columns_) out_ += fmt::format("{:>16}", cell(*column.second));
    out_ += "\n";
  }

  void titles() {
    out_ += fmt::format("{:<34}", "");
    for (const auto& column : columns_) out_ += fmt::format("{:>16}", column.first);
    out_ += "\n";
  }

  std::string text() && { return std::move(out_); }

 private:
  std::vector<std::pair<std::string, const nlohmann::json*>> columns_;
  std::string out_;
};

std::string figures_table(const nlohmann::json& report) {
  using J = const nlohmann::json&;
  FiguresTable t(report);
  t.titles();
  t.row("steps per epoch", [](J j) { return j["steps_per_epoch"].dump(); });
  t.row("padding waste", [](J j) { return percent(j["padding_waste"]); });
  t.row("largest batch (padded tokens)", [](J j) { return j["largest_batch_tokens"].dump(); });
  for (const std::string kind : {"linear", "quadratic"}) {
    const std::string key = "imbalance_" + kind;
    t.row("rank imbalance " + kind + " mean",
          [&](J j) { return fmt::format("{:.3f}", j[key]["mean"].get<double>()); });
    t.row("rank imbalance " + kind + " p99",
          [&](J j) { return fmt::format("{:.3f}", j[key]["p99"].get<double>()); });
  }
  for (const std::string kind : {"linear", "quadratic"})
    t.row("useful share of rank-time " + kind,
          [&](J j) { return percent(j["useful_share_" + kind]); });
  t.row("samples seen (epoch 0)", [](J j) { return j["samples_seen_per_epoch"][0].dump(); });
  t.row("dropped (all epochs)", [](J j) { return std::to_string(total(j["dropped_per_epoch"])); });
  t.row("duplicated (all epochs)",
        [](J j) { return std::to_string(total(j["duplicated_per_epoch"])); });
  t.row("lag-1 corr. of batch mean length",
        [](J j) { return fmt::format("{:.3f}", j["lag1_batch_mean_length"].get<double>()); });
  t.row("pairs batched together again", [](J j) {
    return j["repeated_pair_share"].is_null() ? std::string("n/a")
                                              : percent(j["repeated_pair_share"]);
  });
  t.row("planning time",
        [](J j) { return fmt::format("{:.3f} s", j["plan_seconds"].get<double>()); });
  return std::move(t).text();
}

}  // namespace

std::string plan_report_text(const nlohmann::json& report) {
  return settings_lines(report["config"]) + figures_table(report);
}

}  // namespace evenfeed::cli
