// Block levels of the legacy formats in the file layout for the ARM kernels
// (vec_dot_legacy_arm.h, gemm_legacy_i8mm.cpp): per format its weight block, activation block,
// whether it is affine (x = d * level + m; the activation then carries s),
// and levels(b, lo, hi): the 32 levels of a block as two int8x16 (values
// 0..15 in lo, 16..31 in hi), decoded exactly as the references
// (tensor/quants_legacy.cpp) do:
//   Q8_0    the bytes;           Q4_0  nibble - 8;        Q4_1  nibble;
//   Q5_0    (nibble | bit << 4) - 16; Q5_1 nibble | bit << 4 (the fifth bits
//           spread from qh by VTST against per-lane bit masks);
//   IQ4_NL  the table value of the nibble (TBL).
// Element j < 16 of a 4-bit block is the low nibble of qs[j], element
// j + 16 its high nibble. Q5_*/IQ4_NL need AArch64 (TBL over 16 bytes).
#pragma once

#include <arm_neon.h>
#include <string.h>
#include "core/fp16.h"
#include "tensor/blocks.h"
#include "tensor/quants.h"

namespace tern {
namespace {  // each level's files compile their own copy (column_blocks.h says why)
namespace neon_legacy {

const int QK = 32;  // values per block

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

// ---- levels: values 0..15 in *lo, 16..31 in *hi ------------------------------

// Element j < 16 is the low nibble of qs[j], element j + 16 its high nibble.
inline void nibbles(const uint8_t * qs, uint8x16_t * lo, uint8x16_t * hi) {
    const uint8x16_t v = vld1q_u8(qs);
    *lo = vandq_u8(v, vdupq_n_u8(0x0F));
    *hi = vshrq_n_u8(v, 4);
}

inline int8x16_t s8(uint8x16_t v) { return vreinterpretq_s8_u8(v); }

struct fmt_q8_0 {
    typedef block_q8_0 block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static inline void levels(const block & b, int8x16_t * lo, int8x16_t * hi) {
        *lo = vld1q_s8(b.qs);
        *hi = vld1q_s8(b.qs + 16);
    }
};

struct fmt_q4_0 {  // level = nibble - 8
    typedef block_q4_0 block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static inline void levels(const block & b, int8x16_t * lo, int8x16_t * hi) {
        uint8x16_t l, h;
        nibbles(b.qs, &l, &h);
        *lo = vsubq_s8(s8(l), vdupq_n_s8(8));
        *hi = vsubq_s8(s8(h), vdupq_n_s8(8));
    }
};

struct fmt_q4_1 {  // level = nibble; x = d * level + m
    typedef block_q4_1 block;
    typedef block_q8_1 act;
    static const bool affine = true;
    static inline void levels(const block & b, int8x16_t * lo, int8x16_t * hi) {
        uint8x16_t l, h;
        nibbles(b.qs, &l, &h);
        *lo = s8(l);
        *hi = s8(h);
    }
};

#if defined(__aarch64__)
// The fifth bits: bit j of the 32-bit qh is value j's bit 4. Bytes 0 and 1
// of qh spread over the 16 lanes of *lo, bytes 2 and 3 over *hi; a lane keeps
// 16 where its own bit is set.
inline void fifth_bits(const uint8_t * qh, uint8x16_t * lo, uint8x16_t * hi) {
    static const uint8_t k_bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t bit = vld1q_u8(k_bit), sixteen = vdupq_n_u8(16);
    const uint8x16_t b01 = vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1]));
    const uint8x16_t b23 = vcombine_u8(vdup_n_u8(qh[2]), vdup_n_u8(qh[3]));
    *lo = vandq_u8(vtstq_u8(b01, bit), sixteen);
    *hi = vandq_u8(vtstq_u8(b23, bit), sixteen);
}

struct fmt_q5_0 {  // level = (nibble | bit << 4) - 16
    typedef block_q5_0 block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static inline void levels(const block & b, int8x16_t * lo, int8x16_t * hi) {
        uint8x16_t l, h, bl, bh;
        nibbles(b.qs, &l, &h);
        fifth_bits(b.qh, &bl, &bh);
        *lo = vsubq_s8(s8(vorrq_u8(l, bl)), vdupq_n_s8(16));
        *hi = vsubq_s8(s8(vorrq_u8(h, bh)), vdupq_n_s8(16));
    }
};

struct fmt_q5_1 {  // level = nibble | bit << 4; x = d * level + m
    typedef block_q5_1 block;
    typedef block_q8_1 act;
    static const bool affine = true;
    static inline void levels(const block & b, int8x16_t * lo, int8x16_t * hi) {
        uint8x16_t l, h, bl, bh;
        nibbles(b.qs, &l, &h);
        fifth_bits(b.qh, &bl, &bh);
        *lo = s8(vorrq_u8(l, bl));
        *hi = s8(vorrq_u8(h, bh));
    }
};

struct fmt_iq4_nl {  // level = table[nibble]
    typedef block_iq4_nl block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static inline void levels(const block & b, int8x16_t * lo, int8x16_t * hi) {
        const int8x16_t table = vld1q_s8(tern_kvalues_iq4nl);
        uint8x16_t l, h;
        nibbles(b.qs, &l, &h);
        *lo = vqtbl1q_s8(table, l);
        *hi = vqtbl1q_s8(table, h);
    }
};
#endif

}  // namespace neon_legacy
}  // namespace
}  // namespace tern
