#!/usr/bin/env bash
# Runs `evenfeed plan` at other per-rank budgets (default 4,096 and 16,384 tokens) over
# length files for W = 8 and 64 and both cost models, and prints a Markdown table of
# our planner's figures with the steps per epoch (few steps mean few batches to level a
# step with, and under quadratic cost huge batches of short samples).
#   bench/plan_budget_matrix.sh BUILD_DIR "BUDGET..." SOURCE...
# A SOURCE is a lengths file, or synthetic:N for N generated long-tailed lengths.
set -euo pipefail
build=$1; budgets=$2; shift 2
echo "| corpus | cost | W | budget | steps/epoch | padding | imbalance mean / p99 | lag-1 | pairs again | every target |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for budget in $budgets; do
  for file in "$@"; do
    for cost in linear quadratic; do
      for world in 8 64; do
        if [[ $file == synthetic:* ]]; then source_flag=(--synthetic "${file#synthetic:}"); else source_flag=(--lengths "$file"); fi
        "$build/evenfeed" plan "${source_flag[@]}" --world-size "$world" --tokens-per-rank "$budget" \
            --oversize truncate --cost "$cost" --epochs 2 --no-baselines --json |
          python3 "$(dirname "$0")/plan_row.py" "$file" --steps "$budget"
      done
    done
  done
done
