// Context creation: everything a context will ever use, sized and placed once.
#include "context/context.h"
#include "core/status.h"
#include "tensor/types.h"
#include "cpu/compute.h"
#include "port.h"

#include <inttypes.h>
#include <string.h>

namespace tern {

extern "C" tern_context_params tern_context_default_params(void) {
    tern_context_params p;
    memset(&p, 0, sizeof(p));
    p.n_ctx = 512;
    p.n_batch = 512;
    p.n_seq_max = 1;
    p.n_threads = 4;
    p.type_k = TERN_TYPE_F16;
    p.type_v = TERN_TYPE_F16;
    return p;
}

tern_status context_resolve_params(const tern_model * m, const tern_context_params * in, tern_context_params * out) {
    if (!m) return tern_fail(TERN_ERR_INVALID_ARG, "model is NULL");
    if (m->vocab_only || !m->arch) return tern_fail(TERN_ERR_INVALID_ARG, "the model was loaded vocab-only: no context");
    *out = in ? *in : tern_context_default_params();
    if (out->n_ctx == 0) out->n_ctx = m->hp.n_ctx_train;
    if (out->n_batch == 0) out->n_batch = 512;
    if (out->n_batch > out->n_ctx) out->n_batch = out->n_ctx;
    if (out->n_seq_max == 0) out->n_seq_max = 1;
    if (out->n_seq_max > TERN_MAX_SEQ) {
        return tern_fail(TERN_ERR_INVALID_ARG, "n_seq_max %" PRIu32 " is more than TERN_MAX_SEQ %d", out->n_seq_max, TERN_MAX_SEQ);
    }
    if (out->n_ctx > (uint32_t) INT32_MAX) {
        return tern_fail(TERN_ERR_INVALID_ARG, "n_ctx %" PRIu32 " is more than 2^31 - 1 (positions are int32)", out->n_ctx);
    }
    if (!out->pool && (out->n_threads < 0 || out->n_threads > TERN_MAX_THREADS)) {
        return tern_fail(TERN_ERR_INVALID_ARG, "n_threads %" PRId32 " not in [0, %d] (0: one thread)", out->n_threads,
                         TERN_MAX_THREADS);
    }
    if (out->n_threads == 0) out->n_threads = 1;
    // KV cache types: F16, F32, Q8_0, Q4_0 (when compiled in); quantized rows
    // are whole blocks of 32.
    // A C caller may pass any int: read the fields as ints (loading an enum
    // outside its enumerators' range is undefined in C++).
    int kv_types[2];
    kv_types[0] = tern_enum_value(&out->type_k, sizeof(out->type_k));
    kv_types[1] = tern_enum_value(&out->type_v, sizeof(out->type_v));
    const uint32_t widths[2] = { hparams_n_embd_k_gqa(&m->hp), hparams_n_embd_v_gqa(&m->hp) };
    for (int i = 0; i < 2; i++) {
        const int v = kv_types[i];
        const bool known = v == TERN_TYPE_F16 || v == TERN_TYPE_F32 || v == TERN_TYPE_Q8_0 || v == TERN_TYPE_Q4_0;
        const tern_type_traits * tr = known ? tern_type_traits_get((tern_type) v) : NULL;
        if (!tr || !tr->from_float || !tr->to_float) {
            return tern_fail(TERN_ERR_INVALID_ARG, "type_%c %d: the KV cache holds F16, F32, Q8_0 or Q4_0 (compiled in)",
                             i ? 'v' : 'k', v);
        }
        if (widths[i] % tr->blck_size != 0) {
            return tern_fail(TERN_ERR_INVALID_ARG, "type_%c %s: K/V rows of %" PRIu32 " values are not whole blocks of %lld",
                             i ? 'v' : 'k', tr->name, widths[i], (long long) tr->blck_size);
        }
    }
    if (out->pool) out->n_threads = tern_threadpool_n_threads(out->pool);
    return TERN_OK;
}

namespace {

// Places the context's parts in an arena. In measuring mode the large buffers
// (KV rows, activations, work, logits) are only counted, while the small
// tables (graph, plan) are really built in a scratch arena, because the plan
// is what tells how large the activations are.
struct context_placer {
    tern_arena * arena;
    bool measure;
    size_t counted;   // padded bytes of buffers not allocated (measure mode)
    size_t counted_at_plan;  // `counted` when planning starts (its temp scratch sits on top)

    void * take(size_t bytes, tern_mem_category cat) {
        if (measure) {
            counted += arena_padded(bytes);
            return (void *) arena;  // never dereferenced while measuring
        }
        return arena_alloc(arena, bytes, cat);
    }
};

tern_status context_place(tern_context * ctx, context_placer * pl) {
    const tern_model * m = ctx->model;
    const tern_context_params * p = &ctx->params;
    const model_hparams * h = &m->hp;

    // Threadpool of the context's own.
    if (!p->pool) {
        void * mem = pl->take(tern_threadpool_mem_size(p->n_threads), TERN_MEM_OTHER);
        if (!mem) return TERN_ERR_NO_MEMORY;
        if (!pl->measure) {
            tern_threadpool_params tp = tern_threadpool_default_params(p->n_threads);
            TERN_TRY(tern_threadpool_init_in(mem, &tp, &ctx->pool));
            ctx->own_pool = true;
        }
    } else {
        ctx->pool = p->pool;
    }

    // KV cache: cells and layer buffers.
    if (pl->measure) {
        kv_cache * kv = &ctx->kv;
        memset(kv, 0, sizeof(*kv));
        kv->n_cells = p->n_ctx;
        kv->n_layer = h->n_layer;
        kv->n_embd_k = hparams_n_embd_k_gqa(h);
        kv->n_embd_v = hparams_n_embd_v_gqa(h);
        kv->type_k = p->type_k;
        kv->type_v = p->type_v;
        kv->k = (void **) arena_calloc(pl->arena, sizeof(void *) * h->n_layer, TERN_MEM_KV);
        kv->v = (void **) arena_calloc(pl->arena, sizeof(void *) * h->n_layer, TERN_MEM_KV);
        if (!kv->k || !kv->v) return TERN_ERR_NO_MEMORY;
        for (uint32_t il = 0; il < h->n_layer; il++) kv->k[il] = kv->v[il] = (void *) pl->arena;  // placeholders
        pl->counted += kv_cache_mem_size(p->n_ctx, h->n_layer, kv->n_embd_k, kv->n_embd_v, p->type_k, p->type_v) -
                       2 * arena_padded(sizeof(void *) * h->n_layer);
    } else {
        TERN_TRY(kv_cache_init(&ctx->kv, pl->arena, p->n_ctx, h->n_layer, hparams_n_embd_k_gqa(h),
                               hparams_n_embd_v_gqa(h), p->type_k, p->type_v));
    }

    // Graph tables, then the worst-case graph and its plan.
    if (!tern_graph_builder_init(&ctx->gb, pl->arena, forward_tensor_capacity(m), TERN_MEM_GRAPH) ||
        !tern_graph_init(&ctx->graph, pl->arena, forward_node_capacity(m), TERN_MEM_GRAPH)) {
        return TERN_ERR_NO_MEMORY;
    }
    forward_shape worst = { p->n_batch, p->n_ctx, p->n_batch };
    TERN_TRY(forward_build(m, &ctx->kv, worst, &ctx->gb, &ctx->graph, &ctx->io));
    pl->counted_at_plan = pl->counted;
    TERN_TRY(tern_graph_plan_make(&ctx->graph, &ctx->gb, p->n_threads, pl->arena, &ctx->plan));
    // The K-shift graph (every cell moved) gets its own plan over the same buffer.
    TERN_TRY(forward_build_shift(m, &ctx->kv, p->n_ctx, &ctx->gb, &ctx->graph, &ctx->shift_io));
    TERN_TRY(tern_graph_plan_make(&ctx->graph, &ctx->gb, p->n_threads, pl->arena, &ctx->plan_shift));
    ctx->built.n_tokens = 0;  // no graph with data yet

    const size_t act = ctx->plan.activation_bytes > ctx->plan_shift.activation_bytes
                           ? ctx->plan.activation_bytes : ctx->plan_shift.activation_bytes;
    ctx->activations = pl->take(act, TERN_MEM_ACTIVATIONS);
    ctx->activation_bytes = act;
    ctx->work_size = ctx->plan.work_bytes > ctx->plan_shift.work_bytes ? ctx->plan.work_bytes : ctx->plan_shift.work_bytes;
    ctx->work = ctx->work_size ? pl->take(ctx->work_size, TERN_MEM_WORK) : NULL;
    ctx->logits_rows = p->logits_all ? p->n_ctx : p->n_batch;
    ctx->logits = (float *) pl->take(sizeof(float) * ctx->logits_rows * h->n_vocab, TERN_MEM_LOGITS);
    ctx->output_row = (int32_t *) pl->take(sizeof(int32_t) * p->n_ctx, TERN_MEM_OTHER);
    ctx->changed_cells = (int32_t *) pl->take(sizeof(int32_t) * p->n_ctx, TERN_MEM_OTHER);
    ctx->slots = (int32_t *) pl->take(sizeof(int32_t) * p->n_batch, TERN_MEM_OTHER);
    ctx->seq_masks = (uint64_t *) pl->take(sizeof(uint64_t) * p->n_batch, TERN_MEM_OTHER);
    ctx->positions = (tern_pos *) pl->take(sizeof(tern_pos) * p->n_batch, TERN_MEM_OTHER);
    if (!ctx->activations || !ctx->logits || !ctx->output_row || !ctx->changed_cells || !ctx->slots ||
        !ctx->seq_masks || !ctx->positions) {
        return TERN_ERR_NO_MEMORY;
    }
    return TERN_OK;
}

} // namespace

size_t context_sizing_scratch_size(uint32_t n_layer) {
    const int32_t cap = forward_tensor_capacity_n(n_layer);
    return tern_graph_builder_size(cap) + tern_graph_size(cap) + 2 * tern_graph_plan_table_size(cap) +
           tern_graph_plan_temp_size(cap) + 4 * arena_padded(sizeof(void *) * n_layer) + (1u << 16);
}

extern "C" size_t tern_context_mem_size(const tern_model * model, const tern_context_params * params) {
    tern_context_params p;
    if (context_resolve_params(model, params, &p) != TERN_OK) return 0;
    // The small tables planning needs go in the scratch the model reserved
    // (one sizing at a time per model: concurrent callers wait their turn);
    // their exact bytes are counted from the scratch arena's head.
    tern_model * m = const_cast<tern_model *>(model);  // the scratch only; the model stays as it is
    if (!m->sizing_scratch) {
        tern_fail(TERN_ERR_INTERNAL, "the model has no sizing scratch");
        return 0;
    }
    while (__atomic_exchange_n(&m->sizing_busy, 1, __ATOMIC_ACQUIRE)) port_thread_yield();
    tern_arena arena;
    arena_init(&arena, m->sizing_scratch, m->sizing_scratch_size);
    tern_context ctx{};
    ctx.model = model;
    ctx.params = p;
    context_placer pl = { &arena, true, 0, 0 };
    tern_status st = context_place(&ctx, &pl);
    if (st != TERN_OK) tern_error_prefix("sizing the context: ");
    // The most the arena ever holds: at the end, or while planning, when the
    // planner's temp scratch sits at the tail before the large buffers exist.
    size_t peak = arena.head + pl.counted;
    if (arena.high_water + pl.counted_at_plan > peak) peak = arena.high_water + pl.counted_at_plan;
    __atomic_store_n(&m->sizing_busy, 0, __ATOMIC_RELEASE);
    return st == TERN_OK ? arena_buffer_size(arena_padded(sizeof(tern_context)) + peak) : 0;
}

extern "C" tern_status tern_context_create(const tern_model * model, const tern_context_params * params,
                                           tern_context ** out_ctx) {
    if (!out_ctx) return tern_fail(TERN_ERR_INVALID_ARG, "out_ctx is NULL");
    *out_ctx = NULL;
    tern_context_params p;
    TERN_TRY(context_resolve_params(model, params, &p));

    void * owned = NULL;
    void * buffer = p.arena;
    size_t size = p.arena_size;
    if (!buffer) {
        size = tern_context_mem_size(model, &p);
        if (size == 0) return TERN_ERR_NO_MEMORY;  // tern_context_mem_size recorded why
        owned = port_alloc(size);
        if (!owned) return tern_fail(TERN_ERR_NO_MEMORY, "cannot allocate %zu bytes for the context", size);
        buffer = owned;
    }
    // Touch every page now, so that no decode takes a page fault (fixed memory,
    // steady latency from the first token on).
    memset(buffer, 0, size);
    tern_arena arena;
    if (!arena_init(&arena, buffer, size)) {
        port_free(owned);
        return tern_fail(TERN_ERR_NO_MEMORY, "context arena of %zu bytes is too small", size);
    }
    tern_context * ctx = (tern_context *) arena_calloc(&arena, sizeof(tern_context), TERN_MEM_OTHER);
    if (!ctx) {
        port_free(owned);
        return tern_fail(TERN_ERR_NO_MEMORY, "context arena of %zu bytes is too small", size);
    }
    ctx->model = model;
    ctx->params = p;
    ctx->owned_buffer = owned;
    context_placer pl = { &arena, false, 0, 0 };
    tern_status st = context_place(ctx, &pl);
    ctx->arena = arena;  // after placing: the struct keeps the final head for the audit
    // The contract is the exact size, whatever the buffer's alignment: a caller
    // buffer below tern_context_mem_size() is refused even where its alignment
    // happened to leave room (the same buffer elsewhere would not fit).
    if (st == TERN_OK && size < arena_buffer_size(arena.high_water)) st = TERN_ERR_NO_MEMORY;
    if (st != TERN_OK) {
        if (st == TERN_ERR_NO_MEMORY) {
            tern_fail(TERN_ERR_NO_MEMORY, "context arena of %zu bytes is too small (tern_context_mem_size: %zu)",
                      size, tern_context_mem_size(model, &p));
        }
        tern_context_free(ctx);
        return st;
    }
    for (uint32_t i = 0; i < p.n_ctx; i++) ctx->output_row[i] = -1;
    *out_ctx = ctx;
    return TERN_OK;
}

extern "C" void tern_context_free(tern_context * ctx) {
    if (!ctx) return;
    if (ctx->own_pool && ctx->pool) tern_threadpool_free(ctx->pool);
    void * owned = ctx->owned_buffer;
    port_free(owned);  // the context itself lives in this buffer (or the caller's)
}

extern "C" uint32_t tern_n_ctx(const tern_context * ctx) { return ctx ? ctx->params.n_ctx : 0; }
extern "C" uint32_t tern_n_batch(const tern_context * ctx) { return ctx ? ctx->params.n_batch : 0; }

extern "C" void tern_context_mem_audit(const tern_context * ctx, tern_mem_audit * out) {
    memset(out, 0, sizeof(*out));
    if (!ctx) return;
    const tern_arena * a = &ctx->arena;
    out->total = a->size;
    out->used = arena_used(a);
    out->kv_cache = a->by_category[TERN_MEM_KV];
    out->activations = a->by_category[TERN_MEM_ACTIVATIONS];
    out->work = a->by_category[TERN_MEM_WORK];
    out->logits = a->by_category[TERN_MEM_LOGITS];
    out->graph = a->by_category[TERN_MEM_GRAPH];
    out->other = a->by_category[TERN_MEM_OTHER];
}

}  // namespace tern
