#!/usr/bin/env bash
# Installs every Debian package evenfeed needs to build, test and run its demo.
# Idempotent: when everything is present it does nothing (no apt-get update).
# Runs as root (CI, containers) or through sudo when available.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git clang-format
  clang libclang-rt-14-dev        # sanitizer and libFuzzer builds (scripts/test.sh, fuzz.sh)
  liblmdb-dev lmdb-utils          # shard storage
  libtbb-dev                      # all CPU parallelism (oneTBB)
  libturbojpeg0-dev libjpeg62-turbo-dev  # JPEG decode/encode, lossless transcode
  libopenmpi-dev openmpi-bin      # launcher + CPU communicator
  libgtest-dev                    # unit tests
  nlohmann-json3-dev              # manifest / --json output
  libcli11-dev                    # command-line parsing
  libfmt-dev                      # formatting
  libxxhash-dev                   # payload and shard checksums (XXH3-64)
  libpng-dev                      # --reencode of PNG sources, PNG batch dumps
  libyuv-dev                      # SIMD image resizing in the loader (static, rewritten by objcopy)
  libopenblas-dev                 # trainer's CPU GEMM
  libtorch-dev                    # examples/libtorch (CPU build of libtorch)
)
# --bench: also what bench/ needs for the PyTorch anchors (system python3).
if [ "${1:-}" = "--bench" ]; then
  packages+=(python3-torch python3-torchvision python3-pil python3-psutil)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
