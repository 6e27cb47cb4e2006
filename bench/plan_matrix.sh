#!/usr/bin/env bash
# Runs `evenfeed plan` (ours and both baselines, same run) over length files for
# W = 8 and 64 and both cost models, and prints a Markdown table.
#   bench/plan_matrix.sh BUILD_DIR TOKENS_PER_RANK SOURCE...
# A SOURCE is a lengths file, or synthetic:N for N generated long-tailed lengths.
set -euo pipefail
build=$1; tokens=$2; shift 2
echo "| corpus | cost | W | planner | padding | imbalance mean / p99 | useful share | lag-1 | pairs again | dropped | duplicated | steps/epoch |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for file in "$@"; do
  for cost in linear quadratic; do
    for world in 8 64; do
      if [[ $file == synthetic:* ]]; then source_flag=(--synthetic "${file#synthetic:}"); else source_flag=(--lengths "$file"); fi
      "$build/evenfeed" plan "${source_flag[@]}" --world-size "$world" --tokens-per-rank "$tokens" \
          --oversize truncate --cost "$cost" --epochs 2 --json |
        python3 -c '
import json, sys, os
j = json.load(sys.stdin); c = j["config"]; key = "imbalance_" + c["cost"]
names = {"evenfeed": "evenfeed", "torch_distributed_sampler": "torch B=%d" % c["baseline_batch_size"],
         "sorted_token_budget": "sorted budget"}
for k, label in names.items():
    e = j[k]
    print("| %s | %s | %d | %s | %.2f%% | %.3f / %.3f | %.1f%% | %.3f | %.1f%% | %d | %d | %d |" % (
        os.path.basename(sys.argv[1]).rsplit(".", 1)[0], c["cost"], c["world_size"], label,
        100 * e["padding_waste"], e[key]["mean"], e[key]["p99"],
        100 * e["useful_share_" + c["cost"]], e["lag1_batch_mean_length"],
        100 * (e["repeated_pair_share"] or 0), sum(e["dropped_per_epoch"]), sum(e["duplicated_per_epoch"]),
        e["steps_per_epoch"][0]))
' "$file"
    done
  done
done
