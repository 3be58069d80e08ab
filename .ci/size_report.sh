#!/usr/bin/env bash
# Size report (issue 9 item 7): builds the library, the static `tern` CLI and
# the firmware example for each target, full and trimmed, and writes
# docs/SIZE.md (text/data/bss as GNU size reports them: text includes
# read-only data; the firmware's text is given without the embedded model).
#
#   full     every architecture and block format (the default build)
#   trimmed  llama only; F32, F16 (KV cache), Q4_0, Q8_0; -Os
#
# Targets: x86-64 (native), aarch64 (toolchain/aarch64-linux-gnu.cmake) and
# Cortex-M7 (toolchain/arm-none-eabi.cmake, freestanding port: no CLI).
# Goals: libtern.a text <= 1.25 MiB on x86-64 (issue 22; issue 9's 1 MB
# before the avxvnni set), <= 400 KB trimmed for Cortex-M, the firmware
# example without the model <= 250 KB (issue 9); the report says by how much
# each is met or missed, and each kernel set's share of the full libraries.
# The HAL: an x86-64 library with TERN_DEVICES=sim;vulkan (sim alone where
# glslc or the Vulkan headers are missing), the core and each device apart.
#
# Usage: .ci/size_report.sh [output file]   (default docs/SIZE.md)
# Build folders: b-size-<target>-<variant>.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/SIZE.md}
start=$SECONDS

need=()
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need+=(g++-aarch64-linux-gnu)
command -v arm-none-eabi-g++ >/dev/null 2>&1 || need+=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib)
if [ ${#need[@]} -gt 0 ]; then
  echo "size: installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

model=examples/models/stories260K.gguf
model_bytes=$(stat -c %s "$model")
trim=(-DTERN_ARCHS=llama "-DTERN_TYPES=F32;F16;Q4_0;Q8_0" -DCMAKE_BUILD_TYPE=MinSizeRel)
rows=()
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

kib() { awk -v b="$1" 'BEGIN { printf "%.1f KiB", b / 1024 }'; }

# measure <target> <variant> <size tool> <build folder>: one table row.
measure() {
  local target=$1 variant=$2 size=$3 b=$4
  read -r lt ld lb < <("$size" -t "$b/lib/libtern.a" | tail -1 | awk '{ print $1, $2, $3 }')
  local cli="n/a (no OS)" fw="n/a"
  if [ -f "$b/bin/tern" ]; then
    cli=$(kib "$("$size" "$b/bin/tern" | tail -1 | awk '{ print $1 }')")
  fi
  local fwbin=$b/bin/tern-firmware
  [ -f "$fwbin" ] || fwbin=$b/bin/tern-firmware.elf
  if [ -f "$fwbin" ]; then
    local ft
    ft=$("$size" "$fwbin" | tail -1 | awk '{ print $1 }')
    fw="$(kib $((ft - model_bytes))) (+ $(kib "$model_bytes") model)"
    eval "fw_${target//-/_}_${variant}=$((ft - model_bytes))"
  fi
  eval "lib_${target//-/_}_${variant}=$lt"
  rows+=("| $target | $variant | $(kib "$lt") | $ld | $lb | $cli | $fw |")
  [ "$variant" = full ] && shares "$target" "$size" "$b/lib/libtern.a" "$lt"
  echo "size: $target $variant: libtern.a text $lt, data $ld, bss $lb; tern $cli; firmware $fw"
}

# shares <target> <size tool> <libtern.a> <its text>: the text of each kernel
# set's own objects (x86/*_<set>.cpp, arm/*_<set>.cpp, compiled with the
# set's flags) and of the rest (everything else, the scalar references
# included), one table row each.
set_rows=()
shares() {
  local target=$1 size=$2 lib=$3 total=$4
  "$size" "$lib" | awk -v t="$target" -v total="$total" '
    NR > 1 { set = "baseline (scalar set, shared code)"
             if (match($6, /_(avx2|avxvnni|avx512|neon|dotprod|i8mm)\.cpp\.o/)) set = substr($6, RSTART + 1, RLENGTH - 7)
             text[set] += $1; n[set]++ }
    END { for (s in text) printf "| %s | %s | %d | %.1f KiB | %.1f%% |\n", t, s, n[s], text[s] / 1024, 100 * text[s] / total }' |
    sort > "$tmp/shares"
  while read -r row; do set_rows+=("$row"); done < "$tmp/shares"
}

# build <target> <variant> <cmake args...>
build() {
  local target=$1 variant=$2
  shift 2
  local b=b-size-$target-$variant
  cmake -B "$b" -DTERN_BUILD_TESTS=OFF -DTERN_BUILD_BENCH=OFF -DTERN_BUILD_EXAMPLES=ON "$@" >"$tmp/cfg.log" 2>&1 ||
    { cat "$tmp/cfg.log"; exit 1; }
  cmake --build "$b" -j2 >"$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log"; exit 1; }
  echo "$b"
}

static=(-DCMAKE_EXE_LINKER_FLAGS=-static)
b=$(build x86-64 full -DCMAKE_BUILD_TYPE=Release "${static[@]}");            measure x86-64 full size "$b"
b=$(build x86-64 trimmed "${trim[@]}" "${static[@]}");                      measure x86-64 trimmed size "$b"
a64=(--toolchain toolchain/aarch64-linux-gnu.cmake)
b=$(build aarch64 full "${a64[@]}" -DCMAKE_BUILD_TYPE=Release "${static[@]}"); measure aarch64 full aarch64-linux-gnu-size "$b"
b=$(build aarch64 trimmed "${a64[@]}" "${trim[@]}" "${static[@]}");          measure aarch64 trimmed aarch64-linux-gnu-size "$b"
m7=(--toolchain toolchain/arm-none-eabi.cmake)
b=$(build cortex-m7 full "${m7[@]}" -DCMAKE_BUILD_TYPE=MinSizeRel);          measure cortex-m7 full arm-none-eabi-size "$b"
b=$(build cortex-m7 trimmed "${m7[@]}" "${trim[@]}");                        measure cortex-m7 trimmed arm-none-eabi-size "$b"

# The accelerator HAL's own size (issues 20 and 21): the x86-64 library with
# the devices, their src/hal objects summed (the core's HAL glue outside
# src/hal is in the delta against the library without devices). The Vulkan
# device is built in where glslc and the Vulkan headers are present; its text
# includes its embedded SPIR-V, measured apart.
if command -v glslc >/dev/null 2>&1 && [ -f /usr/include/vulkan/vulkan_core.h ]; then
  hal_devices="sim;vulkan"
  b=$(build x86-64 devices -DCMAKE_BUILD_TYPE=Release "-DTERN_DEVICES=$hal_devices" -DTERN_BUILD_EXAMPLES=OFF)
  vk_variants=$(grep -c '^    VKS_' "$b/vkshaders/hal/vulkan/vk_shaders.h")
else
  echo "size: no glslc or Vulkan headers: the Vulkan device is not measured"
  hal_devices=sim
  b=$(build x86-64 sim -DCMAKE_BUILD_TYPE=Release -DTERN_DEVICES=sim -DTERN_BUILD_EXAMPLES=OFF)
fi
read -r hal_lib _ < <(size -t "$b/lib/libtern.a" | tail -1 | awk '{ print $1 }')
hal_core=0; hal_sim=0; hal_vk=0; hal_spirv=0
while read -r t _ _ _ _ f; do
  case "$f" in
    sim_device.cpp.o*) hal_sim=$((hal_sim + t)) ;;
    device.cpp.o*|sched.cpp.o*|graph_cache.cpp.o*|offload.cpp.o*|regex.cpp.o*) hal_core=$((hal_core + t)) ;;
    vk_shaders.cpp.o*) hal_spirv=$((hal_spirv + t)) ;;
    vk_*.cpp.o*) hal_vk=$((hal_vk + t)) ;;
  esac
done < <(size "$b/lib/libtern.a" | tail -n +2 | awk '{ print $1, $2, $3, $4, $5, $6 }' | sed 's/ (ex .*)//')
echo "size: HAL ($hal_devices): core $hal_core, sim device $hal_sim, Vulkan code $hal_vk, SPIR-V $hal_spirv, library $hal_lib"

# goal <what> <bytes> <limit bytes>
goal() {
  local what=$1 got=${2:-} limit=$3
  if [ -z "$got" ]; then
    echo "- $what: not measured (not built)"
  elif [ "$got" -le "$limit" ]; then
    echo "- $what: **met**, $(kib "$got") of $(kib "$limit") ($(( (limit - got) * 100 / limit ))% to spare)"
  else
    echo "- $what: **missed** by $(kib $((got - limit))): $(kib "$got") against $(kib "$limit")"
  fi
}

{
  echo "# Sizes"
  echo
  echo "Generated by \`.ci/size_report.sh\` (CI runs it); do not edit by hand."
  echo "Compilers: $(gcc --version | head -1); $(arm-none-eabi-gcc --version | head -1)."
  echo
  echo "*full*: every architecture and block format; x86-64 compiles the scalar, AVX2, AVX-VNNI"
  echo "and AVX-512 kernel sets (run-time dispatch), aarch64 NEON, Cortex-M7 scalar (freestanding"
  echo "port, -Os). *trimmed*: llama only, F32/F16/Q4_0/Q8_0, -Os. Bytes as GNU \`size\`"
  echo "counts them (text includes read-only data). Programs are linked statically; the"
  echo "firmware example embeds stories260K.gguf ($(kib "$model_bytes")), listed apart."
  echo
  echo "| target | build | libtern.a text | data | bss | \`tern\` CLI text (static) | firmware example text |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "## The accelerator HAL (\`TERN_DEVICES\`, x86-64 Release)"
  echo
  echo "The default build has none of it (\`tests/infra/hal_check.sh\`). With \`TERN_DEVICES=$hal_devices\`:"
  echo "the HAL core (src/hal: registry, placement, scheduler, graph cache, regex) $(kib "$hal_core"),"
  echo "the sim device $(kib "$hal_sim")$(
    [ "$hal_devices" = sim ] || echo ", the Vulkan device's code $(kib "$hal_vk") and its embedded SPIR-V $(kib "$hal_spirv") ($vk_variants shader variants)"
  ); libtern.a text $(kib "$hal_lib") against $(kib "${lib_x86_64_full:-0}") without devices."
  if [ "$hal_devices" = sim ]; then
    echo "(The Vulkan device is not measured: no glslc or Vulkan headers on the machine that ran the report.)"
  fi
  echo
  echo "## Kernel sets"
  echo
  echo "Kernel sets' shares of the full libraries: the objects compiled with a set's"
  echo "flags (\`x86/*_<set>.cpp\`, \`arm/*_<set>.cpp\`); the scalar set (the references in"
  echo "\`tensor/\`, \`cpu/kernels/*_ref.cpp\`) and the layouts' repack code are in the baseline row."
  echo
  echo "| target | kernel set | objects | text | share of libtern.a |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${set_rows[@]}"
  echo
  echo "## Goals (issues 9 and 22)"
  echo
  goal "libtern.a text on x86-64 (full) <= 1.25 MiB (issue 22; 1 MB before the avxvnni set)" "${lib_x86_64_full:-}" $((1280 * 1024))
  goal "libtern.a text for Cortex-M, trimmed <= 400 KB" "${lib_cortex_m7_trimmed:-}" $((400 * 1024))
  goal "firmware image without the model (Cortex-M7, trimmed, with newlib-nano) <= 250 KB" "${fw_cortex_m7_trimmed:-}" $((250 * 1024))
  goal "firmware image without the model (Cortex-M7, full) <= 250 KB" "${fw_cortex_m7_full:-}" $((250 * 1024))
  goal "firmware example without the model (aarch64 Linux, static: glibc included) <= 250 KB" "${fw_aarch64_trimmed:-}" $((250 * 1024))
} > "$out"
echo "size: wrote $out in $((SECONDS - start)) s"
cat "$out"
