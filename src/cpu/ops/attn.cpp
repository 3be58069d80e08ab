// ATTN: softmax(scale * q k^T + mask) v per (token, head), computed the way
// llama.cpp's (non-flash) attention computes it, so that logits match:
//
//   q16     = F16(q)                                  ggml converts q to K's dot type
//   s_j     = dot(q16, k_j) * scale + mask[j]         for the n_kv cells
//   p_j     = exp(s_j - max s) / sum exp(...)         softmax, sum in double,
//                                                     exp as ggml's (kernels/exp_approx.h)
//   p16_j   = F16(p_j) with an F16 V                   ggml converts kq to V's dot type
//   out[d]  = sum_j p16_j * v_j[d]                    accumulated in double
//
// An online (one-pass) softmax never holds the normalized p_j, so it cannot
// round them to F16 as ggml does; the difference is small for F32 weights but
// flips Q8 activation roundings in the next matmul of quantized models, far
// beyond the parity tolerance. Hence two passes over a row of n_kv scores.
//
// Summation order, as llama.cpp's x86 CPU backend: with two or more tokens it
// runs both products through tinyBLAS when the reduced length is a multiple
// of 16 (q.k over head_dim, p.v over n_kv): 16 float lanes, lane i summing
// elements i, i + 16, ... with fused multiply-adds, then the lanes summed as
// _mm512_reduce_add_ps does. Otherwise (one token, or head_dim 8) ggml's
// vec_dot: products in float summed in double. Scalar code either way, so the
// result does not depend on the SIMD target or the thread count. Head h reads
// kv head h / (n_head / n_head_kv) (GQA). Workers split the (token, head) pairs.
// Scratch per worker: q16 [hd], scores [n_kv], p16 [n_kv], acc [hd_v] doubles.
#include "cpu/ops/ops.h"
#include "core/arena.h"
#include "core/fp16.h"
#include "cpu/kernels/exp_approx.h"
#include "cpu/kernels/vec.h"

#include <math.h>
#include <string.h>

namespace {

struct attn_scratch_layout {
    size_t q16, scores, p16, acc;
    size_t total() const { return q16 + scores + p16 + acc; }
};

attn_scratch_layout scratch_layout(const tern_tensor * dst) {
    const int64_t hd = dst->src[0]->ne[0], hd_v = dst->src[2]->ne[0], n_kv = dst->src[1]->ne[2];
    attn_scratch_layout l;
    l.q16 = arena_padded((size_t) hd * sizeof(tern_fp16));
    l.scores = arena_padded((size_t) n_kv * sizeof(float));
    l.p16 = arena_padded((size_t) n_kv * sizeof(tern_fp16));
    l.acc = arena_padded((size_t) hd_v * sizeof(double));
    return l;
}

// dot(q, k) with float products summed in double, in element order.
double dot_f16(int64_t n, const tern_fp16 * q, const tern_fp16 * k) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double) (tern_fp16_to_fp32(q[i]) * tern_fp16_to_fp32(k[i]));
    return sum;
}

// tinyBLAS order (see above); n % 16 == 0, x read with a stride (V is [n_kv] per dim).
float dot_f16_lanes16(int64_t n, const tern_fp16 * x, int64_t x_stride, const tern_fp16 * y) {
    float lanes[16];
    for (int i = 0; i < 16; i++) lanes[i] = 0.0f;
    for (int64_t l = 0; l < n; l += 16) {
        for (int i = 0; i < 16; i++) {
            lanes[i] = fmaf(tern_fp16_to_fp32(x[(l + i) * x_stride]), tern_fp16_to_fp32(y[l + i]), lanes[i]);
        }
    }
    return tern_sum16_tree(lanes);
}

double dot_f32(int64_t n, const float * q, const float * k) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double) (q[i] * k[i]);
    return sum;
}

} // namespace

size_t tern_op_attn_work_size(const tern_tensor * dst, int32_t n_threads) {
    return (size_t) n_threads * scratch_layout(dst).total();
}

void tern_op_attn(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * q = dst->src[0];     // F32 [hd, n_head, n_tokens]
    const tern_tensor * k = dst->src[1];     // F16/F32 [hd, n_head_kv, n_kv]
    const tern_tensor * v = dst->src[2];     // F16/F32 [hd_v, n_head_kv, n_kv]
    const tern_tensor * mask = dst->src[3];  // F32 [>= n_kv, >= n_tokens] or NULL
    const float scale = tg_param_f32(dst, 0);
    const int64_t hd = q->ne[0], n_head = q->ne[1], n_tokens = q->ne[2];
    const int64_t hd_v = v->ne[0], n_kv = k->ne[2], group = n_head / k->ne[1];
    const bool k_f16 = k->type == TERN_TYPE_F16, v_f16 = v->type == TERN_TYPE_F16;

    const attn_scratch_layout lay = scratch_layout(dst);
    uint8_t * scratch = (uint8_t *) c->work + (size_t) c->ith * lay.total();
    tern_fp16 * q16 = (tern_fp16 *) scratch;
    float * scores = (float *) (scratch + lay.q16);
    tern_fp16 * p16 = (tern_fp16 *) (scratch + lay.q16 + lay.scores);
    double * acc = (double *) (scratch + lay.q16 + lay.scores + lay.p16);

    const bool kq_lanes = k_f16 && n_tokens >= 2 && hd % 16 == 0 && n_kv % 4 == 0;
    const bool pv_lanes = v_f16 && n_tokens >= 2 && n_kv % 16 == 0 && hd_v % 4 == 0;
    int64_t p0, p1;
    tern_split_rows(n_tokens * n_head, c->ith, c->nth, &p0, &p1);
    for (int64_t p = p0; p < p1; p++) {
        const int64_t t = p / n_head, h = p % n_head, hk = h / group;
        const float * qr = (const float *) tern_row_ptr(q, h, t, 0);
        const float * mr = mask ? (const float *) tern_row_ptr(mask, t, 0, 0) : NULL;
        if (k_f16) tern_kfp32_to_fp16(hd, qr, q16);

        // Pass 1: scores and their max.
        float max = -INFINITY;
        for (int64_t j = 0; j < n_kv; j++) {
            const float mv = mr ? mr[j] : 0.0f;
            float s = -INFINITY;
            if (mv != -INFINITY) {
                const void * kr = tern_row_ptr(k, hk, j, 0);
                float dot;
                if (kq_lanes) dot = dot_f16_lanes16(hd, (const tern_fp16 *) kr, 1, q16);
                else dot = (float) (k_f16 ? dot_f16(hd, q16, (const tern_fp16 *) kr) : dot_f32(hd, qr, (const float *) kr));
                s = dot * scale + mv;
            }
            scores[j] = s;
            if (s > max) max = s;
        }
        float * out = (float *) tern_row_ptr(dst, t, 0, 0) + h * hd_v;
        if (max == -INFINITY) {  // every cell masked
            memset(out, 0, (size_t) hd_v * sizeof(float));
            continue;
        }
        // Softmax as ggml_vec_soft_max_f32: 16-lane blocks with ggml's vector
        // exp, each block summed in its lane order, then the tail with expf.
        double sum = 0.0;
        const int64_t n_vec = n_kv & ~(int64_t) 15;
        for (int64_t j0 = 0; j0 < n_vec; j0 += 16) {
            for (int64_t j = j0; j < j0 + 16; j++) scores[j] = tern_exp_approx(scores[j] - max);
            sum += (double) tern_sum16_tree(scores + j0);
        }
        for (int64_t j = n_vec; j < n_kv; j++) {
            scores[j] = expf(scores[j] - max);
            sum += (double) scores[j];
        }
        const float inv = (float) (1.0 / sum);
        // Pass 2: out = sum_j p16_j * v_j.
        if (pv_lanes) {
            for (int64_t j = 0; j < n_kv; j++) p16[j] = tern_fp32_to_fp16(scores[j] * inv);
            const tern_fp16 * v0 = (const tern_fp16 *) tern_row_ptr(v, hk, 0, 0);
            const int64_t v_stride = (int64_t) (v->nb[2] / sizeof(tern_fp16));
            for (int64_t d = 0; d < hd_v; d++) out[d] = dot_f16_lanes16(n_kv, v0 + d, v_stride, p16);
            continue;
        }
        for (int64_t d = 0; d < hd_v; d++) acc[d] = 0.0;
        for (int64_t j = 0; j < n_kv; j++) {
            // With an F16 V, p goes through F16 (V's dot type), as in ggml.
            const float pj = v_f16 ? tern_fp16_to_fp32(tern_fp32_to_fp16(scores[j] * inv)) : scores[j] * inv;
            if (pj == 0.0f) continue;  // adds nothing
            const void * vr = tern_row_ptr(v, hk, j, 0);
            if (v_f16) {
                const tern_fp16 * v16 = (const tern_fp16 *) vr;
                for (int64_t d = 0; d < hd_v; d++) acc[d] += (double) (pj * tern_fp16_to_fp32(v16[d]));
            } else {
                const float * v32 = (const float *) vr;
                for (int64_t d = 0; d < hd_v; d++) acc[d] += (double) (pj * v32[d]);
            }
        }
        for (int64_t d = 0; d < hd_v; d++) out[d] = (float) acc[d];
    }
}
