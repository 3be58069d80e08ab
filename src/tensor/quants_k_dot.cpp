// K-quant x Q8_K dot products with exactly the float operations that produced
// the reference logits (layouts: tensor/quants_k.h).
//
// Which kernels those are. The reference machine ran llama.cpp's AMX code for
// Q4_K, Q5_K and Q6_K (ggml-cpu/amx/mmq.cpp; prompts of two or more rows take
// its tile path, whose acc_C step is applied once per super-block) and ggml's
// own kernels for Q2_K and Q3_K. Both reduce a super-block's integer dot
// completely, then do one or two float multiply-adds per super-block; the
// 8-lane AVX2 orders reproduce none of the reference logits. The steps:
//   Q3_K, Q6_K:  sum = fma(d, isum, sum)
//   Q2_K:        sum = fma(-dmin, mins, sum); sum = fma(d, isum, sum)
//   Q4_K, Q5_K:  sum = fma(d, isum, sum);     sum = fma(-dmin, mins, sum)   (AMX tile acc_C)
// with d = d_y * d_x, dmin = d_y * dmin_x, isum = sum_i scale[i/16] * q8[i] *
// q[i] and mins = sum_j min[j] * (q8 sum over sub-block j) (Q8_K bsums), both
// exact integers. With these, every K-quant reference case is bit-exact or
// within 4e-7 (tests/test_parity.cpp). Only these float steps fix the result.
#include "tensor/quants_k.h"

#include <math.h>

namespace tern {

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
enum k_float_step { STEP_NO_MINS, STEP_MINS_FIRST, STEP_MINS_AFTER };

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
        case STEP_MINS_FIRST:
            sum = fmaf(-(y[ib].d * sb.dmin), (float) mins_dot(&sb, &y[ib]), sum);
            sum = fmaf(d, isum, sum);
            break;
        case STEP_MINS_AFTER:
            sum = fmaf(d, isum, sum);
            sum = fmaf(-(y[ib].d * sb.dmin), (float) mins_dot(&sb, &y[ib]), sum);
            break;
        }
    }
    *s = sum;
}

void tern_vec_dot_q2_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q2_K), tern_k_decode_q2_K, y, STEP_MINS_FIRST);
}
void tern_vec_dot_q3_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q3_K), tern_k_decode_q3_K, y, STEP_NO_MINS);
}
void tern_vec_dot_q4_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q4_K), tern_k_decode_q4_K, y, STEP_MINS_AFTER);
}
void tern_vec_dot_q5_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q5_K), tern_k_decode_q5_K, y, STEP_MINS_AFTER);
}
void tern_vec_dot_q6_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_k(n, s, x, sizeof(block_q6_K), tern_k_decode_q6_K, y, STEP_NO_MINS);
}

}  // namespace tern
