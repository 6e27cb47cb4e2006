#!/usr/bin/env bash
# evenfeed train --device gpu against PyTorch on the same GPU, same run, same data, same
# model and optimiser: the GPU counterpart of bench/train_vs_torch.sh. One rank (one GPU):
# what is compared is how well each keeps the GPU fed, since both run the same MLP.
#   evenfeed: its loader on every core, pinned batch slots, asynchronous copies.
#   PyTorch:  DataLoader + DistributedSampler over the same JPEGs (ImageFolder,
#             RandomResizedCrop, flip, normalise), one worker per core, pin_memory,
#             non_blocking copies, DDP over NCCL (bench/torch_ddp_train.py --device cuda).
# Runs on the GPU machine from scripts/gpu-bundle.sh's archive (gpu-check.sh calls it when
# that machine's python3 has torch and torchvision), or from a checkout with a GPU.
# Prints one JSON line per planner and repeat; the two alternate.
# Usage: bench/gpu_train_vs_torch.sh WORKDIR [REPEATS]
# Environment: IMAGES (training JPEGs, default 20000), TORCH_TIMEOUT (seconds one PyTorch
# run may take, default 600; then SIGABRT, and Python's faulthandler prints where it was).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:?usage: gpu_train_vs_torch.sh WORKDIR [REPEATS]}
repeats=${2:-2}
ef=${EVENFEED_BIN:-$here/../build/evenfeed}
cores=$(nproc)
# gpu-check.sh points LD_LIBRARY_PATH at the bundle's libraries; Python keeps the machine's.
python_libs=${PYTHON_LD_LIBRARY_PATH-${LD_LIBRARY_PATH:-}}
images=${IMAGES:-20000}
mkdir -p "$work"
say() { echo "$(date +%T) $*" >&2; }
say "making $images JPEGs"
$ef -q synth images "$work/images" --count "$images" --classes 10 --min-size 96 --max-size 320 --seed 1
$ef -q synth images "$work/heldout" --count 2000 --classes 10 --min-size 96 --max-size 320 --seed 2
$ef -q convert images "$work/images" "$work/data"
$ef -q convert images "$work/heldout" "$work/heldout_data"
# The same model, optimiser and batch for both: MLP 32x32x3 -> 1024 -> 1024 -> 10, SGD
# momentum 0.9, lr 0.02, 5% warm-up then cosine, 256 a step, 3 epochs, the first untimed.
for i in $(seq "$repeats"); do
  say "evenfeed, run $i"
  rm -f "$work/log.jsonl"
  $ef -q train --device gpu --data "$work/data" --eval-data "$work/heldout_data" --epochs 3 \
    --batch-size 256 --hidden 1024 --image-size 32 --log "$work/log.jsonl" --json > "$work/ef.json"
  LD_LIBRARY_PATH=$python_libs python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
r = json.load(open(f"{w}/ef.json"))
timed = [l for l in map(json.loads, open(f"{w}/log.jsonl")) if l["epoch"] > 0]
secs = sum(max(l["step_time"]) for l in timed)
samples = sum(sum(l["samples"]) for l in timed)
print(json.dumps({"planner": "evenfeed", "samples_per_sec": samples / secs,
                  "all_epochs_samples_per_sec": r["samples_per_sec"], "eval_accuracy": r["eval_accuracy"],
                  "bound": r["bound"], "wait": r["ranks"][0]["wait"], "step": r["ranks"][0]["step"]}))
PY
  say "PyTorch, run $i"
  LD_LIBRARY_PATH=$python_libs PYTHONFAULTHANDLER=1 timeout -s ABRT "${TORCH_TIMEOUT:-600}" \
    python3 "$here/torch_ddp_train.py" "$work/images" --eval "$work/heldout" --device cuda \
    --ranks 1 --epochs 3 --batch-size 256 --hidden 1024 --size 32 --workers "$cores"
done
