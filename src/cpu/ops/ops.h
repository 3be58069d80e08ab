// CPU op kernels: one function per op, called by every worker of the pool with
// its index; each computes its share of dst (rows split by thread index, see
// tern_split_rows) and never depends on the thread count for its values: every
// output value is reduced by one thread in a fixed order.
//
// Shapes and types are checked when the node is built (graph.cpp), so the
// kernels trust them. Index inputs (get_rows ids, set_rows slots) come from
// the caller: an index out of range gives a zero row (get_rows) or no write
// (set_rows), never a stray memory access.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "cpu/work_claim.h"
#include "graph/graph.h"

namespace tern {


struct tern_op_ctx {
    int32_t           ith;        // this worker
    int32_t           nth;        // workers
    void *            work;       // node scratch, tern_op_work_size() bytes, 64-byte aligned, shared by all workers
    size_t            work_size;
    tern_threadpool * pool;       // for ops with phases (mul_mat): tern_threadpool_barrier(pool)
    // This node's claim counters, [nth], zero when it starts (work_claim.h: mul_mat's chunks).
    tern_claim_counter * claims;
};

// Rows [*r0, *r1) of n for worker ith of nth: contiguous, balanced, covering n.
static inline void tern_split_rows(int64_t n, int32_t ith, int32_t nth, int64_t * r0, int64_t * r1) {
    *r0 = n * ith / nth;
    *r1 = n * (ith + 1) / nth;
}

// Scratch bytes a node needs when computed by n_threads workers (0 for most ops).
size_t tern_op_work_size(const tern_tensor * node, int32_t n_threads);

void tern_op_get_rows(const tern_op_ctx * c, tern_tensor * dst);
size_t tern_op_get_rows_work_size(const tern_tensor * dst, int32_t n_threads);
void tern_op_rms_norm(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_add(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_mul(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_scale(const tern_op_ctx * c, tern_tensor * dst);
void tern_op_swiglu(const tern_op_ctx * c, tern_tensor * dst);
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
