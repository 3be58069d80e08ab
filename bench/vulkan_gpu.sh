#!/usr/bin/env bash
# bench/vulkan_gpu.sh: Tern's Vulkan device on a lent GPU (the device tool's
# H100: x86-64, no network, ~8 minutes for the whole run), beside llama.cpp
# c392e509's Vulkan backend on the same card and the same files (issue 21).
#
# 1. Here, from the repository root (network for apt-get download; ~10 min on
#    2 cores without a llama.cpp build at hand, ~3 with one):
#        bench/vulkan_gpu.sh prepare
#    fills .vkgpu/ (git-ignored, ~30 MiB): bin/ tern, tern-bench, tern-make-model
#    (TERN_DEVICES=vulkan, Release, libstdc++ linked in) and llama-bench.gz
#    (c392e509, GGML_VULKAN=ON, static, gzipped); vocab/ the two tokenizers the model
#    shapes need; deb/ the Vulkan loader and GL dispatch libraries (the GPU
#    machine may lack them), and glslc, libshaderc1, libvulkan-dev plus
#    llama-src.tar.gz for building there if a prebuilt program does not run.
#    TERN_BIN=DIR takes tern, tern-bench and tern-make-model from a build of
#    this same commit with Vulkan (and the static flags above) instead of
#    building them; LLAMA_BENCH=FILE takes an existing llama-bench instead of building one
#    from LLAMA_SRC (default /work/scratch-vk/llama.cpp: c392e509's CMakeLists.txt
#    cmake common examples ggml include src, e.g. `git archive c392e509 ...`).
#    BUILD (default build-vkgpu), JOBS (default 2).
#
# 2. The device tool's run, from the same checkout:
#        carry:     [".vkgpu"]
#        command:   bash bench/vulkan_gpu.sh run
#        timeout_s: 540
#    There it unpacks the loader when `ldconfig -p` has no libvulkan.so.1,
#    points the loader at NVIDIA's driver manifest when none is installed,
#    picks the discrete GPU from `tern --version`, then per model (generated
#    there by tern-make-model, in this order: qwen2.5-0.5b Q4_0, tinyllama
#    Q4_0, qwen2.5-0.5b Q8_0, tinyllama Q8_0, qwen2.5-0.5b Q4_K, tinyllama Q4_K)
#    tern-bench pp512/tg32 with capture on (--graph-cache 12) and off (0), then
#    llama-bench pp512/tg32, all -ngl 99. No model is started past BUDGET
#    seconds (default 330) and every program is stopped after CMD_TIMEOUT
#    (default 120), so the run ends within ~8 minutes. Output: a timestamped
#    log on stdout and in $OUT/vulkan_gpu.log; the tables in $OUT/vulkan_gpu.md.
#
# Rehearsal on lavapipe (here, after prepare; tiny shapes, short tests):
#    VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json GGML_VK_VISIBLE_DEVICES=0 \
#      SHAPES="tiny tiny-qwen2" PP=64 TG=8 OUT=/tmp/vkgpu-out bench/vulkan_gpu.sh run
# Environment for run: SHAPES, TYPES (default Q4_0 Q8_0 Q4_K), PP (512), TG (32),
# REPS (2), DEVICE (default: the discrete GPU, else vulkan0), MODELS (/tmp/vkgpu-models),
# BUDGET, CMD_TIMEOUT; PROFILE=1 adds, per model, the device's GPU time per shader
# (`--device DEV:profile --graph-cache 0`: timestamps between dispatches) of one
# pp and one tg run; PROFILE=only runs just those (no capture runs, no llama-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
V=.vkgpu
mode=${1:-}
loader_debs=(libvulkan1 libglvnd0 libglx0 libegl1 libopengl0 libgl1 libgles2)
build_debs=(glslc libshaderc1 libvulkan-dev)

if [ "$mode" = prepare ]; then
    jobs=${JOBS:-2}
    build=${BUILD:-build-vkgpu}
    llama_src=${LLAMA_SRC:-/work/scratch-vk/llama.cpp}
    shared=${TERN_SHARED_DIR:-../shared}
    rm -rf "$V"
    mkdir -p "$V/deb" "$V/bin" "$V/vocab" /tmp/vkgpu-lists/partial
    o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/vkgpu-lists)
    apt-get "${o[@]}" update -qq
    (cd "$V/deb" && apt-get "${o[@]}" download "${loader_debs[@]}" "${build_debs[@]}")
    cp "$shared/vocab/ggml-vocab-llama-spm.gguf" "$shared/vocab/ggml-vocab-qwen2.gguf" "$V/vocab/"

    tbin=${TERN_BIN:-}
    if [ -z "$tbin" ]; then
        echo "== Tern (TERN_DEVICES=vulkan) in $build"
        cmake -B "$build" -DCMAKE_BUILD_TYPE=Release -DTERN_DEVICES=vulkan -DTERN_BUILD_TESTS=OFF \
              "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" >/dev/null
        nice cmake --build "$build" -j"$jobs" --target tern_cli tern-bench tern-make-model
        tbin=$build/bin
    fi
    cp "$tbin/tern" "$tbin/tern-bench" "$tbin/tern-make-model" "$V/bin/"

    lb=${LLAMA_BENCH:-}
    [ -z "$lb" ] && [ -x "$llama_src/build-vk/bin/llama-bench" ] && lb=$llama_src/build-vk/bin/llama-bench
    if [ -z "$lb" ]; then
        echo "== llama.cpp (GGML_VULKAN=ON, static) in $llama_src/build-vk"
        cmake -S "$llama_src" -B "$llama_src/build-vk" -DCMAKE_BUILD_TYPE=Release -DGGML_VULKAN=ON \
              -DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
              -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
              "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" >/dev/null
        nice cmake --build "$llama_src/build-vk" -j"$jobs" --target llama-bench
        lb=$llama_src/build-vk/bin/llama-bench
    fi
    strip "$V"/bin/*
    # llama-bench embeds every SPIR-V variant of ggml-vulkan: compressed, it
    # leaves room in the device tool's 64 MiB (unpacked there into /tmp).
    strip -o "$V/llama-bench.tmp" "$lb" && gzip -9 -c "$V/llama-bench.tmp" > "$V/bin/llama-bench.gz" && rm "$V/llama-bench.tmp"
    if [ -d "$llama_src/ggml" ]; then
        tar -czf "$V/llama-src.tar.gz" -C "$(dirname "$llama_src")" --exclude=build-vk "$(basename "$llama_src")"
    fi
    {
        echo "tern $(git rev-parse --short HEAD 2>/dev/null || echo '(no git)')$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)'), from ${tbin}, $(date -u +%FT%TZ)"
        echo "llama-bench from $lb (llama.cpp c392e509, GGML_VULKAN=ON)"
        echo "glslc: $(glslc --version 2>&1 | head -1)"
    } > "$V/MANIFEST"
    ls -l "$V" "$V/bin" "$V/deb" "$V/vocab"
    kib=$(du -sk "$V" | cut -f1)
    echo "$V: $((kib / 1024)) MiB (the device tool takes 64 MiB with the tracked tree)"
    [ "$kib" -lt $((56 * 1024)) ] || { echo "$V is too large for the device tool" >&2; exit 1; }
    exit 0
fi
if [ "$mode" != run ]; then
    echo "usage: $0 prepare | run   (see the comment at the top)" >&2
    exit 2
fi

# ---- run (on the GPU machine) -------------------------------------------------
t0=$SECONDS
out=${OUT:-/tmp/vkgpu-out}
mkdir -p "$out"
exec > >(tee -a "$out/vulkan_gpu.log") 2>&1
tee_pid=$!
# At exit, let tee write the last lines before the script's end returns.
trap 'exec >&- 2>&-; wait "$tee_pid" 2>/dev/null || true' EXIT
log() { printf '[%4ds] %s\n' $((SECONDS - t0)) "$*"; }
res=$out/vulkan_gpu.md
budget=${BUDGET:-330}
cmd_timeout=${CMD_TIMEOUT:-120}
pp=${PP:-512}
tg=${TG:-32}
reps=${REPS:-2}
shapes=${SHAPES:-"qwen2.5-0.5b tinyllama"}
types=${TYPES:-"Q4_0 Q8_0 Q4_K"}
mdir=${MODELS:-/tmp/vkgpu-models}
jobs=$(nproc)
mkdir -p "$mdir"
[ -d "$V/bin" ] || { log "no $V/bin: run '$0 prepare' here first and carry $V"; exit 1; }
cat "$V/MANIFEST" 2>/dev/null || true
log "machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
command -v nvidia-smi >/dev/null && nvidia-smi -L && nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader

unpack() { for p in "$@"; do for f in "$V"/deb/"${p}"_*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; done; ldconfig; }
# glslc and the Vulkan headers, for a build here.
build_tools() { if ! command -v glslc >/dev/null || [ ! -f /usr/include/vulkan/vulkan_core.h ]; then unpack "${build_debs[@]}"; fi; }
if ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
    log "no Vulkan loader here: unpacking ${loader_debs[*]}"
    unpack "${loader_debs[@]}"
fi
nv=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_ICD_FILENAMES:-}${VK_DRIVER_FILES:-}" ] && [ -f "$nv" ] &&
   ! ls /usr/share/vulkan/icd.d/nvidia*.json /etc/vulkan/icd.d/nvidia*.json >/dev/null 2>&1; then
    log "driver manifest: $nv"
    export VK_DRIVER_FILES=$nv VK_ICD_FILENAMES=$nv
fi

bin=$V/bin
if ! "$bin/tern-bench" --help >/dev/null 2>&1; then
    log "the prebuilt Tern does not run here ($("$bin/tern-bench" --help 2>&1 | head -1)): building it"
    build_tools
    cmake -B build-vkgpu -DCMAKE_BUILD_TYPE=Release -DTERN_DEVICES=vulkan -DTERN_BUILD_TESTS=OFF >/dev/null
    cmake --build build-vkgpu -j"$jobs" --target tern_cli tern-bench tern-make-model >/dev/null
    bin="build-vkgpu/bin"
    log "built"
fi
lb=/tmp/vkgpu-llama-bench
if gunzip -c "$V/bin/llama-bench.gz" > "$lb" 2>/dev/null; then chmod +x "$lb"; fi
if ! "$lb" --help >/dev/null 2>&1; then
    log "the prebuilt llama-bench does not run here ($("$lb" --help 2>&1 | head -1))"
    lb=""
    if [ -f "$V/llama-src.tar.gz" ]; then
        log "building llama.cpp (GGML_VULKAN=ON) here"
        build_tools
        mkdir -p /tmp/vkgpu-llama && tar -xzf "$V/llama-src.tar.gz" -C /tmp/vkgpu-llama
        src=$(echo /tmp/vkgpu-llama/*)
        if cmake -S "$src" -B "$src/build-vk" -DCMAKE_BUILD_TYPE=Release -DGGML_VULKAN=ON -DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=OFF \
                 -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF >/dev/null &&
           timeout 300 cmake --build "$src/build-vk" -j"$jobs" --target llama-bench >/dev/null; then
            lb=$src/build-vk/bin/llama-bench
            log "built"
        else
            log "llama.cpp did not build: its rows are left out"
        fi
    fi
fi

# The device: DEVICE, else the first discrete GPU, else the first that is not
# a CPU driver (lavapipe), else (after pointing the loader at NVIDIA's manifest,
# where one is and no GPU showed) vulkan0.
pick() {
    ver=$("$bin/tern" --version 2>&1) || true
    dev=${DEVICE:-$(echo "$ver" | sed -n 's/^device: \(vulkan[0-9]*\): .*discrete GPU.*/\1/p' | head -1)}
    [ -n "$dev" ] || dev=$(echo "$ver" | grep -v ' (CPU, ' | sed -n 's/^device: \(vulkan[0-9]*\): .*/\1/p' | head -1)
}
pick
if [ -z "$dev" ] && [ -f "$nv" ] && [ "${VK_DRIVER_FILES:-}" != "$nv" ]; then
    log "no GPU among the Vulkan devices: trying the driver manifest $nv"
    export VK_DRIVER_FILES=$nv VK_ICD_FILENAMES=$nv
    pick
fi
echo "$ver"
[ -n "$dev" ] || dev=$(echo "$ver" | sed -n 's/^device: \(vulkan[0-9]*\): .*/\1/p' | head -1)
if [ -z "$dev" ]; then
    log "Tern sees no Vulkan device; the loader says:"
    VK_LOADER_DEBUG=error,warn,driver "$bin/tern" --version 2>&1 | tail -40
    exit 1
fi
log "Tern device: $dev"
{
    echo "# Vulkan on $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || echo 'this machine')"
    echo
    echo "$(date -u +%FT%TZ); $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'));"
    echo "tern-bench -p $pp -n $tg -r $reps -ngl 99 --device $dev --graph-cache 12,0; llama-bench -p $pp -n $tg -r $reps -ngl 99"
    echo
    echo '```'
    cat "$V/MANIFEST" 2>/dev/null || true
    echo "$ver" | grep -e '^tern ' -e '^kernels' -e "^device: $dev" || true
    echo '```'
} > "$res"

vocab_ok() { [ -f "$V/vocab/ggml-vocab-llama-spm.gguf" ] && [ -f "$V/vocab/ggml-vocab-qwen2.gguf" ]; }
vocab_ok || { log "no vocabularies in $V/vocab"; exit 1; }
# Priority order: every shape at the first type, then the next type.
for t in $types; do
    for s in $shapes; do
        if [ $((SECONDS - t0)) -gt "$budget" ]; then
            log "skipped $s $t: past the budget of $budget s"
            echo "skipped $s $t: past the budget" >> "$res"
            continue
        fi
        m=$mdir/$s-$t.gguf
        if [ ! -f "$m" ]; then
            log "tern-make-model --shape $s --type $t"
            timeout "$cmd_timeout" "$bin/tern-make-model" --shape "$s" --type "$t" --shared-dir "$V" --threads "$jobs" \
                -o "$m" >/dev/null || { log "tern-make-model failed on $s $t"; rm -f "$m"; continue; }
        fi
        { echo; echo "### $s $t"; echo; } >> "$res"
        if [ "${PROFILE:-}" ]; then
            case $dev in *:*) sep=';' ;; *) sep=':' ;; esac   # DEVICE may carry parameters
            for run in "-p $pp -n 0" "-p 0 -n $tg"; do
                log "profile $s $t: $run"
                { echo "profile: $run"; echo '```'; } >> "$res"
                # shellcheck disable=SC2086
                timeout "$cmd_timeout" "$bin/tern-bench" -m "$m" $run -r 1 -ngl 99 --device "$dev$sep"profile --graph-cache 0 2>&1 |
                    grep -e 'vulkan profile' -e ' t/s' -e '| ' | tee -a "$res" || log "profile failed on $s $t"
                echo '```' >> "$res"
            done
            [ "$PROFILE" = only ] && continue
        fi
        log "tern-bench $s $t ($(du -m "$m" | cut -f1) MiB)"
        timeout "$cmd_timeout" "$bin/tern-bench" -m "$m" -p "$pp" -n "$tg" -r "$reps" -ngl 99 --device "$dev" \
            --graph-cache 12,0 | tee -a "$res" || log "tern-bench failed or timed out on $s $t"
        if [ -n "$lb" ]; then
            log "llama-bench $s $t"
            echo >> "$res"
            timeout "$cmd_timeout" "$lb" -m "$m" -p "$pp" -n "$tg" -r "$reps" -ngl 99 | tee -a "$res" ||
                log "llama-bench failed or timed out on $s $t"
        fi
    done
done
log "done; tables in $res"
