#include "model/forward_shift.h"
#include "core/status.h"
#include "model/forward.h"

#include <math.h>

namespace tern {

tern_status forward_build_shift(const tern_model * m, const kv_cache * kv, uint32_t n_shift,
                                tern_graph_builder * gb, tern_graph * g, forward_shift_io * io) {
    const model_hparams * h = &m->hp;
    tern_graph_builder_reset(gb);
    g->n_nodes = 0;
    int64_t ne1[1] = { n_shift };
    io->cells = tg_new(gb, TERN_TYPE_I32, 1, ne1);
    io->deltas = tg_new(gb, TERN_TYPE_I32, 1, ne1);
    if (!io->cells || !io->deltas) return TERN_ERR_NO_MEMORY;
    io->cells->flags |= TERN_TENSOR_INPUT;
    io->deltas->flags |= TERN_TENSOR_INPUT;
    tg_cb(io->cells, "shift_cells", -1);
    tg_cb(io->deltas, "shift_deltas", -1);

    // The rope cache of the deltas, with the frequency factors the forward
    // graph uses. The rotation by delta must not scale the key again: the
    // magnitude factor (attn_factor, and YaRN's on top of it) was applied once,
    // when the key was written, so the shift's cos/sin are unscaled.
    const model_weight * factors = forward_rope_factors(m, kv);
    tern_tensor * f = NULL;
    if (factors) {
        f = tg_weight(gb, factors->type, factors->n_dims, factors->ne, factors->st, factors->layout);
        if (f) tg_set_name(f, "%s", factors->name);
    }
    // [n_rot, n_shift]; gemma3's windowed layers rotated their keys with a base of their own.
    tern_tensor * rope_cache[2] = { NULL, NULL };
    for (int swa = 0; swa < (h->rope_freq_base_swa != 0.0f ? 2 : 1); swa++) {
        tern_rope_params rp = forward_rope_params(m, swa != 0);
        rp.attn_factor = rp.ext_factor != 0.0f ? 1.0f / (1.0f + 0.1f * logf(1.0f / rp.freq_scale)) : 1.0f;
        rope_cache[swa] = tg_cb(tg_rope_cache(gb, io->deltas, &rp, f), swa ? "shift_rope_cache_swa" : "shift_rope_cache", -1);
        if (!rope_cache[swa]) return gb->status != TERN_OK ? gb->status : TERN_ERR_NO_MEMORY;
    }

    const int64_t n_embd_k = hparams_n_embd_k_gqa(h);
    for (uint32_t il = 0; il < h->n_layer; il++) {
        if (!hparams_layer_rope(h, (int32_t) il)) continue;  // smollm3: keys without RoPE move as they are
        gb->layer = (int32_t) il;
        int64_t cache_ne[2] = { n_embd_k, kv->n_cells };
        tern_tensor * kc = tg_cb(tg_kv(gb, kv->type_k, 2, cache_ne, kv->k[il]), "cache_k", (int32_t) il);
        tern_tensor * rows = tg_cb(tg_get_rows(gb, kc, io->cells), "k_shift_rows", (int32_t) il);  // [n_embd_k, n_shift] F32
        int64_t head_ne[3] = { h->n_embd_head_k, h->n_head_kv, n_shift };
        int64_t flat_ne[2] = { n_embd_k, n_shift };
        tern_tensor * rc = rope_cache[hparams_layer_rope_swa(h, (int32_t) il) ? 1 : 0];
        tern_tensor * rot = tg_cb(tg_rope(gb, tg_reshape(gb, rows, 3, head_ne), rc), "k_shifted", (int32_t) il);
        tern_tensor * out = tg_cb(tg_set_rows(gb, kc, tg_reshape(gb, rot, 2, flat_ne), io->cells), "k_shift_stored", (int32_t) il);
        if (!out) return gb->status != TERN_OK ? gb->status : TERN_ERR_NO_MEMORY;
        TERN_TRY(tern_graph_expand(g, out));
    }
    return TERN_OK;
}

}  // namespace tern
