// ATTN: softmax(scale * q k^T + mask) v per (token, head), llama.cpp's
// non-flash attention semantics with Tern's own summation order:
//
//   q16     = F16(q)                       with an F16 K (as ggml converts q to K's type)
//   s_j     = dot(q16, k_j) * scale + mask[j]   for the n_kv cells (kernel dot_f16_rows);
//             with a soft cap c (gemma2) dot -> tanh(dot * (1/c)) * c first
//   p_j     = e^(s_j - max s) / sum_j e^(...)    kernel exp_sum_f32 (kernels/exp_approx.h)
//   p16_j   = F16(p_j)                     with an F16 V (ggml converts kq to V's type)
//   out     = sum_j p16_j * v_j            in float, j ascending (kernel mad_f16_rows)
//
// Work is split over (token, KV head, part of its query heads): the query heads
// that share a KV head (GQA: head h reads KV head h / (n_head / n_head_kv)) go
// to the kernels together, so an F16 K or V row is read and converted once for
// all of them. The heads of a group are split into parts only when there are
// too few (token, KV head) pairs to keep every thread busy (decode). A head's
// result never depends on its group or part: logits are the same for any
// thread count. With an F16 cache the dots of all n_kv cells are computed in
// one kernel call (masked ones too: cheaper than a call per cell) and masked
// cells are skipped in the V product. Two passes over the scores: simple, and
// a group's rows of n_kv floats stay in L2 for the context sizes Tern targets.
// Scratch per worker: q16 [group, hd], scores [group, n_kv], p16 [n_kv],
// slice [hd + 64].
//
// A quantized cache (Q8_0, Q4_0: tern_context_params type_k / type_v) comes
// as the 2-D cache [n_embd_gqa, n_kv] (a head's slice need not be whole
// blocks). Each cell's head slice is dequantized (the blocks covering it,
// into `slice`) and met in float, one head at a time: s_j = dot(q, k_j),
// out += p_j * v_j with p_j unrounded. Masked cells are skipped before
// dequantizing.
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

// Query heads per KV head.
int64_t group_of(const tern_tensor * dst) {
    const tern_tensor * k = dst->src[1];
    const int64_t hd = dst->src[0]->ne[0], n_head = dst->src[0]->ne[1];
    return n_head / (is_quantized_cache(k) ? k->ne[0] / hd : k->ne[1]);
}

attn_scratch_layout scratch_layout(const tern_tensor * dst) {
    const int64_t hd = dst->src[0]->ne[0], n_kv = n_cells_of(dst->src[1]), group = group_of(dst);
    const int64_t hd_v = dst->ne[0] / dst->src[0]->ne[1];
    attn_scratch_layout l;
    l.q16 = arena_padded((size_t) (group * hd) * sizeof(tern_fp16));
    l.scores = arena_padded((size_t) (group * n_kv) * sizeof(float));
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

// Parts per group: enough (token, KV head, part) units for two per thread.
// A head's result never depends on its part, so the split is free to follow
// the thread count.
static void attn_parts(const tern_tensor * dst, int32_t nth, int64_t * parts, int64_t * part_size) {
    const int64_t group = group_of(dst);
    const int64_t pairs = dst->src[0]->ne[2] * (dst->src[0]->ne[1] / group);
    int64_t p = (2 * (int64_t) nth + pairs - 1) / pairs;
    if (p > group) p = group;
    *part_size = (group + p - 1) / p;
    *parts = (group + *part_size - 1) / *part_size;
}

int64_t tern_op_attn_units(const tern_tensor * dst, int32_t n_threads) {
    int64_t parts, part_size;
    attn_parts(dst, n_threads, &parts, &part_size);
    return dst->src[0]->ne[2] * (dst->src[0]->ne[1] / group_of(dst)) * parts;
}

size_t tern_op_attn_work_size(const tern_tensor * dst, int32_t n_threads) {
    return (size_t) n_threads * scratch_layout(dst).total();
}

namespace {

// Cells a token attends: up to its last unmasked one, rounded up to 8 (never
// past n_kv). The cells after it are masked (-inf, p = 0) and change no bit:
// the kernels give a cell's dot and a query's softmax the same operations
// whatever the count (exp_sum's vector/tail split falls on a multiple of 8).
// Causal prompts thus skip the masked half of the dots. With a bounds input
// the token's bound is given (the mask past it is not even read: a graph
// made for the whole cache serves a cache filled to any depth); without one
// the mask's trailing masked cells are skipped.
int64_t cells_to_attend(const float * mr, int64_t n_kv, const tern_tensor * bounds, int64_t t) {
    if (!mr) return n_kv;
    int64_t n = n_kv;
    if (bounds) {
        int32_t b;
        memcpy(&b, (const uint8_t *) bounds->data + t * bounds->nb[0], sizeof(b));
        n = b < 0 ? 0 : (b < n_kv ? b : n_kv);
    }
    while (n > 0 && mr[n - 1] == -INFINITY) n--;
    n = (n + 7) / 8 * 8;
    return n < n_kv ? n : n_kv;
}

struct attn_args {
    const tern_tensor * q, * k, * v, * mask;
    float scale;
    float softcap;  // 0: none
    int64_t hd, hd_v, n_kv;
    const tern_kernel_set * ks;
};

// Scores of one head (row `sc` holding the raw dots with an F16 K) -> scale,
// mask, softmax; sc becomes p (unnormalized) and *inv the normalizer.
// Returns false when the output is decided already: NaN (a NaN score must reach
// the output, not vanish as "every cell masked") or 0 (every cell masked).
bool softmax_row(const attn_args & a, const float * qr, int64_t hk, const float * mr, float * sc, float * slice, float * out,
                 float * inv) {
    if (a.k->type != TERN_TYPE_F16) {  // dots one cell at a time, masked cells skipped
        const bool k_q = is_quantized_cache(a.k);
        for (int64_t j = 0; j < a.n_kv; j++) {
            if (mr && mr[j] == -INFINITY) {
                sc[j] = 0.0f;  // becomes -inf below
                continue;
            }
            sc[j] = k_q ? a.ks->dot_f32(a.hd, qr, dequant_slice(a.k, j, hk * a.hd, a.hd, slice))
                        : a.ks->dot_f32(a.hd, qr, (const float *) tern_row_ptr(a.k, hk, j, 0));
        }
    }
    if (a.softcap > 0.0f) {  // gemma2: llama.cpp's scale, tanh, scale on the raw q.k
        const float inv = 1.0f / a.softcap;
        for (int64_t j = 0; j < a.n_kv; j++) sc[j] = tanhf(sc[j] * inv) * a.softcap;
    }
    const float max = a.ks->scale_mask_max_f32(a.n_kv, sc, a.scale, mr);
    const bool nan = max != max;
    if (nan) {
        for (int64_t i = 0; i < a.hd_v; i++) out[i] = NAN;
        return false;
    }
    memset(out, 0, (size_t) a.hd_v * sizeof(float));
    if (max == -INFINITY) return false;  // every cell masked
    *inv = 1.0f / a.ks->exp_sum_f32(a.n_kv, sc, max);  // e^-inf = 0 for masked cells
    return true;
}

}  // namespace

void tern_op_attn(const tern_op_ctx * c, tern_tensor * dst) {
    attn_args a;
    a.q = dst->src[0];     // F32 [hd, n_head, n_tokens]
    a.k = dst->src[1];     // F16/F32 [hd, n_head_kv, n_kv], or quantized [n_embd_gqa, n_kv]
    a.v = dst->src[2];     // F16/F32 [hd_v, n_head_kv, n_kv], or quantized [n_embd_v_gqa, n_kv]
    a.mask = dst->src[3];  // F32 [>= n_kv, >= n_tokens] or NULL
    a.scale = tg_param_f32(dst, 0);
    a.softcap = tg_param_f32(dst, 1);
    a.hd = a.q->ne[0];
    const int64_t n_kv = n_cells_of(a.k);
    a.ks = tern_kernels();
    const int64_t n_head = a.q->ne[1], n_tokens = a.q->ne[2];
    a.hd_v = dst->ne[0] / n_head;
    const int64_t group = group_of(dst), n_head_kv = n_head / group;
    const bool k_f16 = a.k->type == TERN_TYPE_F16, v_f16 = a.v->type == TERN_TYPE_F16, v_q = is_quantized_cache(a.v);
    const tern_kernel_set * ks = a.ks;

    const attn_scratch_layout lay = scratch_layout(dst);
    uint8_t * scratch = (uint8_t *) c->work + (size_t) c->ith * lay.total();
    tern_fp16 * q16 = (tern_fp16 *) scratch;
    float * scores = (float *) (scratch + lay.q16);
    tern_fp16 * p16 = (tern_fp16 *) (scratch + lay.q16 + lay.scores);
    float * slice = (float *) (scratch + lay.q16 + lay.scores + lay.p16);

    const int64_t pairs = n_tokens * n_head_kv;
    int64_t parts, part_size;
    attn_parts(dst, c->nth, &parts, &part_size);

    int64_t u0, u1;
    tern_op_rows(c, pairs * parts, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t t = u / (n_head_kv * parts), hk = (u / parts) % n_head_kv;
        const int64_t h0 = hk * group + (u % parts) * part_size;
        const int64_t h1 = h0 + part_size < (hk + 1) * group ? h0 + part_size : (hk + 1) * group;
        const int64_t ng = h1 - h0;
        const float * mr = a.mask ? (const float *) tern_row_ptr(a.mask, t, 0, 0) : NULL;
        a.n_kv = cells_to_attend(mr, n_kv, dst->src[4], t);
        float * out0 = (float *) tern_row_ptr(dst, t, 0, 0) + h0 * a.hd_v;  // [hd_v, ng]

        // Pass 1: scores of every head of the part; with an F16 K all of them in one kernel call.
        if (k_f16) {
            for (int64_t g = 0; g < ng; g++) ks->fp32_to_fp16(a.hd, (const float *) tern_row_ptr(a.q, h0 + g, t, 0), q16 + g * a.hd);
            const tern_fp16 * k0 = (const tern_fp16 *) tern_row_ptr(a.k, hk, 0, 0);
            ks->dot_f16_rows(a.hd, a.n_kv, ng, q16, k0, (int64_t) (a.k->nb[2] / sizeof(tern_fp16)), scores, n_kv);
        }
        for (int64_t g = 0; g < ng; g++) {
            float * sc = scores + g * n_kv;
            float * out = out0 + g * a.hd_v;
            float inv = 0.0f;
            const bool live = softmax_row(a, (const float *) tern_row_ptr(a.q, h0 + g, t, 0), hk, mr, sc, slice, out, &inv);
            if (!live) {  // output decided (NaN or 0): p = 0 everywhere, so the V kernel adds nothing
                memset(sc, 0, (size_t) a.n_kv * sizeof(float));
                continue;
            }
            if (v_f16) {
                // p goes through F16 (V's type), as in llama.cpp: part of its semantics (a
                // systematic rounding, not an order), which quantized models feel.
                ks->scale_mul_f32(a.n_kv, sc, sc, inv, NULL);
                ks->fp32_to_fp16(a.n_kv, sc, p16);
                ks->fp16_to_fp32(a.n_kv, p16, sc);
                continue;
            }
            // Pass 2, F32 or quantized V: one head at a time, cells with p_j == 0 (masked) skipped.
            for (int64_t j = 0; j < a.n_kv; j++) {
                const float pj = sc[j] * inv;
                if (pj == 0.0f) continue;
                const float * vr = v_q ? dequant_slice(a.v, j, hk * a.hd_v, a.hd_v, slice) : (const float *) tern_row_ptr(a.v, hk, j, 0);
                ks->mad_f32(a.hd_v, out, vr, pj);
            }
        }
        if (!v_f16) continue;
        // Pass 2, F16 V: out_g = sum_j p_gj * v_j for every head of the part, each V row read once.
        const tern_fp16 * v0 = (const tern_fp16 *) tern_row_ptr(a.v, hk, 0, 0);
        ks->mad_f16_rows(a.hd_v, a.n_kv, ng, out0, v0, (int64_t) (a.v->nb[2] / sizeof(tern_fp16)), scores, n_kv);
    }
}

}  // namespace tern
