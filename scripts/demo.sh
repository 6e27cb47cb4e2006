#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, make the demo datasets and
# run the main job on them: data-parallel training on two ranks. Everything lands in
# demo/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
ef=build/evenfeed
mkdir -p demo
# Open MPI refuses to run as root (CI, containers) unless told, and this machine may
# have fewer cores than ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
echo "== synthesising 2,000 images in 10 classes (demo/images), and 500 held out"
$ef synth images demo/images --count 2000 --classes 10 --seed 1 --force
$ef synth images demo/heldout --count 500 --classes 10 --seed 2 --force
$ef convert images demo/heldout demo/heldout_data --force
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
echo "== checking the machine and the ranks"
mpirun -np 2 $ef doctor --data demo/data --seconds 3
echo "== training the image classifier on 2 ranks (held-out accuracy, balance report)"
mpirun -np 2 $ef train --data demo/data --eval-data demo/heldout_data --epochs 5 --batch-size 32 \
  --checkpoint-dir demo/checkpoints --log demo/train.jsonl
echo "== training the token classifier on 2 ranks with 32k-token budgets (length bucketing)"
$ef synth tokens demo/tokens_heldout.jsonl --count 2000 --seed 2 --force
$ef convert tokens demo/tokens_heldout.jsonl demo/tokens_heldout --force
mpirun -np 2 $ef train --data demo/tokens --eval-data demo/tokens_heldout --epochs 2 --tokens-per-rank 32768 \
  --optimizer adamw --lr 3e-3
