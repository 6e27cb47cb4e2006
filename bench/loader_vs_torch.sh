#!/usr/bin/env bash
# The loader against the PyTorch DataLoader anchor (../shared/anchors/torch_loader.py)
# and a plain full-size TurboJPEG decode loop, in one run, on an ImageFolder tree.
#   bench/loader_vs_torch.sh BUILD_DIR IMAGE_FOLDER WORKDIR [extra bench flags]
# Prints JSON lines: anchor (uint8), ours at 2 and 1 threads (uint8), anchor and ours
# with float output. Needs `scripts/install-deps.sh --bench` (python3-torch, python3-torchvision, python3-pil,
# python3-psutil; run with /usr/bin/python3).
set -euo pipefail
build=$1; folder=$2; work=$3; shift 3
anchor=$(dirname "$0")/../../shared/anchors/torch_loader.py
[ -f "$anchor" ] || anchor=$(dirname "$0")/../shared/anchors/torch_loader.py
mkdir -p "$work"
"$build/evenfeed" -q convert images "$folder" "$work/data" --force > /dev/null
/usr/bin/python3 "$anchor" --folder "$folder" --workers 2 --batch-size 64 --output uint8 2>/dev/null | tail -1
"$build/evenfeed" bench loader "$work/data" --batch-size 64 --epochs 2 --threads 2 --json "$@"
"$build/evenfeed" bench loader "$work/data" --batch-size 64 --epochs 2 --threads 1 --no-decode-anchor --json "$@"
/usr/bin/python3 "$anchor" --folder "$folder" --workers 2 --batch-size 64 --output float 2>/dev/null | tail -1
"$build/evenfeed" bench loader "$work/data" --batch-size 64 --epochs 2 --threads 2 --output float --no-decode-anchor --json "$@"
