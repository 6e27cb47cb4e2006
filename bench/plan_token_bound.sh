#!/usr/bin/env bash
# Quadratic cost with and without a token bound (--max-batch-tokens equal to the
# budget), over length files, budgets and W = 8 and 64: our planner's figures with the
# bound, whether every target is met, and the largest batch in padded tokens with and
# without it (what a rank's memory must hold).
#   bench/plan_token_bound.sh BUILD_DIR "BUDGET..." SOURCE...
# A SOURCE is a lengths file, or synthetic:N for N generated long-tailed lengths.
set -euo pipefail
build=$1; budgets=$2; shift 2
echo "| corpus | cost | W | budget | steps/epoch | padding | imbalance mean / p99 | lag-1 | pairs again | every target | largest batch | unbounded: every target | unbounded: largest batch |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for budget in $budgets; do
  for file in "$@"; do
    for world in 8 64; do
      if [[ $file == synthetic:* ]]; then source_flag=(--synthetic "${file#synthetic:}"); else source_flag=(--lengths "$file"); fi
      plan() {
        "$build/evenfeed" plan "${source_flag[@]}" --world-size "$world" --tokens-per-rank "$budget" \
            --oversize truncate --cost quadratic --epochs 2 --no-baselines --json "$@"
      }
      row_of() { python3 "$(dirname "$0")/plan_row.py" "$file" "$@"; }
      bounded=$(plan --max-batch-tokens "$budget")
      verdict=$(row_of --verdict <<<"$bounded")  # "yes | 8192 |": keep the largest batch
      echo "$(row_of --steps "$budget" <<<"$bounded") ${verdict#* | } $(plan | row_of --verdict)"
    done
  done
done
