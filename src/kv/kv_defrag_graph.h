// The defragmentation graph: the rows of the moved cells of every layer,
// moved byte for byte (any cache type, nothing converted), wherever the
// layer's cache lives (host memory or a device's KV buffer). Per layer, for
// the n moves src[i] -> dst[i] (kv_cache_defrag_plan):
//
//   k_rows = COPY_ROWS(K cache, src)     // [n_embd_k, n] of the cache's type
//   SET_ROWS(K cache, k_rows, dst)       // the same bytes at the new cells
//   (the same for V)
//
// All source rows are gathered before any is written (the gather is one node,
// the scatter the next), so a cell both read and written by the moves is read
// first. Planned once for the worst case (every cell moved) beside the decode
// and K-shift graphs, in the same activation regions.
#pragma once
#include "graph/graph.h"
#include "kv/kv_cache.h"

namespace tern {

struct kv_defrag_io {
    tern_tensor * src;   // I32 [n] cells moved from
    tern_tensor * dst;   // I32 [n] cells moved to
};

tern_status kv_defrag_build(const kv_cache * kv, uint32_t n_moves, tern_graph_builder * gb, tern_graph * g, kv_defrag_io * io);

}  // namespace tern
