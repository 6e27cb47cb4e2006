#!/usr/bin/env bash
# Runs examples/libtorch/train_cnn as a user would, on a small dataset it first makes:
#   one rank, two epochs: every loss is finite and the loss falls;
#   two ranks under mpirun: both end with the same weights (gradients averaged right).
#   tests/examples/libtorch_cnn.sh EVENFEED TRAIN_CNN MPIRUN...
set -euo pipefail
evenfeed=$1 train_cnn=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$evenfeed" -q synth images "$work/src" --count 600 --classes 4 --max-size 200 >/dev/null
"$evenfeed" -q convert images "$work/src" "$work/data" >/dev/null

"$train_cnn" --data "$work/data" --epochs 2 --size 48 --seed 3 >"$work/one" 2>/dev/null
awk '/^step / { n++; loss[n] = $6; if ($6 != $6 + 0 || $6 ~ /nan|inf/) bad = 1 }
     END {
       if (n != 38) { print "expected 38 steps, saw " n; exit 1 }
       if (bad) { print "a loss was not finite"; exit 1 }
       for (i = 1; i <= 5; i++) { first += loss[i]; last += loss[n - 5 + i] }
       printf "mean loss of the first 5 steps %.3f, of the last 5 %.3f\n", first / 5, last / 5
       if (last > 0.7 * first) { print "the loss did not fall"; exit 1 }
     }' "$work/one"

"$@" -np 2 "$train_cnn" --data "$work/data" --epochs 1 --size 48 --seed 3 >"$work/two" 2>/dev/null
sums=$(grep -o '"weight_checksum": [^}]*' "$work/two" | sort -u | wc -l)
ranks=$(grep -c '"world_size": 2' "$work/two")
echo "two ranks: $ranks reports, $sums distinct weight checksum(s)"
[ "$ranks" = 2 ] && [ "$sums" = 1 ]
