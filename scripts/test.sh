#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, and run the whole test suite.
# CI runs exactly this (.ci/run). Three stages, each timed:
#   suite  the normal build (with CUDA when nvcc is found) and every test (build/)
#   asan   a clang build with ASan+UBSan (and libFuzzer's coverage, but for the planner's
#          library: cmake/Warnings.cmake): every test again, then each parser fuzzed
#          for EVENFEED_FUZZ_SECONDS (default 20) (build-asan/)
#   tsan   the loader and communicator tests, and the cap trial's two plans made at
#          once, under ThreadSanitizer (build-tsan/)
# EVENFEED_TEST_STAGES picks stages, e.g. EVENFEED_TEST_STAGES=suite for a quick run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
stages=${EVENFEED_TEST_STAGES:-suite asan tsan}
jobs=$(nproc)
# mpirun refuses root unless told; CI and these machines run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

stage() { echo "== $1: $(date +%T)"; }

# Sanitizer builds: clang at -O1 (fast to build, still catches everything), no CUDA
# (nvcc's code is not instrumented; the suite stage builds it), no libtorch example.
configure_sanitized() {
  CC=clang CXX=clang++ cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DEVENFEED_CUDA=OFF -DEVENFEED_WERROR=OFF \
    -DEVENFEED_TORCH_EXAMPLE=OFF "${@:2}" > "$1.configure.log"
}

if [[ " $stages " == *" suite "* ]]; then
  stage suite
  build=${BUILD_DIR:-build}
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cmake --build "$build" -j"$jobs"
  (cd "$build" && ctest -j"$jobs" --output-on-failure --timeout 600)
fi

if [[ " $stages " == *" asan "* ]]; then
  stage "asan (ASan+UBSan suite, then fuzzing)"
  configure_sanitized build-asan -DEVENFEED_FUZZ=ON
  cmake --build build-asan -j"$jobs" > build-asan.build.log || { tail -40 build-asan.build.log; exit 1; }
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
  (cd build-asan && ctest -j"$jobs" --output-on-failure --timeout 900)
  BUILD_DIR=build-asan bash scripts/fuzz.sh "${EVENFEED_FUZZ_SECONDS:-20}"
fi

if [[ " $stages " == *" tsan "* ]]; then
  stage "tsan (loader and communicator tests, the cap trial's plans at once)"
  bash scripts/tsan-tbb.sh build-tsan-tbb  # oneTBB instrumented too (see that script)
  configure_sanitized build-tsan -DEVENFEED_TSAN=ON -DTBB_DIR="$PWD/build-tsan-tbb/lib/cmake/TBB"
  cmake --build build-tsan -j"$jobs" --target loader_tests comm_tests comm_fault_tests comm_fault_probe \
    bucketing_tests \
    > build-tsan.build.log || { tail -40 build-tsan.build.log; exit 1; }
  export TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp"
  (cd build-tsan && ctest -j"$jobs" --output-on-failure --timeout 900 \
    -R "^(Loader|ReadFaults|comm_mpi|CommunicatorFaults|LumpyTrial\.KeepsTheSameCapWhenBothArePlannedAtOnce)")
fi
stage done
