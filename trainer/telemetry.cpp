#include "trainer/telemetry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace evenfeed {

Telemetry::~Telemetry() {
  if (log_ != nullptr) std::fclose(log_);
}

void Telemetry::open_log(const std::string& path) {
  log_ = std::fopen(path.c_str(), "a");
  if (log_ == nullptr) fail_errno("opening the training log (--log)", path, errno);
}

void Telemetry::record(uint64_t step, uint32_t epoch, std::span<const RankStep> ranks, double loss,
                       double lr) {
  ++steps_;
  for (size_t r = 0; r < ranks.size() && r < totals_.size(); ++r) {
    RankStep& t = totals_[r].sum;
    const RankStep& s = ranks[r];
    t.wait += s.wait, t.copy += s.copy, t.compute += s.compute, t.exposed += s.exposed,
        t.step += s.step, t.grad_comm += s.grad_comm, t.grad_exposed += s.grad_exposed;
    t.samples += s.samples, t.tokens += s.tokens, t.padding += s.padding;
  }
  if (log_ == nullptr) return;
  nlohmann::json line = {{"step", step}, {"epoch", epoch}, {"loss", loss}, {"lr", lr}};
  for (const char* key : {"wait", "copy", "compute", "exposed_comm", "grad_comm", "grad_exposed",
                          "step_time", "samples", "tokens", "padding"})
    line[key] = nlohmann::json::array();
  for (const RankStep& s : ranks) {
    line["wait"].push_back(s.wait);
    line["copy"].push_back(s.copy);
    line["compute"].push_back(s.compute);
    line["exposed_comm"].push_back(s.exposed);
    line["grad_comm"].push_back(s.grad_comm);
    line["grad_exposed"].push_back(s.grad_exposed);
    line["step_time"].push_back(s.step);
    line["samples"].push_back(s.samples);
    line["tokens"].push_back(s.tokens);
    line["padding"].push_back(s.padding);
  }
  std::fprintf(log_, "%s\n", line.dump().c_str());
  std::fflush(log_);
}

BalanceReport Telemetry::report() const {
  BalanceReport report;
  report.ranks = totals_;
  report.steps = steps_;
  if (totals_.empty() || steps_ == 0) return report;
  double busy_sum = 0, busy_max = 0, step_sum = 0, step_max = 0, tokens = 0, padding = 0;
  double grad_exposed = 0, grad_comm = 0;
  for (size_t r = 0; r < totals_.size(); ++r) {
    const RankTotals& t = totals_[r];
    busy_sum += t.busy();
    step_sum += t.sum.step;
    step_max = std::max(step_max, t.sum.step);
    tokens += t.sum.tokens;
    padding += t.sum.padding;
    grad_exposed += t.sum.grad_exposed;
    grad_comm += t.sum.grad_comm;
    if (t.busy() > busy_max) {
      busy_max = t.busy();
      report.slowest_rank = static_cast<int>(r);
    }
  }
  const double n = static_cast<double>(totals_.size());
  report.busy_imbalance = busy_sum > 0 ? busy_max / (busy_sum / n) : 1;
  report.step_imbalance = step_sum > 0 ? step_max / (step_sum / n) : 1;
  report.padding_share = tokens + padding > 0 ? padding / (tokens + padding) : 0;
  report.exposed_share = grad_comm > 0 ? std::min(1.0, grad_exposed / grad_comm) : 0;
  const RankStep& s = totals_[static_cast<size_t>(report.slowest_rank)].sum;
  const double top = std::max({s.wait, s.copy + s.compute, s.exposed});
  report.bound = top == s.wait ? "data" : top == s.exposed ? "communication" : "compute";
  return report;
}

std::string balance_table(const BalanceReport& report) {
  std::string out =
      fmt::format("{:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}\n", "rank", "wait s",
                  "copy s", "compute s", "exposed s", "grad ar s", "step s", "samples", "tokens");
  for (size_t r = 0; r < report.ranks.size(); ++r) {
    const RankStep& s = report.ranks[r].sum;
    out += fmt::format(
        "{:>5} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>10.0f} {:>10.0f}\n", r,
        s.wait, s.copy, s.compute, s.exposed, s.grad_comm, s.step, s.samples, s.tokens);
  }
  out += fmt::format(
      "slowest rank {} is {}-bound; busy-time imbalance (max/mean of wait+copy+compute) {:.3f}, "
      "step-time imbalance {:.3f}, padding {:.1f}%; gradient all-reduce exposed {:.0f}% of "
      "its time in flight (the rest overlapped backward)\n",
      report.slowest_rank, report.bound, report.busy_imbalance, report.step_imbalance,
      100 * report.padding_share, 100 * report.exposed_share);
  return out;
}

}  // namespace evenfeed
