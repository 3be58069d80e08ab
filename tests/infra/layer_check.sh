#!/usr/bin/env bash
# layer_check.sh <src folder> [<layer order file>]
#
# Proves from the sources that no layer of src/ includes one above it
# (docs/ARCHITECTURE.md, "Layers inside src/"). The order, top (most basic)
# first, is the LAYERS list below; a file in src/<layer>/ (any depth) may
# include "<other>/..." only when <other> is its own layer or comes before it.
# Files directly in src/ (the tern.h entry points, api*.cpp) may include any
# layer. A folder of src/ missing from the list, or an include of a folder
# that is no layer, fails too: a new layer must be placed in the order.
set -u
LAYERS="core tensor gguf graph cpu hal exec kv vocab model chat sample context"

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
    echo "usage: $0 <src folder>" >&2
    exit 2
fi
src=$1
failed=0
declare -A RANK
i=0
for l in $LAYERS; do RANK[$l]=$i; i=$((i + 1)); done
rank() { echo "${RANK[$1]:--1}"; }

for d in "$src"/*/; do
    layer=$(basename "$d")
    if [ "$(rank "$layer")" -lt 0 ]; then
        echo "FAIL: src/$layer is not in the layer order ($LAYERS)"
        failed=$((failed + 1))
    fi
done

checked=0
while IFS= read -r f; do
    rel=${f#"$src"/}
    case "$rel" in */*) ;; *) continue ;; esac   # src/*.cpp: the API, above every layer
    layer=${rel%%/*}
    own=${RANK[$layer]:--1}
    [ "$own" -ge 0 ] || continue
    while IFS= read -r inc; do
        other=${inc%%/*}
        r=${RANK[$other]:--1}
        if [ "$r" -lt 0 ]; then
            echo "FAIL: src/$rel includes \"$inc\": '$other' is no layer"
            failed=$((failed + 1))
        elif [ "$r" -gt "$own" ]; then
            echo "FAIL: src/$rel ($layer) includes \"$inc\" ($other, a layer above it)"
            failed=$((failed + 1))
        fi
        checked=$((checked + 1))
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_0-9]*\/[^"]*\)".*/\1/p' "$f")
done < <(find "$src" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) | sort)

if [ "$checked" -eq 0 ]; then
    echo "FAIL: no includes checked under $src"
    exit 1
fi
if [ "$failed" -gt 0 ]; then
    echo "$failed layer violations ($checked includes checked)"
    exit 1
fi
echo "PASS: $checked includes, no layer includes one above it ($LAYERS)"
