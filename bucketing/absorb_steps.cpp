// absorb_negligible_steps: see the header for what and why.
#include "bucketing/absorb_steps.h"

#include <algorithm>
#include <optional>
#include <set>

#include "bucketing/batch_shape.h"

namespace evenfeed {
namespace {

using Step = std::vector<std::vector<size_t>>;

class Absorber {
 public:
  Absorber(std::span<const uint64_t> lengths, const CostModel& cost,
           const std::function<bool(uint64_t, uint64_t)>& fits, const AbsorbOptions& options)
      : lengths_(lengths), cost_(cost), fits_(fits), options_(options) {}

  size_t run(std::vector<Step>& steps) {
    room_ = options_.padding_room;
    // Each step by its dearest batch, for the least dear hosts; absorbed steps leave.
    std::set<std::pair<double, size_t>> by_dearest;
    std::vector<double> dearest_of(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      dearest_of[s] = dearest(steps[s]);
      by_dearest.insert({dearest_of[s], s});
    }
    std::vector<bool> absorbed(steps.size(), false);
    for (size_t s = 0; s < steps.size(); ++s) {
      if (!negligible(steps[s], dearest_of[s])) continue;
      std::optional<Absorbed> best = best_host(steps, by_dearest, dearest_of, s);
      if (!best) continue;
      by_dearest.erase({dearest_of[best->host], best->host});
      by_dearest.erase({dearest_of[s], s});
      dearest_of[best->host] = dearest(best->step);
      by_dearest.insert({dearest_of[best->host], best->host});
      steps[best->host] = std::move(best->step);
      room_ -= best->padding;
      absorbed[s] = true;
    }
    const size_t count = static_cast<size_t>(std::count(absorbed.begin(), absorbed.end(), true));
    if (count == 0) return 0;
    size_t kept = 0;
    for (size_t s = 0; s < steps.size(); ++s) {
      if (absorbed[s]) continue;
      if (kept != s) steps[kept] = std::move(steps[s]);
      ++kept;
    }
    steps.resize(kept);
    return count;
  }

 private:
  // A host step with a negligible step's samples dealt into it.
  struct Absorbed {
    size_t host = 0;
    Step step;
    double ratio = 0;    // its max/mean
    double padding = 0;  // padded slots the dealt samples added
  };

  BatchShape shape_of(const std::vector<size_t>& batch) const {
    return evenfeed::shape_of(lengths_, batch, cost_);
  }

  double dearest(const Step& step) const {
    double most = 0;
    for (const auto& b : step) most = std::max(most, shape_of(b).cost);
    return most;
  }

  double ratio(const Step& step) const {
    double sum = 0, most = 0;
    for (const auto& b : step) {
      const double c = shape_of(b).cost;
      sum += c;
      most = std::max(most, c);
    }
    return step_imbalance(most, sum, step.size());
  }

  bool negligible(const Step& step, double dearest_batch) const {
    const bool any =
        std::any_of(step.begin(), step.end(), [](const auto& b) { return !b.empty(); });
    return any && dearest_batch <= options_.negligible_share * options_.budget;
  }

  // The most level host for step `s`'s samples among the least dear steps at or above
  // its dearest batch (`by_dearest`: the steps not absorbed, by `dearest_of`), or none
  // that keeps the header's promises.
  std::optional<Absorbed> best_host(const std::vector<Step>& steps,
                                    const std::set<std::pair<double, size_t>>& by_dearest,
                                    const std::vector<double>& dearest_of, size_t s) const {
    // The guest's samples, longest first: they have the fewest batches to go to.
    std::vector<size_t> samples;
    for (const auto& b : steps[s]) samples.insert(samples.end(), b.begin(), b.end());
    std::stable_sort(samples.begin(), samples.end(),
                     [&](size_t a, size_t b) { return lengths_[a] > lengths_[b]; });
    const double guest_ratio = ratio(steps[s]);
    std::optional<Absorbed> best;
    size_t tried = 0;
    for (auto it = by_dearest.lower_bound({dearest_of[s], 0});
         it != by_dearest.end() && tried < options_.most_hosts; ++it) {
      if (it->second == s) continue;
      ++tried;
      std::optional<Absorbed> dealt = deal_into(steps[it->second], it->first, samples, guest_ratio);
      if (!dealt) continue;
      dealt->host = it->second;
      if (!best || dealt->ratio < best->ratio) best = std::move(dealt);
    }
    return best;
  }

  // A guest step's `samples` (longest first) dealt into a copy of `host` (whose dearest
  // batch costs `host_dearest`), each to the batch that costs least with it; none if
  // one finds no batch or the header's bounds are passed (`guest_ratio`: the guest's
  // max/mean).
  std::optional<Absorbed> deal_into(const Step& host, double host_dearest,
                                    const std::vector<size_t>& samples, double guest_ratio) const {
    Absorbed out{.step = host};
    std::vector<BatchShape> shapes;
    for (const auto& b : out.step) shapes.push_back(shape_of(b));
    const double host_ratio = ratio(host);
    for (size_t k : samples) {
      const size_t r = cheapest_with(shapes, lengths_[k]);
      if (r == shapes.size()) return std::nullopt;
      const uint64_t longest = std::max(shapes[r].longest, lengths_[k]);
      out.padding += static_cast<double>(longest - lengths_[k]);
      out.step[r].push_back(k);
      shapes[r] = {shapes[r].count + 1, longest, cost_.batch(shapes[r].count + 1, longest)};
    }
    out.ratio = ratio(out.step);
    if (out.ratio > std::max({host_ratio, guest_ratio, options_.level_enough})) return std::nullopt;
    if (dearest(out.step) > host_dearest + options_.negligible_share * options_.budget)
      return std::nullopt;
    if (out.padding > room_) return std::nullopt;
    return out;
  }

  // The batch of `shapes` that costs least with one more sample of `length` (one whose
  // longest is at least `length`, or an empty one), within the batch limits; or
  // shapes.size() when there is none.
  size_t cheapest_with(const std::vector<BatchShape>& shapes, uint64_t length) const {
    size_t pick = shapes.size();
    double least = 0;
    for (size_t r = 0; r < shapes.size(); ++r) {
      const BatchShape& b = shapes[r];
      if (b.count > 0 && b.longest < length) continue;
      const uint64_t longest = std::max(b.longest, length);
      if (!fits_(b.count + 1, longest)) continue;
      const double with = cost_.batch(b.count + 1, longest);
      if (pick == shapes.size() || with < least) {
        pick = r;
        least = with;
      }
    }
    return pick;
  }

  std::span<const uint64_t> lengths_;
  const CostModel& cost_;
  const std::function<bool(uint64_t, uint64_t)>& fits_;
  const AbsorbOptions& options_;
  double room_ = 0;
};

}  // namespace

size_t absorb_negligible_steps(std::span<const uint64_t> lengths, std::vector<Step>& steps,
                               const CostModel& cost,
                               const std::function<bool(uint64_t, uint64_t)>& fits,
                               const AbsorbOptions& options) {
  if (steps.size() < 2 || options.budget <= 0) return 0;
  return Absorber(lengths, cost, fits, options).run(steps);
}

}  // namespace evenfeed
