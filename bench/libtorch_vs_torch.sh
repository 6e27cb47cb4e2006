#!/usr/bin/env bash
# examples/libtorch/train_cnn (libtorch fed by evenfeed) against the same network in
# Python fed by PyTorch's DataLoader (bench/torch_cnn_train.py), same run, same images.
#   bench/libtorch_vs_torch.sh [WORKDIR] [REPEATS] [SIZE] [BATCH]
# Needs `scripts/install-deps.sh --bench` (python3-torch, python3-torchvision, python3-pil).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/evenfeed-cnn-bench}
repeats=${2:-3}
size=${3:-112}
batch=${4:-64}
mkdir -p "$work"
[ -d "$work/images" ] || build/evenfeed -q synth images "$work/images" --count 2000 --classes 10 --max-size 500 --seed 1
[ -d "$work/data" ] || build/evenfeed -q convert images "$work/images" "$work/data" >/dev/null
for i in $(seq "$repeats"); do
  ours=$(build/examples/train_cnn --data "$work/data" --epochs 2 --batch-size "$batch" --size "$size" 2>/dev/null | tail -1)
  anchor=$(/usr/bin/python3 bench/torch_cnn_train.py --folder "$work/images" --epochs 2 --batch-size "$batch" --size "$size" 2>/dev/null | tail -1)
  /usr/bin/python3 - "$ours" "$anchor" <<'PY'
import json, sys
ours, anchor = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({"libtorch_evenfeed_images_per_s": round(ours["images_per_s"], 1),
                  "pytorch_dataloader_images_per_s": round(anchor["images_per_s"], 1),
                  "ratio": round(ours["images_per_s"] / anchor["images_per_s"], 2),
                  "evenfeed_data_wait_share": ours["data_wait_share"],
                  "pytorch_data_wait_share": round(anchor["data_wait_share"], 3)}))
PY
done
