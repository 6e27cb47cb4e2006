#!/usr/bin/env bash
# Regenerates the length-bucketing section of BENCHMARKS.md (printed to stdout).
#   bench/plan_benchmarks.sh BUILD_DIR CORPORA_DIR
# CORPORA_DIR is written by `python3 bench/make_length_corpora.py CORPORA_DIR`.
set -euo pipefail
build=$1; lc=$2
here=$(dirname "$0")
echo "Command: \`bench/plan_matrix.sh $build 8192 $lc/code_files.txt $lc/changelog_entries.txt $lc/doc_paragraphs.txt $lc/doc_sentences.txt synthetic:200000\`"
echo
"$here/plan_matrix.sh" "$build" 8192 "$lc/code_files.txt" "$lc/changelog_entries.txt" "$lc/doc_paragraphs.txt" "$lc/doc_sentences.txt" synthetic:200000
echo
echo "### At scale: synthetic lengths, 2 million samples"
echo
echo "\`evenfeed plan --synthetic 2000000 --world-size W --tokens-per-rank 16384 --cost C --epochs 2 --no-baselines\`"
echo
echo "| cost | W | padding | imbalance mean / p99 | useful share | lag-1 | pairs again | steps/epoch | full-budget steps |"
echo "|---|---|---|---|---|---|---|---|---|"
for cost in linear quadratic; do for W in 8 64; do
  "$build/evenfeed" plan --synthetic 2000000 --world-size $W --tokens-per-rank 16384 --cost $cost --epochs 2 \
      --no-baselines --json | python3 -c '
import json, sys
j = json.load(sys.stdin); e = j["evenfeed"]; k = "imbalance_" + j["config"]["cost"]
c = j["config"]["cost"]
print("| %s | %d | %.2f%% | %.3f / %.3f | %.1f%% | %.3f | %.2f%% | %d | %.1f |" % (c, j["config"]["world_size"],
      100 * e["padding_waste"], e[k]["mean"], e[k]["p99"], 100 * e["useful_share_" + c], e["lag1_batch_mean_length"],
      100 * e["repeated_pair_share"], e["steps_per_epoch"][0], j["config"]["full_budget_steps"]))'
done; done
echo
echo "### Planning speed and memory"
echo
echo "\`$build/evenfeed_bench_plan N 64 16384 linear\` plans one epoch of N generated lengths with the keyed"
echo "permutation (lengths computed from the id: nothing O(N) is stored) and reports its peak resident memory:"
echo
echo "| samples | seconds | samples/s | peak RSS |"
echo "|---|---|---|---|"
for n in 1000000 10000000 40000000; do
  "$build/evenfeed_bench_plan" $n 64 16384 linear | python3 -c '
import json, sys
j = json.load(sys.stdin)
print("| {:,} | {:.1f} | {:,} | {:.1f} MB |".format(j["samples"], j["seconds"], int(j["samples_per_s"]), j["peak_rss_mb"]))'
done
