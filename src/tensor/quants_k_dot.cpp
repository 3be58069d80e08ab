// K-quant x Q8_K dot products with exactly the float operations of ggml's
// AVX2 ggml_vec_dot_<t>_q8_K (ggml-cpu-quants.c, early 2025), the kernels
// llama.cpp runs on x86 (AVX-512 machines too: these functions have no
// AVX-512 branch). Layouts: tensor/quants_k.h.
//
// Lane structure. The AVX2 kernels read 32 values at a time into one 256-bit
// register; maddubs adds products pairwise into 16 int16 lanes and madd (with
// the sub-block scales) pairwise again into 8 int32 lanes, with no shuffle
// across lanes. So int32 lane l (0..7) of one super-block is
//   sumi[l] = sum over the values i with (i % 32) / 4 == l of scale[i/16] * q8[i] * q[i]
// (values 4l..4l+3 of every 32-value chunk). Integer sums are exact in any
// order; only the float steps below fix the result. Per super-block, with
// d = d_y * d_x and dmin = -d_y * dmin_x:
//   Q3_K, Q6_K: acc[l] = fma(d, sumi[l], acc[l]);            s = hsum8(acc)
//   Q2_K:       acc[l] = fma(dmin, prod[l], acc[l]) first, where
//                 prod[l] = min[2l] * bsums[2l] + min[2l+1] * bsums[2l+1]
//                 (madd of the 16 mins with the 16 bsums), then as Q3_K
//   Q4_K:       as Q3_K, plus four min lanes acc_m[m] = fma(dmin, prod[m], acc_m[m]),
//                 prod[m] = madd of the eight 32-value mins with the eight
//                 32-value sums of q8 (bsums[2k] + bsums[2k+1]), pairs 2m, 2m+1;
//                 s = hsum8(acc) + ((acc_m[0] + acc_m[2]) + (acc_m[1] + acc_m[3]))
//   Q5_K:       as Q3_K, plus one scalar summs = fma(dmin, sum_k min_k * sums_k, summs)
//                 (the compiler contracts ggml's `summs += dmin * isum`);
//                 s = hsum8(acc) + summs
// hsum8 is ggml's hsum_float_8: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)).
#include "tensor/quants_k.h"

#include <math.h>

// Reference arithmetic: every fused multiply-add is written as fmaf, nothing
// else may be contracted, whatever the target flags.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define K_LANES 8

// sumi[l] of one super-block (see the header comment).
static void sum_lanes(const tern_k_superblock * x, const block_q8_K * y, int32_t sumi[K_LANES]) {
    for (int l = 0; l < K_LANES; ++l) sumi[l] = 0;
    for (int i = 0; i < QK_K; ++i) sumi[(i % 32) / 4] += x->scale[i / 16] * (y->qs[i] * x->q[i]);
}

// acc[l] = fma(d, (float) v[l], acc[l]): _mm256_fmadd_ps of a broadcast scale.
static void fma_lanes(float acc[K_LANES], float d, const int32_t v[K_LANES]) {
    for (int l = 0; l < K_LANES; ++l) acc[l] = fmaf(d, (float) v[l], acc[l]);
}

static float hsum8(const float a[K_LANES]) {
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// Sum of q8 over the 32 values of sub-block k (0..7): the _mm_hadd_epi16 of bsums.
static int32_t q8_sum32(const block_q8_K * y, int k) { return y->bsums[2 * k] + y->bsums[2 * k + 1]; }

void tern_vec_dot_q2_K(int64_t n, float * s, const void * vx, const void * vy) {
    const block_q2_K * x = (const block_q2_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    tern_k_superblock sb;
    float acc[K_LANES] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        tern_k_decode_q2_K(&x[ib], &sb);
        const float d = y[ib].d * sb.d;
        const float dmin = -y[ib].d * sb.dmin;
        int32_t prod[K_LANES];
        for (int l = 0; l < K_LANES; ++l) {
            prod[l] = sb.min[2 * l] * y[ib].bsums[2 * l] + sb.min[2 * l + 1] * y[ib].bsums[2 * l + 1];
        }
        fma_lanes(acc, dmin, prod);
        int32_t sumi[K_LANES];
        sum_lanes(&sb, &y[ib], sumi);
        fma_lanes(acc, d, sumi);
    }
    *s = hsum8(acc);
}

// Q3_K and Q6_K: no mins, only the eight scaled lanes.
static void vec_dot_no_mins(int64_t n, float * s, const void * vx, size_t block_bytes, tern_k_decode_fn decode,
                            const void * vy) {
    const uint8_t * x = (const uint8_t *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    tern_k_superblock sb;
    float acc[K_LANES] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        decode(x + ib * block_bytes, &sb);
        int32_t sumi[K_LANES];
        sum_lanes(&sb, &y[ib], sumi);
        fma_lanes(acc, y[ib].d * sb.d, sumi);
    }
    *s = hsum8(acc);
}

void tern_vec_dot_q3_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_no_mins(n, s, x, sizeof(block_q3_K), tern_k_decode_q3_K, y);
}
#include <stdlib.h>
static int h7b_variant() { static int v = -1; if (v < 0) { const char * e = getenv("H7B_V"); v = e ? atoi(e) : 0; } return v; }
void tern_vec_dot_q6_K(int64_t n, float * s, const void * vx, const void * vy) {
    if (h7b_variant() == 0) { vec_dot_no_mins(n, s, vx, sizeof(block_q6_K), tern_k_decode_q6_K, vy); return; }
    const block_q6_K * x = (const block_q6_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    tern_k_superblock sb;
    float sums[8] = {0,0,0,0,0,0,0,0}; float sumf = 0;
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        tern_k_decode_q6_K(&x[ib], &sb);
        int32_t lanes[8] = {0,0,0,0,0,0,0,0};
        for (int i = 0; i < QK_K; ++i) lanes[i % 8] += sb.scale[i / 16] * (y[ib].qs[i] * sb.q[i]);
        const float d = sb.d * y[ib].d;
        for (int l = 0; l < 8; ++l) sums[l] = fmaf(d, (float) lanes[l], sums[l]);
    }
    if (h7b_variant() == 1) { for (int l = 0; l < 8; ++l) sumf += sums[l]; }
    else sumf = hsum8(sums);
    *s = sumf;
}

void tern_vec_dot_q4_K(int64_t n, float * s, const void * vx, const void * vy) {
    const block_q4_K * x = (const block_q4_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    tern_k_superblock sb;
    float acc[K_LANES] = {0, 0, 0, 0, 0, 0, 0, 0};
    float acc_m[4] = {0, 0, 0, 0};
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        tern_k_decode_q4_K(&x[ib], &sb);
        const float d = y[ib].d * sb.d;
        const float dmin = -y[ib].d * sb.dmin;
        // sb.min repeats each 32-value min twice: the min of sub-block k is sb.min[2k].
        for (int m = 0; m < 4; ++m) {
            const int32_t prod = sb.min[4 * m] * q8_sum32(&y[ib], 2 * m) +
                                 sb.min[4 * m + 2] * q8_sum32(&y[ib], 2 * m + 1);
            acc_m[m] = fmaf(dmin, (float) prod, acc_m[m]);
        }
        int32_t sumi[K_LANES];
        sum_lanes(&sb, &y[ib], sumi);
        fma_lanes(acc, d, sumi);
    }
    *s = hsum8(acc) + ((acc_m[0] + acc_m[2]) + (acc_m[1] + acc_m[3]));
}

void tern_vec_dot_q5_K(int64_t n, float * s, const void * vx, const void * vy) {
    const block_q5_K * x = (const block_q5_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    tern_k_superblock sb;
    float acc[K_LANES] = {0, 0, 0, 0, 0, 0, 0, 0};
    float summs = 0.0f;
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        tern_k_decode_q5_K(&x[ib], &sb);
        const float d = y[ib].d * sb.d;
        const float dmin = -y[ib].d * sb.dmin;
        int32_t mins = 0;
        for (int k = 0; k < QK_K / 32; ++k) mins += sb.min[2 * k] * q8_sum32(&y[ib], k);
        summs = summs + dmin * (float) mins;
        int32_t sumi[K_LANES];
        sum_lanes(&sb, &y[ib], sumi);
        fma_lanes(acc, d, sumi);
    }
    *s = hsum8(acc) + summs;
}
