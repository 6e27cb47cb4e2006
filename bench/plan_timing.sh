#!/usr/bin/env bash
# Planning time of two builds of evenfeed, alternating, on the length corpora of
# bench/make_length_corpora.py: wall and user seconds and peak memory per command.
#   bench/plan_timing.sh OLD_EVENFEED NEW_EVENFEED ROUNDS CORPORA_DIR [large|small|wide|huge|ranks|caps]
# (BENCHMARKS.md, "Planning speed and memory"). Alternating the builds in each round
# keeps a shared machine's load from favouring one of them. `small` (default `large`)
# times small corpora at 64 ranks instead, where the epoch's end is most of the work;
# `wide` a million paragraphs at 256 to 1,000 ranks, whose epochs are a few steps, so
# that the epoch's end is nearly all the corpus; `huge` 4,096 ranks, where thousands of
# a step's batches cost the same few values, or where an epoch is a sixteenth of a step
# and two steps swap thousands of batches (settings a search of random ones found
# slow: bench/plan_random_settings.py); `ranks` the paragraphs and sentences quadratic
# at 256 to 4,096 ranks, 8,192 tokens; `caps` the paragraphs under sample caps of 1 to
# 8. PLAN_TIMING_LIMIT=S stops each command after S seconds (its line then says
# exit=124, or 137 where it had to be killed).
set -euo pipefail
old=$1 new=$2 rounds=$3 dir=$4 set=${5:-large}
common=(--oversize truncate --no-baselines --json)
large=(
  "--lengths $dir/doc_sentences.txt --world-size 64 --tokens-per-rank 16384 --cost quadratic --epochs 2"
  "--lengths $dir/doc_sentences.txt --world-size 64 --tokens-per-rank 16384 --cost quadratic --epochs 2 --no-cap-trial"
  "--lengths $dir/doc_paragraphs.txt --world-size 8 --tokens-per-rank 8192 --cost quadratic --epochs 2"
  "--lengths $dir/doc_sentences.txt --world-size 8 --tokens-per-rank 8192 --cost quadratic --epochs 2"
  "--lengths $dir/code_files.txt --world-size 64 --tokens-per-rank 16384 --cost quadratic --epochs 2"
  "--lengths $dir/changelog_entries.txt --world-size 64 --tokens-per-rank 32768 --cost linear --epochs 2"
  "--synthetic 2000000 --world-size 1024 --tokens-per-rank 8192 --cost quadratic --epochs 1"
)
small=(
  "--synthetic 5000 --world-size 64 --tokens-per-rank 8192 --cost quadratic --epochs 2"
  "--synthetic 5000 --world-size 64 --tokens-per-rank 8192 --cost quadratic --epochs 2 --no-fallback-trial"
  "--synthetic 2000 --world-size 64 --tokens-per-rank 16384 --cost linear --epochs 2"
  "--lengths $dir/perl_sources.txt --world-size 64 --tokens-per-rank 8192 --cost quadratic --epochs 2"
  "--lengths $dir/shape_pareto.txt --world-size 64 --tokens-per-rank 16384 --cost quadratic --epochs 2"
  "--synthetic 20000 --world-size 64 --tokens-per-rank 8192 --cost quadratic --epochs 2"
  "--lengths $dir/markup_docs.txt --world-size 64 --tokens-per-rank 4096 --cost linear --epochs 2"
)
wide=(
  "--lengths $dir/doc_paragraphs.txt --world-size 256 --tokens-per-rank 32768 --cost linear --epochs 1"
  "--lengths $dir/doc_paragraphs.txt --world-size 512 --tokens-per-rank 32768 --cost linear --epochs 1"
  "--lengths $dir/doc_paragraphs.txt --world-size 1000 --tokens-per-rank 16384 --cost linear --epochs 1"
  "--lengths $dir/doc_paragraphs.txt --world-size 512 --tokens-per-rank 16384 --cost quadratic --epochs 1"
)
huge=(
  "--lengths $dir/shape_pareto.txt --world-size 4096 --tokens-per-rank 64 --cost linear --epochs 3 --order full --noise 0"
  "--lengths $dir/changelog_entries.txt --world-size 4096 --tokens-per-rank 7 --cost linear --epochs 2 --max-batch-tokens 7"
  "--lengths $dir/markup_docs.txt --world-size 4096 --tokens-per-rank 1000000 --cost quadratic --epochs 2 --seed 307082186"
  "--lengths $dir/doc_paragraphs.txt --world-size 4096 --tokens-per-rank 8192 --cost linear --epochs 1"
  "--lengths $dir/shape_pareto.txt --world-size 4096 --tokens-per-rank 131072 --cost linear --epochs 2"
)
# Cluster sizes on the real corpora: epochs of one to five steps of work at hundreds of
# ranks, where the final cut's split (split_off_light_tail) weighed every boundary.
ranks=(
  "--lengths $dir/doc_paragraphs.txt --world-size 256 --tokens-per-rank 8192 --cost quadratic --epochs 1"
  "--lengths $dir/doc_paragraphs.txt --world-size 512 --tokens-per-rank 8192 --cost quadratic --epochs 1"
  "--lengths $dir/doc_paragraphs.txt --world-size 1024 --tokens-per-rank 8192 --cost quadratic --epochs 1"
  "--lengths $dir/doc_sentences.txt --world-size 1024 --tokens-per-rank 8192 --cost quadratic --epochs 1"
  "--lengths $dir/doc_sentences.txt --world-size 4096 --tokens-per-rank 8192 --cost quadratic --epochs 1"
)
# Small sample caps (micro-batches of one to eight) on a million paragraphs: a window of
# tens of thousands of steps, whose pairs of steps were all compared and whose end was
# cut again after each step it took back.
caps=(
  "--lengths $dir/doc_paragraphs.txt --world-size 8 --tokens-per-rank 8192 --cost quadratic --epochs 1 --max-batch-size 1"
  "--lengths $dir/doc_paragraphs.txt --world-size 8 --tokens-per-rank 8192 --cost quadratic --epochs 1 --max-batch-size 2"
  "--lengths $dir/doc_paragraphs.txt --world-size 8 --tokens-per-rank 8192 --cost quadratic --epochs 1 --max-batch-size 4"
  "--lengths $dir/doc_paragraphs.txt --world-size 8 --tokens-per-rank 8192 --cost linear --epochs 1 --max-batch-size 8"
  "--lengths $dir/doc_paragraphs.txt --world-size 64 --tokens-per-rank 8192 --cost quadratic --epochs 1 --max-batch-size 2"
)
limit=${PLAN_TIMING_LIMIT:-0}
case $set in
  large) cases=("${large[@]}") ;;
  small) cases=("${small[@]}") ;;
  wide) cases=("${wide[@]}") ;;
  huge) cases=("${huge[@]}") ;;
  ranks) cases=("${ranks[@]}") ;;
  caps) cases=("${caps[@]}") ;;
  *) echo "plan_timing.sh: the case set must be large, small, wide, huge, ranks or caps, not '$set'" >&2; exit 2 ;;
esac
for round in $(seq "$rounds"); do
  for i in "${!cases[@]}"; do
    for bin in "$old" "$new"; do
      # shellcheck disable=SC2086  # each case is a list of flags
      /usr/bin/time -f "case=$i round=$round bin=$bin wall=%e user=%U rss=%MKB exit=%x" \
        timeout --kill-after=5 "$limit" "$bin" plan ${cases[$i]} "${common[@]}" 2>&1 >/dev/null | tail -1 || true
    done
  done
done
