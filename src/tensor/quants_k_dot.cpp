// K-quant x Q8_K dot products in the order of ggml's generic
// ggml_vec_dot_<t>_q8_K (layouts: tensor/quants_k.h).
//
// Q2_K, per super-block: isum = sum_j scale[j] * sum_{i in j} q8[i] * q[i] and
//   summs = sum_j bsums[j] * min[j] in integers, then
//   sumf += (d_y * d_x) * isum - (d_y * dmin_x) * summs.
// Q3_K .. Q6_K, per super-block: eight integer lanes, lane l = sum over the
//   values i with i % 8 == l of scale[i/16] * q8[i] * q[i]; then
//   sums[l] += (d_x * d_y) * lane[l] and sumf -= (dmin_x * d_y) * sum_j bsums[j] * min[j].
//   At the end sumf += sums[0] + ... + sums[7] (one at a time).
// Integer sums are exact, so only the float steps fix the order.
#include "tensor/quants_k.h"

// Reference arithmetic: no fused multiply-add, whatever the target flags.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

static int32_t mins_dot_bsums(const tern_k_superblock * x, const block_q8_K * y) {
    int32_t sum = 0;
    for (int j = 0; j < QK_K / 16; ++j) sum += y->bsums[j] * x->min[j];
    return sum;
}

void tern_vec_dot_q2_K(int64_t n, float * s, const void * vx, const void * vy) {
    const block_q2_K * x = (const block_q2_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    tern_k_superblock sb;
    float sumf = 0.0f;
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        tern_k_decode_q2_K(&x[ib], &sb);
        int32_t isum = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            int32_t sub = 0;
            for (int l = 0; l < 16; ++l) sub += y[ib].qs[16 * j + l] * sb.q[16 * j + l];
            isum += sb.scale[j] * sub;
        }
        const float dall = y[ib].d * sb.d;
        const float dmin = y[ib].d * sb.dmin;
        sumf += dall * (float) isum - dmin * (float) mins_dot_bsums(&sb, &y[ib]);
    }
    *s = sumf;
}

static void vec_dot_lanes(int64_t n, float * s, const void * vx, size_t block_bytes, tern_k_decode_fn decode,
                          const void * vy) {
    const uint8_t * x = (const uint8_t *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    tern_k_superblock sb;
    float sums[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float sumf = 0.0f;
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        decode(x + ib * block_bytes, &sb);
        int32_t lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int i = 0; i < QK_K; ++i) lanes[i % 8] += sb.scale[i / 16] * (y[ib].qs[i] * sb.q[i]);
        const float d = sb.d * y[ib].d;
        for (int l = 0; l < 8; ++l) sums[l] += d * (float) lanes[l];
        const float dmin = sb.dmin * y[ib].d;
        sumf -= dmin * (float) mins_dot_bsums(&sb, &y[ib]);
    }
    for (int l = 0; l < 8; ++l) sumf += sums[l];
    *s = sumf;
}

void tern_vec_dot_q3_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_lanes(n, s, x, sizeof(block_q3_K), tern_k_decode_q3_K, y);
}
void tern_vec_dot_q4_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_lanes(n, s, x, sizeof(block_q4_K), tern_k_decode_q4_K, y);
}
void tern_vec_dot_q5_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_lanes(n, s, x, sizeof(block_q5_K), tern_k_decode_q5_K, y);
}
void tern_vec_dot_q6_K(int64_t n, float * s, const void * x, const void * y) {
    vec_dot_lanes(n, s, x, sizeof(block_q6_K), tern_k_decode_q6_K, y);
}
