// Choosing the kernel set (see kernel_set.h): what the build compiled, what
// the CPU runs, what TERN_KERNELS asks for.
#include "cpu/kernels/kernel_set.h"
#include "core/log.h"
#include "port.h"

#include <atomic>
#include <stdlib.h>
#include <string.h>

#if TERN_KSET_DISPATCH && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#define TERN_DETECT_X86 1
#endif
#if TERN_KSET_DISPATCH && (defined(__aarch64__) || defined(__arm__))
#include "cpu/kernels/arm/arm_features.h"
#define TERN_DETECT_ARM 1
#endif

namespace tern {

namespace {

// In priority order: the best set a CPU runs is the last one it runs.
enum set_id { SET_SCALAR, SET_AVX2, SET_AVXVNNI, SET_AVX512, SET_NEON, SET_DOTPROD, SET_I8MM, SET_COUNT };

const char * const k_set_names[SET_COUNT] = {"scalar", "avx2", "avxvnni", "avx512", "neon", "dotprod", "i8mm"};

bool compiled(set_id id) {
    switch (id) {
        case SET_SCALAR: return true;
        case SET_AVX2: return TERN_KSET_AVX2;
        case SET_AVXVNNI: return TERN_KSET_AVXVNNI;
        case SET_AVX512: return TERN_KSET_AVX512;
        case SET_NEON: return TERN_KSET_NEON;
        case SET_DOTPROD: return TERN_KSET_DOTPROD;
        case SET_I8MM: return TERN_KSET_I8MM;
        default: return false;
    }
}

#if TERN_DETECT_X86
uint64_t xgetbv0() {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t) hi << 32) | lo;
}

// What this CPU and OS run: AVX2 needs AVX2+FMA+F16C and the YMM state saved
// by the OS; AVX-VNNI that and CPUID.(EAX=7,ECX=1):EAX bit 4 (the VEX
// vpdpbusd); AVX-512 needs F/BW/VL/DQ/VNNI and the opmask/ZMM state too.
bool cpu_runs(set_id id) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool osxsave = c & (1u << 27), fma = c & (1u << 12), f16c = c & (1u << 29), avx = c & (1u << 28);
    if (!osxsave || !avx) return false;
    const uint64_t xcr0 = xgetbv0();
    const bool ymm_state = (xcr0 & 0x6) == 0x6, zmm_state = (xcr0 & 0xe6) == 0xe6;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool avx2 = b & (1u << 5);
    const bool avx512 = (b & (1u << 16)) && (b & (1u << 17)) && (b & (1u << 30)) && (b & (1u << 31)) && (c & (1u << 11));
    const bool avxvnni = a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));  // a: leaf 7's last subleaf
    switch (id) {
        case SET_AVX2: return ymm_state && avx2 && fma && f16c;
        case SET_AVXVNNI: return ymm_state && avx2 && fma && f16c && avxvnni;
        case SET_AVX512: return ymm_state && zmm_state && avx2 && fma && f16c && avx512;
        default: return false;
    }
}
#elif TERN_DETECT_ARM
// AT_HWCAP / AT_HWCAP2 (arm/arm_features.h).
bool cpu_runs(set_id id) {
    switch (id) {
        case SET_NEON: return arm_cpu_runs(ARM_NEON);
        case SET_DOTPROD: return arm_cpu_runs(ARM_DOTPROD);
        case SET_I8MM: return arm_cpu_runs(ARM_I8MM);
        default: return false;
    }
}
#else
// Pinned builds run what they were compiled for.
bool cpu_runs(set_id id) { return compiled(id); }
#endif

bool usable(set_id id) { return compiled(id) && (id == SET_SCALAR || cpu_runs(id)); }

void fill(set_id id, tern_kernel_set * ks) {
    tern_fill_scalar(ks);
#if TERN_KSET_AVX2
    if (id == SET_AVX2 || id == SET_AVXVNNI || id == SET_AVX512) {
        tern_fill_vec_avx2(ks);
        tern_fill_vec_dot_avx2(ks);
        tern_fill_quantize_avx2(ks);
        tern_fill_gemm_legacy_avx2(ks);
        tern_fill_gemm_float_avx2(ks);
        tern_fill_repack_avx2(ks);
        tern_fill_repack_kquant_avx2(ks);
        ks->name = "avx2";
    }
#endif
#if TERN_KSET_AVXVNNI
    if (id == SET_AVXVNNI) {
        tern_fill_repack_avxvnni(ks);
        tern_fill_repack_kquant_avxvnni(ks);
        ks->name = "avxvnni";
    }
#endif
#if TERN_KSET_AVX512
    if (id == SET_AVX512) {
        tern_fill_vec_avx512(ks);
        tern_fill_gemm_legacy_avx512(ks);
        tern_fill_gemm_kquant_avx512(ks);
        tern_fill_gemm_float_avx512(ks);
        tern_fill_repack_avx512(ks);
        tern_fill_repack_kquant_avx512(ks);
        ks->name = "avx512";
    }
#endif
#if TERN_KSET_NEON
    if (id == SET_NEON || id == SET_DOTPROD || id == SET_I8MM) {
        tern_fill_vec_neon(ks);
        tern_fill_vec_dot_neon(ks);
        tern_fill_vec_dot_kquant_neon(ks);
        tern_fill_quantize_neon(ks);
        tern_fill_gemm_float_neon(ks);
        ks->name = "neon";
    }
#endif
#if TERN_KSET_DOTPROD
    if (id == SET_DOTPROD || id == SET_I8MM) {
        tern_fill_vec_dot_dotprod(ks);
        tern_fill_vec_dot_kquant_dotprod(ks);
        tern_fill_repack_dotprod(ks);
        tern_fill_repack_kquant_dotprod(ks);
        ks->name = "dotprod";
    }
#endif
#if TERN_KSET_I8MM
    if (id == SET_I8MM) {
        tern_fill_gemm_legacy_i8mm(ks);
        tern_fill_gemm_kquant_i8mm(ks);
        tern_fill_repack_i8mm(ks);
        tern_fill_repack_kquant_i8mm(ks);
        ks->name = "i8mm";
    }
#endif
}

// One table per set, filled once: state 0 empty, 1 being filled, 2 ready.
tern_kernel_set g_sets[SET_COUNT];
std::atomic<int> g_state[SET_COUNT];
std::atomic<const tern_kernel_set *> g_current{nullptr};

const tern_kernel_set * get_set(set_id id) {
    int expect = 0;
    if (g_state[id].compare_exchange_strong(expect, 1, std::memory_order_acq_rel)) {
        fill(id, &g_sets[id]);
        g_state[id].store(2, std::memory_order_release);
    } else {
        while (g_state[id].load(std::memory_order_acquire) != 2) {}
    }
    return &g_sets[id];
}

set_id best_set() {
    for (int id = SET_COUNT - 1; id > SET_SCALAR; id--) {
        if (usable((set_id) id)) return (set_id) id;
    }
    return SET_SCALAR;
}

set_id choose() {
    set_id best = best_set();
    const char * want = port_getenv("TERN_KERNELS");
    if (!want || !*want) return best;
    for (int id = 0; id < SET_COUNT; id++) {
        if (strcmp(want, k_set_names[id]) != 0) continue;
        if (!usable((set_id) id)) {
            TERN_LOGW("TERN_KERNELS=%s: not in this build or not supported by this CPU; using %s\n", want,
                          k_set_names[best]);
            return best;
        }
        return (set_id) id;
    }
    TERN_LOGW("TERN_KERNELS=%s: unknown kernel set (scalar, avx2, avxvnni, avx512, neon, dotprod, i8mm); using %s\n", want, k_set_names[best]);
    return best;
}

} // namespace

const tern_kernel_set * tern_kernels(void) {
    const tern_kernel_set * ks = g_current.load(std::memory_order_acquire);
    if (ks) return ks;
    ks = get_set(choose());
    g_current.store(ks, std::memory_order_release);
    return ks;
}

const tern_kernel_set * tern_kernels_by_name(const char * name) {
    for (int id = 0; id < SET_COUNT; id++) {
        if (name && strcmp(name, k_set_names[id]) == 0 && usable((set_id) id)) return get_set((set_id) id);
    }
    return nullptr;
}

int tern_kernels_compiled(const char ** names, int max_names) {
    int n = 0;
    for (int id = 0; id < SET_COUNT; id++) {
        if (!compiled((set_id) id)) continue;
        if (n < max_names) names[n] = k_set_names[id];
        n++;
    }
    return n;
}

}  // namespace tern
