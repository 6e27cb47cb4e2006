// `evenfeed plan` as a user meets it: the report, a dump anyone can recheck, the
// resume-at-another-world-size dump, and bad input.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "tests/support/fixtures.h"
#include "tests/support/log_normal_lengths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;
using testing::run_command;

const std::string kBin = testing::evenfeed_bin();

std::string write_lengths(const testing::TempDir& tmp, size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i)
    text += std::to_string(1 + (i * 7919) % 97 + (i % 50 == 0 ? 400 : 0)) + "\n";
  testing::write_text(tmp / "lengths.txt", text);
  return (tmp / "lengths.txt").string();
}

std::vector<uint64_t> read_lengths(const std::string& path) {
  std::vector<uint64_t> lengths;
  std::ifstream in(path);
  for (uint64_t l; in >> l;) lengths.push_back(l);
  return lengths;
}

std::vector<nlohmann::json> read_dump(const fs::path& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(PlanCli, ReportHasOursAndBothBaselines) {
  testing::TempDir tmp;
  const std::string lengths = write_lengths(tmp, 500);
  auto r = run_command(kBin + " plan --lengths " + lengths +
                       " --world-size 4 --tokens-per-rank 512 --epochs 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"evenfeed", "torch_distributed_sampler", "sorted_token_budget"})
    ASSERT_TRUE(j.contains(k)) << k;
  const auto& ours = j["evenfeed"];
  EXPECT_EQ(ours["dropped_per_epoch"], (std::vector<int>{0, 0}));
  EXPECT_EQ(ours["duplicated_per_epoch"], (std::vector<int>{0, 0}));
  EXPECT_EQ(ours["samples_seen_per_epoch"], (std::vector<int>{500, 500}));
  EXPECT_TRUE(ours["equal_step_counts_across_ranks"].get<bool>());
  EXPECT_FALSE(ours["repeated_pair_share"].is_null());
  auto text =
      run_command(kBin + " plan --lengths " + lengths + " --world-size 4 --tokens-per-rank 512");
  EXPECT_NE(text.out.find("padding waste"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("sorted budget"), std::string::npos) << text.out;
}

// The report says how many full-budget steps the epoch's work fills: the samples' cost,
// cut to the budget, over W budgets, recomputed here from the file; and it says so when
// that is few.
TEST(PlanCli, ReportSaysHowManyFullBudgetStepsTheWorkFills) {
  testing::TempDir tmp;
  const std::string lengths = write_lengths(tmp, 500);
  auto steps_at = [&](uint64_t budget, const std::string& cost) {
    auto r = run_command(kBin + " plan --lengths " + lengths +
                         " --world-size 4 --tokens-per-rank " + std::to_string(budget) +
                         " --cost " + cost + " --oversize truncate --no-baselines --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["config"]["full_budget_steps"].get<double>();
  };
  for (const std::string cost : {"linear", "quadratic"}) {
    for (uint64_t budget : {128, 4096}) {
      auto f = [&](double l) { return cost == "linear" ? l : 2048 * l + l * l; };
      double total = 0;
      for (uint64_t l : read_lengths(lengths)) total += f(static_cast<double>(std::min(l, budget)));
      EXPECT_NEAR(steps_at(budget, cost), total / (4 * f(static_cast<double>(budget))), 1e-9)
          << cost << " " << budget;
    }
  }
  const std::string plan = kBin + " plan --lengths " + lengths + " --world-size 4 --no-baselines ";
  EXPECT_NE(run_command(plan + "--tokens-per-rank 4096 --oversize truncate").out.find("(few:"),
            std::string::npos);
  const auto many = run_command(plan + "--tokens-per-rank 512 --oversize truncate").out;
  EXPECT_NE(many.find("steps at the full budget"), std::string::npos) << many;
  EXPECT_EQ(many.find("(few:"), std::string::npos) << many;
}

// Where the data makes level steps impossible, the report shows how close any plan can
// come (imbalance_bound.h) and ours is no closer; elsewhere it says nothing of it.
TEST(PlanCli, ReportShowsTheBoundWhereTheDataLimitsBalance) {
  testing::TempDir tmp;
  testing::write_text(tmp / "five.txt", "100\n200\n300\n400\n500\n");
  const std::string plan = kBin + " plan --world-size 8 --tokens-per-rank 1024 --cost quadratic " +
                           "--no-baselines --lengths ";
  auto r = run_command(plan + (tmp / "five.txt").string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // Five samples at eight ranks: W c_max / sum c = 2.814 without padding, a little less
  // with the 2% a plan may pad.
  const double bound = j["config"]["worst_step_bound"].get<double>();
  EXPECT_GT(bound, 2.6);
  EXPECT_LT(bound, 2.815);
  EXPECT_GE(j["evenfeed"]["imbalance_quadratic"]["max"].get<double>(), bound);
  const auto text = run_command(plan + (tmp / "five.txt").string()).out;
  EXPECT_NE(text.find("the data bounds balance"), std::string::npos) << text;
  EXPECT_NE(text.find("too little work for every rank"), std::string::npos) << text;
  const auto level = run_command(plan + write_lengths(tmp, 500) + " --json");
  EXPECT_LT(nlohmann::json::parse(level.out)["config"]["worst_step_bound"].get<double>(), 1.01);
  EXPECT_EQ(run_command(plan + write_lengths(tmp, 500)).out.find("bounds balance"),
            std::string::npos);
}

TEST(PlanCli, DumpHasALinePerEpochStepAndRankCoveringEverySampleOnce) {
  testing::TempDir tmp;
  const std::string lengths = write_lengths(tmp, 300);
  const fs::path dump = tmp / "plan.jsonl";
  auto r = run_command(kBin + " plan --lengths " + lengths +
                       " --world-size 8 --tokens-per-rank 600 --epochs 2 " +
                       "--no-baselines --dump " + dump.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<int, std::multiset<uint64_t>> per_epoch;
  std::map<std::pair<int, int>, std::set<int>> ranks;
  for (const auto& line : read_dump(dump)) {
    EXPECT_EQ(line["world_size"], 8);
    EXPECT_FALSE(line.contains("valid"));  // token budgets never pad
    ranks[{line["epoch"], line["step"]}].insert(line["rank"].get<int>());
    for (uint64_t id : line["samples"]) per_epoch[line["epoch"]].insert(id);
  }
  for (const auto& [key, r8] : ranks) EXPECT_EQ(r8.size(), 8u);
  for (const auto& [epoch, ids] : per_epoch) {
    EXPECT_EQ(ids.size(), 300u);
    EXPECT_EQ(std::set<uint64_t>(ids.begin(), ids.end()).size(), 300u);
  }
}

// The useful share of rank-time, recomputed from the dump: each step lasts as long as
// its dearest batch; the samples' own cost over W times the sum of those.
TEST(PlanCli, UsefulShareIsRecomputableFromTheDump) {
  testing::TempDir tmp;
  const std::string lengths = write_lengths(tmp, 400);
  const std::vector<uint64_t> length_of = read_lengths(lengths);
  const fs::path dump = tmp / "plan.jsonl";
  auto r = run_command(kBin + " plan --lengths " + lengths +
                       " --world-size 4 --tokens-per-rank 700 --epochs 2 --json --dump " +
                       dump.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  std::map<std::pair<int, int>, double> dearest;
  double useful = 0;
  for (const auto& line : read_dump(dump)) {
    uint64_t longest = 0;
    for (uint64_t id : line["samples"]) {
      longest = std::max(longest, length_of.at(id));
      useful += static_cast<double>(length_of.at(id));
    }
    double& d = dearest[{line["epoch"], line["step"]}];
    d = std::max(d, static_cast<double>(line["samples"].size() * longest));
  }
  double time = 0;
  for (const auto& [step, cost] : dearest) time += cost;
  const double share = report["evenfeed"]["useful_share_linear"].get<double>();
  EXPECT_NEAR(share, useful / (4 * time), 1e-9);
  // A fixed batch size pads and waits far more than a token budget on these lengths.
  EXPECT_LT(report["torch_distributed_sampler"]["useful_share_linear"].get<double>(), share - 0.2);
}

// Under quadratic cost the budget bounds compute; --max-batch-tokens bounds every
// batch's padded tokens as well, which the dump shows, and is reported in the config.
TEST(PlanCli, MaxBatchTokensBoundsEveryBatchOfAQuadraticPlan) {
  testing::TempDir tmp;
  const std::string lengths = write_lengths(tmp, 3000);
  const std::vector<uint64_t> length_of = read_lengths(lengths);
  auto most_tokens = [&](const std::string& extra) {
    const fs::path dump = tmp / "plan.jsonl";
    auto r = run_command(kBin + " plan --lengths " + lengths +
                         " --world-size 4 --tokens-per-rank 600 --cost quadratic --epochs 1 "
                         "--no-baselines --dump " +
                         dump.string() + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    uint64_t most = 0, samples = 0;
    for (const auto& line : read_dump(dump)) {
      uint64_t longest = 0;
      for (uint64_t id : line["samples"]) longest = std::max(longest, length_of.at(id));
      most = std::max<uint64_t>(most, line["samples"].size() * longest);
      samples += line["samples"].size();
    }
    EXPECT_EQ(samples, 3000u);
    return most;
  };
  EXPECT_GT(most_tokens(""), 600u);
  EXPECT_LE(most_tokens(" --max-batch-tokens 600"), 600u);
  auto j = run_command(kBin + " plan --lengths " + lengths +
                       " --tokens-per-rank 600 --cost quadratic --max-batch-tokens 900 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["config"]["max_batch_tokens"], 900);
  auto tight = run_command(kBin + " plan --lengths " + lengths +
                           " --tokens-per-rank 600 --max-batch-tokens 100");
  EXPECT_EQ(tight.exit_code, 1);
  EXPECT_NE(tight.err.find("max batch tokens 100 is below the per-rank budget of 600"),
            std::string::npos)
      << tight.err;
}

// Thousands of 1-5-token samples under a quadratic budget would fill each batch with
// most of the samples of its lengths, every epoch: the sample cap is then chosen from
// the data, reported in the config and the text; --pairs-target 0 keeps batches full, a
// cap given below the chosen one is kept, one above it is a ceiling the same cap is
// chosen under (exact with --pairs-target 0), and a target outside [0, 1] is refused.
TEST(PlanCli, AutomaticSampleCapIsReportedAndCanBeTurnedOff) {
  testing::TempDir tmp;
  std::string text;
  for (size_t i = 0; i < 20000; ++i) text += std::to_string(1 + (i * 7919) % 5) + "\n";
  testing::write_text(tmp / "short.txt", text);
  const std::string plan = kBin + " plan --lengths " + (tmp / "short.txt").string() +
                           " --world-size 4 --tokens-per-rank 4096 --cost quadratic --epochs 2 ";
  auto automatic = run_command(plan + "--json --no-baselines");
  ASSERT_EQ(automatic.exit_code, 0) << automatic.err;
  const auto j = nlohmann::json::parse(automatic.out);
  EXPECT_GT(j["config"]["max_batch_size"].get<uint64_t>(), 0u);
  EXPECT_TRUE(j["config"]["max_batch_size_automatic"].get<bool>());
  EXPECT_LE(j["evenfeed"]["repeated_pair_share"].get<double>(), 0.10);
  auto full =
      nlohmann::json::parse(run_command(plan + "--json --no-baselines --pairs-target 0").out);
  EXPECT_EQ(full["config"]["max_batch_size"], 0);
  EXPECT_GT(full["evenfeed"]["repeated_pair_share"].get<double>(), 0.10);
  auto given = nlohmann::json::parse(run_command(plan + "--json --max-batch-size 100").out);
  EXPECT_EQ(given["config"]["max_batch_size"], 100);
  EXPECT_FALSE(given["config"]["max_batch_size_automatic"].get<bool>());
  auto ceiling = nlohmann::json::parse(run_command(plan + "--json --max-batch-size 100000").out);
  EXPECT_EQ(ceiling["config"]["max_batch_size"], j["config"]["max_batch_size"]);
  EXPECT_TRUE(ceiling["config"]["max_batch_size_automatic"].get<bool>());
  EXPECT_EQ(ceiling["config"]["max_batch_size_given"], 100000);
  EXPECT_NE(run_command(plan + "--max-batch-size 100000")
                .out.find("chosen under --max-batch-size 100000"),
            std::string::npos);
  auto exact = nlohmann::json::parse(
      run_command(plan + "--json --max-batch-size 100000 --pairs-target 0").out);
  EXPECT_EQ(exact["config"]["max_batch_size"], 100000);
  EXPECT_FALSE(exact["config"]["max_batch_size_automatic"].get<bool>());
  EXPECT_NE(run_command(plan).out.find("samples per batch (chosen from the data"),
            std::string::npos);
  auto bad = run_command(plan + "--pairs-target 1.5");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--pairs-target"), std::string::npos) << bad.err;
}

// testing::lumpy_lengths as a --lengths file.
std::string lumpy_lengths(size_t n) {
  std::string text;
  for (uint64_t length : testing::lumpy_lengths(n)) text += std::to_string(length) + "\n";
  return text;
}

// The --json report of a plan command that must succeed.
nlohmann::json json_report_of(const std::string& command) {
  auto r = run_command(command);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The noise's padding limits are options: --noise-cap-padding (what the automatic noise
// may cost alone) and --noise-cap-padding-for-pairs (what it may cost when no sample
// cap meets the pairs target otherwise). On short entries with lumps, quadratic, only
// the second limit finds a cap that meets the pairs target. (The estimate's choice:
// the trials of twice its cap and, where it falls back, of other caps and noises are
// left out, --no-cap-trial --no-fallback-trial.)
TEST(PlanCli, NoisePaddingLimitsAreOptions) {
  testing::TempDir tmp;
  testing::write_text(tmp / "lumpy.txt", lumpy_lengths(40000));
  const std::string plan = kBin + " plan --lengths " + (tmp / "lumpy.txt").string() +
                           " --world-size 8 --tokens-per-rank 8192 --cost quadratic " +
                           "--oversize truncate --epochs 2 --json --no-baselines --no-cap-trial " +
                           "--no-fallback-trial ";
  auto config_of = [&](const std::string& flags) { return json_report_of(plan + flags); };
  const auto soft = config_of("--noise-cap-padding-for-pairs 0.012 --least-cap-share 0");
  EXPECT_EQ(soft["config"]["max_batch_size"], 0);
  EXPECT_GT(soft["evenfeed"]["repeated_pair_share"].get<double>(), 0.10);
  const auto chosen = config_of("");
  EXPECT_GT(chosen["config"]["max_batch_size"].get<uint64_t>(), 0u);
  EXPECT_GT(chosen["config"]["noise_cap"].get<double>(), soft["config"]["noise_cap"].get<double>());
  EXPECT_LE(chosen["evenfeed"]["repeated_pair_share"].get<double>(), 0.10);
  EXPECT_LT(chosen["evenfeed"]["padding_waste"].get<double>(), 0.02);

  EXPECT_EQ(config_of("--pairs-target 0 --noise-cap-padding 0")["config"]["noise_cap"], 0.05);
  EXPECT_EQ(config_of("--pairs-target 0 --noise-cap-padding 1")["config"]["noise_cap"], 0.2);
  auto bad = run_command(plan + "--noise-cap-padding-for-pairs 2");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--noise-cap-padding-for-pairs"), std::string::npos) << bad.err;
  bad = run_command(plan + "--least-cap-share -1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--least-cap-share"), std::string::npos) << bad.err;
}

// Where the estimate capped the batches, twice its cap is planned too for the first two
// epochs (bucketing/cap_trial.h) and kept when it meets every target and spends more of
// the ranks' time on the samples. On the lumpy entries at 8 ranks, linear cost, it is
// kept: the report says so, its plan meets every target (pairs under 8%, the
// estimate's target) and is faster than the estimate's, and it is exactly the plan
// that cap given by hand makes. --pairs-target 0 makes no trial.
TEST(PlanCli, TwiceTheEstimatedCapIsKeptWhereItPlansFasterWithinTheTargets) {
  testing::TempDir tmp;
  testing::write_text(tmp / "lumpy.txt", lumpy_lengths(40000));
  const std::string plan = kBin + " plan --lengths " + (tmp / "lumpy.txt").string() +
                           " --world-size 8 --tokens-per-rank 8192 --cost linear " +
                           "--oversize truncate --epochs 2 --no-baselines ";
  auto report_of = [&](const std::string& flags) {
    return json_report_of(plan + "--json " + flags);
  };
  auto meets_every_target = [](const nlohmann::json& e) {
    const auto& q = e["imbalance_linear"];
    return e["padding_waste"].get<double>() <= 0.02 && q["mean"].get<double>() <= 1.03 &&
           q["p99"].get<double>() <= 1.10 && e["repeated_pair_share"].get<double>() <= 0.08 &&
           std::abs(e["lag1_batch_mean_length"].get<double>()) <= 0.2;
  };
  const auto estimated = report_of("--no-cap-trial");
  const auto tried = report_of("");
  const uint64_t cap = estimated["config"]["max_batch_size"].get<uint64_t>();
  ASSERT_GT(cap, 0u);
  EXPECT_FALSE(estimated["config"]["max_batch_size_doubled_by_trial"].get<bool>());
  EXPECT_EQ(tried["config"]["max_batch_size"].get<uint64_t>(), 2 * cap);
  EXPECT_TRUE(tried["config"]["max_batch_size_doubled_by_trial"].get<bool>());
  EXPECT_TRUE(meets_every_target(tried["evenfeed"])) << tried["evenfeed"].dump();
  EXPECT_GT(tried["evenfeed"]["useful_share_linear"].get<double>(),
            estimated["evenfeed"]["useful_share_linear"].get<double>());
  const auto by_hand =
      report_of("--max-batch-size " + std::to_string(2 * cap) + " --pairs-target 0");
  for (const char* figure : {"padding_waste", "useful_share_linear", "repeated_pair_share"})
    EXPECT_EQ(by_hand["evenfeed"][figure], tried["evenfeed"][figure]) << figure;
  EXPECT_EQ(by_hand["config"]["noise_cap"], tried["config"]["noise_cap"]);
  auto text = run_command(plan);
  EXPECT_NE(text.out.find("twice it"), std::string::npos) << text.out;
  const auto exact = report_of("--pairs-target 0");
  EXPECT_FALSE(exact["config"]["max_batch_size_doubled_by_trial"].get<bool>());
}

// Where no sample cap's estimate met the pairs target and the estimate's choice plans
// the first two epochs over the padding or pairs target, wider noises and smaller caps
// are planned too (bucketing/fallback_trial.h). 3,000 source-file-like lengths at 8
// ranks, quadratic, 4,096 tokens: the report says the fallback trial chose, its plan
// meets every target, and it is exactly the plan that cap and noise given by hand make;
// --no-fallback-trial keeps the estimate's, which re-batches more than 10% of the pairs.
TEST(PlanCli, TheFallbackTrialsChoiceIsReportedAndIsTheSameByHand) {
  testing::TempDir tmp;
  std::string text;
  for (uint64_t length : testing::log_normal_file_lengths(3000, 300, 1.2))
    text += std::to_string(length) + "\n";
  testing::write_text(tmp / "files.txt", text);
  const std::string plan = kBin + " plan --lengths " + (tmp / "files.txt").string() +
                           " --world-size 8 --tokens-per-rank 4096 --cost quadratic " +
                           "--oversize truncate --epochs 2 --no-baselines ";
  auto report_of = [&](const std::string& flags) {
    return json_report_of(plan + "--json " + flags);
  };
  const auto estimated = report_of("--no-fallback-trial");
  const auto tried = report_of("");
  EXPECT_FALSE(estimated["config"]["chosen_by_fallback_trial"].get<bool>());
  EXPECT_GT(estimated["evenfeed"]["repeated_pair_share"].get<double>(), 0.10);
  EXPECT_TRUE(tried["config"]["chosen_by_fallback_trial"].get<bool>());
  const auto& e = tried["evenfeed"];
  EXPECT_LE(e["padding_waste"].get<double>(), 0.02);
  EXPECT_LE(e["imbalance_quadratic"]["mean"].get<double>(), 1.03);
  EXPECT_LE(e["imbalance_quadratic"]["p99"].get<double>(), 1.10);
  EXPECT_LE(e["repeated_pair_share"].get<double>(), 0.08);
  const uint64_t cap = tried["config"]["max_batch_size"].get<uint64_t>();
  ASSERT_GT(cap, 0u);
  const auto by_hand =
      report_of("--noise-cap " + std::to_string(tried["config"]["noise_cap"].get<double>()) +
                " --pairs-target 0 --max-batch-size " + std::to_string(cap));
  for (const char* figure : {"padding_waste", "useful_share_quadratic", "repeated_pair_share"})
    EXPECT_EQ(by_hand["evenfeed"][figure], e[figure]) << figure;
  const auto words = run_command(plan);
  EXPECT_NE(words.out.find("--no-fallback-trial keeps"), std::string::npos) << words.out;
}

// Where an epoch of few steps misses only balance with the estimate's cap, larger caps
// are planned too (bucketing/balance_trial.h). 20,000 synthetic lengths at 64 ranks,
// quadratic, 8,192 tokens: --no-cap-trial keeps the estimate's cap, whose plan misses
// the imbalance mean; by default the report names the balance trial, the cap it kept
// and the cap before it, and its figures are those of the plan that cap given by hand
// makes, which meets every target. (One report of the trial, as text: each settles by
// planning the first two epochs several times, two minutes under ASan for two.)
TEST(PlanCli, TheBalanceTrialsLargerCapIsReportedAndIsTheSameByHand) {
  const std::string plan = kBin +
                           " plan --synthetic 20000 --world-size 64 --tokens-per-rank 8192 "
                           "--cost quadratic --oversize truncate --epochs 2 --no-baselines ";
  const auto estimated = json_report_of(plan + "--json --no-cap-trial");
  EXPECT_FALSE(estimated["config"]["max_batch_size_raised_by_balance_trial"].get<bool>());
  EXPECT_GT(estimated["evenfeed"]["imbalance_quadratic"]["mean"].get<double>(), 1.03);
  const uint64_t before = estimated["config"]["max_batch_size"].get<uint64_t>();

  const auto words = run_command(plan);
  ASSERT_EQ(words.exit_code, 0) << words.err;
  std::smatch line;
  ASSERT_TRUE(std::regex_search(
      words.out, line,
      std::regex(
          R"(at most (\d+) samples per batch \(chosen by the balance trial: at most (\d+) )")))
      << words.out;
  const uint64_t cap = std::stoull(line[1]);
  EXPECT_EQ(std::stoull(line[2]), before);
  EXPECT_GT(cap, before);

  const auto by_hand =
      json_report_of(plan + "--json --pairs-target 0 --max-batch-size " + std::to_string(cap));
  const auto& e = by_hand["evenfeed"];
  EXPECT_LE(e["padding_waste"].get<double>(), 0.02);
  EXPECT_LE(e["imbalance_quadratic"]["mean"].get<double>(), 1.03);
  EXPECT_LE(e["imbalance_quadratic"]["p99"].get<double>(), 1.10);
  EXPECT_LE(e["repeated_pair_share"].get<double>(), 0.10);
  auto says = [&](const std::string& label, const std::string& figure) {
    const std::regex row(label + R"( +)" + figure + R"(\n)");
    EXPECT_TRUE(std::regex_search(words.out, row)) << label << " " << figure << "\n" << words.out;
  };
  auto printed = [](const char* format, double value) {
    char text[32];
    std::snprintf(text, sizeof text, format, value);
    return std::string(text);
  };
  says("padding waste", printed("%.2f%%", 100 * e["padding_waste"].get<double>()));
  says("pairs batched together again",
       printed("%.2f%%", 100 * e["repeated_pair_share"].get<double>()));
  says("rank imbalance quadratic mean",
       printed("%.3f", e["imbalance_quadratic"]["mean"].get<double>()));
}

// Where no larger cap can mend balance, the balance trial tries narrower noises
// (bucketing/balance_trial.h): 5,000 log-normal lengths, linear, 64 ranks, 8,192 tokens.
// The report names the noise cap it kept and the one before, and its figures are those
// of the plan the kept noise cap given by hand makes; the one before, given by hand,
// plans over the imbalance mean target.
TEST(PlanCli, TheBalanceTrialsNarrowerNoiseIsReportedAndIsTheSameByHand) {
  testing::TempDir tmp;
  std::string text;
  for (const uint64_t length : testing::log_normal_lengths(7, 5000))
    text += std::to_string(length) + "\n";
  testing::write_text(tmp / "lengths.txt", text);
  const std::string plan = kBin + " plan --lengths " + (tmp / "lengths.txt").string() +
                           " --world-size 64 --tokens-per-rank 8192 --cost linear "
                           "--oversize truncate --epochs 2 --no-baselines ";
  const auto words = run_command(plan);
  ASSERT_EQ(words.exit_code, 0) << words.err;
  std::smatch line;
  ASSERT_TRUE(std::regex_search(
      words.out, line,
      std::regex(R"(noise cap ([\d.]+) \(chosen by the balance trial: noise cap ([\d.]+) )")))
      << words.out;
  const std::string kept = line[1], before = line[2];
  EXPECT_LT(std::stod(kept), std::stod(before));

  const auto report = json_report_of(plan + "--json");
  EXPECT_TRUE(report["config"]["noise_cap_narrowed_by_balance_trial"].get<bool>());
  const auto by_hand = json_report_of(plan + "--json --noise-cap " + kept);
  for (const char* figure : {"padding_waste", "repeated_pair_share", "steps_per_epoch"})
    EXPECT_EQ(by_hand["evenfeed"][figure], report["evenfeed"][figure]) << figure;
  EXPECT_EQ(by_hand["evenfeed"]["imbalance_linear"], report["evenfeed"]["imbalance_linear"]);
  EXPECT_LE(by_hand["evenfeed"]["imbalance_linear"]["mean"].get<double>(), 1.03);
  const auto unnarrowed = json_report_of(plan + "--json --noise-cap " + before);
  EXPECT_GT(unnarrowed["evenfeed"]["imbalance_linear"]["mean"].get<double>(), 1.03);
}

// A window padding more than --padding-guard (default 1.9%) is planned again with half
// the noise. 20,000 log-normal lengths (median 40, sigma 0.9, drawn from golden-ratio
// sequences) under a quadratic budget of 8,192 tokens pad 2.4% with the full noise.
// (The fallback trial is left out: unguarded, these pad over 2%, and it would search
// other caps and noises for a plan within the targets.)
TEST(PlanCli, PaddingGuardIsReportedActsAboveItAndCanBeTurnedOff) {
  testing::TempDir tmp;
  std::string text;
  for (size_t i = 1; i <= 20000; ++i) {
    const double u1 = std::fmod(static_cast<double>(i) * 0.6180339887498949, 1.0);
    const double u2 = std::fmod(static_cast<double>(i) * 0.7548776662466927, 1.0);
    const double z = std::sqrt(-2 * std::log(std::max(u1, 1e-12))) * std::cos(2 * M_PI * u2);
    text +=
        std::to_string(std::max<int64_t>(1, static_cast<int64_t>(40 * std::exp(0.9 * z)))) + "\n";
  }
  testing::write_text(tmp / "lengths.txt", text);
  const std::string plan = kBin + " plan --lengths " + (tmp / "lengths.txt").string() +
                           " --world-size 8 --tokens-per-rank 8192 --cost quadratic --epochs 2 " +
                           "--json --no-baselines --no-fallback-trial";
  const auto guarded = nlohmann::json::parse(run_command(plan).out);
  const auto off = nlohmann::json::parse(run_command(plan + " --padding-guard 0").out);
  EXPECT_DOUBLE_EQ(guarded["config"]["padding_guard"].get<double>(), 0.019);
  EXPECT_DOUBLE_EQ(off["config"]["padding_guard"].get<double>(), 0.0);
  EXPECT_GT(off["evenfeed"]["padding_waste"].get<double>(), 0.019);
  EXPECT_LT(guarded["evenfeed"]["padding_waste"].get<double>(),
            off["evenfeed"]["padding_waste"].get<double>() - 0.002);
  const auto bad = run_command(plan + " --padding-guard 2");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--padding-guard"), std::string::npos) << bad.err;
}

// Batches are dealt by default (each keeps its count and longest, so its cost);
// --no-mix keeps them runs of like lengths. Padding and balance are the same either
// way, batch mates are not.
TEST(PlanCli, DealtBatchesAreReportedAndCanBeTurnedOff) {
  testing::TempDir tmp;
  std::string text;
  for (size_t i = 0; i < 6000; ++i) text += std::to_string(20 + (i * 7919) % 200) + "\n";
  testing::write_text(tmp / "lengths.txt", text);
  const std::string plan = kBin + " plan --lengths " + (tmp / "lengths.txt").string() +
                           " --world-size 4 --tokens-per-rank 4096 --epochs 2 --json " +
                           "--no-baselines --pairs-target 0";
  const auto dealt = nlohmann::json::parse(run_command(plan).out);
  const auto runs = nlohmann::json::parse(run_command(plan + " --no-mix").out);
  EXPECT_TRUE(dealt["config"]["mix_batches"].get<bool>());
  EXPECT_FALSE(runs["config"]["mix_batches"].get<bool>());
  EXPECT_NEAR(dealt["evenfeed"]["padding_waste"].get<double>(),
              runs["evenfeed"]["padding_waste"].get<double>(), 1e-12);
  EXPECT_EQ(dealt["evenfeed"]["steps_per_epoch"], runs["evenfeed"]["steps_per_epoch"]);
  EXPECT_LT(dealt["evenfeed"]["repeated_pair_share"].get<double>(),
            runs["evenfeed"]["repeated_pair_share"].get<double>());
  // Steered away from last epoch's mates by default; --no-fresh-mates deals at random.
  const auto random = nlohmann::json::parse(run_command(plan + " --no-fresh-mates").out);
  EXPECT_TRUE(dealt["config"]["fresh_mates"].get<bool>());
  EXPECT_FALSE(random["config"]["fresh_mates"].get<bool>());
  EXPECT_FALSE(runs["config"]["fresh_mates"].get<bool>());  // nothing dealt, nothing steered
  EXPECT_NEAR(dealt["evenfeed"]["padding_waste"].get<double>(),
              random["evenfeed"]["padding_waste"].get<double>(), 1e-12);
  EXPECT_NEAR(dealt["evenfeed"]["imbalance_linear"]["max"].get<double>(),
              random["evenfeed"]["imbalance_linear"]["max"].get<double>(), 1e-12);
  EXPECT_LT(dealt["evenfeed"]["repeated_pair_share"].get<double>(),
            random["evenfeed"]["repeated_pair_share"].get<double>());
  const std::string report = kBin + " plan --lengths " + (tmp / "lengths.txt").string() +
                             " --world-size 4 --tokens-per-rank 4096 --no-baselines";
  EXPECT_EQ(run_command(report).out.find("runs of like lengths"), std::string::npos);
  EXPECT_NE(run_command(report + " --no-mix").out.find("runs of like lengths"), std::string::npos);
}

TEST(PlanCli, PlainSamplerDumpMarksPaddingAndFewSamplesGiveEmptyRanks) {
  testing::TempDir tmp;
  const std::string lengths = write_lengths(tmp, 10);
  const fs::path dump = tmp / "plan.jsonl";
  ASSERT_EQ(run_command(kBin + " plan --lengths " + lengths +
                        " --world-size 4 --batch-size 3 --epochs 1 --dump " + dump.string())
                .exit_code,
            0);
  size_t invalid = 0;
  for (const auto& line : read_dump(dump)) {
    if (line.contains("valid")) {
      EXPECT_EQ(line["valid"].size(), line["samples"].size());
      for (bool v : line["valid"]) invalid += !v;
    }
  }
  EXPECT_EQ(invalid, 2u);  // 12 slots for 10 samples
  const fs::path dump2 = tmp / "tiny.jsonl";
  testing::write_text(tmp / "three.txt", "5\n6\n7\n");
  ASSERT_EQ(run_command(kBin + " plan --lengths " + (tmp / "three.txt").string() +
                        " --world-size 8 --tokens-per-rank 100 --dump " + dump2.string())
                .exit_code,
            0);
  auto lines = read_dump(dump2);
  ASSERT_EQ(lines.size(), 16u);  // 2 epochs x 1 step x 8 ranks
  size_t empty = 0;
  for (const auto& line : lines) empty += line["samples"].empty();
  EXPECT_EQ(empty, 10u);
}

TEST(PlanCli, ResumeDumpSwitchesWorldSizeWithoutLossOrRepeat) {
  testing::TempDir tmp;
  const std::string lengths = write_lengths(tmp, 700);
  const fs::path dump = tmp / "plan.jsonl";
  auto r = run_command(
      kBin + " plan --lengths " + lengths + " --world-size 4 --tokens-per-rank 520 --epochs 1 " +
      "--resume-at-step 5 --resume-world-size 3 --no-baselines --dump " + dump.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::multiset<uint64_t> ids;
  std::set<int> steps_before, steps_after;
  for (const auto& line : read_dump(dump)) {
    const int step = line["step"];
    if (step < 5) {
      EXPECT_EQ(line["world_size"], 4);
      steps_before.insert(step);
    } else {
      EXPECT_EQ(line["world_size"], 3);
      steps_after.insert(step);
    }
    for (uint64_t id : line["samples"]) ids.insert(id);
  }
  EXPECT_EQ(steps_before.size(), 5u);
  EXPECT_FALSE(steps_after.empty());
  EXPECT_EQ(*steps_after.begin(), 5);  // step numbers go on from K
  EXPECT_EQ(ids.size(), 700u);
  EXPECT_EQ(std::set<uint64_t>(ids.begin(), ids.end()).size(), 700u);
}

TEST(PlanCli, BadInputIsOneClearLine) {
  testing::TempDir tmp;
  testing::write_text(tmp / "bad.txt", "5\n7\n0\n");
  auto zero =
      run_command(kBin + " plan --lengths " + (tmp / "bad.txt").string() + " --tokens-per-rank 10");
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.err.find("bad.txt:3: length 0 is not positive"), std::string::npos) << zero.err;
  testing::write_text(tmp / "long.txt", "5\n7000\n");
  auto oversize = run_command(kBin + " plan --lengths " + (tmp / "long.txt").string() +
                              " --tokens-per-rank 100");
  EXPECT_EQ(oversize.exit_code, 1);
  EXPECT_NE(oversize.err.find("sample 1 has length 7000"), std::string::npos) << oversize.err;
  // Truncated for us, truncated for the baselines: the fixed batch's size comes from the
  // mean as cut (52.5, so one sample), and the 7,000-token sample counts as 100.
  auto cut = run_command(kBin + " plan --lengths " + (tmp / "long.txt").string() +
                         " --tokens-per-rank 100 --oversize truncate --json");
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  const auto cut_report = nlohmann::json::parse(cut.out);
  EXPECT_DOUBLE_EQ(cut_report["config"]["mean_length"].get<double>(), 52.5);
  EXPECT_EQ(cut_report["config"]["baseline_batch_size"], 1);
  EXPECT_EQ(cut_report["torch_distributed_sampler"]["largest_batch_tokens"], 100);
  // The sorted baseline, which drops samples longer than the budget, keeps it cut.
  EXPECT_EQ(cut_report["sorted_token_budget"]["dropped_per_epoch"], (std::vector<int>{0, 0}));
  EXPECT_EQ(run_command(kBin + " plan --lengths " + (tmp / "long.txt").string() +
                        " --world-size 0 --tokens-per-rank 9")
                .exit_code,
            2);
  // The lengths file itself: missing, a directory, a number too large, nothing in it.
  // Each is one line naming the file and what --lengths expects.
  testing::write_text(tmp / "huge.txt", "5\n99999999999999999999999\n");
  testing::write_text(tmp / "blank.txt", "\n  \n");
  testing::write_text(tmp / "gap.txt", "5\n7\n \r\n9\n");
  const std::vector<std::pair<std::string, std::string>> files = {
      {(tmp / "gap.txt").string(), "gap.txt:3: blank line among the lengths"},
      {(tmp / "missing.txt").string(), "missing.txt: no such file; --lengths takes"},
      {tmp.path().string(), ": is a directory; --lengths takes"},
      {(tmp / "huge.txt").string(), "huge.txt:2: length '99999999999999999999999' is out of range"},
      {(tmp / "blank.txt").string(), "blank.txt: no lengths found; expected one token count"}};
  for (const auto& [file, message] : files) {
    auto bad = run_command(kBin + " plan --lengths " + file + " --tokens-per-rank 100");
    EXPECT_EQ(bad.exit_code, 1) << file;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  }
  // Windows line ends and blank lines after the last length shift no id: accepted.
  testing::write_text(tmp / "crlf.txt", "5\r\n7\r\n\r\n\n");
  auto crlf = run_command(kBin + " plan --lengths " + (tmp / "crlf.txt").string() +
                          " --world-size 2 --tokens-per-rank 100 --json --no-baselines");
  ASSERT_EQ(crlf.exit_code, 0) << crlf.err;
  EXPECT_EQ(nlohmann::json::parse(crlf.out)["config"]["samples"], 2);
  // A UTF-8 byte-order mark (Notepad's) before the first length is not part of it.
  testing::write_text(tmp / "bom.txt",
                      "\xEF\xBB\xBF"
                      "5\n7\n9\n");
  auto bom = run_command(kBin + " plan --lengths " + (tmp / "bom.txt").string() +
                         " --world-size 2 --tokens-per-rank 100 --json --no-baselines");
  ASSERT_EQ(bom.exit_code, 0) << bom.err;
  EXPECT_EQ(nlohmann::json::parse(bom.out)["config"]["samples"], 3);
  EXPECT_EQ(nlohmann::json::parse(bom.out)["config"]["mean_length"], 7.0);
  auto none = run_command(kBin + " plan --tokens-per-rank 9");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("exactly one of DIR"), std::string::npos) << none.err;
  auto past = run_command(kBin + " plan --lengths " + (tmp / "long.txt").string() +
                          " --tokens-per-rank 100000 --resume-at-step 50");
  EXPECT_EQ(past.exit_code, 1);
  EXPECT_NE(past.err.find("--resume-at-step 50: epoch 0 has only 1 step at world size 8; pass "
                          "at most 1"),
            std::string::npos)
      << past.err;
}

// The names in `dir`, hidden ones too (a temporary dump is `.<name>.evenfeed-tmp-<pid>`).
std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// A plan that fails while writing its dump (a 64 KiB file-size limit stands in for a
// full disk), or whose settings fail after some steps were written, leaves the dump a
// user had before as it was, and no half-written plan or temporary file; a killed run's
// temporary file is cleared by the next.
TEST(PlanCli, AFailedPlanLeavesNoHalfWrittenDump) {
  testing::TempDir tmp;
  testing::write_text(tmp / "plan.jsonl", "an earlier plan\n");
  const std::string plan = kBin + " plan --synthetic 200000 --world-size 4 --tokens-per-rank " +
                           "2048 --oversize truncate --no-baselines --dump " +
                           (tmp / "plan.jsonl").string();
  auto full = run_command("bash -c 'ulimit -f 64; " + plan + " > /dev/null'");
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_EQ(std::count(full.err.begin(), full.err.end(), '\n'), 1) << full.err;
  EXPECT_NE(full.err.find("writing the --dump file"), std::string::npos) << full.err;
  auto past = run_command(plan + " --resume-at-step 1000000 > /dev/null");
  EXPECT_EQ(past.exit_code, 1) << past.err;
  EXPECT_NE(past.err.find("--resume-at-step 1000000"), std::string::npos) << past.err;
  EXPECT_EQ(names_in(tmp.path()), (std::set<std::string>{"plan.jsonl"}));
  const auto kept = testing::read_file(tmp / "plan.jsonl");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(kept.data()), kept.size()),
            "an earlier plan\n");
  // The same plan without the limit replaces it whole, and clears what a killed run
  // (a process that is gone) left beside it.
  testing::write_text(tmp / ".plan.jsonl.evenfeed-tmp-999999999", "half a plan\n");
  auto whole = run_command(plan + " > /dev/null");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(read_dump(tmp / "plan.jsonl").front()["step"], 0);
  EXPECT_EQ(names_in(tmp.path()), (std::set<std::string>{"plan.jsonl"}));
}

// Ctrl-C (or a scheduler's SIGTERM) stops a long plan between steps: exit 130, one line
// saying so, and no dump. Until the forty-second session the first signal was swallowed
// and the plan ran on to exit 0.
TEST(PlanCli, AnInterruptStopsThePlanAndLeavesNoDump) {
  testing::TempDir tmp;
  for (const char* signal : {"INT", "TERM"}) {
    const std::string script =
        kBin + " plan --synthetic 3000000 --world-size 8 --tokens-per-rank 2048 " +
        "--oversize truncate --no-baselines --epochs 3 --dump " + (tmp / "plan.jsonl").string() +
        " > /dev/null & pid=$!; for i in $(seq 1 1000); do ls -a " + tmp.path().string() +
        " | grep -q evenfeed-tmp && break; sleep 0.01; done; kill -" + signal + " $pid; wait $pid";
    auto r = run_command("bash -c '" + script + "'");
    EXPECT_EQ(r.exit_code, 130) << signal << ": " << r.err;
    EXPECT_NE(r.err.find("planning interrupted by signal"), std::string::npos) << r.err;
    EXPECT_TRUE(names_in(tmp.path()).empty()) << signal;
  }
}

TEST(PlanCli, PlansATokenDatasetFromItsIndex) {
  testing::TempDir tmp;
  ASSERT_EQ(run_command(kBin + " -q synth tokens " + (tmp / "t.jsonl").string() + " --count 400")
                .exit_code,
            0);
  ASSERT_EQ(run_command(kBin + " -q convert tokens " + (tmp / "t.jsonl").string() + " " +
                        (tmp / "ds").string() + " --shards 3")
                .exit_code,
            0);
  auto r = run_command(kBin + " plan " + (tmp / "ds").string() +
                       " --world-size 2 --tokens-per-rank 40000 --order shard-blocks --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"]["samples"], 400);
  EXPECT_EQ(j["evenfeed"]["samples_seen_per_epoch"][0], 400);
}

}  // namespace
}  // namespace evenfeed
