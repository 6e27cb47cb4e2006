#!/usr/bin/env bash
# evenfeed train against PyTorch DDP (gloo) + DataLoader, same run, same data, same
# model and optimiser, 2 ranks on this machine. Needs the PyTorch anchor's packages:
#   scripts/install-deps.sh --bench   (python3-torch, python3-torchvision, python3-pil)
# Usage: bench/train_vs_torch.sh [WORKDIR] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/evenfeed-train-bench}
repeats=${2:-3}
ef=build/evenfeed
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$work"
[ -d "$work/images" ] || $ef -q synth images "$work/images" --count 2000 --classes 10 --seed 1
[ -d "$work/heldout" ] || $ef -q synth images "$work/heldout" --count 500 --classes 10 --seed 2
[ -d "$work/data" ] || $ef -q convert images "$work/images" "$work/data"
[ -d "$work/heldout_data" ] || $ef -q convert images "$work/heldout" "$work/heldout_data"
for i in $(seq "$repeats"); do
  # evenfeed: time the epochs after the first, as the anchor does (from the JSON log).
  rm -f "$work/log.jsonl"
  mpirun -np 2 $ef -q train --data "$work/data" --eval-data "$work/heldout_data" --epochs 3 --batch-size 32 \
    --loader-threads 1 --log "$work/log.jsonl" --json > "$work/ef.json"
  python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
r = json.load(open(f"{w}/ef.json"))
lines = [json.loads(l) for l in open(f"{w}/log.jsonl")]
timed = [l for l in lines if l["epoch"] > 0]
secs = sum(max(l["step_time"]) for l in timed)
samples = sum(sum(l["samples"]) for l in timed)
print(json.dumps({"evenfeed_samples_per_sec": samples / secs, "eval_accuracy": r["eval_accuracy"],
                  "bound": r["bound"], "busy_imbalance": r["busy_imbalance"]}))
PY
  /usr/bin/python3 bench/torch_ddp_train.py "$work/images" --eval "$work/heldout" --ranks 2 --epochs 3
done
