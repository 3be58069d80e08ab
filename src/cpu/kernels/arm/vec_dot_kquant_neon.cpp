// NEON vec_dot kernels of the neon kernel set for the K-quants (Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K weights times Q8_K activations), bit-identical to the
// scalar references (tensor/quants_k_dot.cpp). AArch64 only; a 32-bit ARM
// build keeps the references.
//
// Per 256-value super-block the reference needs two exact integers,
//   isum = sum_j scale[j] * (sum of q[i] * y[i] over the 16 values of sub-block j)
//   mins = sum_j min[j] * bsums[j]                    (affine types only)
// and then one or two float fused multiply-adds in a fixed order. So:
// 1. the weight levels are unpacked into sixteen int8x16 vectors, vector j
//    holding sub-block j in value order (the layouts are in tensor/quants_k.h):
//      Q4_K/Q5_K  nibble u of qs[32c + l] is value 64c + 32u + l (+16 for the
//                 fifth bit: bit i/32 of qh[i % 32], a VTST against that bit);
//      Q2_K/Q3_K  bits 2s..2s+1 of qs[32h + l] are value 128h + 32s + l (Q3_K
//                 subtracts 4 where its hmask bit i/32 of hmask[i % 32] is clear);
//      Q6_K       low nibble from ql, two high bits from qh, minus 32;
//    the sub-block scales (and mins) are decoded by the references' scalar
//    helpers into small integer arrays;
// 2. each sub-block's sum of products comes from SDOT (4 products per int32
//    lane, ARMv8.2 dot product) or SMULL + SADALP (int8 x int8 into int16,
//    exact even for -128 * -128, pairs into int32); two pairwise adds turn
//    four sub-blocks' lanes into their four totals, one multiply-accumulate
//    by the four scales adds them to isum's lanes. Every step is an exact
//    int32 operation (the largest case, Q6_K, stays under 2^28);
// 3. the float part is the reference's, operation for operation:
//      Q3_K, Q6_K:  sum = fma(d, isum, sum)
//      Q2_K:        sum = fma(-dmin, mins, sum); sum = fma(d, isum, sum)
//      Q4_K, Q5_K:  sum = fma(d, isum, sum);     sum = fma(-dmin, mins, sum)
//    with d = d_y * d_x and dmin = d_y * dmin_x (fp16 scales converted by
//    FCVT, exact).
// Identical bits mean gemm stays NULL for these types (one vec_dot per
// output), and the tile contract of kernel_set.h holds as for the references.
// arm_features.h says when SDOT is compiled and chosen.
#include "cpu/kernels/kernel_set.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#include <math.h>
#include <string.h>
#include "cpu/kernels/arm/arm_features.h"
#include "tensor/blocks.h"
#include "tensor/quants_k.h"
#endif

namespace tern {

#if defined(__aarch64__)

// Reference arithmetic: only the fmaf calls below fuse.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace {

// One super-block unpacked: sub-block j's levels in q[j], its scale in
// scale[j] and (affine types) its min in min[j].
struct superblock {
    int8x16_t q[QK_K / 16];
    int32_t scale[QK_K / 16];
    int16_t min[QK_K / 16];
};

inline float f16(tern_fp16 h) {
    __fp16 v;
    memcpy(&v, &h, sizeof(v));
    return (float) v;
}

inline uint8x16_t low_nibbles(uint8x16_t v) { return vandq_u8(v, vdupq_n_u8(0x0F)); }

// (v >> shift) & 3 for a shift known only at run time (VSHL by a negative count).
inline uint8x16_t two_bits(uint8x16_t v, int shift) {
    return vandq_u8(vshlq_u8(v, vdupq_n_s8((int8_t) -shift)), vdupq_n_u8(3));
}

// 0xFF where bit `bit` of v is set.
inline uint8x16_t bit_set(uint8x16_t v, int bit) { return vtstq_u8(v, vdupq_n_u8((uint8_t) (1u << bit))); }

// Q4_K / Q5_K: the eight 32-value scales and mins, each serving two sub-blocks.
inline void k4_scales(const uint8_t * scales, superblock * sb) {
    for (int j = 0; j < QK_K / 32; j++) {
        uint8_t sc, m;
        tern_k4_scale_min(j, scales, &sc, &m);
        sb->scale[2 * j] = sb->scale[2 * j + 1] = sc;
        sb->min[2 * j] = sb->min[2 * j + 1] = m;
    }
}

// Q4_K / Q5_K levels: nibbles of qs[32c .. 32c + 31] are sub-blocks 4c .. 4c + 3.
inline void k4_nibbles(const uint8_t * qs, superblock * sb) {
    for (int c = 0; c < 4; c++) {
        const uint8x16_t a = vld1q_u8(qs + 32 * c), b = vld1q_u8(qs + 32 * c + 16);
        sb->q[4 * c + 0] = vreinterpretq_s8_u8(low_nibbles(a));
        sb->q[4 * c + 1] = vreinterpretq_s8_u8(low_nibbles(b));
        sb->q[4 * c + 2] = vreinterpretq_s8_u8(vshrq_n_u8(a, 4));
        sb->q[4 * c + 3] = vreinterpretq_s8_u8(vshrq_n_u8(b, 4));
    }
}

inline void unpack(const block_q4_K & b, superblock * sb) {
    k4_scales(b.scales, sb);
    k4_nibbles(b.qs, sb);
}

inline void unpack(const block_q5_K & b, superblock * sb) {
    k4_scales(b.scales, sb);
    k4_nibbles(b.qs, sb);
    // Sub-block j holds values 16j .. 16j + 15: fifth bit j / 2 of qh[16 (j % 2) + l].
    const uint8x16_t h[2] = {vld1q_u8(b.qh), vld1q_u8(b.qh + 16)};
    const uint8x16_t sixteen = vdupq_n_u8(16);
    for (int j = 0; j < QK_K / 16; j++) {
        const uint8x16_t add = vandq_u8(bit_set(h[j % 2], j / 2), sixteen);
        sb->q[j] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(sb->q[j]), add));
    }
}

// Q2_K / Q3_K low bits: sub-block j = 8h + 2s + half holds bits 2s..2s+1 of
// qs[32h + 16 half + l].
inline void two_bit_levels(const uint8_t * qs, superblock * sb) {
    for (int h = 0; h < 2; h++) {
        const uint8x16_t src[2] = {vld1q_u8(qs + 32 * h), vld1q_u8(qs + 32 * h + 16)};
        for (int s = 0; s < 4; s++) {
            for (int half = 0; half < 2; half++) {
                sb->q[8 * h + 2 * s + half] = vreinterpretq_s8_u8(two_bits(src[half], 2 * s));
            }
        }
    }
}

inline void unpack(const block_q2_K & b, superblock * sb) {
    for (int j = 0; j < QK_K / 16; j++) {
        sb->scale[j] = b.scales[j] & 0xF;
        sb->min[j] = (int16_t) (b.scales[j] >> 4);
    }
    two_bit_levels(b.qs, sb);
}

inline void unpack(const block_q3_K & b, superblock * sb) {
    for (int j = 0; j < QK_K / 16; j++) sb->scale[j] = tern_q3_K_scale(j, b.scales);
    two_bit_levels(b.qs, sb);
    // q - 4 where the high bit (bit j / 2 of hmask[16 (j % 2) + l]) is clear.
    const uint8x16_t h[2] = {vld1q_u8(b.hmask), vld1q_u8(b.hmask + 16)};
    const int8x16_t four = vdupq_n_s8(4);
    for (int j = 0; j < QK_K / 16; j++) {
        const int8x16_t off = vbicq_s8(four, vreinterpretq_s8_u8(bit_set(h[j % 2], j / 2)));
        sb->q[j] = vsubq_s8(sb->q[j], off);
    }
}

// Q6_K: sub-block j = 8h + 2s + half: low nibble (s / 2) of
// ql[64h + 32 (s & 1) + 16 half + l], high bits 2s..2s+1 of qh[32h + 16 half + l].
inline void unpack(const block_q6_K & b, superblock * sb) {
    for (int j = 0; j < QK_K / 16; j++) sb->scale[j] = b.scales[j];
    const int8x16_t bias = vdupq_n_s8(32);
    for (int h = 0; h < 2; h++) {
        const uint8x16_t ql[4] = {vld1q_u8(b.ql + 64 * h), vld1q_u8(b.ql + 64 * h + 16), vld1q_u8(b.ql + 64 * h + 32),
                                  vld1q_u8(b.ql + 64 * h + 48)};
        const uint8x16_t qh[2] = {vld1q_u8(b.qh + 32 * h), vld1q_u8(b.qh + 32 * h + 16)};
        for (int s = 0; s < 4; s++) {
            for (int half = 0; half < 2; half++) {
                const uint8x16_t src = ql[2 * (s & 1) + half];
                const uint8x16_t low = s < 2 ? low_nibbles(src) : vshrq_n_u8(src, 4);
                const uint8x16_t high = vshlq_n_u8(two_bits(qh[half], 2 * s), 4);
                sb->q[8 * h + 2 * s + half] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(low, high)), bias);
            }
        }
    }
}

// The four lanes of q . y over one 16-value sub-block (their total is the sub-block's sum).
inline int32x4_t lanes_smull(int8x16_t q, const int8_t * y) {
    const int8x16_t yv = vld1q_s8(y);
    return vpadalq_s16(vpaddlq_s16(vmull_s8(vget_low_s8(q), vget_low_s8(yv))), vmull_high_s8(q, yv));
}

#if defined(TERN_SDOT_FN)
TERN_SDOT_FN inline int32x4_t lanes_sdot(int8x16_t q, const int8_t * y) {
    return vdotq_s32(vdupq_n_s32(0), q, vld1q_s8(y));
}
#endif

// sum_j min[j] * bsums[j], exactly (|min| <= 63, |bsum| <= 16 * 128).
inline int32_t mins_dot(const superblock & sb, const block_q8_K & y) {
    const int16x8_t m0 = vld1q_s16(sb.min), m1 = vld1q_s16(sb.min + 8);
    const int16x8_t b0 = vld1q_s16(y.bsums), b1 = vld1q_s16(y.bsums + 8);
    int32x4_t s = vmull_s16(vget_low_s16(m0), vget_low_s16(b0));
    s = vmlal_high_s16(s, m0, b0);
    s = vmlal_s16(s, vget_low_s16(m1), vget_low_s16(b1));
    s = vmlal_high_s16(s, m1, b1);
    return vaddvq_s32(s);
}

enum float_step { NO_MINS, MINS_FIRST, MINS_AFTER };

// The loop of every kernel. `lanes` gives one sub-block's partial sums; four
// sub-blocks' totals (two pairwise adds) times their scales go into isum's lanes.
#define TERN_KQ_BODY(block_t, unpack, lanes, step)                                                  \
    const block_t * x = (const block_t *) vx;                                                       \
    const block_q8_K * y = (const block_q8_K *) vy;                                                 \
    float sum = 0.0f;                                                                               \
    for (int64_t ib = 0; ib < n / QK_K; ib++) {                                                     \
        superblock sb;                                                                              \
        unpack(x[ib], &sb);                                                                         \
        const int8_t * yq = y[ib].qs;                                                               \
        int32x4_t acc = vdupq_n_s32(0);                                                             \
        for (int g = 0; g < 4; g++) {                                                               \
            const int32x4_t s0 = lanes(sb.q[4 * g + 0], yq + 64 * g);                               \
            const int32x4_t s1 = lanes(sb.q[4 * g + 1], yq + 64 * g + 16);                          \
            const int32x4_t s2 = lanes(sb.q[4 * g + 2], yq + 64 * g + 32);                          \
            const int32x4_t s3 = lanes(sb.q[4 * g + 3], yq + 64 * g + 48);                          \
            const int32x4_t totals = vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3));            \
            acc = vmlaq_s32(acc, totals, vld1q_s32(sb.scale + 4 * g));                              \
        }                                                                                           \
        const float d = y[ib].d * f16(x[ib].d);                                                     \
        const float isum = (float) vaddvq_s32(acc);                                                 \
        if constexpr (step == NO_MINS) {                                                            \
            sum = fmaf(d, isum, sum);                                                               \
        } else {                                                                                    \
            const float dmin = y[ib].d * f16(x[ib].dmin);                                           \
            const float mins = (float) mins_dot(sb, y[ib]);                                         \
            if constexpr (step == MINS_FIRST) {                                                     \
                sum = fmaf(-dmin, mins, sum);                                                       \
                sum = fmaf(d, isum, sum);                                                           \
            } else {                                                                                \
                sum = fmaf(d, isum, sum);                                                           \
                sum = fmaf(-dmin, mins, sum);                                                       \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
    *s = sum;

// One kernel per block type and float step (the step's branch is resolved at
// compile time: Q3_K and Q6_K have no dmin to read).
template <class block_t, float_step step>
void vec_dot_smull(int64_t n, float * s, const void * vx, const void * vy) {
    TERN_KQ_BODY(block_t, unpack, lanes_smull, step)
}

#if defined(TERN_SDOT_FN)
template <class block_t, float_step step>
TERN_SDOT_FN void vec_dot_sdot(int64_t n, float * s, const void * vx, const void * vy) {
    TERN_KQ_BODY(block_t, unpack, lanes_sdot, step)
}
#endif

#undef TERN_KQ_BODY

// Sets type t to the SDOT or the SMULL kernel.
template <class block_t, float_step step>
void set_kernel(tern_kernel_set * ks, tern_type t, bool sdot) {
    ks->vec_dot[t] = vec_dot_smull<block_t, step>;
#if defined(TERN_SDOT_FN)
    if (sdot) ks->vec_dot[t] = vec_dot_sdot<block_t, step>;
#else
    (void) sdot;
#endif
}

}  // namespace

#endif  // __aarch64__

void tern_fill_vec_dot_kquant_neon(tern_kernel_set * ks) {
    (void) ks;
#if defined(__aarch64__)
    const bool sdot = neon_has_sdot();
    (void) sdot;
#if TERN_WITH_TYPE_Q2_K
    set_kernel<block_q2_K, MINS_FIRST>(ks, TERN_TYPE_Q2_K, sdot);
#endif
#if TERN_WITH_TYPE_Q3_K
    set_kernel<block_q3_K, NO_MINS>(ks, TERN_TYPE_Q3_K, sdot);
#endif
#if TERN_WITH_TYPE_Q4_K
    set_kernel<block_q4_K, MINS_AFTER>(ks, TERN_TYPE_Q4_K, sdot);
#endif
#if TERN_WITH_TYPE_Q5_K
    set_kernel<block_q5_K, MINS_AFTER>(ks, TERN_TYPE_Q5_K, sdot);
#endif
#if TERN_WITH_TYPE_Q6_K
    set_kernel<block_q6_K, NO_MINS>(ks, TERN_TYPE_Q6_K, sdot);
#endif
#endif
}

}  // namespace tern
