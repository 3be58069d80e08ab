// ATTN: softmax(scale * q k^T + mask) v per (token, head), llama.cpp's
// non-flash attention semantics with Tern's own summation order:
//
//   q16     = F16(q)                       with an F16 K (as ggml converts q to K's type)
//   s_j     = dot(q16, k_j) * scale + mask[j]   for the n_kv cells (kernel dot_f16_rows)
//   p_j     = e^(s_j - max s) / sum_j e^(...)    kernel exp_sum_f32 (kernels/exp_approx.h)
//   p16_j   = F16(p_j)                     with an F16 V (ggml converts kq to V's type)
//   out     = sum_j p16_j * v_j            in float, j ascending (kernel mad_f16_rows)
//
// With an F16 cache the dots of all n_kv cells are computed in one kernel call
// (masked ones too: cheaper than a call per cell) and masked cells are
// skipped in the V product. Each (token, head) row is computed by one worker in a fixed
// order, whatever the thread count; head h reads kv head h / (n_head /
// n_head_kv) (GQA). Two passes over the scores: simple, and the row of n_kv
// floats stays in L1/L2 for the context sizes Tern targets.
// Scratch per worker: q16 [hd], scores [n_kv], p16 [n_kv], slice [hd + 64].
//
// A quantized cache (Q8_0, Q4_0: tern_context_params type_k / type_v) comes
// as the 2-D cache [n_embd_gqa, n_kv] (a head's slice need not be whole
// blocks). Each cell's head slice is dequantized (the blocks covering it,
// into `slice`) and met in float: s_j = dot(q, k_j), out += p_j * v_j with
// p_j unrounded. Masked cells are skipped before dequantizing.
#include "cpu/ops/ops.h"
#include "core/arena.h"
#include "core/fp16.h"
#include "cpu/kernels/vec.h"
#include "tensor/types.h"

#include <math.h>
#include <string.h>

namespace tern {

namespace {

struct attn_scratch_layout {
    size_t q16, scores, p16, slice;
    size_t total() const { return q16 + scores + p16 + slice; }
};

bool is_quantized_cache(const tern_tensor * t) { return t->type != TERN_TYPE_F16 && t->type != TERN_TYPE_F32; }

// Cells attended: ne[2] of a [hd, n_head_kv, n_kv] view, ne[1] of a 2-D quantized cache.
int64_t n_cells_of(const tern_tensor * t) { return is_quantized_cache(t) ? t->ne[1] : t->ne[2]; }

attn_scratch_layout scratch_layout(const tern_tensor * dst) {
    const int64_t hd = dst->src[0]->ne[0], n_kv = n_cells_of(dst->src[1]);
    const int64_t hd_v = dst->ne[0] / dst->src[0]->ne[1];
    attn_scratch_layout l;
    l.q16 = arena_padded((size_t) hd * sizeof(tern_fp16));
    l.scores = arena_padded((size_t) n_kv * sizeof(float));
    l.p16 = arena_padded((size_t) n_kv * sizeof(tern_fp16));
    l.slice = arena_padded((size_t) ((hd > hd_v ? hd : hd_v) + 64) * sizeof(float));
    return l;
}

// Elements [e0, e0 + n) of row j of a quantized 2-D cache, dequantized: the
// blocks covering them go to buf, the returned pointer is the slice.
const float * dequant_slice(const tern_tensor * t, int64_t j, int64_t e0, int64_t n, float * buf) {
    const tern_type_traits * tr = tern_type_traits_get(t->type);
    const int64_t b0 = e0 / tr->blck_size, b1 = (e0 + n - 1) / tr->blck_size;
    const uint8_t * row = (const uint8_t *) t->data + (size_t) j * t->nb[1];
    tr->to_float(row + (size_t) b0 * tr->type_size, buf, (b1 - b0 + 1) * tr->blck_size);
    return buf + (e0 - b0 * tr->blck_size);
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
    const bool k_q = is_quantized_cache(k), v_q = is_quantized_cache(v);
    const int64_t hd_v = dst->ne[0] / n_head, n_kv = n_cells_of(k);
    const int64_t group = n_head / (k_q ? k->ne[0] / hd : k->ne[1]);
    const bool k_f16 = k->type == TERN_TYPE_F16, v_f16 = v->type == TERN_TYPE_F16;
    const tern_kernel_set * ks = tern_kernels();

    const attn_scratch_layout lay = scratch_layout(dst);
    uint8_t * scratch = (uint8_t *) c->work + (size_t) c->ith * lay.total();
    tern_fp16 * q16 = (tern_fp16 *) scratch;
    float * scores = (float *) (scratch + lay.q16);
    tern_fp16 * p16 = (tern_fp16 *) (scratch + lay.q16 + lay.scores);
    float * slice = (float *) (scratch + lay.q16 + lay.scores + lay.p16);

    int64_t p0, p1;
    tern_split_rows(n_tokens * n_head, c->ith, c->nth, &p0, &p1);
    for (int64_t p = p0; p < p1; p++) {
        const int64_t t = p / n_head, h = p % n_head, hk = h / group;
        const float * qr = (const float *) tern_row_ptr(q, h, t, 0);
        const float * mr = mask ? (const float *) tern_row_ptr(mask, t, 0, 0) : NULL;
        if (k_f16) ks->fp32_to_fp16(hd, qr, q16);

        // Pass 1: scores and their max; masked cells hold -inf.
        if (k_f16) {  // every cell's dot in one kernel call, the mask applied after
            const tern_fp16 * k0 = (const tern_fp16 * ) tern_row_ptr(k, hk, 0, 0);
            ks->dot_f16_rows(hd, n_kv, q16, k0, (int64_t) (k->nb[2] / sizeof(tern_fp16)), scores);
        }
        float max = -INFINITY;
        bool nan = false;  // a NaN score must reach the output, not vanish as "every cell masked"
        for (int64_t j = 0; j < n_kv; j++) {
            const float mv = mr ? mr[j] : 0.0f;
            float s = -INFINITY;
            if (mv != -INFINITY) {
                const float dot = k_f16 ? scores[j]
                                : k_q   ? ks->dot_f32(hd, qr, dequant_slice(k, j, hk * hd, hd, slice))
                                        : ks->dot_f32(hd, qr, (const float *) tern_row_ptr(k, hk, j, 0));
                s = dot * scale + mv;
            }
            scores[j] = s;
            if (s > max) max = s;
            nan |= s != s;
        }
        float * out = (float *) tern_row_ptr(dst, t, 0, 0) + h * hd_v;
        if (nan) {
            for (int64_t i = 0; i < hd_v; i++) out[i] = NAN;
            continue;
        }
        memset(out, 0, (size_t) hd_v * sizeof(float));
        if (max == -INFINITY) continue;  // every cell masked
        const float inv = 1.0f / ks->exp_sum_f32(n_kv, scores, max);  // e^-inf = 0 for masked cells
        // Pass 2: out = sum_j p_j * v_j, cells with p_j == 0 (masked) skipped.
        if (v_f16) {
            // p goes through F16 (V's type), as in llama.cpp: part of its semantics (a
            // systematic rounding, not an order), which quantized models feel.
            ks->scale_mul_f32(n_kv, scores, scores, inv, NULL);
            ks->fp32_to_fp16(n_kv, scores, p16);
            ks->fp16_to_fp32(n_kv, p16, scores);
            const tern_fp16 * v0 = (const tern_fp16 *) tern_row_ptr(v, hk, 0, 0);
            ks->mad_f16_rows(hd_v, n_kv, out, v0, (int64_t) (v->nb[2] / sizeof(tern_fp16)), scores);
            continue;
        }
        for (int64_t j = 0; j < n_kv; j++) {
            const float pj = scores[j] * inv;
            if (pj == 0.0f) continue;
            const float * vr = v_q ? dequant_slice(v, j, hk * hd_v, hd_v, slice) : (const float *) tern_row_ptr(v, hk, j, 0);
            ks->mad_f32(hd_v, out, vr, pj);
        }
    }
}

}  // namespace tern
