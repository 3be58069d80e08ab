// Levels of the ARM interleaved layouts (repack_arm.h) as NEON registers, for
// the dotprod and i8mm tiles. Base NEON only (AND, shifts, SRI, BSL, TBL):
// the operations that make T = level << SHIFT for each format, one to three
// per register of 16 levels.
//
// Header only, in an anonymous namespace: each level's file instantiates it
// with its own flags (column_blocks.h says why).
#pragma once

#include <arm_neon.h>
#include <string.h>
#include <type_traits>
#include "cpu/kernels/arm/repack_arm.h"
#include "tensor/quants.h"

namespace tern {
namespace {

// f(std::integral_constant<int, 0>{}) .. f(integral_constant<int, N - 1>{}):
// a loop whose index is a constant, for the shift counts of NEON immediates.
template <int N, int I = 0, class F>
inline void static_for(F && f) {
    if constexpr (I < N) {
        f(std::integral_constant<int, I>{});
        static_for<N, I + 1>(f);
    }
}

// fp16 -> f32 (FCVT, exact).
inline float f16_arm(const uint8_t * p) {
    __fp16 v;
    memcpy(&v, p, sizeof(v));
    return (float) v;
}

// Four F16 scales (rows 0..3) as floats (FCVTL).
inline float32x4_t f16x4_arm(const uint8_t * p) { return vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(p))); }

// v << S for S in -7..7 (a right shift for negative S).
template <int S>
inline uint8x16_t shift_u8(uint8x16_t v) {
    if constexpr (S > 0) return vshlq_n_u8(v, S);
    else if constexpr (S < 0) return vshrq_n_u8(v, -S);
    else return v;
}

// int32 -> float of T sums: x / 2^SHIFT, exact (|x| < 2^24 or a multiple of 2^SHIFT < 2^31).
template <int SHIFT>
inline float32x4_t cvt_shift(int32x4_t x) {
    if constexpr (SHIFT == 0) return vcvtq_f32_s32(x);
    else return vcvtq_n_f32_s32(x, SHIFT);
}

// The eight level registers of a legacy unit u (register k: values 4k..4k+3
// of the 4 rows) as T = level << F::SHIFT.
template <class F>
inline void legacy_levels(const uint8_t * u, int8x16_t q[8]) {
    using repack_arm::fmt_kind;
    if constexpr (F::kind == fmt_kind::q8_0) {
        const int8x16x4_t a = vld1q_s8_x4((const int8_t *) u + F::QS);
        const int8x16x4_t b = vld1q_s8_x4((const int8_t *) u + F::QS + 64);
        for (int j = 0; j < 4; j++) {
            q[j] = a.val[j];
            q[4 + j] = b.val[j];
        }
    } else {
        const uint8x16x4_t z = vld1q_u8_x4(u + F::QS);
        if constexpr (F::kind == fmt_kind::q4_0) {  // nibble ^ 8: 16 * level
            const uint8x16_t high = vdupq_n_u8(0xF0);
            for (int j = 0; j < 4; j++) {
                q[j] = vreinterpretq_s8_u8(vshlq_n_u8(z.val[j], 4));
                q[4 + j] = vreinterpretq_s8_u8(vandq_u8(z.val[j], high));
            }
        } else if constexpr (F::kind == fmt_kind::q4_1) {
            const uint8x16_t low = vdupq_n_u8(0x0F);
            for (int j = 0; j < 4; j++) {
                q[j] = vreinterpretq_s8_u8(vandq_u8(z.val[j], low));
                q[4 + j] = vreinterpretq_s8_u8(vshrq_n_u8(z.val[j], 4));
            }
        } else if constexpr (F::kind == fmt_kind::iq4_nl) {
            const int8x16_t table = vld1q_s8(tern_kvalues_iq4nl);
            const uint8x16_t low = vdupq_n_u8(0x0F);
            for (int j = 0; j < 4; j++) {
                q[j] = vqtbl1q_s8(table, vandq_u8(z.val[j], low));
                q[4 + j] = vqtbl1q_s8(table, vshrq_n_u8(z.val[j], 4));
            }
        } else if constexpr (F::kind == fmt_kind::q5_0) {
            // (!bit) at bit 7 (H's bit k moved there), nibble << 3 below it (SRI).
            const uint8x16_t h = vld1q_u8(u + F::H), high = vdupq_n_u8(0xF0);
            static_for<8>([&](auto kc) {
                constexpr int k = decltype(kc)::value;
                const uint8x16_t n4 = k < 4 ? vshlq_n_u8(z.val[k % 4], 4) : vandq_u8(z.val[k % 4], high);
                q[k] = vreinterpretq_s8_u8(vsriq_n_u8(shift_u8<7 - k>(h), n4, 1));
            });
        } else {  // q5_1: the bit at bit 4 (BSL), the nibble below it
            const uint8x16_t h = vld1q_u8(u + F::H), low = vdupq_n_u8(0x0F), bit4 = vdupq_n_u8(0x10);
            static_for<8>([&](auto kc) {
                constexpr int k = decltype(kc)::value;
                const uint8x16_t n = k < 4 ? vandq_u8(z.val[k % 4], low) : vshrq_n_u8(z.val[k % 4], 4);
                q[k] = vreinterpretq_s8_u8(vbslq_u8(bit4, shift_u8<4 - k>(h), n));
            });
        }
    }
}

// ---- K-quants ----------------------------------------------------------------

// Q4_K / Q5_K scales and mins of a unit's 4 rows, sub-block s (s < 8) in
// sc[s] (int32, lane = row) and, for the mins, m16[s / 2] (int16: sub-block
// 2t in lanes 0..3, 2t + 1 in lanes 4..7). The file's packing (quants_k.h,
// tern_k4_scale_min), on the transposed bytes: with P, Q, S the three
// registers (byte 4j + r = row r's scales[4t + j] of third t):
//   s < 4: sc = P & 63, m = Q & 63
//   s >= 4: sc = (S & 15) | (P >> 6) << 4, m = (S >> 4) | (Q >> 6) << 4
inline void k4_scales(const uint8_t * u, int32x4_t sc[8], int16x8_t m16[4]) {
    const uint8x16x3_t psq = vld1q_u8_x3(u + repack_arm::K_SC);
    const uint8x16_t P = psq.val[0], Q = psq.val[1], S = psq.val[2], six = vdupq_n_u8(63);
    const uint8x16_t sc_lo = vandq_u8(P, six), m_lo = vandq_u8(Q, six);
    const uint8x16_t sc_hi = vsliq_n_u8(vandq_u8(S, vdupq_n_u8(15)), vshrq_n_u8(P, 6), 4);
    const uint8x16_t m_hi = vsliq_n_u8(vshrq_n_u8(S, 4), vshrq_n_u8(Q, 6), 4);
    const uint16x8_t s01 = vmovl_u8(vget_low_u8(sc_lo)), s23 = vmovl_high_u8(sc_lo);
    const uint16x8_t s45 = vmovl_u8(vget_low_u8(sc_hi)), s67 = vmovl_high_u8(sc_hi);
    sc[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(s01)));
    sc[1] = vreinterpretq_s32_u32(vmovl_high_u16(s01));
    sc[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(s23)));
    sc[3] = vreinterpretq_s32_u32(vmovl_high_u16(s23));
    sc[4] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(s45)));
    sc[5] = vreinterpretq_s32_u32(vmovl_high_u16(s45));
    sc[6] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(s67)));
    sc[7] = vreinterpretq_s32_u32(vmovl_high_u16(s67));
    m16[0] = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(m_lo)));
    m16[1] = vreinterpretq_s16_u16(vmovl_high_u8(m_lo));
    m16[2] = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(m_hi)));
    m16[3] = vreinterpretq_s16_u16(vmovl_high_u8(m_hi));
}

// The 16 level registers of Q4_K / Q5_K sub-blocks 2c and 2c + 1 (c < 4) of a
// unit: lo[p] = values 4p..4p+3 of sub-block 2c, hi[p] the same of 2c + 1
// (p < 8). Q5_K adds the fifth bit (QH chunk p, bit 2c or 2c + 1) at bit 4.
template <bool HIGH>
inline void k45_levels(const uint8_t * u, int c, int8x16_t lo[8], int8x16_t hi[8]) {
    const size_t QS = HIGH ? repack_arm::Q5K_QS : repack_arm::Q4K_QS;
    const uint8x16x4_t z0 = vld1q_u8_x4(u + QS + 128 * c), z1 = vld1q_u8_x4(u + QS + 128 * c + 64);
    const uint8x16_t low = vdupq_n_u8(0x0F);
    uint8x16_t l[8], h[8];
    for (int p = 0; p < 4; p++) {
        l[p] = vandq_u8(z0.val[p], low);
        h[p] = vshrq_n_u8(z0.val[p], 4);
        l[4 + p] = vandq_u8(z1.val[p], low);
        h[4 + p] = vshrq_n_u8(z1.val[p], 4);
    }
    if constexpr (HIGH) {
        // bit 2c of the qh chunk to bit 4 of lo, bit 2c + 1 to bit 4 of hi
        const uint8x16x4_t b0 = vld1q_u8_x4(u + repack_arm::Q5K_QH), b1 = vld1q_u8_x4(u + repack_arm::Q5K_QH + 64);
        const uint8x16_t bit4 = vdupq_n_u8(0x10);
        const int8x16_t sl = vdupq_n_s8((int8_t) (4 - 2 * c)), sh = vdupq_n_s8((int8_t) (3 - 2 * c));
        for (int p = 0; p < 8; p++) {
            const uint8x16_t b = p < 4 ? b0.val[p] : b1.val[p - 4];
            l[p] = vbslq_u8(bit4, vshlq_u8(b, sl), l[p]);
            h[p] = vbslq_u8(bit4, vshlq_u8(b, sh), h[p]);
        }
    }
    for (int p = 0; p < 8; p++) {
        lo[p] = vreinterpretq_s8_u8(l[p]);
        hi[p] = vreinterpretq_s8_u8(h[p]);
    }
}

// Q6_K scales, sub-block j (j < 16) in sc[j] (int32, lane = row).
inline void q6_scales(const uint8_t * u, int32x4_t sc[16]) {
    const int8x16x4_t s = vld1q_s8_x4((const int8_t *) u + repack_arm::Q6K_SC);
    for (int t = 0; t < 4; t++) {
        const int16x8_t a = vmovl_s8(vget_low_s8(s.val[t])), b = vmovl_high_s8(s.val[t]);
        sc[4 * t + 0] = vmovl_s16(vget_low_s16(a));
        sc[4 * t + 1] = vmovl_high_s16(a);
        sc[4 * t + 2] = vmovl_s16(vget_low_s16(b));
        sc[4 * t + 3] = vmovl_high_s16(b);
    }
}

// The 4 level registers of Q6_K sub-block J (J < 16: quads 4J .. 4J + 3,
// values 16J .. 16J + 15) of a unit, as T = 4 * level: the stored high bits
// (already ^ 2) at bits 6..7 over the low nibble << 2 (SRI). Quad k: low
// nibble of QL chunk k % 32 (high nibble for k >= 32), high bits of QH chunk
// k % 16, field k / 16 (= J / 4).
template <int J>
inline void q6_levels(const uint8_t * u, int8x16_t q[4]) {
    using namespace repack_arm;
    const uint8x16x4_t z = vld1q_u8_x4(u + Q6K_QL + 64 * (J % 8));
    const uint8x16x4_t h = vld1q_u8_x4(u + Q6K_QH + 64 * (J % 4));
    for (int p = 0; p < 4; p++) {
        const uint8x16_t n4 = J < 8 ? vshlq_n_u8(z.val[p], 4) : vandq_u8(z.val[p], vdupq_n_u8(0xF0));
        q[p] = vreinterpretq_s8_u8(vsriq_n_u8(shift_u8<6 - 2 * (J / 4)>(h.val[p]), n4, 2));
    }
}

}  // namespace
}  // namespace tern
