// vec_dot kernels of the ARM levels for the legacy block formats: Q4_0 Q5_0
// Q8_0 IQ4_NL weights times Q8_0 activations, Q4_1 Q5_1 times Q8_1,
// bit-identical to the scalar references (tensor/quants_legacy.cpp), whose
// float order comes in two kinds:
//   PER_BLOCK (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0): per 32-value block the exact int32
//     sum of the level products, then acc = fmaf((float) sumi, d_x * d_y, acc)
//     (+ acc = fmaf(m_x, s_y, acc) for the affine formats), block after block;
//   LANES8 (IQ4_NL): eight float lanes, lane l fed per block with the int sum
//     of values 4l .. 4l + 3: acc_l = fma(d_x * d_y, lane_l, acc_l); at the
//     end ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)). Two float32x4
//     hold the eight lanes, so VFMA gives each lane the reference's fused step.
// Identical bits make the tile contract of kernel_set.h hold as it does for
// the references.
//
// A block's 32 levels are two int8x16 (legacy_levels_neon.h); the integer
// sums come from a Sums policy, one per level:
//   smull_sums  SMULL + SADALP (int8 x int8 into int16, exact even for
//               -128 * -128, pairs added into int32): every AArch64 core and
//               ARMv7 NEON (neon level);
//   sdot_sums   SDOT, 4 int8 products into each int32 lane, which are exactly
//               LANES8's groups of four (dotprod and i8mm levels: only in
//               files compiled with __ARM_FEATURE_DOTPROD).
// 32-bit ARM (ARMv7 NEON): Q8_0, Q4_0 and Q4_1 with SMULL (float steps in
// scalar VFP). The other formats need AArch64's TBL over 16 bytes or vector
// float FMA, which ARMv7 NEON runs with subnormals flushed: they keep the
// references there.
//
// Header only, in an anonymous namespace: each level's file instantiates the
// kernels with its own flags (column_blocks.h says why).
#pragma once

#include <arm_neon.h>
#include <math.h>
#include "cpu/kernels/arm/legacy_levels_neon.h"
#include "cpu/kernels/kernel_set.h"

// Reference arithmetic: only the explicit fused multiply-adds fuse.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace tern {
namespace {

using namespace neon_legacy;

struct smull_sums {
    // sum_j x[j] * y[j] over one block, exactly.
    static inline int32_t block(int8x16_t x0, int8x16_t x1, const int8_t * y) {
        const int8x16_t y0 = vld1q_s8(y), y1 = vld1q_s8(y + 16);
        int32x4_t s = vpaddlq_s16(vmull_s8(vget_low_s8(x0), vget_low_s8(y0)));
        s = vpadalq_s16(s, vmull_s8(vget_high_s8(x0), vget_high_s8(y0)));
        s = vpadalq_s16(s, vmull_s8(vget_low_s8(x1), vget_low_s8(y1)));
        s = vpadalq_s16(s, vmull_s8(vget_high_s8(x1), vget_high_s8(y1)));
        return add_lanes(s);
    }
#if defined(__aarch64__)
    // LANES8's eight sums of four consecutive products: values 0..15 in *l0
    // (lanes 0..3), 16..31 in *l1 (lanes 4..7).
    static inline void lanes8(int8x16_t x0, int8x16_t x1, const int8_t * y, int32x4_t * l0, int32x4_t * l1) {
        const int8x16_t y0 = vld1q_s8(y), y1 = vld1q_s8(y + 16);
        *l0 = vpaddq_s32(vpaddlq_s16(vmull_s8(vget_low_s8(x0), vget_low_s8(y0))), vpaddlq_s16(vmull_high_s8(x0, y0)));
        *l1 = vpaddq_s32(vpaddlq_s16(vmull_s8(vget_low_s8(x1), vget_low_s8(y1))), vpaddlq_s16(vmull_high_s8(x1, y1)));
    }
#endif
};

#if defined(__ARM_FEATURE_DOTPROD)
struct sdot_sums {
    static inline int32_t block(int8x16_t x0, int8x16_t x1, const int8_t * y) {
        return vaddvq_s32(vdotq_s32(vdotq_s32(vdupq_n_s32(0), x0, vld1q_s8(y)), x1, vld1q_s8(y + 16)));
    }
    static inline void lanes8(int8x16_t x0, int8x16_t x1, const int8_t * y, int32x4_t * l0, int32x4_t * l1) {
        *l0 = vdotq_s32(vdupq_n_s32(0), x0, vld1q_s8(y));
        *l1 = vdotq_s32(vdupq_n_s32(0), x1, vld1q_s8(y + 16));
    }
};
#endif

template <class F, class Sums>
void vec_dot_per_block(int64_t n, float * s, const void * vx, const void * vy) {
    const typename F::block * x = (const typename F::block *) vx;
    const typename F::act * y = (const typename F::act *) vy;
    float acc = 0.0f;
    for (int64_t ib = 0; ib < n / QK; ib++) {
        int8x16_t lo, hi;
        F::levels(x[ib], &lo, &hi);
        const int32_t sumi = Sums::block(lo, hi, y[ib].qs);
        acc = fmaf((float) sumi, f16(x[ib].d) * f16(y[ib].d), acc);
        if constexpr (F::affine) acc = fmaf(f16(x[ib].m), f16(y[ib].s), acc);
    }
    *s = acc;
}

#if defined(__aarch64__)
template <class F, class Sums>
void vec_dot_lanes8(int64_t n, float * s, const void * vx, const void * vy) {
    const typename F::block * x = (const typename F::block *) vx;
    const typename F::act * y = (const typename F::act *) vy;
    float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
    float summs = 0.0f;
    for (int64_t ib = 0; ib < n / QK; ib++) {
        int8x16_t lo, hi;
        F::levels(x[ib], &lo, &hi);
        int32x4_t l0, l1;
        Sums::lanes8(lo, hi, y[ib].qs, &l0, &l1);
        const float32x4_t d = vdupq_n_f32(f16(x[ib].d) * f16(y[ib].d));
        acc0 = vfmaq_f32(acc0, d, vcvtq_f32_s32(l0));
        acc1 = vfmaq_f32(acc1, d, vcvtq_f32_s32(l1));
        if constexpr (F::affine) summs = fmaf(f16(x[ib].m), f16(y[ib].s), summs);
    }
    // t = (a0+a4, a1+a5, a2+a6, a3+a7); then (t0 + t2) + (t1 + t3)
    const float32x4_t t = vaddq_f32(acc0, acc1);
    const float32x2_t u = vadd_f32(vget_low_f32(t), vget_high_f32(t));
    const float r = vget_lane_f32(u, 0) + vget_lane_f32(u, 1);
    *s = F::affine ? r + summs : r;
}
#endif

// Every legacy format this architecture has a kernel for, with Sums.
template <class Sums>
void set_vec_dot_legacy(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_Q8_0
    ks->vec_dot[TERN_TYPE_Q8_0] = vec_dot_per_block<fmt_q8_0, Sums>;
#endif
#if TERN_WITH_TYPE_Q4_0
    ks->vec_dot[TERN_TYPE_Q4_0] = vec_dot_per_block<fmt_q4_0, Sums>;
#endif
#if TERN_WITH_TYPE_Q4_1
    ks->vec_dot[TERN_TYPE_Q4_1] = vec_dot_per_block<fmt_q4_1, Sums>;
#endif
#if defined(__aarch64__)
#if TERN_WITH_TYPE_Q5_0
    ks->vec_dot[TERN_TYPE_Q5_0] = vec_dot_per_block<fmt_q5_0, Sums>;
#endif
#if TERN_WITH_TYPE_Q5_1
    ks->vec_dot[TERN_TYPE_Q5_1] = vec_dot_per_block<fmt_q5_1, Sums>;
#endif
#if TERN_WITH_TYPE_IQ4_NL
    ks->vec_dot[TERN_TYPE_IQ4_NL] = vec_dot_lanes8<fmt_iq4_nl, Sums>;
#endif
#endif
}

}  // namespace
}  // namespace tern
