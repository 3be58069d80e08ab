// Context creation: everything a context will ever use, sized and placed once.
#include "context/context.h"
#include "core/status.h"
#include "model/placement.h"
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
    p.offload_kqv = 1;
    p.op_offload = 1;
    p.graph_cache = -1;
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

    // The arena's memory is all zero when placing starts (tern_context_create).
    void * take(size_t bytes, tern_mem_category cat) {
        if (measure) {
            counted += arena_padded(bytes);
            return (void *) arena;  // never dereferenced while measuring
        }
        return arena_alloc(arena, bytes, cat);
    }
};

// Fault in every page of a fresh buffer now, so that no decode takes a page
// fault (fixed memory, steady latency from the first token on): one byte
// per page written back as it is (no clearing: the pages are zero). Left
// alone: pages of the KV rows (they grow with n_ctx; their pages come in as
// cells are first written, zero pages until then - llama.cpp clears its
// whole KV buffer instead) and of the threadpool (its threads, already
// running, touched it; writing back a byte they may write would race).
void touch_pages(const tern_context * ctx, void * buffer, size_t size) {
    const uintptr_t page = 4096;
    const uintptr_t kv_lo = (uintptr_t) ctx->kv_host.host, kv_hi = kv_lo + ctx->kv_host.size;
    const uintptr_t pool_lo = (uintptr_t) ctx->pool_mem;
    const uintptr_t pool_hi = pool_lo + (ctx->pool_mem ? tern_threadpool_mem_size(ctx->params.n_threads) : 0);
    volatile uint8_t * p = (volatile uint8_t *) buffer;
    for (size_t at = 0; at < size; at += page) {
        const uintptr_t lo = (uintptr_t) (p + at), hi = lo + page;
        if (lo < kv_hi && hi > kv_lo) continue;
        if (lo < pool_hi && hi > pool_lo) continue;
        p[at] = p[at];
    }
}

// The worst case of a graph kind, built into the context's builder (the
// forward graph's: n_batch tokens, or below the offload threshold for the
// small plan).
tern_status build_worst(tern_context * ctx, context_graph_kind kind, bool small = false) {
    const tern_context_params * p = &ctx->params;
    switch (kind) {
        case GRAPH_FORWARD: {
            const uint32_t n = small ? ctx->offload_threshold - 1 : p->n_batch;
            forward_shape worst = { n, n };
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
            ctx->pool_mem = mem;
        }
    } else {
        ctx->pool = p->pool;
    }

    // The model's devices, as this context runs them.
    ctx->exec.pool = ctx->pool;
    ctx->exec.regions[EXEC_REGION_HOST] = &ctx->act_host;
    ctx->exec.n_regions = 1;
    ctx->offload_threshold = 0;
#if TERN_WITH_HAL
    ctx->exec.hal = NULL;
    const model_devices * md = m->devices;
    const bool devices = md && md->n > 0;
    if (devices) {
        const int32_t cap = p->graph_cache < 0 ? TERN_GRAPH_CACHE_SIZE : p->graph_cache;
        hal::hal_context_init(&ctx->hal, const_cast<hal::hal_device *>(md->dev), md->n, md->layer_device, (int32_t) h->n_layer,
                              p->op_offload != 0, p->capture_prefill != 0, cap);
        ctx->exec.hal = &ctx->hal;
        ctx->exec.n_regions = hal::REGION_DEVICE0 + md->n;
        ctx->exec.regions[hal::REGION_STAGING] = &ctx->hal.staging;
        for (int32_t d = 0; d < md->n; d++) ctx->exec.regions[hal::REGION_DEVICE0 + d] = &ctx->hal.act[d];
        if (p->op_offload && ctx->hal.offload_min_batch > 1 && p->n_batch >= (uint32_t) ctx->hal.offload_min_batch) {
            ctx->offload_threshold = (uint32_t) ctx->hal.offload_min_batch;
        }
    }
#endif

    // KV cache: cells and storage tables, then the rows of every layer: the
    // host's in one block of the arena (zero from the start, so that cells
    // never written hold finite values; they are masked, but 0 * NaN is NaN),
    // a device's in
    // its KV buffer (offload_kqv: a layer's cache lives where its layer runs).
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
    kv->n_seq_max = p->n_seq_max;
    const size_t k_layer = kv_cache_k_layer_bytes(kv), v_layer = kv_cache_v_layer_bytes(kv);
    size_t host_layers = h->n_layer;
#if TERN_WITH_HAL
    ctx->kv_device = (int8_t *) arena_alloc(pl->arena, h->n_layer + 1, TERN_MEM_KV);
    if (!ctx->kv_device) return TERN_ERR_NO_MEMORY;
    host_layers = 0;
    for (uint32_t il = 0; il < h->n_layer; il++) {
        ctx->kv_device[il] = devices && p->offload_kqv ? md->layer_device[il] : (int8_t) -1;
        if (ctx->kv_device[il] < 0) host_layers++;
    }
#endif
    const size_t kv_bytes = host_layers * (k_layer + v_layer);
    void * kv_rows = pl->take(kv_bytes, TERN_MEM_KV);
    if (!kv_rows) return TERN_ERR_NO_MEMORY;
    ctx->kv_host = tern_host_buffer(pl->measure ? NULL : kv_rows, kv_bytes, TERN_BUFFER_KV);
    size_t host_at = 0;
    for (uint32_t il = 0; il < h->n_layer; il++) {
#if TERN_WITH_HAL
        const int8_t d = ctx->kv_device[il];
        if (d >= 0) {
            const uint64_t align = md->dev[d].caps.alignment;
            uint64_t at = (ctx->dev_kv_bytes[d] + align - 1) / align * align;
            kv->k[il] = { &ctx->hal.kv[d], (size_t) at };
            at = (at + k_layer + align - 1) / align * align;
            kv->v[il] = { &ctx->hal.kv[d], (size_t) at };
            ctx->dev_kv_bytes[d] = at + v_layer;
            continue;
        }
#endif
        kv->k[il] = { &ctx->kv_host, host_at };
        kv->v[il] = { &ctx->kv_host, host_at + k_layer };
        host_at += k_layer + v_layer;
    }
#if TERN_WITH_HAL
    for (int32_t d = 0; devices && d < md->n; d++) {
        ctx->hal.kv[d].size = (size_t) ctx->dev_kv_bytes[d];
        ctx->hal.kv[d].device = d;
        ctx->hal.kv[d].usage = TERN_BUFFER_KV;
    }
#endif

    // Graph tables, then each graph kind's worst case and its plan.
    const bool counting = pl->n_tensors == 0;
    // Counting: the bound, twice over with devices (the scheduler's copies are tensors too).
    int32_t bound = forward_tensor_bound(h->n_layer);
#if TERN_WITH_HAL
    if (devices) bound *= 2;
#endif
    const int32_t cap_tensors = counting ? bound : pl->n_tensors;
    const int32_t cap_nodes = counting ? bound : pl->n_nodes;
    if (!tern_graph_builder_init(&ctx->gb, pl->arena, cap_tensors, TERN_MEM_GRAPH) ||
        !tern_graph_init(&ctx->graph, pl->arena, cap_nodes, TERN_MEM_GRAPH)) {
        return TERN_ERR_NO_MEMORY;
    }
    pl->counted_at_plan = pl->counted;
    struct { context_graph_kind kind; bool small; exec_plan * plan; exec_plan_kind how; } plans[4];
    int n_plans = 0;
    plans[n_plans++] = { GRAPH_FORWARD, false, &ctx->plan, { ctx->offload_threshold > 0, true } };
    if (ctx->offload_threshold > 0) plans[n_plans++] = { GRAPH_FORWARD, true, &ctx->plan_small, { false, true } };
    plans[n_plans++] = { GRAPH_SHIFT, false, &ctx->plan_shift, { false, false } };
    plans[n_plans++] = { GRAPH_DEFRAG, false, &ctx->plan_defrag, { false, false } };
    int32_t most_tensors = 0, most_nodes = 0;
    size_t region[TERN_PLAN_MAX_REGIONS] = {0};
    size_t work = 0;
    for (int i = 0; i < n_plans; i++) {
        TERN_TRY(build_worst(ctx, plans[i].kind, plans[i].small));
        TERN_TRY(exec_plan_make(&ctx->exec, &ctx->graph, &ctx->gb, p->n_threads, plans[i].how, pl->arena, plans[i].plan));
        if (i == 0 && ctx->offload_threshold > 0 && !exec_plan_offloads(plans[0].plan)) {
            // Nothing to offload after all (every matmul's weight is on a device
            // already): one forward plan serves every batch.
            ctx->offload_threshold = 0;
            for (int k = 1; k + 1 < n_plans; k++) plans[k] = plans[k + 1];
            n_plans--;
        }
        if (ctx->gb.n_tensors > most_tensors) most_tensors = ctx->gb.n_tensors;
        if (ctx->graph.n_nodes > most_nodes) most_nodes = ctx->graph.n_nodes;
        for (int32_t r = 0; r < ctx->exec.n_regions; r++) {
            if (plans[i].plan->mem.region_bytes[r] > region[r]) region[r] = plans[i].plan->mem.region_bytes[r];
        }
        if (plans[i].plan->cpu_work > work) work = plans[i].plan->cpu_work;
    }
    // What the plans keep beside their tables (capture records), after them.
    for (int i = 0; i < n_plans; i++) {
        if (pl->measure) pl->counted += exec_plan_extra_size(plans[i].plan);
        else TERN_TRY(exec_plan_extra_alloc(plans[i].plan, pl->arena));
    }
    if (counting) {
        pl->n_tensors = most_tensors;
        pl->n_nodes = most_nodes;
    }
    ctx->built_kind = GRAPH_NONE;  // no graph with data yet
    ctx->built_plan = NULL;

    size_t act = region[EXEC_REGION_HOST];
#if TERN_WITH_HAL
    // The state code stages device KV rows through the host activations: room
    // for 64 rows at least, however little the host computes itself.
    const size_t row = kv_cache_k_row_bytes(kv) > kv_cache_v_row_bytes(kv) ? kv_cache_k_row_bytes(kv) : kv_cache_v_row_bytes(kv);
    if (devices && act < 64 * row) act = arena_padded(64 * row);
#endif
    ctx->activations = pl->take(act, TERN_MEM_ACTIVATIONS);
    ctx->activation_bytes = act;
    ctx->act_host = tern_host_buffer(pl->measure ? NULL : ctx->activations, act, TERN_BUFFER_ACTIVATIONS);
#if TERN_WITH_HAL
    if (devices) {
        ctx->staging_bytes = region[hal::REGION_STAGING];
        ctx->hal.staging.size = (size_t) ctx->staging_bytes;
        ctx->hal.staging.device = TERN_DEVICE_HOST;  // host-visible: the host and the devices' copies both reach it
        ctx->hal.staging.usage = TERN_BUFFER_STAGING;
        for (int32_t d = 0; d < md->n; d++) {
            ctx->dev_act_bytes[d] = region[hal::REGION_DEVICE0 + d];
            ctx->hal.act[d].size = (size_t) ctx->dev_act_bytes[d];
            ctx->hal.act[d].device = d;
            ctx->hal.act[d].usage = TERN_BUFFER_ACTIVATIONS;
        }
        const size_t reserved = hal::hal_context_reserve(&ctx->hal, pl->arena, ctx->staging_bytes, pl->measure);
        if (reserved == (size_t) -1) return TERN_ERR_NO_MEMORY;
        if (pl->measure) pl->counted += reserved;
    }
#endif
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

size_t context_sizing_scratch_size(uint32_t n_layer, bool devices) {
    const int32_t cap = forward_tensor_bound(n_layer);
    size_t bytes = tern_graph_builder_size(cap) + tern_graph_size(cap) + 3 * tern_graph_plan_table_size(cap) +
                   tern_graph_plan_temp_size(cap) + 4 * arena_padded(sizeof(tern_storage) * n_layer) + (1u << 16);
#if TERN_WITH_HAL
    if (!devices) return bytes;
    // Devices: the builder holds the scheduler's copies too (twice the bound),
    // four plans (a small forward one), the scheduler's tables and the layers' KV placement.
    const int32_t cap2 = 2 * cap;
    bytes += tern_graph_builder_size(cap2) - tern_graph_builder_size(cap) + tern_graph_size(cap2) - tern_graph_size(cap) +
             4 * tern_graph_plan_table_size(cap2) - 3 * tern_graph_plan_table_size(cap) + tern_graph_plan_temp_size(cap2) +
             4 * hal::sched_plan_bound(cap2) + arena_padded(n_layer + 1);
#else
    (void) devices;
#endif
    return bytes;
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
    // The arena starts all zero. An owned buffer comes zeroed from the system
    // (fresh pages: nothing to clear); a caller's buffer is cleared here once.
    if (!buffer) {
        size = need;
        owned = port_alloc_zeroed(size);
        if (!owned) return tern_fail(TERN_ERR_NO_MEMORY, "cannot allocate %zu bytes for the context", size);
        buffer = owned;
    } else {
        memset(buffer, 0, size);
    }
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
    if (owned) touch_pages(ctx, owned, size);
#if TERN_WITH_HAL
    if (ctx->exec.hal) {
        // Device memory, each buffer once; then every device node of every
        // plan's worst case goes to its device's prepare.
        st = hal::hal_context_alloc(&ctx->hal, ctx->dev_kv_bytes, ctx->dev_act_bytes, ctx->staging_bytes);
        const exec_plan * plans[4] = { &ctx->plan, ctx->offload_threshold ? &ctx->plan_small : NULL, &ctx->plan_shift, &ctx->plan_defrag };
        const context_graph_kind kinds[4] = { GRAPH_FORWARD, GRAPH_FORWARD, GRAPH_SHIFT, GRAPH_DEFRAG };
        for (int i = 0; i < 4 && st == TERN_OK; i++) {
            if (!plans[i]) continue;
            st = build_worst(ctx, kinds[i], i == 1);
            if (st == TERN_OK) st = exec_bind(&ctx->exec, plans[i], &ctx->gb, &ctx->graph);
            if (st == TERN_OK) st = exec_prepare(&ctx->exec, plans[i], &ctx->graph);
        }
        ctx->built_kind = GRAPH_NONE;
        if (st != TERN_OK) {
            tern_context_free(ctx);
            return st;
        }
    }
#endif
    *out_ctx = ctx;
    return TERN_OK;
}

extern "C" void tern_context_free(tern_context * ctx) {
    if (!ctx) return;
#if TERN_WITH_HAL
    if (ctx->exec.hal) hal::hal_context_free(ctx->exec.hal);
#endif
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
