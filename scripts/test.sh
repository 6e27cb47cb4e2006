#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, and run the whole test suite.
#   scripts/test.sh              (BUILD_DIR=build by default)
# EVENFEED_SANITIZE=ON runs the suite under ASan+UBSan in build-asan/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
sanitize=${EVENFEED_SANITIZE:-OFF}
build=${BUILD_DIR:-build}
[ "$sanitize" = "ON" ] && build=${BUILD_DIR:-build-asan}
jobs=$(nproc)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEVENFEED_SANITIZE="$sanitize"
cmake --build "$build" -j"$jobs"
# mpirun refuses root unless told; CI and these machines run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$build" && ctest -j"$jobs" --output-on-failure --timeout 600
