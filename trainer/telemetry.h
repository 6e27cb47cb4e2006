// Balance telemetry, the point of the project: per rank per optimiser step, the time
// waiting for data, preparing/copying the batch, computing, and blocked on
// communication (exposed), plus samples, tokens and padding. The trainer gathers
// every rank's figures at each step (they ride on the all-gather that sums the step's
// sample counts, so gathering costs no extra collective); rank 0 logs them as JSON
// lines and sums them into the balance report: the slowest rank, what bounds it, and
// the step-time imbalance (max over mean across ranks).
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace evenfeed {

struct RankStep {
  double wait = 0, copy = 0, compute = 0, exposed = 0, step = 0;  // seconds
  // The gradient all-reduce alone: seconds with at least one bucket in flight, and
  // the part of them this rank was blocked on (the rest overlapped backward). exposed
  // above also holds the step's exchange, where waiting for slower ranks shows.
  double grad_comm = 0, grad_exposed = 0;
  double samples = 0, tokens = 0, padding = 0;  // padding: slots (images) or token cells
};

struct RankTotals {
  RankStep sum;
  double busy() const { return sum.wait + sum.copy + sum.compute; }
};

struct BalanceReport {
  std::vector<RankTotals> ranks;
  uint64_t steps = 0;
  int slowest_rank = 0;
  std::string bound;          // "data", "compute" or "communication"
  double busy_imbalance = 1;  // max/mean over ranks of wait + copy + compute
  double step_imbalance = 1;  // max/mean over ranks of step time
  double padding_share = 0;   // padding / (tokens + padding)
  // grad_exposed / grad_comm over all ranks: 0 = all overlapped, 1 = none.
  double exposed_share = 0;
};

class Telemetry {
 public:
  explicit Telemetry(int world_size) : totals_(static_cast<size_t>(world_size)) {}
  ~Telemetry();
  // Appends JSON lines to `path` (rank 0 only).
  void open_log(const std::string& path);
  // One optimiser step's figures from every rank, in rank order.
  void record(uint64_t step, uint32_t epoch, std::span<const RankStep> ranks, double loss,
              double lr);
  BalanceReport report() const;

 private:
  std::vector<RankTotals> totals_;
  uint64_t steps_ = 0;
  std::FILE* log_ = nullptr;
};

// The summary table printed at the end of training.
std::string balance_table(const BalanceReport& report);

}  // namespace evenfeed
