#!/usr/bin/env bash
# Planning an epoch of 2 and 10 million samples drawn from a real length distribution:
# wall seconds, the report's plan_seconds, peak memory and the report's figures.
#   bench/plan_at_scale.sh EVENFEED CORPORA_DIR [OUT_DIR]
# (BENCHMARKS.md, "At scale: real length distributions, 10 million samples").
#
# evenfeed_bench_plan shows the 10-million-sample target on generated lengths under the
# linear model; this shows it where the lengths are real and the cost quadratic, which
# is where the planner works hardest (lumps, an automatic window of millions of
# samples). The corpora of bench/make_length_corpora.py hold 1.2 and 1.8 million
# paragraphs and sentences; the 2- and 10-million-sample files are draws with
# replacement from them (fixed seed), so the distribution is the corpus's and only the
# count changes. Beside the planner's O(window), the command holds every length of
# `--lengths` (8 bytes a sample) and the report's per-sample tallies (6 bytes, 10 from
# a second epoch on).
set -euo pipefail
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -d "$2" ]; then
  echo "plan_at_scale.sh: usage: bench/plan_at_scale.sh EVENFEED CORPORA_DIR [OUT_DIR]" \
    "(EVENFEED the built binary; CORPORA_DIR from bench/make_length_corpora.py)" >&2
  exit 2
fi
bin=$1 dir=$2 out=${3:-/tmp/plan_at_scale}
mkdir -p "$out"
for corpus in doc_paragraphs doc_sentences; do
  for n in 2000000 10000000; do
    f="$out/${corpus}_$n.txt"
    [ -s "$f" ] || python3 - "$dir/$corpus.txt" "$n" "$f" <<'EOF'
import random, sys
lengths = open(sys.argv[1]).read().split()
rng = random.Random(20261206)
with open(sys.argv[3], "w") as out:
    out.write("\n".join(rng.choice(lengths) for _ in range(int(sys.argv[2]))) + "\n")
EOF
  done
done
echo "| corpus | samples | cost | W | budget | wall s | plan_seconds | peak RSS | window | steps | padding | imbalance mean / p99 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for corpus in doc_paragraphs doc_sentences; do
  for setting in "linear 8 8192" "quadratic 64 16384"; do
    read -r cost W T <<< "$setting"
    for n in 2000000 10000000; do
      /usr/bin/time -f "%e %M" -o "$out/time" "$bin" plan --lengths "$out/${corpus}_$n.txt" \
        --world-size "$W" --tokens-per-rank "$T" --cost "$cost" --oversize truncate --epochs 1 \
        --no-baselines --json > "$out/report.json"
      python3 - "$out/report.json" "$out/time" "$corpus" "$n" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1])); c = j["config"]; e = j["evenfeed"]
wall, rss_kb = open(sys.argv[2]).read().split()[-2:]
k = "imbalance_" + c["cost"]
print("| %s | %s | %s | %d | %d | %.1f | %.1f | %.0f MiB | %s | %d | %.2f%% | %.3f / %.3f |" % (
    sys.argv[3], "{:,}".format(int(sys.argv[4])), c["cost"], c["world_size"], c["tokens_per_rank"],
    float(wall), e["plan_seconds"], int(rss_kb) / 1024, "{:,}".format(c["window"]),
    e["steps_per_epoch"][0], 100 * e["padding_waste"], e[k]["mean"], e[k]["p99"]))
EOF
    done
  done
done
