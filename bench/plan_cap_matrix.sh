#!/usr/bin/env bash
# Runs `evenfeed plan` with a sample cap (--max-batch-size 64 and 512) over length
# files for W = 8 and 64 and both cost models, budget 8,192 tokens, and prints a
# Markdown table of our planner's figures (no baselines: they take no cap).
#   bench/plan_cap_matrix.sh BUILD_DIR SOURCE...
# A SOURCE is a lengths file, or synthetic:N for N generated long-tailed lengths.
set -euo pipefail
build=$1; shift
echo "| corpus | cost | W | cap | padding | imbalance mean / p99 | lag-1 | pairs again | every target |"
echo "|---|---|---|---|---|---|---|---|---|"
for file in "$@"; do
  for cost in linear quadratic; do
    for world in 8 64; do
      for cap in 64 512; do
        if [[ $file == synthetic:* ]]; then source_flag=(--synthetic "${file#synthetic:}"); else source_flag=(--lengths "$file"); fi
        "$build/evenfeed" plan "${source_flag[@]}" --world-size "$world" --tokens-per-rank 8192 \
            --oversize truncate --cost "$cost" --epochs 2 --max-batch-size "$cap" --no-baselines --json |
          python3 "$(dirname "$0")/plan_row.py" "$file" "$cap"
      done
    done
  done
done
