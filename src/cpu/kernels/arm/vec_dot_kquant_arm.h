// vec_dot kernels of the ARM levels for the K-quants (Q2_K, Q3_K, Q4_K, Q5_K,
// Q6_K weights times Q8_K activations), bit-identical to the scalar
// references (tensor/quants_k_dot.cpp). AArch64 only; a 32-bit ARM build
// keeps the references.
//
// Per 256-value super-block the reference needs two exact integers,
//   isum = sum_j scale[j] * (sum of q[i] * y[i] over the 16 values of sub-block j)
//   mins = sum_j min[j] * bsums[j]                    (affine types only)
// and then one or two float fused multiply-adds in a fixed order. So:
// 1. the weight levels are unpacked into sixteen int8x16 vectors, vector j
//    holding sub-block j in value order, with the scales (and mins) as small
//    integers (kquant_levels_neon.h);
// 2. each sub-block's sum of products comes from a Lanes policy: SDOT (4
//    products per int32 lane; dotprod level) or SMULL + SADALP (int8 x int8
//    into int16, exact even for -128 * -128, pairs into int32; neon level);
//    two pairwise adds turn four sub-blocks' lanes into their four totals,
//    one multiply-accumulate by the four scales adds them to isum's lanes.
//    Every step is an exact int32 operation (the largest case, Q6_K, stays
//    under 2^28);
// 3. the float part is the reference's, operation for operation:
//      Q3_K, Q6_K:  sum = fma(d, isum, sum)
//      Q2_K:        sum = fma(-dmin, mins, sum); sum = fma(d, isum, sum)
//      Q4_K, Q5_K:  sum = fma(d, isum, sum);     sum = fma(-dmin, mins, sum)
//    with d = d_y * d_x and dmin = d_y * dmin_x (fp16 scales converted by
//    FCVT, exact).
// Identical bits let these kernels and the SMMLA tiles of gemm_kquant_i8mm.cpp
// serve the same model: the tile contract of kernel_set.h holds as for the
// references.
//
// Header only, in an anonymous namespace: each level's file instantiates the
// kernels with its own flags (column_blocks.h says why).
#pragma once

#include <arm_neon.h>
#include <math.h>
#include "cpu/kernels/arm/kquant_levels_neon.h"
#include "cpu/kernels/kernel_set.h"

// Reference arithmetic: only the fmaf calls below fuse.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace tern {
namespace {

// The four lanes of q . y over one 16-value sub-block (their total is the sub-block's sum).
struct smull_lanes {
    static inline int32x4_t sub(int8x16_t q, const int8_t * y) {
        const int8x16_t yv = vld1q_s8(y);
        return vpadalq_s16(vpaddlq_s16(vmull_s8(vget_low_s8(q), vget_low_s8(yv))), vmull_high_s8(q, yv));
    }
};

#if defined(__ARM_FEATURE_DOTPROD)
struct sdot_lanes {
    static inline int32x4_t sub(int8x16_t q, const int8_t * y) { return vdotq_s32(vdupq_n_s32(0), q, vld1q_s8(y)); }
};
#endif

// One kernel per block type and float step (the step's branch is resolved at
// compile time: Q3_K and Q6_K have no dmin to read). Four sub-blocks' lanes
// (two pairwise adds) times their scales go into isum's lanes.
template <class B, neon_kquant::float_step step, class Lanes>
void vec_dot_kquant(int64_t n, float * s, const void * vx, const void * vy) {
    using namespace neon_kquant;
    const B * x = (const B *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / QK_K; ib++) {
        superblock sb;
        unpack(x[ib], &sb);
        const int8_t * yq = y[ib].qs;
        int32x4_t acc = vdupq_n_s32(0);
        for (int g = 0; g < 4; g++) {
            const int32x4_t s0 = Lanes::sub(sb.q[4 * g + 0], yq + 64 * g);
            const int32x4_t s1 = Lanes::sub(sb.q[4 * g + 1], yq + 64 * g + 16);
            const int32x4_t s2 = Lanes::sub(sb.q[4 * g + 2], yq + 64 * g + 32);
            const int32x4_t s3 = Lanes::sub(sb.q[4 * g + 3], yq + 64 * g + 48);
            const int32x4_t totals = vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3));
            acc = vmlaq_s32(acc, totals, vld1q_s32(sb.scale + 4 * g));
        }
        const float d = y[ib].d * f16(x[ib].d);
        const float isum = (float) vaddvq_s32(acc);
        if constexpr (step == NO_MINS) {
            sum = fmaf(d, isum, sum);
        } else {
            const float dmin = y[ib].d * f16(x[ib].dmin);
            const float mins = (float) mins_dot(sb, y[ib]);
            if constexpr (step == MINS_FIRST) {
                sum = fmaf(-dmin, mins, sum);
                sum = fmaf(d, isum, sum);
            } else {
                sum = fmaf(d, isum, sum);
                sum = fmaf(-dmin, mins, sum);
            }
        }
    }
    *s = sum;
}

template <class Lanes>
void set_vec_dot_kquant(tern_kernel_set * ks) {
    using namespace neon_kquant;
    (void) ks;
#if TERN_WITH_TYPE_Q2_K
    ks->vec_dot[TERN_TYPE_Q2_K] = vec_dot_kquant<block_q2_K, MINS_FIRST, Lanes>;
#endif
#if TERN_WITH_TYPE_Q3_K
    ks->vec_dot[TERN_TYPE_Q3_K] = vec_dot_kquant<block_q3_K, NO_MINS, Lanes>;
#endif
#if TERN_WITH_TYPE_Q4_K
    ks->vec_dot[TERN_TYPE_Q4_K] = vec_dot_kquant<block_q4_K, MINS_AFTER, Lanes>;
#endif
#if TERN_WITH_TYPE_Q5_K
    ks->vec_dot[TERN_TYPE_Q5_K] = vec_dot_kquant<block_q5_K, MINS_AFTER, Lanes>;
#endif
#if TERN_WITH_TYPE_Q6_K
    ks->vec_dot[TERN_TYPE_Q6_K] = vec_dot_kquant<block_q6_K, NO_MINS, Lanes>;
#endif
}

}  // namespace
}  // namespace tern
