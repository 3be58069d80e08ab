#!/usr/bin/env bash
# hal_check.sh <libtern.a> absent|present
#
# With TERN_DEVICES empty the library holds no HAL code at all (issue 20):
# no symbol of namespace tern::hal, no tern_hal_* entry point, no object of
# src/hal/. In a build with devices the same look finds them (so the check is
# known to see what it looks for). NM names the nm to use.
set -u
NM=${NM:-nm}
lib=$1
want=$2
if [ ! -f "$lib" ]; then
    echo "FAIL: no archive $lib"
    exit 1
fi
syms=$("$NM" -C "$lib" 2>/dev/null | grep -E ' [TtDdBbRrW] ' | grep -E 'tern::hal::|tern_hal_' | sort -u)
objs=$(ar t "$lib" | grep -E '^(sched|graph_cache|sim_device|offload|regex|device|vk_[a-z_]+)\.cpp\.o$')
n_syms=$(printf '%s' "$syms" | grep -c . || true)
n_objs=$(printf '%s' "$objs" | grep -c . || true)
case "$want" in
    absent)
        if [ "$n_syms" -ne 0 ] || [ "$n_objs" -ne 0 ]; then
            echo "FAIL: $n_syms HAL symbols and $n_objs HAL objects in a build without devices:"
            printf '%s\n%s\n' "$syms" "$objs" | head -20
            exit 1
        fi
        echo "PASS: no HAL symbol or object in $lib" ;;
    present)
        if [ "$n_syms" -lt 20 ] || [ "$n_objs" -lt 5 ]; then
            echo "FAIL: a build with devices shows only $n_syms HAL symbols and $n_objs HAL objects"
            exit 1
        fi
        echo "PASS: $n_syms HAL symbols, $n_objs HAL objects in a build with devices" ;;
    *) echo "usage: $0 <libtern.a> absent|present"; exit 2 ;;
esac
