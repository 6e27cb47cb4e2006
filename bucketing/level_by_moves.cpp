// level_by_moves: see the header for what and why.
#include "bucketing/level_by_moves.h"

#include <algorithm>

#include "bucketing/batch_shape.h"

namespace evenfeed {
namespace {

// A trim that would take more samples than this many per rank is given up: the step's
// dearest batches are then not fine-grained enough for moves to level it.
constexpr size_t kMostTrimmedPerRank = 4;

struct StepShape {
  double sum = 0;
  double dearest = 0;
};

// One sample moved, so that a failed trim can be undone.
struct Move {
  size_t sample;
  size_t from_step, from_rank, from_position;
  size_t to_step, to_rank;
};

class Mover {
 public:
  Mover(std::span<const uint64_t> lengths, std::vector<std::vector<std::vector<size_t>>>& steps,
        const CostModel& cost, const std::function<bool(uint64_t, uint64_t)>& fits,
        const MoveOptions& options)
      : lengths_(lengths), steps_(steps), cost_(cost), fits_(fits), options_(options) {
    batches_.resize(steps.size());
    step_shapes_.resize(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      for (size_t r = 0; r < steps[s].size(); ++r) batches_[s].push_back(shape_of(steps[s][r]));
      reshape_step(s);
    }
  }

  double run() {
    std::vector<bool> stuck(steps_.size(), false);
    for (size_t round = 0; round < kMostRoundsPerStep * steps_.size(); ++round) {
      size_t worst = steps_.size();
      for (size_t s = 0; s < steps_.size(); ++s) {
        if (!stuck[s] && ratio(s) > options_.level_enough &&
            (worst == steps_.size() || ratio(s) > ratio(worst)))
          worst = s;
      }
      if (worst == steps_.size()) break;
      const double target = std::max(options_.level_enough, ratio(worst) - options_.target_step);
      if (!trim_to(worst, target)) stuck[worst] = true;
    }
    return spent_;
  }

 private:
  // Enough rounds for every step to come down from max/mean 2 in steps of 0.005.
  static constexpr size_t kMostRoundsPerStep = 200;

  double ratio(size_t s) const { return ratio_of(step_shapes_[s], steps_[s].size()); }
  static double ratio_of(const StepShape& shape, size_t ranks) {
    return step_imbalance(shape.dearest, shape.sum, ranks);
  }

  BatchShape shape_of(const std::vector<size_t>& batch) const {
    return evenfeed::shape_of(lengths_, batch, cost_);
  }

  void reshape_step(size_t s) {
    StepShape shape;
    for (const BatchShape& b : batches_[s]) {
      shape.sum += b.cost;
      shape.dearest = std::max(shape.dearest, b.cost);
    }
    step_shapes_[s] = shape;
  }

  // Takes the shortest samples of step s's dearest batches until its max/mean is at
  // `target`, and places each elsewhere (place); undoes it all when one cannot be.
  bool trim_to(size_t s, double target) {
    std::vector<Move> moves;
    const size_t most = kMostTrimmedPerRank * steps_[s].size();
    bool ok = true;
    while (ok && ratio(s) > target) {
      const size_t r =
          static_cast<size_t>(std::max_element(batches_[s].begin(), batches_[s].end(),
                                               [](const BatchShape& a, const BatchShape& b) {
                                                 return a.cost < b.cost;
                                               }) -
                              batches_[s].begin());
      std::vector<size_t>& batch = steps_[s][r];
      if (batch.size() < 2 || moves.size() >= most) {
        ok = false;
        break;
      }
      auto shortest = std::min_element(batch.begin(), batch.end(), [&](size_t a, size_t b) {
        return lengths_[a] < lengths_[b];
      });
      const auto position = static_cast<size_t>(shortest - batch.begin());
      moves.push_back({*shortest, s, r, position, s, r});  // placed below
      batch.erase(shortest);
      batches_[s][r] = shape_of(batch);
      reshape_step(s);
    }
    // Longest first: they have the fewest batches to go to.
    std::vector<size_t> order(moves.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return lengths_[moves[a].sample] > lengths_[moves[b].sample];
    });
    double spent = 0;
    size_t placed = 0;
    while (ok && placed < order.size()) {
      ok = place(moves[order[placed]], s, spent);
      if (ok) ++placed;
    }
    if (ok && spent_ + spent <= options_.padding_room) {
      spent_ += spent;
      return true;
    }
    for (size_t k = placed; k-- > 0;) unplace(moves[order[k]]);
    for (size_t k = moves.size(); k-- > 0;) return_to_source(moves[k]);
    return false;
  }

  // Gives the sample of `move` to the batch of a step other than `from` that pads it
  // least without passing that step's dearest batch: only idle rank-time is filled, so
  // no step gets longer or less level.
  bool place(Move& move, size_t from, double& spent) {
    const uint64_t length = lengths_[move.sample];
    size_t best_step = steps_.size(), best_rank = 0;
    uint64_t best_padding = UINT64_MAX;
    for (size_t t = 0; t < steps_.size(); ++t) {
      if (t == from) continue;
      const StepShape& shape = step_shapes_[t];
      for (size_t r = 0; r < batches_[t].size(); ++r) {
        const BatchShape& b = batches_[t][r];
        if (b.longest < length && b.count > 0) continue;
        const uint64_t longest = std::max(b.longest, length);
        const uint64_t padding = longest - length;
        if (padding >= best_padding || !fits_(b.count + 1, longest)) continue;
        if (cost_.batch(b.count + 1, longest) > shape.dearest) continue;
        best_step = t;
        best_rank = r;
        best_padding = padding;
      }
    }
    if (best_step == steps_.size()) return false;
    move.to_step = best_step;
    move.to_rank = best_rank;
    const uint64_t was_padded_to = batches_[move.from_step][move.from_rank].longest;
    spent += static_cast<double>(
                 std::max(lengths_[move.sample], batches_[best_step][best_rank].longest)) -
             static_cast<double>(std::max(was_padded_to, length));
    steps_[best_step][best_rank].push_back(move.sample);
    batches_[best_step][best_rank] = shape_of(steps_[best_step][best_rank]);
    reshape_step(best_step);
    return true;
  }

  // Puts the sample of `move` back where it was taken from, at its old position.
  void return_to_source(const Move& move) {
    std::vector<size_t>& batch = steps_[move.from_step][move.from_rank];
    batch.insert(batch.begin() + static_cast<long>(move.from_position), move.sample);
    batches_[move.from_step][move.from_rank] = shape_of(batch);
    reshape_step(move.from_step);
  }

  // Takes the sample of `move` out of the batch it was given to.
  void unplace(const Move& move) {
    std::vector<size_t>& batch = steps_[move.to_step][move.to_rank];
    batch.erase(std::find(batch.begin(), batch.end(), move.sample));
    batches_[move.to_step][move.to_rank] = shape_of(batch);
    reshape_step(move.to_step);
  }

  std::span<const uint64_t> lengths_;
  std::vector<std::vector<std::vector<size_t>>>& steps_;
  const CostModel& cost_;
  const std::function<bool(uint64_t, uint64_t)>& fits_;
  const MoveOptions& options_;
  std::vector<std::vector<BatchShape>> batches_;
  std::vector<StepShape> step_shapes_;
  double spent_ = 0;
};

}  // namespace

double level_by_moves(std::span<const uint64_t> lengths,
                      std::vector<std::vector<std::vector<size_t>>>& steps, const CostModel& cost,
                      const std::function<bool(uint64_t, uint64_t)>& fits,
                      const MoveOptions& options) {
  return Mover(lengths, steps, cost, fits, options).run();
}

}  // namespace evenfeed
