// CPU op kernels: one function per op, called once per item of the node's
// step (cpu/work_claim.h) by whichever worker claimed the item; each computes
// the item's share of dst (tern_op_rows: a balanced range of rows) and never
// depends on the thread count or on who computes it for its values: every
// output value is reduced by one thread in a fixed order.
//
// Shapes and types are checked when the node is built (graph.cpp), so the
// kernels trust them. Index inputs (get_rows ids, set_rows slots) come from
// the caller: an index out of range gives a zero row (get_rows) or no write
// (set_rows), never a stray memory access.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "graph/graph.h"

namespace tern {


struct tern_op_ctx {
    int32_t  ith;        // this worker (its private slices of the scratch)
    int32_t  nth;        // workers of the pool
    void *   work;       // node scratch, tern_op_work_size() bytes, 64-byte aligned, shared by all workers
    size_t   work_size;
    int64_t  item;       // the item to compute, of n_items (tern_op_items)
    int64_t  n_items;
    int32_t  phase;      // of tern_op_phases
    bool     first;      // this worker's first item of this step (per-worker setup: mul_mat's private quantization)
};

// Rows [*r0, *r1) of n for item i of n_items: contiguous, balanced, covering n.
static inline void tern_split_rows(int64_t n, int64_t i, int64_t n_items, int64_t * r0, int64_t * r1) {
    *r0 = n * i / n_items;
    *r1 = n * (i + 1) / n_items;
}
static inline void tern_op_rows(const tern_op_ctx * c, int64_t n, int64_t * r0, int64_t * r1) {
    tern_split_rows(n, c->item, c->n_items, r0, r1);
}

// Scratch bytes a node needs when computed by n_threads workers (0 for most ops).
size_t tern_op_work_size(const tern_tensor * node, int32_t n_threads);
// Steps of a node (2: mul_mat quantizing a shared input first, else 1) and the
// items of each (at least 1) for a pool of n_threads.
int32_t tern_op_phases(const tern_tensor * node);
int64_t tern_op_items(const tern_tensor * node, int32_t phase, int32_t n_threads);
// Items of a row-wise op over n rows: a few per worker, for balance and stealing.
static inline int64_t tern_rows_items(int64_t n, int32_t n_threads) {
    if (n_threads <= 1) return 1;  // one thread: one call, nothing to balance
    const int64_t most = 4 * (int64_t) n_threads;
    return n < 1 ? 1 : (n < most ? n : most);
}
size_t tern_op_mul_mat_items_phase(const tern_tensor * dst, int32_t phase, int32_t n_threads);
int32_t tern_op_mul_mat_phases(const tern_tensor * dst);
int64_t tern_op_attn_units(const tern_tensor * dst, int32_t n_threads);

void tern_op_get_rows(const tern_op_ctx * c, tern_tensor * dst);
size_t tern_op_get_rows_work_size(const tern_tensor * dst, int32_t n_threads);
void tern_op_rms_norm(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_add(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_mul(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_scale(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_swiglu(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_geglu(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_softcap(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_mul_mat(const tern_op_ctx * c, tern_tensor * dst);
size_t tern_op_mul_mat_work_size(const tern_tensor * dst, int32_t n_threads);
void tern_op_rope_cache(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_rope(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_set_rows(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_attn(const tern_op_ctx * c, tern_tensor * dst);
size_t tern_op_attn_work_size(const tern_tensor * dst, int32_t n_threads);
void tern_op_argmax(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_copy_rows(const tern_op_ctx * c, tern_tensor * dst);

// Row r of t counted over dims 1..3 (r = i1 + ne1 * (i2 + ne2 * i3)).
static inline uint8_t * tern_row_flat(const tern_tensor * t, int64_t r) {
    int64_t i1 = r % t->ne[1], i23 = r / t->ne[1];
    return (uint8_t *) t->data + i1 * t->nb[1] + (i23 % t->ne[2]) * t->nb[2] + (i23 / t->ne[2]) * t->nb[3];
}
static inline int64_t tern_n_rows(const tern_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

// Pointer to element (i1, i2, i3)'s row of t.
static inline uint8_t * tern_row_ptr(const tern_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (uint8_t *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

}  // namespace tern
