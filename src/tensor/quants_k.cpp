// K-quant decoders, dequantizers and the Q8_K activation type.
// Layouts: tensor/quants_k.h.
#include "tensor/quants_k.h"

#include <float.h>
#include <math.h>
#include <string.h>

namespace tern {

// Reference arithmetic: no fused multiply-add, whatever the target flags.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// 2 bits of value i = 128h + 32s + l at bits 2s of qs[32h + l] (Q2_K, Q3_K).
static inline int unpack_2bit(const uint8_t * qs, int i) {
    return (qs[32 * (i / 128) + i % 32] >> (2 * ((i / 32) % 4))) & 3;
}

// 4 bits of value i = 64c + 32u + l in nibble u of qs[32c + l] (Q4_K, Q5_K).
static inline int unpack_4bit(const uint8_t * qs, int i) {
    return (qs[32 * (i / 64) + i % 32] >> (4 * ((i / 32) % 2))) & 0xF;
}

// Bit i/32 of bits[i % 32] (Q3_K hmask, Q5_K qh).
static inline int high_bit(const uint8_t * bits, int i) { return (bits[i % 32] >> (i / 32)) & 1; }

void tern_k_decode_q2_K(const void * block, tern_k_superblock * out) {
    const block_q2_K * b = (const block_q2_K *) block;
    out->d = tern_fp16_to_fp32(b->d);
    out->dmin = tern_fp16_to_fp32(b->dmin);
    for (int i = 0; i < QK_K; ++i) out->q[i] = (int8_t) unpack_2bit(b->qs, i);
    for (int j = 0; j < QK_K / 16; ++j) {
        out->scale[j] = b->scales[j] & 0xF;
        out->min[j] = b->scales[j] >> 4;
    }
}

void tern_k_decode_q3_K(const void * block, tern_k_superblock * out) {
    const block_q3_K * b = (const block_q3_K *) block;
    out->d = tern_fp16_to_fp32(b->d);
    out->dmin = 0.0f;
    for (int i = 0; i < QK_K; ++i) out->q[i] = (int8_t) (unpack_2bit(b->qs, i) - (high_bit(b->hmask, i) ? 0 : 4));
    for (int j = 0; j < QK_K / 16; ++j) {
        out->scale[j] = tern_q3_K_scale(j, b->scales);
        out->min[j] = 0;
    }
}

// Q4_K and Q5_K share d, dmin and the k4 scale packing.
static void decode_k4_scales(tern_fp16 d, tern_fp16 dmin, const uint8_t * scales, tern_k_superblock * out) {
    out->d = tern_fp16_to_fp32(d);
    out->dmin = tern_fp16_to_fp32(dmin);
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        tern_k4_scale_min(j, scales, &sc, &m);
        out->scale[2 * j] = out->scale[2 * j + 1] = sc;
        out->min[2 * j] = out->min[2 * j + 1] = m;
    }
}

void tern_k_decode_q4_K(const void * block, tern_k_superblock * out) {
    const block_q4_K * b = (const block_q4_K *) block;
    decode_k4_scales(b->d, b->dmin, b->scales, out);
    for (int i = 0; i < QK_K; ++i) out->q[i] = (int8_t) unpack_4bit(b->qs, i);
}

void tern_k_decode_q5_K(const void * block, tern_k_superblock * out) {
    const block_q5_K * b = (const block_q5_K *) block;
    decode_k4_scales(b->d, b->dmin, b->scales, out);
    for (int i = 0; i < QK_K; ++i) out->q[i] = (int8_t) (unpack_4bit(b->qs, i) + 16 * high_bit(b->qh, i));
}

void tern_k_decode_q6_K(const void * block, tern_k_superblock * out) {
    const block_q6_K * b = (const block_q6_K *) block;
    out->d = tern_fp16_to_fp32(b->d);
    out->dmin = 0.0f;
    for (int i = 0; i < QK_K; ++i) {
        int h = i / 128, s = (i / 32) % 4, l = i % 32;
        int low = (b->ql[64 * h + 32 * (s & 1) + l] >> (4 * (s / 2))) & 0xF;
        int high = (b->qh[32 * h + l] >> (2 * s)) & 3;
        out->q[i] = (int8_t) ((low | (high << 4)) - 32);
    }
    for (int j = 0; j < QK_K / 16; ++j) {
        out->scale[j] = b->scales[j];
        out->min[j] = 0;
    }
}

// x = (d * scale) * q - dmin * min, the operations of ggml's dequantize_row_<t>
// (for Q3_K / Q6_K the "- 0" leaves the product unchanged), so the floats are
// the same as llama.cpp's.
static void dequantize_k(const void * src, float * dst, int64_t n, size_t block_bytes, tern_k_decode_fn decode) {
    const uint8_t * blocks = (const uint8_t *) src;
    tern_k_superblock sb;
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        decode(blocks + ib * block_bytes, &sb);
        float * y = dst + ib * QK_K;
        for (int j = 0; j < QK_K / 16; ++j) {
            const float dl = sb.d * (float) sb.scale[j];
            const float ml = sb.dmin * (float) sb.min[j];
            for (int l = 0; l < 16; ++l) y[16 * j + l] = dl * (float) sb.q[16 * j + l] - ml;
        }
    }
}

void tern_dequantize_row_q2_K(const void * src, float * dst, int64_t n) {
    dequantize_k(src, dst, n, sizeof(block_q2_K), tern_k_decode_q2_K);
}
void tern_dequantize_row_q3_K(const void * src, float * dst, int64_t n) {
    dequantize_k(src, dst, n, sizeof(block_q3_K), tern_k_decode_q3_K);
}
void tern_dequantize_row_q4_K(const void * src, float * dst, int64_t n) {
    dequantize_k(src, dst, n, sizeof(block_q4_K), tern_k_decode_q4_K);
}
void tern_dequantize_row_q5_K(const void * src, float * dst, int64_t n) {
    dequantize_k(src, dst, n, sizeof(block_q5_K), tern_k_decode_q5_K);
}
void tern_dequantize_row_q6_K(const void * src, float * dst, int64_t n) {
    dequantize_k(src, dst, n, sizeof(block_q6_K), tern_k_decode_q6_K);
}

void tern_dequantize_row_q8_K(const void * src, float * dst, int64_t n) {
    const block_q8_K * x = (const block_q8_K *) src;
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        for (int i = 0; i < QK_K; ++i) dst[ib * QK_K + i] = x[ib].d * (float) x[ib].qs[i];
    }
}

void tern_quantize_row_q8_K(const float * src, void * dst, int64_t n) {
    block_q8_K * y = (block_q8_K *) dst;
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        const float * x = src + ib * QK_K;
        float max = 0.0f, amax = 0.0f;
        bool finite = true;
        for (int i = 0; i < QK_K; ++i) {
            float ax = fabsf(x[i]);
            if (ax > amax) { amax = ax; max = x[i]; }
            finite = finite && ax <= FLT_MAX;
        }
        if (!finite) {  // NaN/Inf: levels 0, scale NaN, so the NaN reaches the logits
            memset(&y[ib], 0, sizeof(block_q8_K));
            y[ib].d = NAN;
            continue;
        }
        if (amax == 0.0f) {
            memset(&y[ib], 0, sizeof(block_q8_K));
            continue;
        }
        // -127 (not -128): the largest magnitude maps to +-127 whatever its sign.
        const float iscale = -127.0f / max;
        for (int i = 0; i < QK_K; ++i) {
            int v = tern_nearest_int(iscale * x[i]);
            y[ib].qs[i] = (int8_t) (v < 127 ? v : 127);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += y[ib].qs[16 * j + l];
            y[ib].bsums[j] = (int16_t) sum;
        }
        y[ib].d = 1.0f / iscale;
    }
}

}  // namespace tern
