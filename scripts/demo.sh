#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, make the demo dataset and
# run the main job on it. Everything lands in demo/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
ef=build/evenfeed
mkdir -p demo
echo "== synthesising 2,000 images in 10 classes (demo/images)"
$ef synth images demo/images --count 2000 --classes 10 --seed 1 --force
echo "== converting to a sharded dataset (demo/data)"
$ef convert images demo/images demo/data --shards 4 --force
echo "== inspecting"
$ef inspect demo/data
echo "== verifying every record, checksum and JPEG"
$ef verify demo/data --decode
echo "== token corpus: 20,000 long-tailed documents (demo/tokens)"
$ef synth tokens demo/tokens.jsonl --count 20000 --seed 1 --force
$ef convert tokens demo/tokens.jsonl demo/tokens --force
$ef inspect demo/tokens
echo "== planning the token corpus for 8 ranks, 16k tokens per rank, beside the baselines"
$ef plan demo/tokens --world-size 8 --tokens-per-rank 16384 --epochs 2
