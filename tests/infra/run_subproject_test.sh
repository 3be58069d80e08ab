#!/usr/bin/env bash
# run_subproject_test.sh <tern source dir> <subproject_consumer dir> <cmake> <C compiler> <C++ compiler>
#
# Tern added to another CMake project (add_subdirectory / FetchContent) builds
# the library alone: configures tests/infra/subproject_consumer and checks that
# Tern's tree defines no test, bench or example target (TERN_BUILD_TESTS,
# TERN_BUILD_BENCH and TERN_BUILD_EXAMPLES default to OFF there), then that
# -DTERN_BUILD_EXAMPLES=ON brings the CLI back (the target walk sees targets).
set -u
if [ $# -lt 5 ]; then
    echo "usage: $0 <tern source> <consumer dir> <cmake> <cc> <cxx>" >&2
    exit 2
fi
src=$1 consumer=$2 cmake=$3 cc=$4 cxx=$5
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

configure() {  # <build dir> [cmake args...]
    local dir=$1; shift
    "$cmake" -S "$consumer" -B "$dir" -DTERN_SOURCE="$src" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_BUILD_TYPE=Release "$@" > "$dir.log" 2>&1
}

if configure "$tmp/plain"; then
    pass "add_subdirectory(tern) configures"
    targets=$(cat "$tmp/plain/tern_targets.txt")
    echo "Tern's targets as a subproject: $(echo $targets)"
    echo "$targets" | grep -qx tern && pass "the library target tern is defined" || fail "no target tern"
    extra=$(echo "$targets" | grep -E '^(test_|tern_cli|tern-|tern_simple|tern_firmware|fuzz_)' || true)
    [ -z "$extra" ] && pass "no test, bench or example target" || fail "targets a subproject should not get: $(echo $extra)"
    for opt in TERN_BUILD_TESTS TERN_BUILD_EXAMPLES TERN_BUILD_BENCH; do
        grep -q "^$opt:BOOL=OFF" "$tmp/plain/CMakeCache.txt" && pass "$opt defaults to OFF" || fail "$opt is not OFF"
    done
else
    fail "add_subdirectory(tern) does not configure:"
    cat "$tmp/plain.log"
fi

if configure "$tmp/on" -DTERN_BUILD_EXAMPLES=ON; then
    grep -qx tern_cli "$tmp/on/tern_targets.txt" && pass "-DTERN_BUILD_EXAMPLES=ON defines tern_cli" ||
        fail "-DTERN_BUILD_EXAMPLES=ON: no tern_cli among $(cat "$tmp/on/tern_targets.txt" | tr '\n' ' ')"
else
    fail "-DTERN_BUILD_EXAMPLES=ON does not configure:"
    cat "$tmp/on.log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
