#!/usr/bin/env bash
# Runs the guide's snippets (docs_snippets) on a small image and token dataset, alone
# and on two ranks, and requires the same data-parallel mean from both.
#   tests/docs/snippets.sh EVENFEED DOCS_SNIPPETS MPIRUN...
set -euo pipefail
evenfeed=$1 snippets=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$evenfeed" -q synth images "$work/isrc" --count 150 --classes 3 --max-size 120 >/dev/null
"$evenfeed" -q convert images "$work/isrc" "$work/images" >/dev/null
"$evenfeed" -q synth tokens "$work/t.jsonl" --count 400 --max-length 2000 >/dev/null
"$evenfeed" -q convert tokens "$work/t.jsonl" "$work/tokens" >/dev/null
"$snippets" "$work/images" "$work/tokens" 2>/dev/null | tee "$work/one"
"$@" -np 2 "$snippets" "$work/images" "$work/tokens" 2>/dev/null > "$work/two"
one=$(grep '^ddp mean' "$work/one")
[ "$(grep -c "^$one\$" "$work/two")" = 2 ] || { echo "two ranks disagree with one:"; cat "$work/two"; exit 1; }
echo "two ranks: $one"
