#!/bin/bash
# The licence at the top is MIT, and every piece of third-party data the
# repository carries (a file under examples/models/, a folder under
# tests/data/) is named with its licence in THIRD_PARTY.md.
# usage: license_check.sh SOURCE_DIR
root=${1:?usage: license_check.sh SOURCE_DIR}
fail=0
if ! head -1 "$root/LICENSE" 2>/dev/null | grep -qx 'MIT License' ||
   ! grep -q 'Permission is hereby granted, free of charge' "$root/LICENSE"; then
    echo "FAIL: LICENSE is missing or not the MIT licence"
    fail=1
fi
[ -f "$root/THIRD_PARTY.md" ] || { echo "FAIL: THIRD_PARTY.md is missing"; exit 1; }
names=0
for f in "$root"/examples/models/* "$root"/tests/data/*/; do
    [ -e "$f" ] || continue
    rel=${f#"$root"/}
    case "$rel" in */README.md) continue ;; esac
    names=$((names + 1))
    # Named as a table row: | `path` | ... | licence |
    if ! grep -qF "| \`$rel\` |" "$root/THIRD_PARTY.md"; then
        echo "FAIL: $rel is not named in THIRD_PARTY.md (with its licence)"
        fail=1
    fi
done
[ "$names" -gt 0 ] || { echo "FAIL: no third-party data found under $root (wrong folder?)"; fail=1; }
[ "$fail" -eq 0 ] && echo "OK: LICENSE is MIT; $names third-party paths named in THIRD_PARTY.md"
exit $fail
