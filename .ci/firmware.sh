#!/usr/bin/env bash
# Embedded targets (issue 9): the firmware example and the freestanding port.
#   1. x86-64: tern-firmware (static) runs; under strace it opens no model
#      file and makes no brk/mmap/mremap/open call after its start marker.
#   2. aarch64: the same program, built statically with the cross compiler,
#      runs under qemu-aarch64: output byte-identical to the native run.
#   3. Cortex-M: the freestanding library for M7, M4 and M55
#      (toolchain/arm-none-eabi.cmake) builds warning-free and passes
#      port_check; the M7 image (examples/firmware/board: MPS2 AN500) links
#      and runs under qemu-system-arm -M mps2-an500 with semihosting: output
#      byte-identical to the native run.
#   4. Stack: every public call's worst-case stack on Cortex-M7 (GCC
#      -fcallgraph-info, tests/tools/stack_bound.py) within the bound
#      docs/PORTING.md states.
# Build folders: b-fw-x86_64, b-fw-arm64, b-fw-m7, b-fw-m4, b-fw-m55.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stack_limit=12288   # docs/PORTING.md: "12 KB"

need=()
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user)
command -v qemu-system-arm >/dev/null 2>&1 || need+=(qemu-system-arm)
command -v arm-none-eabi-g++ >/dev/null 2>&1 || need+=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v python3 >/dev/null 2>&1 || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  echo "firmware: installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build() {   # build <folder> <cmake args...>: configure and build, warnings counted
  local b=$1
  shift
  cmake -B "$b" -DCMAKE_BUILD_TYPE=Release -DTERN_BUILD_EXAMPLES=ON -DTERN_BUILD_TESTS=OFF -DTERN_BUILD_BENCH=OFF "$@" >"$tmp/cfg.log" 2>&1 ||
    { cat "$tmp/cfg.log"; exit 1; }
  cmake --build "$b" -j2 --target tern_firmware >"$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log"; exit 1; }
  if grep -q "warning:" "$tmp/build.log"; then
    grep "warning:" "$tmp/build.log"; echo "firmware: $b builds with warnings"; exit 1
  fi
  # Static, like a firmware image: no program interpreter (the .elf of a bare-metal build has none either).
  local exe=$b/bin/tern-firmware
  [ -f "$exe" ] || exe=$exe.elf
  if [ -n "$(readelf -lW "$exe" | grep "program interpreter" || true)" ]; then
    echo "firmware: $exe is dynamically linked (expected -static)"; exit 1
  fi
}

echo "=== firmware: x86-64, static"
build b-fw-x86_64
./b-fw-x86_64/bin/tern-firmware > "$tmp/x86_64.txt"
cat "$tmp/x86_64.txt"
grep -qx "tern firmware: start" <(head -1 "$tmp/x86_64.txt") || { echo "firmware: no start marker"; exit 1; }
strace -f -e trace=open,openat,mmap,munmap,mremap,brk,write -o "$tmp/strace.log" ./b-fw-x86_64/bin/tern-firmware >/dev/null
if grep -E 'open(at)?\(.*\.gguf' "$tmp/strace.log"; then echo "firmware: a model file was opened"; exit 1; fi
marker=$(grep -n 'write(1, "tern firmware: start' "$tmp/strace.log" | head -1 | cut -d: -f1)
[ -n "$marker" ] || { echo "firmware: the start marker's write is not in the trace"; exit 1; }
after=$(tail -n +"$((marker + 1))" "$tmp/strace.log" | grep -vE ' write\(1, |\+\+\+ exited with 0' || true)
if [ -n "$after" ]; then echo "firmware: system calls after start other than writes:"; echo "$after"; exit 1; fi
echo "strace: $(tail -n +"$((marker + 1))" "$tmp/strace.log" | grep -c ' write(1, ') writes after the start marker and nothing else (no open, mmap, brk)"

echo "=== firmware: aarch64, static, under qemu-aarch64"
build b-fw-arm64 --toolchain toolchain/aarch64-linux-gnu.cmake
qemu-aarch64 -cpu max ./b-fw-arm64/bin/tern-firmware > "$tmp/arm64.txt"
cmp "$tmp/x86_64.txt" "$tmp/arm64.txt" || { echo "firmware: aarch64 output differs"; exit 1; }
echo "aarch64 output = x86-64 output ($(wc -c < "$tmp/arm64.txt") bytes)"
size b-fw-x86_64/bin/tern-firmware
aarch64-linux-gnu-size b-fw-arm64/bin/tern-firmware

echo "=== firmware: Cortex-M (arm-none-eabi, freestanding port)"
for core in m7 m4 m55; do
  flags=()
  # The M7's objects come with -fcallgraph-info's .ci files for the stack bound:
  # compiled without ccache (.ci/run uses it), which would not restore them from its cache.
  if [ "$core" = m7 ]; then flags=("-DCMAKE_CXX_FLAGS_MINSIZEREL=-Os -DNDEBUG -fcallgraph-info=su"); fi
  ( [ "$core" = m7 ] && export CCACHE_DISABLE=1
    build "b-fw-$core" --toolchain toolchain/arm-none-eabi.cmake -DTERN_CORTEX_M=$core -DCMAKE_BUILD_TYPE=MinSizeRel \
          "${flags[@]}" )
  NM=arm-none-eabi-nm AR=arm-none-eabi-ar READELF=arm-none-eabi-readelf \
    bash tests/infra/port_check.sh "b-fw-$core/lib/libtern.a" port/freestanding | tail -1
  arm-none-eabi-size "b-fw-$core/bin/tern-firmware.elf" | tail -1
done
# Semihosting output into a file (QEMU's own messages stay on the terminal).
timeout 600 qemu-system-arm -M mps2-an500 -nographic -monitor none -serial none \
  -chardev file,id=semi,path="$tmp/m7.txt" -semihosting-config enable=on,target=native,chardev=semi \
  -kernel b-fw-m7/bin/tern-firmware.elf || { echo "firmware: the Cortex-M7 image exited with $?"; cat "$tmp/m7.txt"; exit 1; }
cmp "$tmp/x86_64.txt" "$tmp/m7.txt" || { echo "firmware: Cortex-M7 output differs"; cat "$tmp/m7.txt"; exit 1; }
echo "Cortex-M7 (qemu mps2-an500) output = x86-64 output"

echo "=== stack bound of the public calls, Cortex-M7 (limit $stack_limit B)"
python3 tests/tools/stack_bound.py --limit "$stack_limit" --show 1 b-fw-m7/CMakeFiles/tern.dir > "$tmp/stack.txt" ||
  { cat "$tmp/stack.txt"; exit 1; }
head -12 "$tmp/stack.txt"; grep -A30 "^deepest" "$tmp/stack.txt" | grep -v "^largest public bound" | cut -c1-160
tail -1 "$tmp/stack.txt"

echo "firmware: ok in $((SECONDS - start)) s"
