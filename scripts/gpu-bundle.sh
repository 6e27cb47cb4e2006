#!/usr/bin/env bash
# Packs what the GPU checks need into one archive, for a machine that has a GPU but
# none of our Debian packages and no network to fetch them (a borrowed GPU machine
# with only the CUDA driver, CUDA and Python on it):
#   - the stripped `evenfeed` command and the GPU test binaries (cuda_tests, nccl_tests,
#     gpu_trainer_tests);
#   - every shared library they load, except the C library family and the CUDA driver
#     (both must come from the machine) and NCCL (its libnccl.so.2 is taken from the
#     machine too: a GPU machine has one, and ours is 200 MB); cuBLAS is not linked
#     (cuda/gpu_blas.h loads it with dlopen) and comes from the machine as well;
#   - Open MPI's launcher, daemon, plugins and help files, laid out under a prefix that
#     OPAL_PREFIX relocates;
#   - libevenfeed_cuda.a, for cuobjdump to list the GPU code built into it;
#   - scripts/gpu-check.sh, which runs every check there, and the PyTorch anchor it runs
#     where that machine's python3 has torch (bench/gpu_train_vs_torch.sh, torch_ddp_train.py).
#
#   scripts/gpu-bundle.sh [BUILD_DIR] [ARCHIVE]     (defaults: build, .gpu/bundle.tar.xz)
#
# The archive is xz-compressed (about 15 MB). On the GPU machine:
#   tar -xJf .gpu/bundle.tar.xz -C /tmp && /tmp/evenfeed-gpu/gpu-check.sh OUT_DIR
set -euo pipefail
build=${1:-build}
archive=${2:-.gpu/bundle.tar.xz}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/evenfeed-gpu
mkdir -p "$root/bin" "$root/lib"

binaries=("$build/evenfeed" "$build/tests/cuda_tests" "$build/tests/nccl_tests"
          "$build/tests/gpu_trainer_tests")
for b in "${binaries[@]}"; do
  [ -x "$b" ] || { echo "gpu-bundle: $b is missing; build first (cmake --build $build)" >&2; exit 1; }
  strip -o "$root/bin/$(basename "$b")" "$b"
done

# Libraries the machine provides: glibc's, the CUDA driver's, NCCL.
provided='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libcuda\.so|libnccl\.so)'
ompi_lib=/usr/lib/x86_64-linux-gnu/openmpi/lib
copy_libraries() {
  ldd "$@" | awk '$3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
    [[ $name =~ $provided ]] && continue
    [ -e "$root/lib/$name" ] || cp -L "$path" "$root/lib/$name"
  done
}
copy_libraries "${binaries[@]}"

# Open MPI, relocated: OPAL_PREFIX replaces the /usr prefix it was configured with,
# so plugins, help files and configuration are found under $root/ompi.
ompi=$root/ompi
mkdir -p "$ompi/bin" "$ompi/lib/x86_64-linux-gnu/openmpi/lib" "$ompi/share" "$ompi/etc"
cp -L /usr/bin/orterun /usr/bin/orted "$ompi/bin/"
ln -s orterun "$ompi/bin/mpirun"
cp -rL "$ompi_lib/openmpi3" "$ompi/lib/x86_64-linux-gnu/openmpi/lib/"
cp -rL /usr/share/openmpi "$ompi/share/"
cp -rL /etc/openmpi "$ompi/etc/"
copy_libraries "$ompi/bin/orterun" "$ompi/bin/orted" "$ompi"/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so

cp "$build/cuda/libevenfeed_cuda.a" "$root/lib/"
cp "$(dirname "$0")/gpu-check.sh" "$root/"
mkdir -p "$root/bench"
cp "$(dirname "$0")/../bench/gpu_train_vs_torch.sh" "$(dirname "$0")/../bench/torch_ddp_train.py" "$root/bench/"
mkdir -p "$(dirname "$archive")"
tar -C "$stage" -cJf "$archive" evenfeed-gpu
echo "gpu-bundle: $archive ($(du -h "$archive" | cut -f1))"
