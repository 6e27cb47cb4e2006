// Planning speed and memory of one epoch: the token-budget planner over N generated
// long-tailed lengths (nothing O(N) is stored: keyed order, lengths computed from the
// id), with nothing else per sample kept. Prints one JSON line; peak RSS must not grow
// with N.
//   evenfeed_bench_plan N [world_size] [tokens_per_rank] [linear|quadratic]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "bucketing/token_budget_planner.h"
#include "core/heap_reuse.h"

int run(int argc, char** argv) {
  using namespace evenfeed;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s N [world_size] [tokens_per_rank] [linear|quadratic]\n",
                 argv[0]);
    return 2;
  }
  const uint64_t n = std::strtoull(argv[1], nullptr, 10);
  const uint32_t world = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 64;
  BucketingOptions o;
  o.tokens_per_rank = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 16384;
  o.cost.kind = argc > 4 ? parse_cost_kind(argv[4]) : CostKind::kLinear;
  o.oversize = OversizePolicy::kTruncate;  // the generated tail may pass the budget
  SyntheticLengths lengths(n, 1);
  keep_freed_heap_for_reuse();  // as `evenfeed plan` does
  const auto start = std::chrono::steady_clock::now();
  TokenBudgetPlanner planner(lengths, o, world, {1, 0, {}});
  PlanStep step;
  uint64_t steps = 0, samples = 0;
  while (planner.next(step)) {
    ++steps;
    for (const RankBatch& b : step.ranks) samples += b.samples.size();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "{\"bench\":\"plan\",\"samples\":%llu,\"served\":%llu,\"world_size\":%u,\"cost\":\"%s\","
      "\"steps\":%llu,"
      "\"seconds\":%.3f,\"samples_per_s\":%.0f,\"peak_rss_mb\":%.1f}\n",
      static_cast<unsigned long long>(n), static_cast<unsigned long long>(samples), world,
      cost_kind_name(o.cost.kind), static_cast<unsigned long long>(steps), seconds,
      static_cast<double>(n) / seconds, usage.ru_maxrss / 1024.0);
  return samples == n ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "evenfeed_bench_plan: error: %s\n", e.what());
    return 1;
  }
}
