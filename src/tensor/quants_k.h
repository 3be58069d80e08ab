// Scalar references of the K-quants (Q2_K .. Q6_K) and of their activation
// type Q8_K. Every function follows the scheme of tensor/types.h; n is the
// number of values, a multiple of QK_K = 256 (one super-block).
//
// Block layouts (struct block_<t> in tensor/blocks.h; i = value index 0..255
// inside the super-block, "sub-block" = 16 values (Q2_K, Q3_K, Q6_K) or 32
// values (Q4_K, Q5_K)):
//
//   Q2_K  84 bytes   x[i] = d * sc[i/16] * q - dmin * m[i/16],   q in 0..3
//         scales[16]  low nibble sc, high nibble m (4 bits each)
//         qs[64]      2-bit q of value i = 128h + 32s + l (h 0..1, s 0..3,
//                     l 0..31) in bits 2s..2s+1 of qs[32h + l]
//         d, dmin     fp16
//   Q3_K  110 bytes  x[i] = d * (sc[i/16] - 32) * (q - 4 * !hbit), q in 0..3
//         hmask[32]   hbit of value i is bit i/32 of hmask[i % 32]
//         qs[64]      low 2 bits, arranged as in Q2_K
//         scales[12]  sixteen 6-bit sc: low 4 bits of sc[j] in scales[j % 8],
//                     low nibble for j < 8, high nibble for j >= 8; high 2 bits
//                     in bits 2*(j/4)..+1 of scales[8 + j % 4]
//         d           fp16
//   Q4_K  144 bytes  x[i] = d * sc[i/32] * q - dmin * m[i/32],   q in 0..15
//         d, dmin     fp16
//         scales[12]  eight 6-bit sc and eight 6-bit m ("k4" packing):
//                       j < 4:  sc = s[j] & 63,   m = s[j+4] & 63
//                       j >= 4: sc = (s[j+4] & 15) | (s[j-4] >> 6) << 4,
//                               m  = (s[j+4] >> 4) | (s[j]   >> 6) << 4
//         qs[128]     value i = 64c + 32u + l (c 0..3, u 0..1, l 0..31) in the
//                     low (u = 0) or high (u = 1) nibble of qs[32c + l]
//   Q5_K  176 bytes  as Q4_K with q in 0..31: the 5th bit of value i is bit
//                     i/32 of qh[i % 32]; d, dmin, scales[12], qh[32], qs[128]
//   Q6_K  210 bytes  x[i] = d * sc[i/16] * (q - 32),             q in 0..63
//         ql[128]     low 4 bits: value i = 128h + 32s + l sits in
//                     ql[64h + 32(s & 1) + l], low nibble for s < 2, high for s >= 2
//         qh[64]      high 2 bits of that value in bits 2s..2s+1 of qh[32h + l]
//         scales[16]  int8 sc;  d fp16
//   Q8_K  292 bytes  x[i] = d * qs[i]; d float, qs[256] int8, bsums[16] =
//                     sum of qs over each 16 values (lets a dot product fold
//                     the weight mins in with 16 multiplications)
//
// Quantizers reproduce llama.cpp's reference quantizers without importance
// matrix (quantize_row_<t>_ref in ggml-quants.c, what llama-quantize runs for
// these types when no imatrix is given) with the same float operations in the
// same order, so they write the same bytes. Each first fits every sub-block on
// its own (scale, and min for the affine types), then quantizes those scales
// against one super-block scale (and one for the mins), rounds d and dmin to
// fp16, and finally re-quantizes every value with the scales as stored.
// See quants_k_quantize.cpp for the fitting procedures.
//
// Dot products take x in <t> and y in Q8_K and keep the summation order of
// ggml's generic ggml_vec_dot_<t>_q8_K: integer sums per sub-block times the
// integer sub-block scale, mins through y's bsums, and only then floats.
#pragma once
#include <stdint.h>
#include <string.h>
#include "tensor/blocks.h"

namespace tern {

void tern_dequantize_row_q2_K(const void * src, float * dst, int64_t n);
void tern_quantize_row_q2_K(const float * src, void * dst, int64_t n);
void tern_vec_dot_q2_K(int64_t n, float * s, const void * x, const void * y);  // y: Q8_K

void tern_dequantize_row_q3_K(const void * src, float * dst, int64_t n);
void tern_quantize_row_q3_K(const float * src, void * dst, int64_t n);
void tern_vec_dot_q3_K(int64_t n, float * s, const void * x, const void * y);  // y: Q8_K

void tern_dequantize_row_q4_K(const void * src, float * dst, int64_t n);
void tern_quantize_row_q4_K(const float * src, void * dst, int64_t n);
void tern_vec_dot_q4_K(int64_t n, float * s, const void * x, const void * y);  // y: Q8_K

void tern_dequantize_row_q5_K(const void * src, float * dst, int64_t n);
void tern_quantize_row_q5_K(const float * src, void * dst, int64_t n);
void tern_vec_dot_q5_K(int64_t n, float * s, const void * x, const void * y);  // y: Q8_K

void tern_dequantize_row_q6_K(const void * src, float * dst, int64_t n);
void tern_quantize_row_q6_K(const float * src, void * dst, int64_t n);
void tern_vec_dot_q6_K(int64_t n, float * s, const void * x, const void * y);  // y: Q8_K

// Q8_K is an activation type only: no dot product of its own.
// d = max / -127 with max the value of largest magnitude, q = min(127, round(x / d)).
void tern_dequantize_row_q8_K(const void * src, float * dst, int64_t n);
void tern_quantize_row_q8_K(const float * src, void * dst, int64_t n);

// ---------------------------------------------------------------------------
// Shared by the K-quant sources (and by SIMD kernels that want a reference
// decoder): a super-block decoded to integers,
//   x[i] = d * scale[i/16] * q[i] - dmin * min[i/16]
// (types with 32-value sub-blocks repeat each scale and min twice; Q3_K and
// Q6_K have dmin = 0 and min = 0).
// ---------------------------------------------------------------------------
struct tern_k_superblock {
    float   d;
    float   dmin;
    int8_t  q[QK_K];
    int32_t scale[QK_K / 16];
    int32_t min[QK_K / 16];
};

typedef void (*tern_k_decode_fn)(const void * block, tern_k_superblock * out);
void tern_k_decode_q2_K(const void * block, tern_k_superblock * out);
void tern_k_decode_q3_K(const void * block, tern_k_superblock * out);
void tern_k_decode_q4_K(const void * block, tern_k_superblock * out);
void tern_k_decode_q5_K(const void * block, tern_k_superblock * out);
void tern_k_decode_q6_K(const void * block, tern_k_superblock * out);

// Q4_K / Q5_K: 6-bit scale and min of sub-block j (0..7) from scales[12].
static inline void tern_k4_scale_min(int j, const uint8_t * scales, uint8_t * sc, uint8_t * m) {
    if (j < 4) {
        *sc = scales[j] & 63;
        *m = scales[j + 4] & 63;
    } else {
        *sc = (uint8_t) ((scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4));
        *m = (uint8_t) ((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
    }
}

// Q3_K: the 6-bit scale of sub-block j (0..15) minus its offset 32.
static inline int tern_q3_K_scale(int j, const uint8_t * scales) {
    int low = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
    int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (low | (high << 4)) - 32;
}

// Round to nearest, ties to even, as ggml's nearest_int: adding 1.5 * 2^23
// leaves the rounded integer in the low mantissa bits. Exact for |x| < 2^22;
// beyond that (or for NaN) the result is wrong but defined, and the callers
// clamp it to their level range.
static inline int tern_nearest_int(float x) {
    float v = x + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return (bits & 0x007fffff) - 0x00400000;
}

}  // namespace tern
