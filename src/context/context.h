// The inference context: one arena holding the KV cache, the graph tables,
// the worst-case activation plan, the work buffer and the logits.
//
// Arena layout (all persistent, decided once in tern_context_create):
//
//   | tern_context | pool | KV cells + K/V per layer | graph builder + graph |
//   | plan tables | activations (planned) | work | logits | batch staging |
//
// The plan is made for the worst case (n_batch tokens, n_ctx KV cells,
// n_batch outputs); graphs of smaller shapes have the same topology and reuse
// its offsets (tern_graph_plan_apply), so decode never allocates. The last
// built graph is kept: a decode step of the same (n_tokens, n_kv, n_outputs)
// only refills the inputs.
#pragma once
#include <atomic>
#include "tern.h"
#include "core/arena.h"
#include "cpu/threadpool.h"
#include "graph/graph.h"
#include "graph/planner.h"
#include "kv/kv_cache.h"
#include "model/forward.h"
#include "model/forward_shift.h"
#include "model/model.h"

namespace tern {

}  // namespace tern

// The public type (tern.h) is global; its members are Tern's own types.
using namespace tern;
struct tern_context {
    const tern_model *  model;
    tern_context_params params;
    tern_arena          arena;
    void *              owned_buffer;   // the one allocation when the caller gave no arena
    tern_threadpool *   pool;
    bool                own_pool;
    std::atomic<int32_t> busy;          // 1 while a call mutates the context (decode, KV cache ops)

    kv_cache            kv;

    tern_graph_builder  gb;
    tern_graph          graph;
    forward_io          io;
    forward_shape       built;          // shape of the graph now in gb (n_tokens 0: none)
    tern_graph_plan     plan;
    tern_graph_plan     plan_shift;     // the K-shift graph's plan (worst case: every cell), same activations
    forward_shift_io    shift_io;
    void *              activations;
    size_t              activation_bytes;  // of the larger plan (decode or K-shift)
    void *              work;
    size_t              work_size;

    float *             logits;         // [logits_rows][n_vocab]
    uint32_t            logits_rows;
    int32_t *           output_row;     // [n_ctx] row in logits of batch token i, -1: none
    int32_t             n_batch_last;   // tokens of the last decoded batch

    // Performance counters (tern_perf_context): successful decodes of more than
    // one token count as prompt evaluation, single tokens as generation.
    // (64-bit counts: a long-running context never overflows; reported saturated.)
    int64_t             t_p_eval_us;
    int64_t             t_eval_us;
    int64_t             n_p_eval;
    int64_t             n_eval;

    // Staging for one ubatch.
    int32_t *           slots;          // [n_batch]
    uint64_t *          seq_masks;      // [n_batch]
    tern_pos *          positions;      // [n_batch]
    int32_t *           changed_cells;  // [n_ctx] cells taken by the decode in progress (rolled back on abort)
};

namespace tern {

// Exclusive entry into a context's mutating calls (false: another thread is inside).
static inline bool context_enter(tern_context * ctx) {
    int32_t expected = 0;
    return ctx->busy.compare_exchange_strong(expected, 1, std::memory_order_acquire);
}
static inline void context_leave(tern_context * ctx) { ctx->busy.store(0, std::memory_order_release); }

// Rotate the keys of cells whose positions moved (pending deltas) with the
// K-shift graph; nothing to do when no cell moved. Called inside a guarded call.
tern_status context_kv_update(tern_context * ctx);

// Parameter defaults resolved against the model (n_ctx 0 -> training context, ...).
// Scratch tern_context_mem_size plans in, for a model of n_layer layers: the
// model arena reserves it at load (model.h: sizing_scratch), so sizing takes
// no memory of its own.
size_t context_sizing_scratch_size(uint32_t n_layer);
tern_status context_resolve_params(const tern_model * m, const tern_context_params * in, tern_context_params * out);

}  // namespace tern
