// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1 (quantize, dequantize, dot) and the
// decoding side of IQ4_NL (dequantize, dot; its quantizer is in quants_iq4nl.cpp).
//
// All these formats hold 32 values per block as small integers ("levels") and
// fp16 scales: value = d * level (+ m for the affine formats Q4_1/Q5_1).
// Decoding is written once: each format says how to unpack its levels as
// signed integers, and the row loops (dequantize, dot with a Q8 activation
// row) are shared.
//
// Packing, as ggml: qs[j] holds level j in its low nibble and level j + 16 in
// its high nibble (j < 16); Q5 formats keep bit 4 of level j in bit j of the
// little-endian 32-bit qh.
#include <float.h>
#include <math.h>
#include <string.h>
#include "tensor/quants.h"

namespace tern {

// Bit-identical to llama.cpp only if every float operation is the one its
// kernels do: the fused multiply-adds are written with fmaf(), and nothing
// else may be contracted, whatever the target flags (GCC contracts across
// statements by default as soon as FMA is available).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace {

const int QK = 32;  // values per block, every format here

// ---------------------------------------------------------------- decoding

inline void unpack_nibbles(const uint8_t * qs, int8_t * q /* [32] */, int offset) {
    for (int j = 0; j < QK / 2; j++) {
        q[j] = (int8_t) ((qs[j] & 0x0F) - offset);
        q[j + QK / 2] = (int8_t) ((qs[j] >> 4) - offset);
    }
}

inline int high_bit(const uint8_t * qh, int j) { return (qh[j >> 3] >> (j & 7)) & 1; }

// Nibbles plus the fifth bit from qh, minus offset.
inline void unpack_5bit(const uint8_t * qs, const uint8_t * qh, int8_t * q /* [32] */, int offset) {
    unpack_nibbles(qs, q, 0);
    for (int j = 0; j < QK; j++) q[j] = (int8_t) ((q[j] | (high_bit(qh, j) << 4)) - offset);
}

// Dot products sum in one of two float orders. Integer sums are exact in
// any order; only the float steps below matter, and every SIMD kernel
// repeats them so that it gives the reference's bits.
//
// PER_BLOCK (Q4_0, Q4_1, Q8_0, Q5_0, Q5_1): each output has ONE float
// accumulator, fed once per 32-element block (llama.cpp's AMX kernels,
// ggml-cpu/amx/mmq.cpp, and ggml's scalar code sum so):
//   acc = fma((float) sum_j q[j] * y.qs[j], x.d * y.d, acc)
//   acc = fma(x.m, y.s, acc)                       Q4_1, Q5_1
// Q5_0 and Q5_1 followed llama.cpp's AVX2/tinyBLAS LANES8 order until
// 2026-11-26; the semantic parity freed them, and one int32 block
// total per output instead of eight float lanes made the prompt tiles of
// qwen2.5-0.5b Q4_K_M (whose 896-wide matrices fall back to Q5_0) 1.5-1.9x
// faster. Parity with llama.cpp is the envelope rule, not its lane order.
//
// LANES8 (IQ4_NL: no AMX kernel): one __m256 accumulator = 8
// float lanes; per block, lane l gets the int sum of elements 4l..4l+3
// (maddubs + madd, or dpbusd):
//   acc_l = fma(x.d * y.d, (float) lane_l, acc_l)
// then hsum of the __m256 (high half onto low half, then pairs):
//   ((acc_0 + acc_4) + (acc_2 + acc_6)) + ((acc_1 + acc_5) + (acc_3 + acc_7)).
// - IQ4_NL with >= 2 activation rows (prompt): tinyBLAS_Q0_AVX (llamafile
//   sgemm); ggml_vec_dot_iq4_nl_q8_0 keeps two accumulators (even and odd
//   blocks) added before the hsum: this follows the prompt path. (The AVX2
//   tiles cannot give IQ4_NL's signed levels a one-total block cheaply:
//   maddubs would saturate on table value + 128.)
// (The AMX kernels apply only when the weight has a multiple of 32 rows, as
// every tensor of the test models does.)
enum dot_order { PER_BLOCK, LANES8 };

// One struct per format: its block, the activation block of its dot product,
// whether it has a minimum m (and so its activation a sum s), its levels and
// its dot order.
struct fmt_q4_0 {
    typedef block_q4_0 block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static const dot_order order = PER_BLOCK;
    static void levels(const block & b, int8_t * q) { unpack_nibbles(b.qs, q, 8); }
};
struct fmt_q4_1 {
    typedef block_q4_1 block;
    typedef block_q8_1 act;
    static const bool affine = true;
    static const dot_order order = PER_BLOCK;
    static void levels(const block & b, int8_t * q) { unpack_nibbles(b.qs, q, 0); }
};
struct fmt_q5_0 {
    typedef block_q5_0 block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static const dot_order order = PER_BLOCK;
    static void levels(const block & b, int8_t * q) { unpack_5bit(b.qs, b.qh, q, 16); }
};
struct fmt_q5_1 {
    typedef block_q5_1 block;
    typedef block_q8_1 act;
    static const bool affine = true;
    static const dot_order order = PER_BLOCK;
    static void levels(const block & b, int8_t * q) { unpack_5bit(b.qs, b.qh, q, 0); }
};
struct fmt_q8_0 {
    typedef block_q8_0 block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static const dot_order order = PER_BLOCK;
    static void levels(const block & b, int8_t * q) { memcpy(q, b.qs, QK); }
};
struct fmt_q8_1 {  // dequantized only; s is not part of the values
    typedef block_q8_1 block;
    typedef block_q8_1 act;
    static const bool affine = false;
    static void levels(const block & b, int8_t * q) { memcpy(q, b.qs, QK); }
};
struct fmt_iq4_nl {
    typedef block_iq4_nl block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static const dot_order order = LANES8;
    static void levels(const block & b, int8_t * q) {
        for (int j = 0; j < QK / 2; j++) {
            q[j] = tern_kvalues_iq4nl[b.qs[j] & 0x0F];
            q[j + QK / 2] = tern_kvalues_iq4nl[b.qs[j] >> 4];
        }
    }
};

template <typename F>
void dequantize_row(const void * src, float * dst, int64_t n) {
    const typename F::block * x = (const typename F::block *) src;
    for (int64_t ib = 0; ib < n / QK; ib++) {
        int8_t q[QK];
        F::levels(x[ib], q);
        const float d = tern_fp16_to_fp32(x[ib].d);
        float * y = dst + ib * QK;
        if constexpr (F::affine) {
            const float m = tern_fp16_to_fp32(x[ib].m);
            for (int j = 0; j < QK; j++) y[j] = q[j] * d + m;
        } else {
            for (int j = 0; j < QK; j++) y[j] = q[j] * d;
        }
    }
}

const int LANES = 8;              // float lanes of one __m256 accumulator
const int PER_LANE = QK / LANES;  // consecutive elements per lane and block

inline int int_dot(const int8_t * q, const int8_t * y, int count) {
    int sum = 0;
    for (int j = 0; j < count; j++) sum += q[j] * y[j];
    return sum;
}

inline float hsum_lanes(const float * acc /* [8] */) {
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

// x: n values in F, y: n values in F::act.
template <typename F>
void vec_dot(int64_t n, float * s, const void * vx, const void * vy) {
    const typename F::block * x = (const typename F::block *) vx;
    const typename F::act * y = (const typename F::act *) vy;
    float acc[LANES] = {0.0f};  // PER_BLOCK uses acc[0] only
    float summs = 0.0f;         // LANES8 affine formats only
    for (int64_t ib = 0; ib < n / QK; ib++) {
        int8_t q[QK];
        F::levels(x[ib], q);
        const float d = tern_fp16_to_fp32(x[ib].d) * tern_fp16_to_fp32(y[ib].d);
        if constexpr (F::order == PER_BLOCK) {
            acc[0] = fmaf((float) int_dot(q, y[ib].qs, QK), d, acc[0]);
            if constexpr (F::affine) acc[0] = fmaf(tern_fp16_to_fp32(x[ib].m), tern_fp16_to_fp32(y[ib].s), acc[0]);
        } else {
            for (int l = 0; l < LANES; l++) {
                const int lane = int_dot(q + l * PER_LANE, y[ib].qs + l * PER_LANE, PER_LANE);
                acc[l] = fmaf(d, (float) lane, acc[l]);
            }
            if constexpr (F::affine) summs = fmaf(tern_fp16_to_fp32(x[ib].m), tern_fp16_to_fp32(y[ib].s), summs);
        }
    }
    if constexpr (F::order == PER_BLOCK) *s = acc[0];
    else *s = F::affine ? hsum_lanes(acc) + summs : hsum_lanes(acc);
}

// ---------------------------------------------------------------- encoding

// A block with a NaN or Inf cannot be quantized (float -> int of a NaN is
// undefined): its levels become 0 and its scale NaN, so the NaN reaches the
// logits, where tern_decode reports it, instead of turning into garbage.
bool block_finite(const float * x) {
    for (int j = 0; j < QK; j++) {
        if (!(fabsf(x[j]) <= FLT_MAX)) return false;
    }
    return true;
}

// Q4_0 / Q5_0 levels in [0, 2 * half): the value of largest magnitude maps to
// level 0 exactly. Returns d.
float levels_symmetric(const float * x, int half, uint8_t * L /* [32] */) {
    if (!block_finite(x)) {
        memset(L, 0, QK);
        return NAN;
    }
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < QK; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    const float d = max / (float) -half;
    const float id = d ? 1.0f / d : 0.0f;
    const float offset = (float) half + 0.5f;
    for (int j = 0; j < QK; j++) {
        const float xi = x[j] * id;
        const int l = (int) (xi + offset);  // truncation, as ggml's (int8_t) cast
        L[j] = (uint8_t) (l < 2 * half - 1 ? l : 2 * half - 1);
    }
    return d;
}

// Q4_1 / Q5_1 levels in [0, nmax]: min maps to 0, max to nmax. Returns d.
float levels_affine(const float * x, int nmax, uint8_t * L /* [32] */, float * out_min) {
    if (!block_finite(x)) {
        memset(L, 0, QK);
        *out_min = NAN;
        return NAN;
    }
    float min = FLT_MAX;
    float max = -FLT_MAX;
    for (int j = 0; j < QK; j++) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / (float) nmax;
    const float id = d ? 1.0f / d : 0.0f;
    for (int j = 0; j < QK; j++) {
        const float xi = (x[j] - min) * id;
        const int l = (int) (xi + 0.5f);
        L[j] = (uint8_t) (l < nmax ? l : nmax);
    }
    *out_min = min;
    return d;
}

// Q8 levels with d = amax / 127. Returns d. Two roundings exist in ggml:
// - the reference quantizer (quantize_row_q8_0_ref, what llama-quantize
//   writes into files): q = roundf(x * (1 / d)), ties away from zero;
// - the CPU backend's activation quantizer (its AVX2/AVX-512 routine on x86,
//   the one whose output feeds vec_dot): q = round-half-even(x * (127 / amax)).
// They differ on ties and where 1/d and 127/amax differ in the last bit, and
// a single differing level is visible in the logits of a quantized model.
enum q8_rounding { Q8_REFERENCE, Q8_CPU_BACKEND };

template <q8_rounding R>
float levels_q8(const float * x, int8_t * qs /* [32] */) {
    if (!block_finite(x)) {
        memset(qs, 0, QK);
        return NAN;
    }
    float amax = 0.0f;
    for (int j = 0; j < QK; j++) amax = fmaxf(amax, fabsf(x[j]));
    const float d = amax / 127.0f;
    if (R == Q8_REFERENCE) {
        const float id = d ? 1.0f / d : 0.0f;
        for (int j = 0; j < QK; j++) qs[j] = (int8_t) roundf(x[j] * id);
    } else {
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        for (int j = 0; j < QK; j++) qs[j] = (int8_t) nearbyintf(x[j] * id);  // default mode: ties to even
    }
    return d;
}

void pack_nibbles(const uint8_t * L, uint8_t * qs /* [16] */) {
    for (int j = 0; j < QK / 2; j++) qs[j] = (uint8_t) ((L[j] & 0x0F) | ((L[j + QK / 2] & 0x0F) << 4));
}

void pack_high_bits(const uint8_t * L, uint8_t * qh /* [4] */) {
    memset(qh, 0, 4);
    for (int j = 0; j < QK; j++) qh[j >> 3] |= (uint8_t) (((L[j] >> 4) & 1) << (j & 7));
}

}  // namespace

void tern_quantize_row_q4_0(const float * src, void * dst, int64_t n) {
    block_q4_0 * y = (block_q4_0 *) dst;
    for (int64_t ib = 0; ib < n / QK; ib++) {
        uint8_t L[QK];
        y[ib].d = tern_fp32_to_fp16(levels_symmetric(src + ib * QK, 8, L));
        pack_nibbles(L, y[ib].qs);
    }
}

void tern_quantize_row_q5_0(const float * src, void * dst, int64_t n) {
    block_q5_0 * y = (block_q5_0 *) dst;
    for (int64_t ib = 0; ib < n / QK; ib++) {
        uint8_t L[QK];
        y[ib].d = tern_fp32_to_fp16(levels_symmetric(src + ib * QK, 16, L));
        pack_nibbles(L, y[ib].qs);
        pack_high_bits(L, y[ib].qh);
    }
}

void tern_quantize_row_q4_1(const float * src, void * dst, int64_t n) {
    block_q4_1 * y = (block_q4_1 *) dst;
    for (int64_t ib = 0; ib < n / QK; ib++) {
        uint8_t L[QK];
        float min;
        y[ib].d = tern_fp32_to_fp16(levels_affine(src + ib * QK, 15, L, &min));
        y[ib].m = tern_fp32_to_fp16(min);
        pack_nibbles(L, y[ib].qs);
    }
}

void tern_quantize_row_q5_1(const float * src, void * dst, int64_t n) {
    block_q5_1 * y = (block_q5_1 *) dst;
    for (int64_t ib = 0; ib < n / QK; ib++) {
        uint8_t L[QK];
        float min;
        y[ib].d = tern_fp32_to_fp16(levels_affine(src + ib * QK, 31, L, &min));
        y[ib].m = tern_fp32_to_fp16(min);
        pack_nibbles(L, y[ib].qs);
        pack_high_bits(L, y[ib].qh);
    }
}

namespace {

template <q8_rounding R>
void quantize_row_q8_0(const float * src, void * dst, int64_t n) {
    block_q8_0 * y = (block_q8_0 *) dst;
    for (int64_t ib = 0; ib < n / QK; ib++) y[ib].d = tern_fp32_to_fp16(levels_q8<R>(src + ib * QK, y[ib].qs));
}

template <q8_rounding R>
void quantize_row_q8_1(const float * src, void * dst, int64_t n) {
    block_q8_1 * y = (block_q8_1 *) dst;
    for (int64_t ib = 0; ib < n / QK; ib++) {
        const float d = levels_q8<R>(src + ib * QK, y[ib].qs);
        int sum = 0;
        for (int j = 0; j < QK; j++) sum += y[ib].qs[j];
        y[ib].d = tern_fp32_to_fp16(d);
        y[ib].s = tern_fp32_to_fp16((float) sum * d);
    }
}

}  // namespace

void tern_quantize_row_q8_0(const float * src, void * dst, int64_t n) { quantize_row_q8_0<Q8_REFERENCE>(src, dst, n); }
void tern_quantize_row_q8_1(const float * src, void * dst, int64_t n) { quantize_row_q8_1<Q8_REFERENCE>(src, dst, n); }
void tern_quantize_act_q8_0(const float * src, void * dst, int64_t n) { quantize_row_q8_0<Q8_CPU_BACKEND>(src, dst, n); }
void tern_quantize_act_q8_1(const float * src, void * dst, int64_t n) { quantize_row_q8_1<Q8_CPU_BACKEND>(src, dst, n); }

void tern_dequantize_row_q4_0(const void * src, float * dst, int64_t n) { dequantize_row<fmt_q4_0>(src, dst, n); }
void tern_dequantize_row_q4_1(const void * src, float * dst, int64_t n) { dequantize_row<fmt_q4_1>(src, dst, n); }
void tern_dequantize_row_q5_0(const void * src, float * dst, int64_t n) { dequantize_row<fmt_q5_0>(src, dst, n); }
void tern_dequantize_row_q5_1(const void * src, float * dst, int64_t n) { dequantize_row<fmt_q5_1>(src, dst, n); }
void tern_dequantize_row_q8_0(const void * src, float * dst, int64_t n) { dequantize_row<fmt_q8_0>(src, dst, n); }
void tern_dequantize_row_q8_1(const void * src, float * dst, int64_t n) { dequantize_row<fmt_q8_1>(src, dst, n); }
void tern_dequantize_row_iq4_nl(const void * src, float * dst, int64_t n) { dequantize_row<fmt_iq4_nl>(src, dst, n); }

void tern_vec_dot_q4_0(int64_t n, float * s, const void * x, const void * y) { vec_dot<fmt_q4_0>(n, s, x, y); }
void tern_vec_dot_q4_1(int64_t n, float * s, const void * x, const void * y) { vec_dot<fmt_q4_1>(n, s, x, y); }
void tern_vec_dot_q5_0(int64_t n, float * s, const void * x, const void * y) { vec_dot<fmt_q5_0>(n, s, x, y); }
void tern_vec_dot_q5_1(int64_t n, float * s, const void * x, const void * y) { vec_dot<fmt_q5_1>(n, s, x, y); }
void tern_vec_dot_q8_0(int64_t n, float * s, const void * x, const void * y) { vec_dot<fmt_q8_0>(n, s, x, y); }
void tern_vec_dot_iq4_nl(int64_t n, float * s, const void * x, const void * y) { vec_dot<fmt_iq4_nl>(n, s, x, y); }

}  // namespace tern
