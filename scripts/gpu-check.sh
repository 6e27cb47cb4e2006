#!/usr/bin/env bash
# Every check that needs a GPU, in one run, on a machine where scripts/gpu-bundle.sh's
# archive was unpacked (this script lies in the unpacked folder). Writes one file per
# check into OUT_DIR and a summary line per check to stdout; exits non-zero if any
# check failed.
#   gpu-check.sh OUT_DIR [CHECK...]     (names: only those checks run)
# Environment: TORCH_REPEATS (PyTorch comparisons, default 2), and IMAGES and
# TORCH_TIMEOUT, passed on to bench/gpu_train_vs_torch.sh.
# Checks: the GPU tests (normalise kernel against its CPU reference, device feeder,
# device info), the trainer's GPU path against its CPU reference (gpu_trainer_tests)
# and the NCCL communicator tests (1 rank per GPU, so -np 1 on a one-GPU machine);
# `evenfeed doctor`; host-to-device bandwidth, pinned against pageable; NCCL all-reduce
# bandwidth; `evenfeed train` on the GPU against the CPU on the same data, and against
# PyTorch on the same GPU where this machine's python3 has torch and torchvision
# (bench/gpu_train_vs_torch.sh); the GPU code built into libevenfeed_cuda.a (cuobjdump).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: gpu-check.sh OUT_DIR [CHECK...]}
shift
only=" $* "
mkdir -p "$out"

# NCCL comes from the machine: CUDA's own folders, or the nvidia-nccl wheel of its Python.
nccl=$(find /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu /opt /usr/local/lib \
         -name 'libnccl.so.2' 2>/dev/null | head -1)
# cuBLAS too (loaded with dlopen by the GPU models): CUDA's lib64 or the nvidia-cublas wheel.
cublas=$(find /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu /opt /usr/local/lib \
           -name 'libcublas.so.13' 2>/dev/null | head -1)
# Python (the PyTorch anchor) keeps the machine's own library path: the bundle's
# libraries are for our binaries, and an older libstdc++ among them could break torch.
export PYTHON_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH="$here/lib${nccl:+:$(dirname "$nccl")}${cublas:+:$(dirname "$cublas")}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX=$here/ompi PATH=$here/ompi/bin:$here/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
# Tests that run the evenfeed command find it here, not at the build's path.
export EVENFEED_BIN=$here/bin/evenfeed
failed=0
wanted() { [ "$only" = "  " ] || [[ $only == *" $1 "* ]]; }
check() {  # check NAME COMMAND...: runs it, keeps its output, prints one line
  local name=$1; shift
  wanted "$name" || return 0
  local start=$SECONDS
  if "$@" > "$out/$name.txt" 2>&1; then
    echo "OK      $name ($((SECONDS - start)) s)"
  else
    echo "FAILED  $name (exit $?, $((SECONDS - start)) s): see $name.txt"
    failed=1
  fi
}

# One rank per GPU (NCCL refuses two ranks on one device); at least one rank.
ranks=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ranks" -ge 1 ] || ranks=1
{ nvidia-smi -L; echo "libnccl: ${nccl:-not found}"; echo "libcublas: ${cublas:-not found}"
  echo "ranks: $ranks"; nproc; } > "$out/machine.txt" 2>&1
check cuda_tests "$here/bin/cuda_tests" --gtest_color=no
check gpu_trainer_tests "$here/bin/gpu_trainer_tests" --gtest_color=no
check nccl_tests mpirun -np "$ranks" "$here/bin/nccl_tests" --gtest_color=no
check doctor mpirun -np "$ranks" "$here/bin/evenfeed" doctor --json
check bench_h2d "$here/bin/evenfeed" bench h2d --json
# With one GPU this only shows NCCL working (bus bandwidth is 0 by definition at n = 1).
check bench_allreduce mpirun -np "$ranks" "$here/bin/evenfeed" bench allreduce --backend nccl --json
# evenfeed train on the GPU against the CPU: same data, flags and seed (samples/s,
# telemetry, held-out accuracy). A model big enough for the GPU to matter.
train_check() {
  local data
  data=$(mktemp -d)
  evenfeed -q synth images "$data/src" --count 4000 --classes 10 --min-size 96 --max-size 320 &&
    evenfeed -q synth images "$data/eval_src" --count 1000 --classes 10 --min-size 96 --max-size 320 --seed 9 &&
    evenfeed -q convert images "$data/src" "$data/train" &&
    evenfeed -q convert images "$data/eval_src" "$data/eval" || return 1
  local flags="--data $data/train --eval-data $data/eval --image-size 32 --hidden 1024 --epochs 3 --batch-size 256 --json"
  for device in gpu cpu; do
    echo "== --device $device"
    evenfeed -q train $flags --device $device --log "$out/train_$device.jsonl" || { rm -rf "$data"; return 1; }
  done
  rm -rf "$data"
}
check train_gpu_vs_cpu train_check
# The same training against PyTorch on the same GPU (its data, 350 MB, removed after).
torch_check() {
  local work rc
  work=$(mktemp -d)
  "$here/bench/gpu_train_vs_torch.sh" "$work" "${TORCH_REPEATS:-2}"
  rc=$?
  rm -rf "$work"
  return $rc
}
if LD_LIBRARY_PATH=$PYTHON_LD_LIBRARY_PATH python3 -c 'import torch, torchvision' 2>/dev/null; then
  check train_vs_torch torch_check
elif wanted train_vs_torch; then
  echo "SKIPPED train_vs_torch: this machine's python3 has no torch and torchvision"
fi
check cuobjdump bash -c "cuobjdump --list-elf '$here/lib/libevenfeed_cuda.a' &&
                         cuobjdump --list-ptx '$here/lib/libevenfeed_cuda.a'"
# A GPU test that skips is not a pass: say so.
if grep -q "SKIPPED" "$out/cuda_tests.txt" "$out/nccl_tests.txt" "$out/gpu_trainer_tests.txt" 2>/dev/null; then
  echo "NOTE    some GPU tests skipped:"; grep -h "SKIPPED \]" "$out"/*_tests.txt | sort -u
fi
exit $failed
