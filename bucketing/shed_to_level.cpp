#include "bucketing/shed_to_level.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "bucketing/cost_model.h"

namespace evenfeed {
namespace {

// Where each batch runs: its step and its place in it.
struct Where {
  size_t step = 0, place = 0;
};

// One shed: a step's batches `given`, each for the batch `taken` of another step (both
// indices into costs).
struct Shed {
  std::vector<size_t> given;
  std::vector<size_t> taken;
};

class Shedder {
 public:
  Shedder(std::span<const double> costs, std::vector<std::vector<size_t>>& steps)
      : costs_(costs),
        steps_(steps),
        where_(costs.size()),
        by_cost_(steps.size()),
        sums_(steps.size(), 0.0) {
    for (size_t s = 0; s < steps_.size(); ++s) {
      for (size_t p = 0; p < steps_[s].size(); ++p) where_[steps_[s][p]] = {s, p};
      recount(s);
    }
  }

  // One round: of the steps above `level_enough`, worst first, the first that has a
  // shed that helps makes its best one. False when none has.
  bool shed_once(const ShedOptions& options) {
    std::vector<size_t> order;
    for (size_t s = 0; s < steps_.size(); ++s)
      if (ratio_of(s) > options.level_enough && may_shed(s)) order.push_back(s);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return ratio_of(a) > ratio_of(b); });
    for (size_t s : order) {
      const std::optional<Shed> shed = best_shed(s, options.max_block);
      if (!shed) continue;
      for (size_t i = 0; i < shed->given.size(); ++i) exchange(shed->given[i], shed->taken[i]);
      return true;
    }
    return false;
  }

 private:
  double cost(size_t id) const { return costs_[id]; }
  double dearest(size_t s) const { return by_cost_[s].empty() ? 0 : cost(by_cost_[s].front()); }
  double cheapest(size_t s) const { return by_cost_[s].empty() ? 0 : cost(by_cost_[s].back()); }
  double ratio_of(size_t s) const { return step_imbalance(dearest(s), sums_[s], steps_[s].size()); }

  // Step s's batches dearest first, and their sum, after it changed.
  void recount(size_t s) {
    by_cost_[s] = steps_[s];
    std::stable_sort(by_cost_[s].begin(), by_cost_[s].end(),
                     [&](size_t a, size_t b) { return cost(a) > cost(b); });
    sums_[s] = 0;
    for (size_t id : steps_[s]) sums_[s] += cost(id);
  }

  // Whether any step could take step s's dearest batch: one at least as dear, with a
  // cheaper batch to give back.
  bool may_shed(size_t s) const {
    for (size_t t = 0; t < steps_.size(); ++t)
      if (t != s && dearest(t) >= dearest(s) && cheapest(t) < dearest(s)) return true;
    return false;
  }

  // For each of step s's k dearest batches (dearest first), the dearest batch of another
  // step at most `ceiling`, whose step's dearest is at least the shed batch's; nothing
  // when one has no partner. Each step offers at most its k dearest at most `ceiling`.
  std::optional<std::vector<size_t>> partners(size_t s, size_t k, double ceiling) const {
    const std::vector<size_t>& shed = by_cost_[s];
    std::vector<size_t> candidates;
    for (size_t t = 0; t < steps_.size(); ++t) {
      if (t == s || dearest(t) < cost(shed[k - 1]) || cheapest(t) > ceiling) continue;
      const std::vector<size_t>& offer = by_cost_[t];
      auto first = std::partition_point(offer.begin(), offer.end(),
                                        [&](size_t id) { return cost(id) > ceiling; });
      for (size_t i = 0; i < k && first != offer.end(); ++i) candidates.push_back(*first++);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](size_t a, size_t b) { return cost(a) > cost(b); });
    std::vector<size_t> taken;
    std::vector<bool> used(candidates.size(), false);
    for (size_t i = 0; i < k; ++i) {
      size_t c = 0;
      while (c < candidates.size() &&
             (used[c] || dearest(where_[candidates[c]].step) < cost(shed[i])))
        ++c;
      if (c == candidates.size()) return std::nullopt;
      used[c] = true;
      taken.push_back(candidates[c]);
    }
    return taken;
  }

  std::optional<Shed> best_shed(size_t s, size_t max_block) const {
    const std::vector<size_t>& by_cost = by_cost_[s];
    const size_t width = by_cost.size();
    std::optional<Shed> best;
    double best_after = ratio_of(s) - 1e-12;
    double shed_sum = 0;
    for (size_t k = 1; k < width && k <= max_block; ++k) {
      const double shed_cost = cost(by_cost[k - 1]), next = cost(by_cost[k]);
      shed_sum += shed_cost;
      // Shedding k leaves the step at `next`; with a tie at `next`, shedding fewer
      // leaves it there as well and lighter by less.
      if (next >= dearest(s) || shed_cost <= next) continue;
      // Partners no dearer than `next` leave the step at `next`; partners just cheaper
      // than the shed batches leave it dearer but with more work.
      for (const double ceiling : {next, std::nextafter(shed_cost, 0.0)}) {
        const std::optional<std::vector<size_t>> taken = partners(s, k, ceiling);
        if (!taken) continue;
        double taken_sum = 0, taken_dearest = 0;
        for (size_t id : *taken) {
          taken_sum += cost(id);
          taken_dearest = std::max(taken_dearest, cost(id));
        }
        const double after =
            step_imbalance(std::max(next, taken_dearest), sums_[s] - shed_sum + taken_sum, width);
        if (after < best_after) {
          best_after = after;
          best = Shed{{by_cost.begin(), by_cost.begin() + static_cast<long>(k)}, *taken};
        }
      }
    }
    return best;
  }

  // Batch `given` and batch `taken` change places (and so steps).
  void exchange(size_t given, size_t taken) {
    const Where a = where_[given], b = where_[taken];
    std::swap(steps_[a.step][a.place], steps_[b.step][b.place]);
    where_[given] = b;
    where_[taken] = a;
    recount(a.step);
    recount(b.step);
  }

  std::span<const double> costs_;
  std::vector<std::vector<size_t>>& steps_;
  std::vector<Where> where_;
  std::vector<std::vector<size_t>> by_cost_;  // each step's batches, dearest first
  std::vector<double> sums_;                  // each step's cost
};

}  // namespace

size_t shed_to_level(std::span<const double> costs, std::vector<std::vector<size_t>>& steps,
                     const ShedOptions& options) {
  if (steps.size() < 2) return 0;
  Shedder shedder(costs, steps);
  size_t rounds = 0;
  while (rounds < options.max_rounds && shedder.shed_once(options)) ++rounds;
  return rounds;
}

}  // namespace evenfeed
