#!/bin/bash
# Corpora cut to a context length: the real corpora of make_length_corpora.py with every
# length cut to 2,048 and to 4,096 tokens (documents chunked to a model's context), at
# budgets above the cut, so no sample is truncated to the budget: 6 corpora x 2 cuts x
# 3 budgets x 2 world sizes x 2 costs = 144 plans, one line each, OK where every target
# is met (padding <= 2%, imbalance mean <= 1.03 and p99 <= 1.10 under the cost in use,
# re-batched pairs <= 10%, |lag-1| <= 0.2).
#   bash bench/plan_clipped.sh build/evenfeed /tmp/lc [/tmp/lcc]
set -euo pipefail
if [[ $# -lt 2 || ! -x $1 || ! -d $2 ]]; then
  echo "usage: bash bench/plan_clipped.sh EVENFEED_BINARY CORPORA_DIR [CUT_DIR]" \
       "(CORPORA_DIR from bench/make_length_corpora.py)" >&2
  exit 2
fi
bin=$1 corpora=$2 cut_dir=${3:-/tmp/lcc}
for c in code_files changelog_entries html_pages doc_files java_sources sdk_sources; do
  if [[ ! -r $corpora/$c.txt ]]; then
    echo "plan_clipped: $corpora/$c.txt is missing; make it with bench/make_length_corpora.py" >&2
    exit 2
  fi
done
mkdir -p "$cut_dir"
for c in code_files changelog_entries html_pages doc_files java_sources sdk_sources; do
  for k in 2048 4096; do
    awk -v k=$k '{ print ($1 > k ? k : $1) }' "$corpora/$c.txt" > "$cut_dir/${c}_clip$k.txt"
  done
done
for f in "$cut_dir"/*_clip*.txt; do for T in 8192 16384 32768; do for W in 8 64; do
  for C in linear quadratic; do
    r=$("$bin" plan --lengths "$f" --world-size $W --tokens-per-rank $T --cost $C \
          --no-baselines --json | python3 -c "
import json, sys
e = json.load(sys.stdin)['evenfeed']
q = e['imbalance_$C']
ok = (e['padding_waste'] <= 0.02 and q['mean'] <= 1.03 and q['p99'] <= 1.10 and
      e['repeated_pair_share'] <= 0.10 and abs(e['lag1_batch_mean_length']) <= 0.2)
print('%s pad=%.2f mean=%.4f p99=%.3f pairs=%.1f lag=%.3f steps=%s' % (
    'OK  ' if ok else 'MISS', e['padding_waste'] * 100, q['mean'], q['p99'],
    e['repeated_pair_share'] * 100, e['lag1_batch_mean_length'], e['steps_per_epoch']))")
    echo "$(basename "$f" .txt)|$C|$W|$T| $r"
  done
done; done; done
