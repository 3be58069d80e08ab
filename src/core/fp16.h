// IEEE half (F16) and bfloat16 (BF16) conversions, scalar and exact
// (round-to-nearest-even on the way down, like the F16C instructions).
#pragma once
#include <stdint.h>
#include <string.h>

namespace tern {

typedef uint16_t tern_fp16;
typedef uint16_t tern_bf16;

static inline float tern_bits_to_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t tern_f32_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static inline float tern_fp16_to_fp32(tern_fp16 h) {
    uint32_t sign = (uint32_t) (h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    if (exp == 0x1f) return tern_bits_to_f32(sign | 0x7f800000u | (man << 13));  // inf/nan
    if (exp == 0) {
        if (man == 0) return tern_bits_to_f32(sign);
        // subnormal: value = man * 2^-24
        float v = (float) man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return tern_bits_to_f32(sign | ((exp + 112) << 23) | (man << 13));
}

static inline tern_fp16 tern_fp32_to_fp16(float f) {
    uint32_t x = tern_f32_to_bits(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (tern_fp16) (sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) return (tern_fp16) (sign | 0x7c00);  // rounds to inf
    if (ax < 0x38800000u) {
        // subnormal or zero in half: round(ax_value / 2^-24) with ties to even
        if (ax < 0x33000000u) return (tern_fp16) sign;  // < 2^-25: rounds to 0
        uint32_t e = ax >> 23;
        uint32_t m = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e;  // 14 + (113 - e) - ... gives value in units of 2^-24
        uint32_t r = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (tern_fp16) (sign | r);
    }
    uint32_t r = ((ax >> 13) - (112u << 10));
    uint32_t rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (tern_fp16) (sign | r);
}

static inline float tern_bf16_to_fp32(tern_bf16 h) { return tern_bits_to_f32((uint32_t) h << 16); }

static inline tern_bf16 tern_fp32_to_bf16(float f) {
    uint32_t x = tern_f32_to_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (tern_bf16) ((x >> 16) | 64);  // quiet nan
    return (tern_bf16) ((x + (0x7fff + ((x >> 16) & 1))) >> 16);
}

}  // namespace tern
