// Context creation: everything a context will ever use, sized and placed once.
#include "context/context.h"
#include "core/status.h"
#include "tensor/types.h"
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
// is what tells how large the activations are. The builder's capacity: the
// tensor count the graphs take, measured by a first pass built with the
// bound (n_tensors 0 asks for that pass, which records the counts).
struct context_placer {
    tern_arena * arena;
    bool measure;
    size_t counted;   // padded bytes of buffers not allocated (measure mode)
    size_t counted_at_plan;  // `counted` when planning starts (its temp scratch sits on top)
    int32_t n_tensors;  // builder capacity (0: the bound, and count)
    int32_t n_nodes;    // graph capacity

    void * take(size_t bytes, tern_mem_category cat, bool zero = false) {
        if (measure) {
            counted += arena_padded(bytes);
            return (void *) arena;  // never dereferenced while measuring
        }
        return zero ? arena_calloc(arena, bytes, cat) : arena_alloc(arena, bytes, cat);
    }
};

// The worst case of a graph kind, built into the context's builder.
tern_status build_worst(tern_context * ctx, context_graph_kind kind) {
    const tern_context_params * p = &ctx->params;
    switch (kind) {
        case GRAPH_FORWARD: {
            forward_shape worst = { p->n_batch, p->n_batch };
            return forward_build(ctx->model, &ctx->kv, worst, &ctx->gb, &ctx->graph, &ctx->io);
        }
        case GRAPH_SHIFT: return forward_build_shift(ctx->model, &ctx->kv, p->n_ctx, &ctx->gb, &ctx->graph, &ctx->shift_io);
        case GRAPH_DEFRAG: return kv_defrag_build(&ctx->kv, p->n_ctx, &ctx->gb, &ctx->graph, &ctx->defrag_io);
        default: return TERN_ERR_INTERNAL;
    }
}

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

    // KV cache: cells and storage tables, then the rows of every layer (the
    // host holds them all: zeroed, so that cells never written hold finite
    // values; they are masked, but 0 * NaN is NaN).
    kv_cache * kv = &ctx->kv;
    if (pl->measure) {
        memset(kv, 0, sizeof(*kv));
        kv->n_cells = p->n_ctx;
        kv->n_layer = h->n_layer;
        kv->n_embd_k = hparams_n_embd_k_gqa(h);
        kv->n_embd_v = hparams_n_embd_v_gqa(h);
        kv->type_k = p->type_k;
        kv->type_v = p->type_v;
        kv->k = (tern_storage *) arena_calloc(pl->arena, sizeof(tern_storage) * h->n_layer, TERN_MEM_KV);
        kv->v = (tern_storage *) arena_calloc(pl->arena, sizeof(tern_storage) * h->n_layer, TERN_MEM_KV);
        if (!kv->k || !kv->v) return TERN_ERR_NO_MEMORY;
        pl->counted += kv_cache_mem_size(p->n_ctx, h->n_layer) - 2 * arena_padded(sizeof(tern_storage) * h->n_layer);
    } else {
        TERN_TRY(kv_cache_init(kv, pl->arena, p->n_ctx, h->n_layer, hparams_n_embd_k_gqa(h), hparams_n_embd_v_gqa(h),
                               p->type_k, p->type_v));
    }
    const size_t k_layer = kv_cache_k_layer_bytes(kv), v_layer = kv_cache_v_layer_bytes(kv);
    const size_t kv_bytes = (size_t) h->n_layer * (k_layer + v_layer);
    void * kv_rows = pl->take(kv_bytes, TERN_MEM_KV, true);
    if (!kv_rows) return TERN_ERR_NO_MEMORY;
    ctx->kv_host = tern_host_buffer(pl->measure ? NULL : kv_rows, kv_bytes, TERN_BUFFER_KV);
    for (uint32_t il = 0; il < h->n_layer; il++) {
        kv->k[il] = { &ctx->kv_host, (size_t) il * (k_layer + v_layer) };
        kv->v[il] = { &ctx->kv_host, (size_t) il * (k_layer + v_layer) + k_layer };
    }

    // Graph tables, then each graph kind's worst case and its plan.
    const bool counting = pl->n_tensors == 0;
    const int32_t cap_tensors = counting ? forward_tensor_bound(h->n_layer) : pl->n_tensors;
    const int32_t cap_nodes = counting ? cap_tensors : pl->n_nodes;
    if (!tern_graph_builder_init(&ctx->gb, pl->arena, cap_tensors, TERN_MEM_GRAPH) ||
        !tern_graph_init(&ctx->graph, pl->arena, cap_nodes, TERN_MEM_GRAPH)) {
        return TERN_ERR_NO_MEMORY;
    }
    ctx->exec.pool = ctx->pool;
    ctx->exec.regions[EXEC_REGION_HOST] = &ctx->act_host;
    ctx->exec.n_regions = 1;
    pl->counted_at_plan = pl->counted;
    const context_graph_kind kinds[3] = { GRAPH_FORWARD, GRAPH_SHIFT, GRAPH_DEFRAG };
    exec_plan * plans[3] = { &ctx->plan, &ctx->plan_shift, &ctx->plan_defrag };
    int32_t most_tensors = 0, most_nodes = 0;
    size_t act = 0, work = 0;
    for (int i = 0; i < 3; i++) {
        TERN_TRY(build_worst(ctx, kinds[i]));
        TERN_TRY(exec_plan_make(&ctx->exec, &ctx->graph, &ctx->gb, p->n_threads, pl->arena, plans[i]));
        if (ctx->gb.n_tensors > most_tensors) most_tensors = ctx->gb.n_tensors;
        if (ctx->graph.n_nodes > most_nodes) most_nodes = ctx->graph.n_nodes;
        if (plans[i]->mem.region_bytes[EXEC_REGION_HOST] > act) act = plans[i]->mem.region_bytes[EXEC_REGION_HOST];
        if (plans[i]->cpu_work > work) work = plans[i]->cpu_work;
    }
    if (counting) {
        pl->n_tensors = most_tensors;
        pl->n_nodes = most_nodes;
    }
    ctx->built_kind = GRAPH_NONE;  // no graph with data yet

    ctx->activations = pl->take(act, TERN_MEM_ACTIVATIONS);
    ctx->activation_bytes = act;
    ctx->act_host = tern_host_buffer(pl->measure ? NULL : ctx->activations, act, TERN_BUFFER_ACTIVATIONS);
    ctx->exec.work_size = work;
    ctx->exec.work = work ? pl->take(work, TERN_MEM_WORK) : NULL;
    ctx->logits_rows = p->logits_all ? p->n_ctx : p->n_batch;
    ctx->logits = (float *) pl->take(sizeof(float) * ctx->logits_rows * h->n_vocab, TERN_MEM_LOGITS);
    ctx->output_row = (int32_t *) pl->take(sizeof(int32_t) * p->n_ctx, TERN_MEM_OTHER);
    ctx->changed_cells = (int32_t *) pl->take(sizeof(int32_t) * p->n_ctx, TERN_MEM_OTHER);
    ctx->move_src = (int32_t *) pl->take(sizeof(int32_t) * p->n_ctx, TERN_MEM_OTHER);
    ctx->move_dst = (int32_t *) pl->take(sizeof(int32_t) * p->n_ctx, TERN_MEM_OTHER);
    ctx->slots = (int32_t *) pl->take(sizeof(int32_t) * p->n_batch, TERN_MEM_OTHER);
    ctx->seq_masks = (uint64_t *) pl->take(sizeof(uint64_t) * p->n_batch, TERN_MEM_OTHER);
    ctx->positions = (tern_pos *) pl->take(sizeof(tern_pos) * p->n_batch, TERN_MEM_OTHER);
    if (!ctx->activations || !ctx->logits || !ctx->output_row || !ctx->changed_cells || !ctx->move_src ||
        !ctx->move_dst || !ctx->slots || !ctx->seq_masks || !ctx->positions) {
        return TERN_ERR_NO_MEMORY;
    }
    return TERN_OK;
}

// Measure a context in the model's sizing scratch: a first pass with the
// bound counts the graphs' tensors and nodes (*n_tensors, *n_nodes), a second
// with those exact capacities measures what creation takes. Returns the
// arena bytes, 0 on error.
size_t context_measure(const tern_model * model, const tern_context_params * p, int32_t * n_tensors, int32_t * n_nodes) {
    // The small tables planning needs go in the scratch the model reserved
    // (one sizing at a time per model: concurrent callers wait their turn);
    // their exact bytes are counted from the scratch arena's head.
    tern_model * m = const_cast<tern_model *>(model);  // the scratch only; the model stays as it is
    if (!m->sizing_scratch) {
        tern_fail(TERN_ERR_INTERNAL, "the model has no sizing scratch");
        return 0;
    }
    while (__atomic_exchange_n(&m->sizing_busy, 1, __ATOMIC_ACQUIRE)) port_thread_yield();
    size_t size = 0;
    context_placer pl = { NULL, true, 0, 0, 0, 0 };
    for (int pass = 0; pass < 2; pass++) {
        tern_arena arena;
        arena_init(&arena, m->sizing_scratch, m->sizing_scratch_size);
        tern_context ctx{};
        ctx.model = model;
        ctx.params = *p;
        pl.arena = &arena;
        pl.counted = pl.counted_at_plan = 0;
        tern_status st = context_place(&ctx, &pl);
        if (st != TERN_OK) {
            tern_error_prefix("sizing the context: ");
            size = 0;
            break;
        }
        // The most the arena ever holds: at the end, or while planning, when the
        // planner's temp scratch sits at the tail before the large buffers exist.
        size_t peak = arena.head + pl.counted;
        if (arena.high_water + pl.counted_at_plan > peak) peak = arena.high_water + pl.counted_at_plan;
        size = arena_buffer_size(arena_padded(sizeof(tern_context)) + peak);
    }
    __atomic_store_n(&m->sizing_busy, 0, __ATOMIC_RELEASE);
    *n_tensors = pl.n_tensors;
    *n_nodes = pl.n_nodes;
    return size;
}

} // namespace

size_t context_sizing_scratch_size(uint32_t n_layer) {
    const int32_t cap = forward_tensor_bound(n_layer);
    return tern_graph_builder_size(cap) + tern_graph_size(cap) + 3 * tern_graph_plan_table_size(cap) +
           tern_graph_plan_temp_size(cap) + 4 * arena_padded(sizeof(tern_storage) * n_layer) + (1u << 16);
}

extern "C" size_t tern_context_mem_size(const tern_model * model, const tern_context_params * params) {
    tern_context_params p;
    if (context_resolve_params(model, params, &p) != TERN_OK) return 0;
    int32_t n_tensors = 0, n_nodes = 0;
    return context_measure(model, &p, &n_tensors, &n_nodes);
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
    int32_t n_tensors = 0, n_nodes = 0;
    const size_t need = context_measure(model, &p, &n_tensors, &n_nodes);
    if (need == 0) return TERN_ERR_NO_MEMORY;  // context_measure recorded why
    if (!buffer) {
        size = need;
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
    context_placer pl = { &arena, false, 0, 0, n_tensors, n_nodes };
    tern_status st = context_place(ctx, &pl);
    ctx->arena = arena;  // after placing: the struct keeps the final head for the audit
    // The contract is the exact size, whatever the buffer's alignment: a caller
    // buffer below tern_context_mem_size() is refused even where its alignment
    // happened to leave room (the same buffer elsewhere would not fit).
    if (st == TERN_OK && size < arena_buffer_size(arena.high_water)) st = TERN_ERR_NO_MEMORY;
    if (st != TERN_OK) {
        if (st == TERN_ERR_NO_MEMORY) {
            tern_fail(TERN_ERR_NO_MEMORY, "context arena of %zu bytes is too small (tern_context_mem_size: %zu)",
                      size, need);
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
