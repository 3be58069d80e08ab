// The inference context: one arena holding the KV cache, the graph tables,
// the worst-case plans, the work buffer and the logits.
//
// Arena layout (all persistent, decided once in tern_context_create):
//
//   | tern_context | pool | KV cells, storage tables | K/V rows of every layer |
//   | graph builder + graph | plan tables (forward, K-shift, defrag) |
//   | activations (planned) | work | logits | batch staging |
//
// Three graph kinds run through the execution door (exec/executor.h): the
// forward graph, the K-shift and the defrag, each planned once for its worst
// case (n_batch tokens and outputs; every cell moved) into the same
// activation buffer (never live at the same time). Graphs of smaller shapes
// have the same topology (checked) and reuse the offsets, so decode never
// allocates. The builder holds exactly the tensors the largest of them takes:
// a sizing pass counts them first (context_count_graphs). The last built
// graph is kept: a decode step of the same (n_tokens, n_outputs) only refills
// the inputs.
#pragma once
#include <atomic>
#include "tern.h"
#include "core/arena.h"
#include "cpu/threadpool.h"
#include "exec/executor.h"
#include "graph/graph.h"
#include "graph/planner.h"
#include "kv/kv_cache.h"
#include "kv/kv_defrag_graph.h"
#include "model/forward.h"
#include "model/forward_shift.h"
#include "model/model.h"

namespace tern {

// Which graph the builder holds.
enum context_graph_kind { GRAPH_NONE = 0, GRAPH_FORWARD, GRAPH_SHIFT, GRAPH_DEFRAG };

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
    void *              pool_mem;       // its memory in the arena (own_pool), threads running in it
    std::atomic<int32_t> busy;          // 1 while a call mutates the context (decode, KV cache ops)

    kv_cache            kv;
    tern_buffer         kv_host;        // the K/V rows of the layers the host holds

    tern_executor       exec;           // the execution door: every graph runs through it
    tern_graph_builder  gb;
    tern_graph          graph;
    context_graph_kind  built_kind;     // the graph now in gb
    forward_io          io;
    forward_shape       built;          // shape of the forward graph now in gb
    exec_plan           plan;           // the forward graph's (worst case: n_batch tokens)
    exec_plan           plan_small;     // with devices that offload large matmuls: batches below
    uint32_t            offload_threshold;  // this many tokens (0: one forward plan serves all)
    const exec_plan *   built_plan;     // the plan the forward graph in gb is bound with
    exec_plan           plan_shift;     // the K-shift graph's (worst case: every cell)
    exec_plan           plan_defrag;    // the defrag graph's (worst case: every cell)
    forward_shift_io    shift_io;
    kv_defrag_io        defrag_io;
    tern_buffer         act_host;       // region 0: the host's activations
    void *              activations;    // act_host's bytes (also the state code's staging)
    size_t              activation_bytes;

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
    int32_t *           move_src;       // [n_ctx] defrag: cells moved from
    int32_t *           move_dst;       // [n_ctx] defrag: cells moved to
    uint64_t            graphs_built;   // perf: graphs (re)built

#if TERN_WITH_HAL
    // The model's devices (none: hal.n_dev == 0 and exec.hal NULL), the
    // device memory this context takes, sized by the plans.
    hal::hal_context    hal;
    uint64_t            dev_kv_bytes[TERN_MAX_DEVICES];
    uint64_t            dev_act_bytes[TERN_MAX_DEVICES];
    uint64_t            staging_bytes;
    int8_t *            kv_device;      // [n_layer] where each layer's cache lives (-1 the host)
#endif
};

namespace tern {

// Exclusive entry into a context's mutating calls (false: another thread is inside).
static inline bool context_enter(tern_context * ctx) {
    int32_t expected = 0;
    return ctx->busy.compare_exchange_strong(expected, 1, std::memory_order_acquire);
}
static inline void context_leave(tern_context * ctx) { ctx->busy.store(0, std::memory_order_release); }

// Rotate the keys of cells whose positions moved (pending deltas) with the
// K-shift graph; nothing to do when no cell moved. Called inside a guarded call
// that holds the pool.
tern_status context_kv_update(tern_context * ctx);
// Compact the KV cache (the defrag graph moves the rows, then the metadata
// moves). Called inside a guarded call that holds the pool.
tern_status context_kv_defrag(tern_context * ctx);

// Parameter defaults resolved against the model (n_ctx 0 -> training context, ...).
// Scratch tern_context_mem_size plans in, for a model of n_layer layers: the
// model arena reserves it at load (model.h: sizing_scratch), so sizing takes
// no memory of its own.
// devices: the model may be placed on devices (tern_model_params asks for
// some): room for the scheduler's tables and copies too.
size_t context_sizing_scratch_size(uint32_t n_layer, bool devices);
tern_status context_resolve_params(const tern_model * m, const tern_context_params * in, tern_context_params * out);

}  // namespace tern
