// The K-shift graph: after seq_add / seq_div moved positions (kv_cache.h),
// the keys of the moved cells still carry the rotation of their old
// position. RoPE is additive, R(p + d) = R(d) R(p), so rotating a stored key
// by the cell's pending delta d gives the key of its new position without
// recomputing anything. Per layer, for the n_shift moved cells:
//
//   rows = GET_ROWS(K cache, cells)        // [n_embd_k, n_shift] F32 (dequantized)
//   rows = ROPE(rows as [hd, n_head_kv, n_shift], rope_cache(deltas))
//   SET_ROWS(K cache, rows, cells)          // F32 -> the cache's type (requantized)
//
// The graph is planned once for the worst case (every cell moved) next to the
// decode graph; both share the context's activation buffer (never live at
// the same time).
#pragma once
#include "graph/graph.h"
#include "kv/kv_cache.h"
#include "model/model.h"

namespace tern {

struct forward_shift_io {
    tern_tensor * cells;   // I32 [n_shift] cells whose keys rotate
    tern_tensor * deltas;  // I32 [n_shift] their pending position change
};

tern_status forward_build_shift(const tern_model * m, const kv_cache * kv, uint32_t n_shift,
                                tern_graph_builder * gb, tern_graph * g, forward_shift_io * io);

}  // namespace tern
