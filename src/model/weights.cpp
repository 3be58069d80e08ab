// Weight binding: tensors by llama.cpp's names, shapes checked against the
// hyper-parameters so a mismatched file fails at load, never in a kernel.
#include "model/model.h"
#include "core/arena.h"
#include "core/status.h"
#include "graph/graph.h"
#include "tensor/types.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

namespace tern {

size_t model_weights_size(uint32_t n_layer) { return arena_padded(sizeof(model_layer) * n_layer); }

namespace {

struct binder {
    const model_files * files;

    tern_buffer * buffers;

    const model_file_tensor * find(const char * name) const {
        for (int64_t i = 0; i < files->n_tensors; i++) {
            if (strcmp(files->tensors[i].name, name) == 0) return &files->tensors[i];
        }
        return NULL;
    }

    // Bind `name` with expected shape ne0 x ne1 (ne1 == 0: a vector).
    tern_status bind(model_weight * w, const char * name, int64_t ne0, int64_t ne1, bool required) const {
        memset(w, 0, sizeof(*w));
        const model_file_tensor * t = find(name);
        if (!t) {
            if (required) return tern_fail(TERN_ERR_FORMAT, "missing tensor '%s'", name);
            return TERN_OK;
        }
        const int want_dims = ne1 ? 2 : 1;
        bool ok = t->ne[0] == ne0 && (ne1 ? t->ne[1] == ne1 : t->ne[1] == 1) && t->ne[2] == 1 && t->ne[3] == 1;
        if (!ok) {
            char want[64];  // "[128]" for a vector, "[64, 128]" for a matrix
            if (want_dims == 2) snprintf(want, sizeof(want), "[%lld, %lld]", (long long) ne0, (long long) ne1);
            else snprintf(want, sizeof(want), "[%lld]", (long long) ne0);
            return tern_fail(TERN_ERR_SHAPE, "tensor '%s' has shape [%lld, %lld, %lld, %lld], expected %s",
                             name, (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2],
                             (long long) t->ne[3], want);
        }
        const tern_type_traits * tr = tern_type_traits_get(t->type);
        if (!tr) return tern_fail(TERN_ERR_UNSUPPORTED, "tensor '%s': type %d not compiled in", name, (int) t->type);
        // Vectors (norms, biases) are added element-wise in F32, as llama.cpp's converter writes them.
        if (want_dims == 1 && t->type != TERN_TYPE_F32) {
            return tern_fail(TERN_ERR_UNSUPPORTED, "tensor '%s': %s vectors are not supported (F32 expected)",
                             name, tr->name);
        }
        if (tr->vec_dot == NULL) {
            return tern_fail(TERN_ERR_UNSUPPORTED, "tensor '%s': type %s cannot be a weight", name, tr->name);
        }
        w->data = t->data;
        w->name = t->name;
        w->file_tensor = (int32_t) (t - files->tensors);
        w->file_offset = 0;
        tern_buffer * fb = &buffers[t->split];
        w->st.buffer = fb;
        w->st.offset = (size_t) (t->data - fb->host);
        w->layout = TERN_LAYOUT_FILE;
        w->type = t->type;
        w->n_dims = t->n_dims;
        memcpy(w->ne, t->ne, sizeof(w->ne));
        return TERN_OK;
    }

    tern_status bind_layer(model_weight * w, int il, const char * suffix, int64_t ne0, int64_t ne1, bool required) const {
        char name[96];
        snprintf(name, sizeof(name), "blk.%d.%s", il, suffix);
        return bind(w, name, ne0, ne1, required);
    }
};

// Rows [r0, r0 + n) of a bound 2-D weight, as a weight of its own: rows are
// whole blocks in every type, so the view is the same bytes at an offset.
model_weight row_view(const model_weight & w, int64_t r0, int64_t n) {
    model_weight v = w;
    const size_t bytes = (size_t) r0 * tern_row_size(w.type, w.ne[0]);
    v.data = (const uint8_t *) w.data + bytes;
    v.st = tern_storage_at(w.st, bytes);
    v.file_offset = w.file_offset + bytes;
    v.ne[1] = n;
    return v;
}

} // namespace

tern_status model_bind_weights(tern_model * m) {
    const model_hparams * h = &m->hp;
    // Each split's bytes as one host buffer: the storage of the weights the CPU runs.
    for (int32_t s = 0; s < m->files.n_splits; s++) {
        const gguf_file * f = &m->files.splits[s];
        m->file_buffers[s] = tern_host_buffer((void *) f->base, (size_t) f->size, TERN_BUFFER_WEIGHTS);
    }
    binder b = { &m->files, m->file_buffers };
    const int64_t n_embd = h->n_embd;
    const int64_t n_q = (int64_t) h->n_embd_head_k * h->n_head;
    const int64_t n_k = hparams_n_embd_k_gqa(h);
    const int64_t n_v = hparams_n_embd_v_gqa(h);
    const int64_t n_o = (int64_t) h->n_embd_head_v * h->n_head;

    TERN_TRY(b.bind(&m->w.tok_embd, "token_embd.weight", n_embd, h->n_vocab, true));
    TERN_TRY(b.bind(&m->w.output_norm, "output_norm.weight", n_embd, 0, true));
    TERN_TRY(b.bind(&m->w.output, "output.weight", n_embd, h->n_vocab, false));
    if (!m->w.output.data) m->w.output = m->w.tok_embd;  // tied embeddings
    // RoPE frequency factors: one per rotated pair, where the architecture takes them.
    const uint32_t flags = m->arch->flags;
    const int64_t n_pairs = h->n_rot / 2;
    if (flags & ARCH_ROPE_FREQS) {
        TERN_TRY(b.bind(&m->w.rope_freqs, "rope_freqs.weight", n_pairs, 0, false));
    } else if (b.find("rope_freqs.weight")) {
        return tern_fail(TERN_ERR_FORMAT, "tensor 'rope_freqs.weight': %s takes no RoPE frequency factors", m->arch_name);
    }
    if (flags & ARCH_LONGROPE) {
        const bool any = b.find("rope_factors_long.weight") || b.find("rope_factors_short.weight");
        TERN_TRY(b.bind(&m->w.rope_long, "rope_factors_long.weight", n_pairs, 0, any));
        TERN_TRY(b.bind(&m->w.rope_short, "rope_factors_short.weight", n_pairs, 0, any));
    } else if (b.find("rope_factors_long.weight") || b.find("rope_factors_short.weight")) {
        return tern_fail(TERN_ERR_FORMAT, "tensors 'rope_factors_long/short.weight': %s takes no LongRoPE factors", m->arch_name);
    }
    // Each pair's angle is divided by its factor: zero, negative or non-finite
    // factors would turn every position into NaN logits.
    const model_weight * factor_sets[] = { &m->w.rope_freqs, &m->w.rope_long, &m->w.rope_short };
    for (const model_weight * w : factor_sets) {
        if (!w->data) continue;
        const float * v = (const float *) w->data;
        for (int64_t i = 0; i < n_pairs; i++) {
            if (!(v[i] > 0.0f && v[i] <= 3.0e38f)) {
                return tern_fail(TERN_ERR_FORMAT, "tensor '%s': factor %lld is %g (finite and > 0 expected)", w->name,
                                 (long long) i, (double) v[i]);
            }
        }
    }

    // block_count must name exactly the layers the tensors hold: fewer would
    // silently run a truncated model, more fails on a missing tensor anyway.
    int64_t n_layers_present = 0;
    for (int64_t i = 0; i < m->files.n_tensors; i++) {
        const int64_t il = model_tensor_layer(m->files.tensors[i].name);
        if (il + 1 > n_layers_present) n_layers_present = il + 1;
    }
    if (n_layers_present != (int64_t) h->n_layer) {
        return tern_fail(TERN_ERR_FORMAT, "key '%s.block_count' is %" PRIu32 " but the tensors hold %lld layers (blk.0 .. blk.%lld)",
                         m->arch_name, h->n_layer, (long long) n_layers_present, (long long) n_layers_present - 1);
    }
    m->w.layers = (model_layer *) arena_calloc(&m->files.arena, sizeof(model_layer) * h->n_layer, TERN_MEM_MODEL_TABLES);
    if (!m->w.layers) return TERN_ERR_NO_MEMORY;
    const bool bias = (flags & ARCH_QKV_BIAS) != 0;
    const bool qk_norm = (flags & ARCH_QK_NORM) != 0;
    const bool fused = k_arch_phi3 && (flags & ARCH_FUSED);
    for (uint32_t il = 0; il < h->n_layer; il++) {
        model_layer * l = &m->w.layers[il];
        const int i = (int) il;
        TERN_TRY(b.bind_layer(&l->attn_norm, i, "attn_norm.weight", n_embd, 0, true));
        if (fused) {  // phi3: one matrix of q | k | v rows
            model_weight qkv;
            TERN_TRY(b.bind_layer(&qkv, i, "attn_qkv.weight", n_embd, n_q + n_k + n_v, true));
            l->wq = row_view(qkv, 0, n_q);
            l->wk = row_view(qkv, n_q, n_k);
            l->wv = row_view(qkv, n_q + n_k, n_v);
        } else {
            TERN_TRY(b.bind_layer(&l->wq, i, "attn_q.weight", n_embd, n_q, true));
            TERN_TRY(b.bind_layer(&l->wk, i, "attn_k.weight", n_embd, n_k, true));
            TERN_TRY(b.bind_layer(&l->wv, i, "attn_v.weight", n_embd, n_v, true));
        }
        TERN_TRY(b.bind_layer(&l->wo, i, "attn_output.weight", n_o, n_embd, true));
        TERN_TRY(b.bind_layer(&l->bq, i, "attn_q.bias", n_q, 0, bias));
        TERN_TRY(b.bind_layer(&l->bk, i, "attn_k.bias", n_k, 0, bias));
        TERN_TRY(b.bind_layer(&l->bv, i, "attn_v.bias", n_v, 0, bias));
        TERN_TRY(b.bind_layer(&l->q_norm, i, "attn_q_norm.weight", h->n_embd_head_k, 0, qk_norm));
        TERN_TRY(b.bind_layer(&l->k_norm, i, "attn_k_norm.weight", h->n_embd_head_k, 0, qk_norm));
        TERN_TRY(b.bind_layer(&l->ffn_norm, i, "ffn_norm.weight", n_embd, 0, true));
        if (fused) {  // phi3: ffn_up holds the gate rows, then the up rows (llama.cpp's LLM_FFN_SWIGLU)
            model_weight gate_up;
            TERN_TRY(b.bind_layer(&gate_up, i, "ffn_up.weight", n_embd, 2 * (int64_t) h->n_ff, true));
            l->ffn_gate = row_view(gate_up, 0, h->n_ff);
            l->ffn_up = row_view(gate_up, h->n_ff, h->n_ff);
        } else {
            TERN_TRY(b.bind_layer(&l->ffn_gate, i, "ffn_gate.weight", n_embd, h->n_ff, true));
            TERN_TRY(b.bind_layer(&l->ffn_up, i, "ffn_up.weight", n_embd, h->n_ff, true));
        }
        TERN_TRY(b.bind_layer(&l->ffn_down, i, "ffn_down.weight", h->n_ff, n_embd, true));
        if (k_arch_gemma && (flags & ARCH_GEMMA)) {
            TERN_TRY(b.bind_layer(&l->attn_post_norm, i, "post_attention_norm.weight", n_embd, 0, true));
            TERN_TRY(b.bind_layer(&l->ffn_post_norm, i, "post_ffw_norm.weight", n_embd, 0, true));
        }
    }
    return TERN_OK;
}

}  // namespace tern
