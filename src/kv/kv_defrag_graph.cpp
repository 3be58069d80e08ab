#include "kv/kv_defrag_graph.h"
#include "core/status.h"

namespace tern {

tern_status kv_defrag_build(const kv_cache * kv, uint32_t n_moves, tern_graph_builder * gb, tern_graph * g, kv_defrag_io * io) {
    tern_graph_builder_reset(gb);
    g->n_nodes = 0;
    int64_t ne1[1] = { n_moves };
    io->src = tg_cb(tg_new(gb, TERN_TYPE_I32, 1, ne1), "defrag_src", -1);
    io->dst = tg_cb(tg_new(gb, TERN_TYPE_I32, 1, ne1), "defrag_dst", -1);
    if (!io->src || !io->dst) return TERN_ERR_NO_MEMORY;
    io->src->flags |= TERN_TENSOR_INPUT;
    io->dst->flags |= TERN_TENSOR_INPUT;
    for (uint32_t il = 0; il < kv->n_layer; il++) {
        gb->layer = (int32_t) il;
        for (int part = 0; part < 2; part++) {
            const int64_t width = part == 0 ? kv->n_embd_k : kv->n_embd_v;
            int64_t ne[2] = { width, kv->n_cells };
            tern_tensor * cache = part == 0 ? tg_kv(gb, kv->type_k, 2, ne, kv->k[il]) : tg_kv(gb, kv->type_v, 2, ne, kv->v[il]);
            tg_cb(cache, part == 0 ? "cache_k" : "cache_v", (int32_t) il);
            tern_tensor * rows = tg_cb(tg_copy_rows(gb, cache, io->src), part == 0 ? "k_moved" : "v_moved", (int32_t) il);
            tern_tensor * out = tg_cb(tg_set_rows(gb, cache, rows, io->dst), part == 0 ? "k_defrag" : "v_defrag", (int32_t) il);
            if (!out) return gb->status != TERN_OK ? gb->status : TERN_ERR_NO_MEMORY;
            TERN_TRY(tern_graph_expand(g, out));
        }
    }
    return TERN_OK;
}

}  // namespace tern
