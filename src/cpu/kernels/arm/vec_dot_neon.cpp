// NEON vec_dot kernels of the neon kernel set: Q8_0 and Q4_0 weights times
// Q8_0 activations, bit-identical to the scalar references
// (tensor/quants_legacy.cpp, PER_BLOCK order): per 32-value block the exact
// int32 sum of the level products, then
//   acc = fmaf((float) sumi, d_x * d_y, acc)
// block after block. Identical bits make the tile contract of kernel_set.h
// hold as it does for the references (gemm stays NULL: one vec_dot per output).
//
// The integer sum of a block, two ways:
// - SDOT (ARMv8.2 dot-product extension): 4 int8 products into each int32
//   lane;
// - SMULL + SADALP (every AArch64 core): int8 x int8 into int16 (exact, even
//   -128 * -128), pairs accumulated into int32 lanes.
// A build whose -march has +dotprod (__ARM_FEATURE_DOTPROD) uses SDOT only.
// Otherwise the SDOT kernels are compiled for +dotprod by a target attribute
// and chosen when the set is filled, if the kernel's AT_HWCAP (port_cpu_hwcap)
// has HWCAP_ASIMDDP (Linux; elsewhere SMULL).
#include "cpu/kernels/kernel_set.h"

#include <arm_neon.h>
#include <math.h>
#include <string.h>
#include "tensor/blocks.h"

#include "core/fp16.h"

// SDOT: AArch64 only (32-bit ARM builds use SMULL, below).
#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#define TERN_SDOT_FN
#define TERN_SDOT_ALWAYS 1
#elif defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#include "port.h"
#define HWCAP_ASIMDDP (1u << 20)   // the Linux AArch64 HWCAP bit for SDOT/UDOT
#if defined(__clang__)
#define TERN_SDOT_FN __attribute__((target("dotprod")))
#else  // GCC's arm_neon.h defines the dot-product intrinsics for this arch
#define TERN_SDOT_FN __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#define TERN_SDOT_RUNTIME 1
#endif

namespace tern {

namespace {

const int QK = 32;

// fp16 -> f32: FCVT on AArch64 (exact; the reference's conversion gives the
// same value for every non-NaN input), the reference's conversion on 32-bit ARM.
inline float f16(tern_fp16 h) {
#if defined(__aarch64__)
    __fp16 v;
    memcpy(&v, &h, sizeof(v));
    return (float) v;
#else
    return tern_fp16_to_fp32(h);
#endif
}

// Sum of the four lanes (ADDV on AArch64; pairwise adds on ARMv7, exact in integers).
inline int32_t add_lanes(int32x4_t v) {
#if defined(__aarch64__)
    return vaddvq_s32(v);
#else
    const int32x2_t p = vadd_s32(vget_low_s32(v), vget_high_s32(v));
    return vget_lane_s32(vpadd_s32(p, p), 0);
#endif
}

// The 32 levels of a block as two int8x16 (elements 0..15, 16..31).
inline void levels_q8_0(const block_q8_0 & b, int8x16_t * lo, int8x16_t * hi) {
    *lo = vld1q_s8(b.qs);
    *hi = vld1q_s8(b.qs + 16);
}

// Q4_0: element j < 16 is the low nibble of qs[j], element j + 16 its high
// nibble; level = nibble - 8.
inline void levels_q4_0(const block_q4_0 & b, int8x16_t * lo, int8x16_t * hi) {
    const uint8x16_t qs = vld1q_u8(b.qs);
    const int8x16_t eight = vdupq_n_s8(8);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(qs, vdupq_n_u8(0x0F))), eight);
    *hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(qs, 4)), eight);
}

// sum_j x[j] * y[j] over one block, exactly.
inline int32_t block_sum_smull(int8x16_t x0, int8x16_t x1, const int8_t * y) {
    const int8x16_t y0 = vld1q_s8(y), y1 = vld1q_s8(y + 16);
    int32x4_t s = vpaddlq_s16(vmull_s8(vget_low_s8(x0), vget_low_s8(y0)));
    s = vpadalq_s16(s, vmull_s8(vget_high_s8(x0), vget_high_s8(y0)));
    s = vpadalq_s16(s, vmull_s8(vget_low_s8(x1), vget_low_s8(y1)));
    s = vpadalq_s16(s, vmull_s8(vget_high_s8(x1), vget_high_s8(y1)));
    return add_lanes(s);
}

#if defined(TERN_SDOT_FN)
TERN_SDOT_FN inline int32_t block_sum_sdot(int8x16_t x0, int8x16_t x1, const int8_t * y) {
    const int32x4_t s = vdotq_s32(vdotq_s32(vdupq_n_s32(0), x0, vld1q_s8(y)), x1, vld1q_s8(y + 16));
    return add_lanes(s);
}
#endif

// The loop of every kernel: the reference's float steps, in its order.
#define TERN_VEC_DOT_BODY(block_t, levels, block_sum)                            \
    const block_t * x = (const block_t *) vx;                                    \
    const block_q8_0 * y = (const block_q8_0 *) vy;                              \
    float acc = 0.0f;                                                            \
    for (int64_t ib = 0; ib < n / QK; ib++) {                                    \
        int8x16_t lo, hi;                                                        \
        levels(x[ib], &lo, &hi);                                                 \
        const int32_t sumi = block_sum(lo, hi, y[ib].qs);                        \
        acc = fmaf((float) sumi, f16(x[ib].d) * f16(y[ib].d), acc);              \
    }                                                                            \
    *s = acc;

void vec_dot_q8_0_smull(int64_t n, float * s, const void * vx, const void * vy) {
    TERN_VEC_DOT_BODY(block_q8_0, levels_q8_0, block_sum_smull)
}
void vec_dot_q4_0_smull(int64_t n, float * s, const void * vx, const void * vy) {
    TERN_VEC_DOT_BODY(block_q4_0, levels_q4_0, block_sum_smull)
}

#if defined(TERN_SDOT_FN)
TERN_SDOT_FN void vec_dot_q8_0_sdot(int64_t n, float * s, const void * vx, const void * vy) {
    TERN_VEC_DOT_BODY(block_q8_0, levels_q8_0, block_sum_sdot)
}
TERN_SDOT_FN void vec_dot_q4_0_sdot(int64_t n, float * s, const void * vx, const void * vy) {
    TERN_VEC_DOT_BODY(block_q4_0, levels_q4_0, block_sum_sdot)
}
#endif

#undef TERN_VEC_DOT_BODY

// Whether this CPU has SDOT (read once per fill; the set is filled once).
bool cpu_has_sdot(void) {
#if defined(TERN_SDOT_ALWAYS)
    return true;
#elif defined(TERN_SDOT_RUNTIME)
    return (port_cpu_hwcap() & HWCAP_ASIMDDP) != 0;
#else
    return false;
#endif
}

}  // namespace

void tern_fill_vec_dot_neon(tern_kernel_set * ks) {
    const bool sdot = cpu_has_sdot();
    (void) sdot;
#if TERN_WITH_TYPE_Q8_0
    ks->vec_dot[TERN_TYPE_Q8_0] = vec_dot_q8_0_smull;
#endif
#if TERN_WITH_TYPE_Q4_0
    ks->vec_dot[TERN_TYPE_Q4_0] = vec_dot_q4_0_smull;
#endif
#if defined(TERN_SDOT_FN)
    if (sdot) {
#if TERN_WITH_TYPE_Q8_0
        ks->vec_dot[TERN_TYPE_Q8_0] = vec_dot_q8_0_sdot;
#endif
#if TERN_WITH_TYPE_Q4_0
        ks->vec_dot[TERN_TYPE_Q4_0] = vec_dot_q4_0_sdot;
#endif
    }
#endif
}

}  // namespace tern
