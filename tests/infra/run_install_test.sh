#!/usr/bin/env bash
# run_install_test.sh <build dir> <install_consumer source dir> <C compiler> <cmake> [extra C flags]
#
# Installs a built Tern into a fresh prefix, then builds and runs the same C
# consumer two ways, as a user of the install would:
#   1. a CMake project: find_package(tern CONFIG REQUIRED) + tern::tern;
#   2. the C compiler driver with the flags of
#      pkg-config --cflags --libs --static tern (no C++ runtime named anywhere).
# Extra C flags (the sanitizer flags of a TERN_SANITIZE build) go to that
# second build, since tern.pc does not carry them.
set -u

if [ $# -lt 4 ]; then
    echo "usage: $0 <build dir> <consumer dir> <C compiler> <cmake>" >&2
    exit 2
fi
build=$1
consumer=$2
cc=$3
cmake=$4
extra_cflags=${5:-}

passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

# --- install -------------------------------------------------------------------
if "$cmake" --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1; then
    pass "cmake --install $build --prefix $prefix"
else
    fail "cmake --install $build failed:"
    cat "$tmp/install.log"
    finish
fi
for f in include/tern.h include/tern_config.h; do
    [ -f "$prefix/$f" ] && pass "installed $f" || fail "missing $prefix/$f"
done
if [ -x "$prefix/bin/tern" ]; then
    pass "installed bin/tern"
    "$prefix/bin/tern" --version > /dev/null 2>&1 && pass "installed tern runs" || fail "installed tern does not run"
else
    fail "missing $prefix/bin/tern"
fi
lib=$(find "$prefix" -name libtern.a | head -1)
[ -n "$lib" ] && pass "installed ${lib#$prefix/}" || fail "no libtern.a under $prefix"

# --- 1. CMake package ----------------------------------------------------------
if "$cmake" -S "$consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_BUILD_TYPE=Release > "$tmp/cmake.log" 2>&1 &&
   "$cmake" --build "$tmp/cmake-build" >> "$tmp/cmake.log" 2>&1; then
    pass "find_package(tern) consumer builds"
    if "$tmp/cmake-build/consumer"; then
        pass "find_package(tern) consumer runs"
    else
        fail "find_package(tern) consumer exited with $?"
    fi
else
    fail "find_package(tern) consumer does not build:"
    cat "$tmp/cmake.log"
fi

# --- 2. pkg-config ---------------------------------------------------------------
if ! command -v pkg-config > /dev/null 2>&1; then
    fail "pkg-config is not installed: install it (apt-get install pkg-config) to check tern.pc"
    finish
fi
pcdir=$(dirname "$(find "$prefix" -name tern.pc | head -1)")
if ! flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs --static tern 2>&1); then
    fail "pkg-config cannot read tern.pc in $pcdir: $flags"
    finish
fi
echo "pkg-config --cflags --libs --static tern: $flags"
case "$flags" in
    *"$prefix"*) pass "tern.pc points into the install prefix" ;;
    *) fail "tern.pc does not point into the install prefix $prefix (is its prefix= fixed at configure time" \
            "instead of derived from \${pcfiledir}?)" ;;
esac
# shellcheck disable=SC2086  # the flags are meant to split into words
# Without --static too: libtern.a is the only library installed, so Libs must be enough.
plain=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs tern 2>&1)
# shellcheck disable=SC2086
if "$cc" $extra_cflags "$consumer/consumer.c" $plain -o "$tmp/pc-plain" > "$tmp/pc-plain.log" 2>&1; then
    pass "pkg-config --libs tern (no --static) links: $plain"
else
    fail "pkg-config --libs tern (no --static) does not link:"
    cat "$tmp/pc-plain.log"
fi
if "$cc" $extra_cflags "$consumer/consumer.c" $flags -o "$tmp/pc-consumer" > "$tmp/pc.log" 2>&1; then
    pass "pkg-config consumer builds with $cc (C driver, no libstdc++)"
    if "$tmp/pc-consumer"; then
        pass "pkg-config consumer runs"
    else
        fail "pkg-config consumer exited with $?"
    fi
else
    fail "pkg-config consumer does not build:"
    cat "$tmp/pc.log"
fi
finish
