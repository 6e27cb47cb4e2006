#!/usr/bin/env bash
# Builds oneTBB with ThreadSanitizer into PREFIX, for the tsan stage of scripts/test.sh.
#   scripts/tsan-tbb.sh PREFIX
# Why: Debian's libtbb is not instrumented, so TSan cannot see the synchronisation
# inside TBB's scheduler and reports every hand-over between a TBB worker and the
# waiting thread as a race. The same version's source as the installed libtbb-dev
# comes from Debian's source archive (through a private apt state: the system's apt
# configuration is not touched) and builds in well under a minute.
set -euo pipefail
prefix=$(realpath -m "$1")
[ -f "$prefix/lib/cmake/TBB/TBBConfig.cmake" ] && exit 0
version=$(dpkg-query -W -f='${Version}' libtbb-dev)
. /etc/os-release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
for suite in "$VERSION_CODENAME" "$VERSION_CODENAME-updates"; do
  echo "deb-src http://deb.debian.org/debian $suite main"
done > "$work/sources.list"
echo "deb-src http://deb.debian.org/debian-security $VERSION_CODENAME-security main" >> "$work/sources.list"
apt_opts=(-q -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$work/lists")
apt-get "${apt_opts[@]}" update > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; exit 1; }
(cd "$work" && apt-get "${apt_opts[@]}" --download-only source "onetbb=$version") \
  >> "$work/apt.log" 2>&1 || { cat "$work/apt.log"; exit 1; }
tar -xf "$work"/onetbb_*.orig.tar.* -C "$work"
src=$(find "$work" -maxdepth 1 -type d -iname 'onetbb-*' | head -1)
CC=clang CXX=clang++ cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTBB_SANITIZE=thread -DTBB_TEST=OFF -DTBBMALLOC_BUILD=OFF -DTBB_STRICT=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
cmake --build "$work/build" -j"$(nproc)" >> "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
cmake --install "$work/build" >> "$work/build.log" 2>&1
echo "tsan-tbb: oneTBB $version with ThreadSanitizer in $prefix"
