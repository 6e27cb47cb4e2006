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
          python3 -c '
import json, sys, os
j = json.load(sys.stdin); c = j["config"]; e = j["evenfeed"]; q = e["imbalance_" + c["cost"]]
ok = (e["padding_waste"] <= 0.02 and q["mean"] <= 1.03 and q["p99"] <= 1.10 and
      abs(e["lag1_batch_mean_length"]) <= 0.2 and e["repeated_pair_share"] <= 0.10)
print("| %s | %s | %d | %s | %d | %.2f%% | %.3f / %.3f | %.3f | %.1f%% | %s |" % (
    os.path.basename(sys.argv[1]).rsplit(".", 1)[0], c["cost"], c["world_size"], sys.argv[2],
    e["steps_per_epoch"][0], 100 * e["padding_waste"], q["mean"], q["p99"],
    e["lag1_batch_mean_length"], 100 * e["repeated_pair_share"], "yes" if ok else "no"))
' "$file" "$budget"
      done
    done
  done
done
