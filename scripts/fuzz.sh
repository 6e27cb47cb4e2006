#!/usr/bin/env bash
# Fuzzes every parser of outside bytes with libFuzzer (clang, ASan+UBSan), each target
# for SECONDS (default 60), starting from its seeds in tests/fuzz/corpus/<target>/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]        (BUILD_DIR=build-fuzz by default)
# Targets run one per core at a time (FUZZ_JOBS to change it; FUZZ_NO_BUILD=1 skips the
# build, for several invocations sharing one). New inputs found go to
# BUILD_DIR/corpus/<target>/ (not into the repository). A crash makes the script exit 1
# with the reproducer in BUILD_DIR/crashes/<target>/: fix the bug, then copy the
# reproducer into tests/fuzz/corpus/<target>/, where every build's tests run it from
# then on (fuzz_regress_<target>). Prints one JSON line per target.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(record manifest index jpeg tokens reencode checkpoint)
build=${BUILD_DIR:-build-fuzz}

# Reuses a build already configured for fuzzing (scripts/test.sh's build-asan).
if ! grep -q "^EVENFEED_FUZZ:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DEVENFEED_FUZZ=ON -DEVENFEED_CUDA=OFF -DEVENFEED_WERROR=OFF \
    -DEVENFEED_TORCH_EXAMPLE=OFF > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
else
  cmake "$build" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
if [ -z "${FUZZ_NO_BUILD:-}" ]; then  # FUZZ_NO_BUILD=1: several lanes share one build
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" > "$build.build.log" 2>&1 ||
    { tail -50 "$build.build.log"; exit 1; }
fi

# Fuzzes one target (one process); writes its result next to its log.
fuzz_one() {
  local t=$1 log="$build/fuzz_$1.log" result=ok
  mkdir -p "$build/corpus/$t" "$build/crashes/$t"
  "$build/tests/fuzz/fuzz_$t" "$build/corpus/$t" "tests/fuzz/corpus/$t" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$build/crashes/$t/" -print_final_stats=1 > "$log" 2>&1 || result=crash
  echo "$result" > "$build/fuzz_$t.result"
}

# One target per core at a time (FUZZ_JOBS to change it).
jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

status=0
for t in "${targets[@]}"; do
  log="$build/fuzz_$t.log"
  result=$(cat "$build/fuzz_$t.result")
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  echo "{\"target\": \"$t\", \"seconds\": $seconds, \"executions\": ${runs:-0}, \"edges\": ${cov:-0}, \"result\": \"$result\"}"
  if [ "$result" = crash ]; then
    status=1
    grep -m1 -A20 "ERROR: \|==ERROR\|runtime error\|uncaught exception\|deadly signal" "$log" || tail -30 "$log"
  fi
done
exit $status
