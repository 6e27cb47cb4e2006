#!/usr/bin/env bash
# Runs one mpirun for a test: tests/mpirun.sh MPIRUN [mpirun arguments...]
#
# Why a wrapper: ctest runs tests in parallel, and Open MPI 4.1's mpirun races with
# another mpirun starting at the same moment to create the shared session directory
# /tmp/ompi.<host>.<uid> ("mkdir ... File exists", orte_init fails). Each launch here
# gets a session directory base of its own, removed afterwards. It also gives the
# consent Open MPI needs to run as root (CI, containers) and lets tests start more
# ranks than this machine has cores.
set -u
mpirun=$1
shift
session=$(mktemp -d "${TMPDIR:-/tmp}/evenfeed-mpi.XXXXXX")
trap 'rm -rf "$session"' EXIT
export OMPI_MCA_orte_tmpdir_base="$session"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Under ASan (scripts/test.sh's asan stage): Open MPI's own allocations, kept until
# exit by design, are not our leaks; the slow unwinder sees through its frames.
here=$(cd "$(dirname "$0")" && pwd)
export LSAN_OPTIONS="suppressions=$here/lsan_mpi.supp:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
"$mpirun" --oversubscribe --mca btl self,tcp "$@"
