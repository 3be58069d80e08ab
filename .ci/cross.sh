#!/usr/bin/env bash
# Cross targets under qemu-user (toolchain/*.cmake): AArch64 (the neon,
# dotprod and i8mm kernel levels, chosen at run time), ARMv7 hard-float (the
# neon set where the CPU has NEON: SMULL integer dots) and RV64GC (the scalar
# set). For each target, built with its default toolchain file:
# a Release build without tern-bench, every ctest test but the full parity
# run (ctest runs each test program under the toolchain's emulator), then the
# parity test on a subset of the models:
#   stories260K, TinyStories-656K-Q8_0   real trained models: logits and all
#                                        greedy tokens, F32 and Q8_0 weights;
#   ktest-llama-Q4_0, -Q4_K_M, -Q8_0     the three quantized formats edge
#                                        models run most (legacy and K-quant
#                                        matmul paths, SDOT kernels on AArch64).
# The other models exercise the same code on x86 already. The tests above run
# under qemu -cpu max (AArch64: the i8mm level); the same AArch64 binaries
# then run on the other cores, where the level differs: Cortex-A53 and A72
# (ARMv8.0: neon), Cortex-A76 (dotprod): `tern --version` must name the
# level on each, and test_kernel_sets (every set the core runs against the
# scalar references, every repacked type with an odd row count), test_repack,
# test_decode and the parity test on two models must pass on the A72 and the
# A76 (the A53 runs the A72's code). The 64-bit targets leave out the programs
# labelled single_thread, the CLI tests and the KV cache test (armhf runs
# them but tern run's and tern info's end-to-end tests), riscv64 also the
# quantized formats against the shared models (x86-64's scalar pass). ARMv7: the
# level check under Cortex-A9 (NEON without VFPv4: scalar) and Cortex-A7
# (neon).
#
# Usage: .ci/cross.sh [arm64] [armhf] [riscv64]   (default: all three)
# Build folders: b-arm64, b-armhf, b-riscv64 beside this repository's sources.
# Test data: ../shared (TERN_SHARED_DIR); with CI=true (the default here)
# missing data is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export CI="${CI:-true}"
start=$SECONDS

shared="${TERN_SHARED_DIR:-$(cd .. && pwd)/shared}"
if [ ! -d "$shared/models" ] || [ ! -d "$shared/reference" ]; then
  if [ "$CI" = true ]; then
    echo "cross: test data not found in $shared (models/, reference/): required with CI=true" >&2
    exit 1
  fi
  echo "cross: test data not found in $shared: tests that need it report Skipped" >&2
fi
export TERN_SHARED_DIR="$shared"

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(arm64 armhf riscv64)

# Cross compilers and qemu-user (Debian packages), installed if missing.
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
for t in "${targets[@]}"; do
  case $t in
    arm64) cc=aarch64-linux-gnu-g++; pkg=g++-aarch64-linux-gnu; qemu=qemu-aarch64 ;;
    armhf) cc=arm-linux-gnueabihf-g++; pkg=g++-arm-linux-gnueabihf; qemu=qemu-arm ;;
    riscv64) cc=riscv64-linux-gnu-g++; pkg=g++-riscv64-linux-gnu; qemu=qemu-riscv64 ;;
    *) echo "cross: unknown target '$t' (arm64, armhf, riscv64)" >&2; exit 2 ;;
  esac
  command -v "$cc" >/dev/null 2>&1 || need+=("$pkg")
  command -v "$qemu" >/dev/null 2>&1 || need+=(qemu-user)
done
if [ ${#need[@]} -gt 0 ]; then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  echo "cross: installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

parity_models=(stories260K TinyStories-656K-Q8_0 ktest-llama-Q4_0 ktest-llama-Q4_K_M ktest-llama-Q8_0)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in "${targets[@]}"; do
  case $t in
    arm64) toolchain=aarch64-linux-gnu; emu=(qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max) ;;
    armhf) toolchain=arm-linux-gnueabihf; emu=(qemu-arm -L /usr/arm-linux-gnueabihf -cpu max) ;;
    riscv64) toolchain=riscv64-linux-gnu; emu=(qemu-riscv64 -L /usr/riscv64-linux-gnu) ;;
  esac
  b=b-$t
  t0=$SECONDS
  echo "=== cross $t: build ($toolchain)"
  cmake -B "$b" --toolchain "toolchain/$toolchain.cmake" -DCMAKE_BUILD_TYPE=Release -DTERN_BUILD_BENCH=OFF \
        -DTERN_SHARED_DIR="$shared" >/dev/null
  cmake --build "$b" -j2 >"$tmp/build-$t.log" 2>&1 || { tail -50 "$tmp/build-$t.log"; exit 1; }
  t1=$SECONDS
  echo "=== cross $t: ctest under ${emu[0]} (all but the full parity run)"
  if [ "$t" = armhf ]; then
    # 32-bit ARM (unsigned char, 32-bit size_t) runs everything but the CLI's
    # end-to-end runs of the program (tern run / tern info: 66 s under qemu),
    # whose option parsing and output x86-64 checks under every kernel set; the
    # chat and grammar CLI flows (text) run here.
    ctest --test-dir "$b" --output-on-failure -j2 -E '^(test_parity|test_cli|test_cli_info)$'
  else
    # The 64-bit targets leave out what armhf and x86-64 already run and what
    # does not depend on the target's arithmetic: the single-threaded text
    # programs (parsers, tokenizers, templates) and the CLI end-to-end tests;
    # and the KV cache operations (95-150 s under qemu, the long pole of the
    # step: sequence bookkeeping, copies and defragmentation of cells, which
    # armhf runs under qemu and x86-64 under every kernel set; the kernels
    # they call are test_kernel_sets' and test_decode's here).
    skip='^(test_parity|test_cli|test_cli_info|test_chat_cli|test_grammar_cli|test_grammar_sampler|test_kv_cache)$'
    # riscv64 runs the scalar set, as x86-64's TERN_KERNELS=scalar pass does: its
    # quantized-format tests against the shared models' llama.cpp data (120 s under
    # qemu) are that pass's; the target's own arithmetic is checked end to end by
    # test_decode, test_kernel_sets and the parity run below.
    [ "$t" = riscv64 ] &&
      skip='^(test_parity|test_cli|test_cli_info|test_chat_cli|test_grammar_cli|test_grammar_sampler|test_kv_cache|test_quants_shared|test_quants_k_shared)$'
    ctest --test-dir "$b" --output-on-failure -j2 -E "$skip" -LE single_thread
  fi
  t2=$SECONDS
  echo "=== cross $t: parity on ${parity_models[*]}"
  "${emu[@]}" "$b/bin/test_parity" 2 "${parity_models[@]}"
  t3=$SECONDS
  if [ "$t" = arm64 ]; then
    for cpu in cortex-a53:neon cortex-a72:neon cortex-a76:dotprod max:i8mm; do
      c=${cpu%%:*} want=${cpu#*:}
      run=(qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "$c")
      got=$("${run[@]}" "$b/bin/tern" --version | sed -n 's/^kernels: \([a-z0-9]*\).*/\1/p')
      echo "--- qemu-aarch64 -cpu $c: kernels $got"
      [ "$got" = "$want" ] || { echo "cross arm64: -cpu $c runs kernels '$got', want '$want'" >&2; exit 1; }
      [ "$c" = max ] && continue  # the whole suite ran there
      [ "$c" = cortex-a53 ] && continue  # ARMv8.0 as the A72: the same set, its tests run there
      "${run[@]}" "$b/bin/test_kernel_sets" | grep -E "^compiled|passed"
      "${run[@]}" "$b/bin/test_repack" | tail -1
      "${run[@]}" "$b/bin/test_decode" | tail -1
      "${run[@]}" "$b/bin/test_parity" 2 ktest-llama-Q4_0 ktest-llama-Q4_K_M | tail -1
    done
  fi
  if [ "$t" = armhf ]; then
    for cpu in cortex-a9:scalar cortex-a7:neon; do
      c=${cpu%%:*} want=${cpu#*:}
      got=$(qemu-arm -L /usr/arm-linux-gnueabihf -cpu "$c" "$b/bin/tern" --version | sed -n 's/^kernels: \([a-z0-9]*\).*/\1/p')
      echo "--- qemu-arm -cpu $c: kernels $got"
      [ "$got" = "$want" ] || { echo "cross armhf: -cpu $c runs kernels '$got', want '$want'" >&2; exit 1; }
    done
  fi
  echo "cross $t: build $((t1 - t0)) s, ctest $((t2 - t1)) s, parity $((t3 - t2)) s, other cores $((SECONDS - t3)) s, total $((SECONDS - t0)) s"
done
echo "cross: ${targets[*]} passed in $((SECONDS - start)) s"
