#!/usr/bin/env bash
# Installs the build into a fresh prefix, then builds tests/package/consumer.cpp against
# it twice (CMake package, pkg-config) and runs both on a small dataset made by the
# installed `evenfeed` command.   tests/package/run.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/evenfeed" --version
"$prefix/bin/evenfeed" -q synth images "$work/src" --count 40 --classes 2 --max-size 96
"$prefix/bin/evenfeed" -q convert images "$work/src" "$work/data"

cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer" "$work/data" | tee "$work/out_cmake"
grep -qx "consumer: 24 samples of 40" "$work/out_cmake"

export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name evenfeed.pc)")
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
c++ -O1 "$here/consumer.cpp" -o "$work/consumer_pc" $(pkg-config --cflags --libs evenfeed)
"$work/consumer_pc" "$work/data" | tee "$work/out_pc"
grep -qx "consumer: 24 samples of 40" "$work/out_pc"
echo "package: CMake and pkg-config consumers built and ran"
