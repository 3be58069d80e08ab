// K-quant x Q8_K dot products with exactly the float operations that produced
// the reference logits (layouts: tensor/quants_k.h).
//
// Which kernel that is. The reference logits of the Q6_K output layer (one
// super-block per dot, 2048 dots per position) are reproduced bit for bit by
// s = (d_x * d_y) * (float) isum, isum the whole integer dot, and by none of
// the 8-lane orders of ggml's AVX2 kernels (hsum of eight d * lane products,
// any lane split). That single product per super-block is the structure of
// ggml's ARM NEON ggml_vec_dot_<t>_q8_K (early 2025): the integer dot of a
// super-block is reduced completely, then one float multiply-add per
// super-block, which the compiler fuses. The fusions below are the ones the
// reference logits select (checked per position against every alternative):
//   Q3_K, Q6_K: sum = fma(d, isum, sum)
//   Q2_K:       sum = fma(dmin, mins, sum); sum = fma(d, isum, sum)   (dmin = -d_y * dmin_x)
//   Q4_K:       sum = sum + fma(-dmin, mins, d * isum)                (dmin = d_y * dmin_x)
//   Q5_K:       sum = sum + fma(d, isum, -(dmin * mins))              (dmin = d_y * dmin_x)
// with d = d_y * d_x, isum = sum_i scale[i/16] * q8[i] * q[i] and
// mins = sum_j min[j] * (q8 sum over sub-block j) (Q8_K bsums), both exact
// integers. Only these float steps fix the result.
#include "tensor/quants_k.h"

#include <math.h>

// Reference arithmetic: every fused multiply-add is written as fmaf, nothing
// else may be contracted, whatever the target flags.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// isum of one super-block: sum_i scale[i/16] * q8[i] * q[i].
static int32_t scaled_dot(const tern_k_superblock * x, const block_q8_K * y) {
    int32_t isum = 0;
    for (int j = 0; j < QK_K / 16; ++j) {
        int32_t sub = 0;
        for (int l = 0; l < 16; ++l) sub += y->qs[16 * j + l] * x->q[16 * j + l];
        isum += x->scale[j] * sub;
    }
    return isum;
}

// mins of one super-block: sum_j min[j] * bsums[j] (16-value sub-blocks; the
// 32-value types repeat each min twice, which sums the same integers).
static int32_t mins_dot(const tern_k_superblock * x, const block_q8_K * y) {
    int32_t sum = 0;
    for (int j = 0; j < QK_K / 16; ++j) sum += x->min[j] * y->bsums[j];
    return sum;
}

// The per-super-block float step of each type (see the header comment).
enum k_float_step { STEP_NO_MINS, STEP_Q2_K, STEP_Q4_K, STEP_Q5_K };

static void vec_dot_k(int64_t n, float * s, const void * vx, size_t block_bytes, tern_k_decode_fn decode,
                      const void * vy, k_float_step step) {
    const uint8_t * x = (const uint8_t *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    tern_k_superblock sb;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        decode(x + ib * block_bytes, &sb);
        const float d = y[ib].d * sb.d;
        const float isum = (float) scaled_dot(&sb, &y[ib]);
        switch (step) {
        case STEP_NO_MINS:
            sum = fmaf(d, isum, sum);
            break;
        case STEP_Q2_K:
            sum = fmaf(-y[ib].d * sb.dmin, (float) mins_dot(&sb, &y[ib]), sum);
            sum = fmaf(d, isum, sum);
            break;
        case STEP_Q4_K:
            sum = sum + fmaf(-(y[ib].d * sb.dmin), (float) mins_dot(&sb, &y[ib]), d * isum);
            break;
        case STEP_Q5_K:
            sum = sum + fmaf(d, isum, -((y[ib].d * sb.dmin) * (float) mins_dot(&sb, &y[ib])));
            break;
        }
    }
    *s = sum;
}

void tern_vec_dot_q2_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q2_K), tern_k_decode_q2_K, y, STEP_Q2_K);
}
void tern_vec_dot_q3_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q3_K), tern_k_decode_q3_K, y, STEP_NO_MINS);
}
void tern_vec_dot_q4_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q4_K), tern_k_decode_q4_K, y, STEP_Q4_K);
}
void tern_vec_dot_q5_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q5_K), tern_k_decode_q5_K, y, STEP_Q5_K);
}
void tern_vec_dot_q6_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q6_K), tern_k_decode_q6_K, y, STEP_NO_MINS);
}
