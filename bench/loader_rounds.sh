#!/usr/bin/env bash
# The loader against the PyTorch DataLoader anchor in interleaved rounds, for a shared,
# noisy machine: each round runs the anchor (2 workers, uint8), evenfeed at 2 threads,
# evenfeed at 2 threads on the same images converted with --no-restart-markers
# ("plain": whole-width entropy decoding, as before restart markers), and evenfeed at
# 1 thread back to back, in an order that rotates from round to round, so load that
# comes and goes hits every contender alike. Each round gives its own ratios
# (evenfeed 2 threads / anchor, plain / anchor) and parallel efficiency (2-thread
# images/s over twice the 1-thread images/s); the summary is the median over rounds,
# and the per-round lines are kept so nothing is hidden.
#   bench/loader_rounds.sh BUILD_DIR IMAGE_FOLDER WORKDIR [ROUNDS=5]
# Needs `scripts/install-deps.sh --bench` (python3-torch, python3-torchvision,
# python3-pil, python3-psutil; run with /usr/bin/python3).
set -euo pipefail
build=$1; folder=$2; work=$3; rounds=${4:-5}
anchor=$(dirname "$0")/../../shared/anchors/torch_loader.py
[ -f "$anchor" ] || anchor=$(dirname "$0")/../shared/anchors/torch_loader.py
mkdir -p "$work"
"$build/evenfeed" -q convert images "$folder" "$work/data" --force > /dev/null
"$build/evenfeed" -q convert images "$folder" "$work/plain" --force --no-restart-markers > /dev/null

run_one() {  # prints images/s of one contender
  case $1 in
    anchor) /usr/bin/python3 "$anchor" --folder "$folder" --workers 2 --batch-size 64 \
              --output uint8 2>/dev/null | tail -1 ;;
    ours2) "$build/evenfeed" -q bench loader "$work/data" --batch-size 64 --epochs 2 --threads 2 \
             --no-decode-anchor --json ;;
    ours1) "$build/evenfeed" -q bench loader "$work/data" --batch-size 64 --epochs 2 --threads 1 \
             --no-decode-anchor --json ;;
    plain2) "$build/evenfeed" -q bench loader "$work/plain" --batch-size 64 --epochs 2 --threads 2 \
             --no-decode-anchor --json ;;
  esac | /usr/bin/python3 -c 'import json,sys; j = json.loads(sys.stdin.read()); print(j.get("images_per_sec", j.get("images_per_s")))'
}

orders=("anchor ours2 plain2 ours1" "ours2 plain2 ours1 anchor" "plain2 ours1 anchor ours2"
        "ours1 anchor ours2 plain2")
echo "round anchor ours2 plain2 ours1 ratio plain_ratio efficiency"
results=()
for ((r = 0; r < rounds; ++r)); do
  declare -A ips=()
  for who in ${orders[r % 4]}; do ips[$who]=$(run_one "$who"); done
  line=$(/usr/bin/python3 -c "a,b,p,c=${ips[anchor]},${ips[ours2]},${ips[plain2]},${ips[ours1]}; print(f'{a:.0f} {b:.0f} {p:.0f} {c:.0f} {b/a:.2f} {p/a:.2f} {b/(2*c)*100:.0f}')")
  echo "$((r + 1)) $line"
  results+=("$line")
  unset ips
done
printf '%s\n' "${results[@]}" | /usr/bin/python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
ratio = [r[4] for r in rows]; plain = [r[5] for r in rows]; eff = [r[6] for r in rows]
print(f"median ratio {statistics.median(ratio):.2f}x (range {min(ratio):.2f}-{max(ratio):.2f}), "
      f"plain (no restart markers) {statistics.median(plain):.2f}x "
      f"(range {min(plain):.2f}-{max(plain):.2f}), "
      f"median efficiency {statistics.median(eff):.0f}% (range {min(eff):.0f}-{max(eff):.0f}%), "
      f"{len(rows)} rounds")'
