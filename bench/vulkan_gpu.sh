#!/usr/bin/env bash
# bench/vulkan_gpu.sh: Tern's Vulkan device on a GPU machine (a lent H100: no
# network), beside llama.cpp's Vulkan backend on the same card and files.
#
#   bench/vulkan_gpu.sh prepare          here, with network: the Debian packages the
#                                        GPU machine may lack (the Vulkan loader and
#                                        headers, glslc) into .vkgpu/, 3.4 MB, left
#                                        untracked so that it travels with the tree
#                                        (llama.cpp's sources go with them)
#   bench/vulkan_gpu.sh run MODEL...     there: unpack them, build Tern with
#                                        TERN_DEVICES=vulkan and, when LLAMA_DIR names
#                                        llama.cpp's sources (c392e509), llama.cpp with
#                                        -DGGML_VULKAN=ON; then per model tg32 and pp512
#                                        with capture on (--graph-cache 12) and off (0),
#                                        and llama-bench's tg32/pp512, all -ngl 99.
# Environment: LLAMA_DIR, REPS (default 3), JOBS (default: the CPUs), BUILD (default
# build-vkgpu). Output: llama-bench-style markdown rows on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
shift || true
pkgs="libvulkan1 libvulkan-dev glslc libshaderc1"

if [ "$mode" = prepare ]; then
    mkdir -p .vkgpu /tmp/vkgpu-lists/partial
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/vkgpu-lists'
    apt-get $o update -qq
    (cd .vkgpu && apt-get $o download $pkgs)
    ls -l .vkgpu
    exit 0
fi
if [ "$mode" != run ] || [ $# -eq 0 ]; then
    echo "usage: $0 prepare | run MODEL.gguf..." >&2
    exit 2
fi

# The loader, headers and glslc where the machine has none (unpacked over /).
if ! ldconfig -p | grep -q libvulkan.so.1 || ! command -v glslc >/dev/null || [ ! -f /usr/include/vulkan/vulkan_core.h ]; then
    for f in .vkgpu/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
    ldconfig
fi
# NVIDIA's driver manifest where the loader finds none by itself.
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
   ! ls /usr/share/vulkan/icd.d/nvidia*.json /etc/vulkan/icd.d/nvidia*.json >/dev/null 2>&1; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
jobs=${JOBS:-$(nproc)}
reps=${REPS:-3}
build=${BUILD:-build-vkgpu}

echo "== Tern (TERN_DEVICES=vulkan)" >&2
cmake -B "$build" -DCMAKE_BUILD_TYPE=Release -DTERN_DEVICES=vulkan -DTERN_BUILD_TESTS=OFF >&2
cmake --build "$build" -j"$jobs" --target tern-bench tern_cli >&2
"$build/bin/tern" --version

llama_bench=""
if [ -n "${LLAMA_DIR:-}" ] && [ -d "$LLAMA_DIR" ]; then
    echo "== llama.cpp (GGML_VULKAN=ON) in $LLAMA_DIR" >&2
    cmake -S "$LLAMA_DIR" -B "$LLAMA_DIR/build-vk" -DCMAKE_BUILD_TYPE=Release -DGGML_VULKAN=ON -DLLAMA_CURL=OFF >&2 &&
        cmake --build "$LLAMA_DIR/build-vk" -j"$jobs" --target llama-bench >&2 &&
        llama_bench="$LLAMA_DIR/build-vk/bin/llama-bench"
    [ -n "$llama_bench" ] || echo "llama.cpp did not build: its rows are left out" >&2
fi

for m in "$@"; do
    echo
    echo "### $(basename "$m")"
    "$build/bin/tern-bench" -m "$m" -p 512 -n 32 -r "$reps" -ngl 99 --device vulkan0 --graph-cache 12,0 ||
        echo "tern-bench failed on $m" >&2
    if [ -n "$llama_bench" ]; then
        "$llama_bench" -m "$m" -p 512 -n 32 -r "$reps" -ngl 99 || echo "llama-bench failed on $m" >&2
    fi
done
