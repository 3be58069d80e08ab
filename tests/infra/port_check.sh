#!/usr/bin/env bash
# port_check.sh <libtern.a> <port source folder>
#
# Proves from the symbol tables that port/ is the library's only OS boundary
# (issue 9): every object of the archive that is not built from the port
# folder may need from outside the archive only
#   - C library functions that format or handle memory and strings
#     (mem*, str*, snprintf/vsnprintf, strto*), none that touch a stream,
#     a file, the heap, the environment, a thread or the clock;
#   - libm functions (exp, log, pow, sqrt, ...: names ending in f or not);
#   - compiler-runtime helpers (__stack_chk_*, __aeabi_*, __atomic_*, libgcc's
#     AArch64 outline atomics __aarch64_* (LSE or LL/SC chosen at run time), libgcc
#     arithmetic, sanitizer and coverage instrumentation) and the linker's
#     _GLOBAL_OFFSET_TABLE_;
# and defines no thread-local storage (TLS lives in the port: the last-error
# buffer). Objects of the port folder (one per .cpp there) are exempt.
# NM, AR and READELF name the binutils to use (a cross target's: arm-none-eabi-nm ...).
set -u
NM=${NM:-nm}
AR=${AR:-ar}
READELF=${READELF:-readelf}

if [ $# -lt 2 ]; then
    echo "usage: $0 <libtern.a> <port source folder>" >&2
    exit 2
fi
lib=$1
port_dir=$2

passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -f "$lib" ] || [ "$("$AR" t "$lib" 2>/dev/null | wc -l)" -eq 0 ]; then
    fail "$lib is not a readable archive with objects"
    echo "$passed passed, $failed failed"
    exit 1
fi

# Members built from the port folder: <name>.cpp.o / .cpp.obj (CMake) or <name>.o.
: > "$tmp/port_members"
for f in "$port_dir"/*.cpp "$port_dir"/*.c; do
    [ -f "$f" ] || continue
    b=$(basename "$f"); b=${b%.*}
    printf '%s\n' "$b.cpp.o" "$b.c.o" "$b.o" "$b.cpp.obj" "$b.c.obj" "$b.obj" >> "$tmp/port_members"
done
"$AR" t "$lib" | sort > "$tmp/members"
grep -Fxf "$tmp/port_members" "$tmp/members" > "$tmp/port_in_lib" || true
n_port=$(wc -l < "$tmp/port_in_lib")
echo "archive: $lib ($(wc -l < "$tmp/members") objects, $n_port from $port_dir)"
dups=$(sort "$tmp/members" | uniq -d)
if [ -n "$dups" ]; then
    fail "object names appear twice in the archive (cannot tell port objects from others): $dups"
fi

"$NM" -P -g --defined-only "$lib" 2>/dev/null | awk 'NF >= 2 && $1 !~ /:$/ { print $1 }' | sort -u > "$tmp/defined"

# Undefined symbols per member, "member symbol" (nm -A -P: "lib.a[member]: sym U").
"$NM" -A -P -u "$lib" 2>/dev/null | awk '{ m = $1; sub(/^.*\[/, "", m); sub(/\]:$/, "", m); print m, $2 }' |
    sort -u > "$tmp/undef"

allowed='^(mem(cpy|move|set|cmp|chr)|str(len|nlen|cmp|ncmp|chr|rchr|str|cpy|ncpy|spn|cspn|tol|toll|toul|toull|tod|tof)|v?snprintf'
allowed+='|(exp|exp2|expm1|log|log2|log10|log1p|pow|sqrt|cbrt|sin|cos|sincos|tan|tanh|atan|atan2|erf|fma|fmax|fmin|fabs|floor|ceil|round|lround|nearbyint|rint|trunc|ldexp|frexp|fmod|modf|hypot)f?'
allowed+='|__stack_chk_(fail|guard)|__aeabi_[a-z0-9_]+|__atomic_[a-z0-9_]+|__aarch64_(cas|swp|ldadd|ldclr|ldeor|ldset)[0-9]+_[a-z_]+|__sync_[a-z0-9_]+|__(u|)(div|mod|mul)[a-z]+[0-9]|__(extend|trunc|fix|float)[a-z0-9]+'
allowed+='|__(add|sub|mul|div|neg|cmp|eq|ne|lt|le|gt|ge|unord)[sdt]f[23]|__clz[sd]i2|__ctz[sd]i2|__popcount[sd]i2|__bswap[sd]i2'
allowed+='|_GLOBAL_OFFSET_TABLE_|__dso_handle|__x86\.get_pc_thunk\.[a-z]+|__cpu_model|__cpu_indicator_init'
# Sanitizer and coverage instrumentation (TERN_SANITIZE builds): the compiler's, not the code's.
allowed+='|__(asan|ubsan|tsan|msan|lsan|sanitizer|hwasan)_[A-Za-z0-9_]+|__(start|stop)___sancov_[a-z_]+|__sancov_[a-z_]+)$'

: > "$tmp/bad"
while read -r member sym; do
    grep -Fxq "$member" "$tmp/port_in_lib" && continue
    grep -Fxq "$sym" "$tmp/defined" && continue
    echo "$sym" | grep -Eq "$allowed" && continue
    echo "  $member: $sym" >> "$tmp/bad"
done < "$tmp/undef"
if [ -s "$tmp/bad" ]; then
    fail "objects outside $port_dir call the OS or C library directly (go through port.h):"
    cat "$tmp/bad"
else
    pass "outside $port_dir: only formatting, memory/string, libm and compiler-runtime symbols are needed"
fi

# Thread-local storage outside the port ("File: lib.a(member)" then symbol rows of type TLS).
"$READELF" -s -W "$lib" 2>/dev/null | awk '
    /^File: / { m = $2; sub(/^.*\(/, "", m); sub(/\)$/, "", m) }
    $4 == "TLS" && $7 != "UND" { print m, $8 }' > "$tmp/tls_all"
: > "$tmp/tls"
while read -r member sym; do
    grep -Fxq "$member" "$tmp/port_in_lib" || echo "  $member: $sym" >> "$tmp/tls"
done < "$tmp/tls_all"
if [ -s "$tmp/tls" ]; then
    fail "thread-local storage outside $port_dir:"
    cat "$tmp/tls"
else
    pass "no thread-local storage outside $port_dir"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
