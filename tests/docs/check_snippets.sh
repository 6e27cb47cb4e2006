#!/usr/bin/env bash
# Every code block of a guide marked `<!-- snippet: FILE#NAME -->` must be the text
# between `// [snippet:NAME]` and `// [/snippet]` in FILE (relative to the repository
# root), so the guide shows the code the build compiles.
#   tests/docs/check_snippets.sh REPO_ROOT GUIDE.md
set -euo pipefail
root=$1 guide=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checked=0 failed=0
while IFS= read -r marker; do
  ref=${marker#*snippet: }
  ref=${ref% -->}
  file=${ref%#*} name=${ref#*#}
  [ -f "$root/$file" ] || { echo "$guide: snippet $ref: no file $file"; failed=1; continue; }
  awk -v m="$marker" '$0 == m { grab = 1; next }
       grab && /^```cpp$/ { inside = 1; next }
       inside && /^```$/ { exit }
       inside { print }' "$guide" > "$work/guide"
  awk -v n="// [snippet:$name]" 'index($0, n) { inside = 1; next }
       inside && index($0, "// [/snippet]") { exit }
       inside { print }' "$root/$file" > "$work/code"
  if [ ! -s "$work/code" ]; then
    echo "$guide: snippet $ref: no [snippet:$name] block in $file"; failed=1
  elif ! diff -u "$work/code" "$work/guide" > "$work/diff"; then
    echo "$guide: snippet $ref differs from $file:"
    cat "$work/diff"; failed=1
  fi
  checked=$((checked + 1))
done < <(grep -E '^<!-- snippet: .+#.+ -->$' "$guide")
echo "$checked snippets checked"
[ "$checked" -gt 0 ] && [ "$failed" = 0 ]
