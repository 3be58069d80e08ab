#include "model/forward.h"
#include "core/fp16.h"
#include "core/status.h"
#include "tensor/types.h"

#include <math.h>

namespace tern {

int32_t forward_tensor_bound(uint32_t n_layer) { return 64 + 56 * (int32_t) n_layer; }

namespace {

struct forward_builder {
    const tern_model * m;
    tern_graph_builder * gb;

    // A weight's leaf, named as in the file (placement and -ot match these names).
    tern_tensor * weight(const model_weight & w) {
        tern_tensor * t = tg_weight(gb, w.type, w.n_dims, w.ne, w.st, w.layout);
        if (t) tg_set_name(t, "%s", w.name);
        return t;
    }

    // y = W x (+ b): an F32 bias is added by the product's node itself.
    tern_tensor * linear(tern_tensor * x, const model_weight & w, const model_weight & b) {
        if (!b.data) return tg_mul_mat(gb, weight(w), x);
        if (b.type == TERN_TYPE_F32) return tg_mul_mat_bias(gb, weight(w), x, weight(b));
        tern_tensor * y = tg_mul_mat(gb, weight(w), x);
        return y ? tg_add(gb, y, weight(b)) : NULL;
    }

    tern_tensor * input(tern_type type, int64_t ne0, int64_t ne1, const char * name) {
        int64_t ne[2] = { ne0, ne1 };
        tern_tensor * t = tg_new(gb, type, ne1 ? 2 : 1, ne);
        if (t) {
            t->flags |= TERN_TENSOR_INPUT;
            tg_cb(t, name, -1);
        }
        return t;
    }

    // View of the first n_kv cells of a layer's cache (after the write node `cache`):
    // [head_dim, n_head_kv, n_kv] over F16/F32 rows of n_embd_gqa, or the 2-D
    // [n_embd_gqa, n_kv] rows of a quantized cache (attn.cpp slices the heads).
    tern_tensor * cache_view(tern_tensor * cache, uint32_t head_dim, uint32_t n_kv, const char * name, int32_t il) {
        const model_hparams * h = &m->hp;
        const tern_type_traits * tr = tern_type_traits_get(cache->type);
        const size_t row = tern_row_size(cache->type, (int64_t) head_dim * h->n_head_kv);
        if (tr->blck_size > 1) {
            int64_t ne[2] = { (int64_t) head_dim * h->n_head_kv, n_kv };
            size_t nb[2] = { tr->type_size, row };
            return tg_cb(tg_view(gb, cache, 2, ne, nb, 0), name, il);
        }
        const size_t es = tr->type_size;
        int64_t ne[3] = { head_dim, h->n_head_kv, n_kv };
        size_t nb[3] = { es, es * head_dim, row };
        return tg_cb(tg_view(gb, cache, 3, ne, nb, 0), name, il);
    }
};

} // namespace

tern_rope_params forward_rope_params(const tern_model * m, bool swa_layers) {
    const model_hparams * h = &m->hp;
    tern_rope_params rp;
    rp.n_rot = (int32_t) h->n_rot;
    rp.mode = m->arch->rope_mode;
    rp.n_ctx_orig = (int32_t) h->n_ctx_orig_yarn;
    rp.freq_base = swa_layers ? h->rope_freq_base_swa : h->rope_freq_base;
    rp.freq_scale = swa_layers ? h->rope_freq_scale_swa : h->rope_freq_scale;
    rp.ext_factor = h->rope_scaling == 2 ? 1.0f : 0.0f;
    rp.attn_factor = h->rope_attn_factor;
    rp.beta_fast = 32.0f;
    rp.beta_slow = 1.0f;
    return rp;
}

const model_weight * forward_rope_factors(const tern_model * m, const kv_cache * kv) {
    if (m->w.rope_freqs.data) return &m->w.rope_freqs;
    if (!m->w.rope_long.data) return NULL;
    // LongRoPE, as llama.cpp chooses: the long factors once a sequence's share of
    // the context passes the original training context.
    const uint32_t n_seq = kv->n_seq_max ? kv->n_seq_max : 1;
    return kv->n_cells / n_seq > m->hp.n_ctx_orig_yarn ? &m->w.rope_long : &m->w.rope_short;
}

tern_status forward_build(const tern_model * m, const kv_cache * kv, forward_shape shape,
                          tern_graph_builder * gb, tern_graph * g, forward_io * io) {
    const model_hparams * h = &m->hp;
    const uint32_t flags = m->arch->flags;
    const bool residual_scale = k_arch_granite && h->residual_scale != 0.0f;
    const bool gemma = k_arch_gemma && (flags & ARCH_GEMMA);
    const int64_t n_tokens = shape.n_tokens;
    const int32_t n_layer = (int32_t) h->n_layer;
    tern_graph_builder_reset(gb);
    g->n_nodes = 0;
    forward_builder fb = { m, gb };

    gb->layer = -1;  // the input part
    io->tokens = fb.input(TERN_TYPE_I32, n_tokens, 0, "inp_tokens");
    io->pos = fb.input(TERN_TYPE_I32, n_tokens, 0, "inp_pos");
    io->slots = fb.input(TERN_TYPE_I32, n_tokens, 0, "inp_slots");
    io->mask = fb.input(TERN_TYPE_F32, kv->n_cells, n_tokens, "inp_mask");
    io->bounds = fb.input(TERN_TYPE_I32, n_tokens, 0, "inp_kv_bounds");
    io->mask_swa = NULL;
    io->bounds_swa = NULL;
    if (hparams_swa_mixed(h)) {  // gemma2: the windowed layers' own mask and bounds
        io->mask_swa = fb.input(TERN_TYPE_F32, kv->n_cells, n_tokens, "inp_mask_swa");
        io->bounds_swa = fb.input(TERN_TYPE_I32, n_tokens, 0, "inp_kv_bounds_swa");
        if (!io->mask_swa || !io->bounds_swa) return TERN_ERR_NO_MEMORY;
    }
    io->out_ids = fb.input(TERN_TYPE_I32, shape.n_outputs, 0, "inp_out_ids");
    if (!io->tokens || !io->pos || !io->slots || !io->mask || !io->bounds || !io->out_ids) return TERN_ERR_NO_MEMORY;

    // [n_rot, n_tokens] (cos, sin), shared by all layers; the frequency factors
    // (Llama 3, LongRoPE) are divided in here, once.
    const model_weight * factors = forward_rope_factors(m, kv);
    const tern_rope_params rp = forward_rope_params(m, false);
    tern_tensor * rope_cache = tg_cb(tg_rope_cache(gb, io->pos, &rp, factors ? fb.weight(*factors) : NULL), "rope_cache", -1);
    tern_tensor * rope_cache_swa = NULL;  // gemma3: the windowed layers' own base and scale
    if (h->rope_freq_base_swa != 0.0f) {
        const tern_rope_params rp_swa = forward_rope_params(m, true);
        rope_cache_swa = tg_cb(tg_rope_cache(gb, io->pos, &rp_swa, factors ? fb.weight(*factors) : NULL), "rope_cache_swa", -1);
        if (!rope_cache_swa) return TERN_ERR_NO_MEMORY;
    }

    const model_weight none = {};
    tern_tensor * x = tg_cb(tg_get_rows(gb, fb.weight(m->w.tok_embd), io->tokens), "inp_embd", -1);  // [n_embd, n_tokens]
    if ((k_arch_granite || k_arch_gemma) && h->embd_scale != 0.0f) x = tg_cb(tg_scale(gb, x, h->embd_scale), "inp_scaled", -1);
    for (int32_t il = 0; il < n_layer && x; il++) {
        gb->layer = il;  // every tensor made below is this layer's
        const model_layer * l = &m->w.layers[il];
        tern_tensor * cur = tg_cb(tg_rms_norm(gb, x, fb.weight(l->attn_norm), h->norm_rms_eps), "attn_norm", il);

        tern_tensor * q = tg_cb(fb.linear(cur, l->wq, l->bq), "Qcur", il);  // [hd * n_head, n_tokens]
        tern_tensor * k = tg_cb(fb.linear(cur, l->wk, l->bk), "Kcur", il);  // [n_embd_k_gqa, n_tokens]
        tern_tensor * v = tg_cb(fb.linear(cur, l->wv, l->bv), "Vcur", il);  // [n_embd_v_gqa, n_tokens]
        if (!q || !k || !v) return TERN_ERR_NO_MEMORY;
        int64_t q_ne[3] = { h->n_embd_head_k, h->n_head, n_tokens };
        int64_t k_ne[3] = { h->n_embd_head_k, h->n_head_kv, n_tokens };
        q = tg_reshape(gb, q, 3, q_ne);
        k = tg_reshape(gb, k, 3, k_ne);
        if (flags & ARCH_QK_NORM) {
            q = tg_cb(tg_rms_norm(gb, q, fb.weight(l->q_norm), h->norm_rms_eps), "Qcur_normed", il);
            k = tg_cb(tg_rms_norm(gb, k, fb.weight(l->k_norm), h->norm_rms_eps), "Kcur_normed", il);
        }
        if (hparams_layer_rope(h, il)) {  // smollm3: every 4th layer keeps q and k as they are
            tern_tensor * rc = hparams_layer_rope_swa(h, il) ? rope_cache_swa : rope_cache;
            q = tg_cb(tg_rope(gb, q, rc), "Qcur_rope", il);
            k = tg_cb(tg_rope(gb, k, rc), "Kcur_rope", il);
        }
        // phi3: q scaled here (llama.cpp rounds the scaled q to F16), the attention by 1.
        const bool prescale = (flags & ARCH_Q_PRESCALE) != 0;
        if (prescale && q) q = tg_cb(tg_scale(gb, q, h->attn_scale), "Qcur_scaled", il);
        if (!q || !k) return TERN_ERR_NO_MEMORY;

        // Write this batch's keys and values into the cache, then attend over its cells.
        int64_t k_rows[2] = { hparams_n_embd_k_gqa(h), n_tokens };
        int64_t k_cache_ne[2] = { hparams_n_embd_k_gqa(h), kv->n_cells };
        int64_t v_cache_ne[2] = { hparams_n_embd_v_gqa(h), kv->n_cells };
        tern_tensor * kc = tg_cb(tg_kv(gb, kv->type_k, 2, k_cache_ne, kv->k[il]), "cache_k", il);
        tern_tensor * vc = tg_cb(tg_kv(gb, kv->type_v, 2, v_cache_ne, kv->v[il]), "cache_v", il);
        kc = tg_cb(tg_set_rows(gb, kc, tg_reshape(gb, k, 2, k_rows), io->slots), "k_stored", il);
        vc = tg_cb(tg_set_rows(gb, vc, v, io->slots), "v_stored", il);
        if (!kc || !vc) return TERN_ERR_NO_MEMORY;
        const bool swa = io->mask_swa && hparams_layer_swa(h, il);  // gemma2's windowed layers: the second mask
        tern_tensor * attn = tg_cb(tg_attn(gb, q, fb.cache_view(kc, h->n_embd_head_k, kv->n_cells, "k", il),
                                           fb.cache_view(vc, h->n_embd_head_v, kv->n_cells, "v", il),
                                           swa ? io->mask_swa : io->mask, swa ? io->bounds_swa : io->bounds,
                                           prescale ? 1.0f : h->attn_scale, h->attn_softcap), "kqv_out", il);
        cur = tg_cb(fb.linear(attn, l->wo, none), "attn_out", il);  // [n_embd, n_tokens]
        if (gemma) cur = tg_cb(tg_rms_norm(gb, cur, fb.weight(l->attn_post_norm), h->norm_rms_eps), "attn_post_norm", il);
        if (!cur) return TERN_ERR_NO_MEMORY;

        if (il == n_layer - 1) {
            // Only the rows whose logits are wanted go on.
            cur = tg_cb(tg_get_rows(gb, cur, io->out_ids), "attn_out_kept", il);
            x = tg_cb(tg_get_rows(gb, x, io->out_ids), "inp_kept", il);
        }
        if (residual_scale) cur = tg_cb(tg_scale(gb, cur, h->residual_scale), "attn_out_scaled", il);  // granite
        tern_tensor * ffn_in = tg_cb(tg_add(gb, cur, x), "ffn_inp", il);
        cur = tg_cb(tg_rms_norm(gb, ffn_in, fb.weight(l->ffn_norm), h->norm_rms_eps), "ffn_norm", il);
        tern_tensor * gate = tg_cb(fb.linear(cur, l->ffn_gate, none), "ffn_gate", il);  // [n_ff, n_tokens]
        tern_tensor * up = tg_cb(fb.linear(cur, l->ffn_up, none), "ffn_up", il);
        tern_tensor * act = gemma ? tg_cb(tg_geglu(gb, gate, up), "ffn_geglu", il) : tg_cb(tg_swiglu(gb, gate, up), "ffn_swiglu", il);
        cur = tg_cb(fb.linear(act, l->ffn_down, none), "ffn_out", il);  // [n_embd, n_tokens]
        if (gemma) cur = tg_cb(tg_rms_norm(gb, cur, fb.weight(l->ffn_post_norm), h->norm_rms_eps), "ffn_post_norm", il);
        if (residual_scale) cur = tg_cb(tg_scale(gb, cur, h->residual_scale), "ffn_out_scaled", il);
        x = cur ? tg_cb(tg_add(gb, cur, ffn_in), "l_out", il) : NULL;
    }
    if (!x) return TERN_ERR_NO_MEMORY;
    gb->layer = n_layer;  // the output part
    x = tg_rms_norm(gb, x, fb.weight(m->w.output_norm), h->norm_rms_eps);
    tg_set_name(x, "result_norm");
    io->logits = fb.linear(x, m->w.output, none);  // [n_vocab, n_outputs]
    if (k_arch_granite && h->logit_scale != 0.0f) io->logits = tg_scale(gb, io->logits, 1.0f / h->logit_scale);
    if (k_arch_gemma && h->final_softcap != 0.0f) io->logits = tg_softcap(gb, io->logits, h->final_softcap);
    if (!io->logits) return TERN_ERR_NO_MEMORY;
    tg_set_name(io->logits, "result_output");
    io->logits->flags |= TERN_TENSOR_OUTPUT;
    return tern_graph_expand(g, io->logits);
}

}  // namespace tern
