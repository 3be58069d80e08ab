#!/usr/bin/env bash
# readme_generate_check.sh <tern source dir> <cmake>
#
# The README's generate command builds only what it runs: its build step names
# a target (--target tern_cli), and on a fresh configuration (the README's own
# cmake flags, Ninja) that target needs no test, bench or other example
# program: `ninja -t commands` lists every command the target would run.
set -u
src=$1 cmake=$2
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# The first command of the README that runs ./build/bin/tern run.
line=$(grep -m1 -E '^cmake -B build .*&& \./build/bin/tern run ' "$src/README.md")
if [ -z "$line" ]; then
    echo "FAIL: no generate command (cmake -B build ... && ./build/bin/tern run ...) in README.md"
    exit 1
fi
echo "README: $line"
configure_args=$(echo "$line" | sed -E 's/^cmake -B build ([^&]*)&&.*/\1/')
build_step=$(echo "$line" | grep -oE 'cmake --build build [^&]*')
targets=$(echo "$build_step" | grep -oE -- '--target [^&]*' | sed -E 's/--target //')
[ -n "$targets" ] && pass "the build step names its targets: $targets" || fail "the build step builds everything: $build_step"

if ! command -v ninja > /dev/null 2>&1; then
    if [ "${CI:-}" = "true" ]; then fail "ninja is not installed (apt-get install ninja-build)"; else
        echo "skipped: ninja is not installed"; exit 77; fi
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # shellcheck disable=SC2086  # the README's flags split into words
    if "$cmake" -S "$src" -B "$tmp/build" -G Ninja $configure_args > "$tmp/configure.log" 2>&1; then
        # shellcheck disable=SC2086
        ninja -C "$tmp/build" -t commands $targets > "$tmp/commands" 2>&1 || fail "ninja -t commands $targets: $(cat "$tmp/commands")"
        n=$(wc -l < "$tmp/commands")
        bad=$(grep -E 'tests/|bench/|bin/test_|examples/(simple|firmware)/' "$tmp/commands" | head -3)
        [ -z "$bad" ] && pass "$n commands, none for a test, bench or other example program" ||
            fail "the generate command builds more than it runs: $bad"
        grep -qE -- '-o bin/tern( |$)' "$tmp/commands" && pass "it links bin/tern" || fail "it does not link bin/tern"
    else
        fail "a fresh configure with the README's flags failed:"
        cat "$tmp/configure.log"
    fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
