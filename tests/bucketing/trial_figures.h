// Figures of a plan's first two epochs for the trials' tests (cap_trial.h): one well
// inside every target, and the same with one change.
#pragma once

#include "bucketing/cap_trial.h"

namespace evenfeed::testing {

// A plan that meets every target, each figure well inside it.
inline TrialFigures level_and_fresh() {
  return {.padding = 0.015,
          .imbalance_mean = 1.01,
          .imbalance_p99 = 1.05,
          .repeated_pairs = 0.05,
          .lag1 = 0.0,
          .useful_share = 0.97};
}

// level_and_fresh() with `change(figures)` applied.
template <typename Change>
TrialFigures level_and_fresh_but(Change change) {
  TrialFigures f = level_and_fresh();
  change(f);
  return f;
}

}  // namespace evenfeed::testing
