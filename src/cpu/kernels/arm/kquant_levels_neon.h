// K-quant super-blocks in the file layout unpacked for the ARM kernels
// (vec_dot_kquant_arm.h, gemm_kquant_i8mm.cpp). AArch64 only.
//
// unpack(block, &sb) writes the 256 levels of a Q2_K..Q6_K super-block as
// sixteen int8x16 vectors, vector j holding sub-block j (values 16j ..
// 16j + 15) in value order, with the sub-block scales (and, for the affine
// types, mins) as small integers, decoded exactly as the references
// (tensor/quants_k.cpp):
//   Q4_K/Q5_K  nibble u of qs[32c + l] is value 64c + 32u + l (+16 for the
//              fifth bit: bit i/32 of qh[i % 32], a VTST against that bit);
//   Q2_K/Q3_K  bits 2s..2s+1 of qs[32h + l] are value 128h + 32s + l (Q3_K
//              subtracts 4 where its hmask bit i/32 of hmask[i % 32] is clear);
//   Q6_K       low nibble from ql, two high bits from qh, minus 32.
// k_step<block>::value is the reference's float step per super-block:
//   NO_MINS (Q3_K, Q6_K)  sum = fma(d, isum, sum)
//   MINS_FIRST (Q2_K)     sum = fma(-dmin, mins, sum); sum = fma(d, isum, sum)
//   MINS_AFTER (Q4_K, Q5_K) sum = fma(d, isum, sum); sum = fma(-dmin, mins, sum)
#pragma once

#include <arm_neon.h>
#include <string.h>
#include "tensor/blocks.h"
#include "tensor/quants_k.h"

namespace tern {
namespace {  // each level's files compile their own copy (column_blocks.h says why)
namespace neon_kquant {

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

enum float_step { NO_MINS, MINS_FIRST, MINS_AFTER };

template <class block_t> struct k_step;
template <> struct k_step<block_q2_K> { static const float_step value = MINS_FIRST; };
template <> struct k_step<block_q3_K> { static const float_step value = NO_MINS; };
template <> struct k_step<block_q4_K> { static const float_step value = MINS_AFTER; };
template <> struct k_step<block_q5_K> { static const float_step value = MINS_AFTER; };
template <> struct k_step<block_q6_K> { static const float_step value = NO_MINS; };

// sum_j min[j] * bsums[j] of one super-block against one activation row,
// exactly (|min| <= 63, |bsum| <= 16 * 128).
inline int32_t mins_dot(const superblock & sb, const block_q8_K & y) {
    const int16x8_t m0 = vld1q_s16(sb.min), m1 = vld1q_s16(sb.min + 8);
    const int16x8_t b0 = vld1q_s16(y.bsums), b1 = vld1q_s16(y.bsums + 8);
    int32x4_t s = vmull_s16(vget_low_s16(m0), vget_low_s16(b0));
    s = vmlal_high_s16(s, m0, b0);
    s = vmlal_s16(s, vget_low_s16(m1), vget_low_s16(b1));
    s = vmlal_high_s16(s, m1, b1);
    return vaddvq_s32(s);
}

}  // namespace neon_kquant
}  // namespace
}  // namespace tern
