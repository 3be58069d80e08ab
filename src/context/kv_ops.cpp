// tern.h's KV cache entry points: sequence operations, the K-shift, defrag.
// Every mutating call enters the context's guard (context.h), so a call
// arriving while a decode runs on another thread is refused, never raced.
#include "context/context.h"
#include "core/status.h"

#include <inttypes.h>
#include <string.h>

namespace tern {

namespace {

bool seq_ok(const tern_context * ctx, tern_seq_id seq, const char * what) {
    if (seq < 0 || (uint32_t) seq >= ctx->params.n_seq_max) {
        tern_fail(TERN_ERR_INVALID_ARG, "%s: sequence id %" PRId32 " outside [0, %" PRIu32 ")", what, seq, ctx->params.n_seq_max);
        return false;
    }
    return true;
}

bool enter(tern_context * ctx, const char * what) {
    if (!ctx) {
        tern_fail(TERN_ERR_INVALID_ARG, "%s: context is NULL", what);
        return false;
    }
    if (!context_enter(ctx)) {
        tern_fail(TERN_ERR_BUSY, "%s: context is in use by another thread; nothing done", what);
        return false;
    }
    return true;
}

}  // namespace

tern_status context_kv_update(tern_context * ctx) {
    kv_cache * kv = &ctx->kv;
    if (!kv->has_shift) return TERN_OK;
    uint32_t n = 0;
    for (uint32_t i = 0; i < kv->n_cells; i++) n += kv->cells[i].seq_mask != 0 && kv->cells[i].delta != 0;
    if (n > 0) {
        ctx->built_kind = GRAPH_NONE;  // the decode graph is rebuilt after this one
        TERN_TRY(forward_build_shift(ctx->model, kv, n, &ctx->gb, &ctx->graph, &ctx->shift_io));
        TERN_TRY(exec_bind(&ctx->exec, &ctx->plan_shift, &ctx->gb, &ctx->graph));
        ctx->built_kind = GRAPH_SHIFT;
        int32_t * cells = (int32_t *) ctx->shift_io.cells->data;
        int32_t * deltas = (int32_t *) ctx->shift_io.deltas->data;
        uint32_t k = 0;
        for (uint32_t i = 0; i < kv->n_cells; i++) {
            if (kv->cells[i].seq_mask == 0 || kv->cells[i].delta == 0) continue;
            cells[k] = (int32_t) i;
            deltas[k] = kv->cells[i].delta;
            k++;
        }
        // No abort callback: a half-rotated cache would be wrong for good.
        ctx->graphs_built++;
        TERN_TRY(exec_run(&ctx->exec, &ctx->plan_shift, &ctx->graph, NULL, NULL, false));
    }
    for (uint32_t i = 0; i < kv->n_cells; i++) kv->cells[i].delta = 0;
    kv->has_shift = false;
    return TERN_OK;
}

tern_status context_kv_defrag(tern_context * ctx) {
    kv_cache * kv = &ctx->kv;
    const uint32_t n = kv_cache_defrag_plan(kv, ctx->move_src, ctx->move_dst);
    if (n == 0) {
        kv->head = kv->used;
        return TERN_OK;
    }
    ctx->built_kind = GRAPH_NONE;
    TERN_TRY(kv_defrag_build(kv, n, &ctx->gb, &ctx->graph, &ctx->defrag_io));
    TERN_TRY(exec_bind(&ctx->exec, &ctx->plan_defrag, &ctx->gb, &ctx->graph));
    ctx->built_kind = GRAPH_DEFRAG;
    memcpy(ctx->defrag_io.src->data, ctx->move_src, sizeof(int32_t) * n);
    memcpy(ctx->defrag_io.dst->data, ctx->move_dst, sizeof(int32_t) * n);
    // No abort callback: rows half moved would not match the metadata. A
    // device that fails in the middle leaves rows half moved: the cache is
    // cleared then (every sequence forgotten) rather than left wrong.
    ctx->graphs_built++;
    const tern_status st = exec_run(&ctx->exec, &ctx->plan_defrag, &ctx->graph, NULL, NULL, false);
    if (st != TERN_OK) {
        kv_cache_clear(kv);
        return tern_fail(st, "KV defragmentation failed (%s); the KV cache was cleared", tern_last_error());
    }
    kv_cache_defrag_apply(kv, ctx->move_src, ctx->move_dst, n);
    return TERN_OK;
}

extern "C" void tern_kv_cache_clear(tern_context * ctx) {
    if (!enter(ctx, "kv_cache_clear")) return;
    kv_cache_clear(&ctx->kv);
    context_leave(ctx);
}

extern "C" int tern_kv_cache_seq_rm(tern_context * ctx, tern_seq_id seq_id, tern_pos p0, tern_pos p1) {
    if (!ctx || seq_id >= (tern_seq_id) ctx->params.n_seq_max) return 0;
    if (!enter(ctx, "kv_cache_seq_rm")) return 0;
    kv_cache_seq_rm(&ctx->kv, seq_id, p0, p1);
    context_leave(ctx);
    return 1;
}

extern "C" int tern_kv_cache_seq_cp(tern_context * ctx, tern_seq_id src, tern_seq_id dst, tern_pos p0, tern_pos p1) {
    if (!ctx || !seq_ok(ctx, src, "kv_cache_seq_cp") || !seq_ok(ctx, dst, "kv_cache_seq_cp")) return 0;
    if (!enter(ctx, "kv_cache_seq_cp")) return 0;
    kv_cache_seq_cp(&ctx->kv, src, dst, p0, p1);
    context_leave(ctx);
    return 1;
}

extern "C" int tern_kv_cache_seq_keep(tern_context * ctx, tern_seq_id seq) {
    if (!ctx || !seq_ok(ctx, seq, "kv_cache_seq_keep")) return 0;
    if (!enter(ctx, "kv_cache_seq_keep")) return 0;
    kv_cache_seq_keep(&ctx->kv, seq);
    context_leave(ctx);
    return 1;
}

extern "C" int tern_kv_cache_seq_add(tern_context * ctx, tern_seq_id seq, tern_pos p0, tern_pos p1, tern_pos delta) {
    if (!ctx || !seq_ok(ctx, seq, "kv_cache_seq_add")) return 0;
    if (!enter(ctx, "kv_cache_seq_add")) return 0;
    kv_cache_seq_add(&ctx->kv, seq, p0, p1, delta);
    context_leave(ctx);
    return 1;
}

extern "C" int tern_kv_cache_seq_div(tern_context * ctx, tern_seq_id seq, tern_pos p0, tern_pos p1, int d) {
    if (!ctx || !seq_ok(ctx, seq, "kv_cache_seq_div")) return 0;
    if (d < 1) {
        tern_fail(TERN_ERR_INVALID_ARG, "kv_cache_seq_div: divisor %d must be >= 1", d);
        return 0;
    }
    if (!enter(ctx, "kv_cache_seq_div")) return 0;
    kv_cache_seq_div(&ctx->kv, seq, p0, p1, d);
    context_leave(ctx);
    return 1;
}

extern "C" tern_pos tern_kv_cache_seq_pos_max(const tern_context * ctx, tern_seq_id seq_id) {
    if (!ctx || seq_id < 0 || seq_id >= (tern_seq_id) ctx->params.n_seq_max) return -1;
    return kv_cache_seq_pos_max(&ctx->kv, seq_id);
}

extern "C" tern_pos tern_kv_cache_seq_pos_min(const tern_context * ctx, tern_seq_id seq_id) {
    if (!ctx || seq_id < 0 || seq_id >= (tern_seq_id) ctx->params.n_seq_max) return -1;
    return kv_cache_seq_pos_min(&ctx->kv, seq_id);
}

extern "C" tern_status tern_kv_cache_update(tern_context * ctx) {
    if (!enter(ctx, "kv_cache_update")) return ctx ? TERN_ERR_BUSY : TERN_ERR_INVALID_ARG;
    if (!tern_threadpool_acquire(ctx->pool)) {
        context_leave(ctx);
        return tern_fail(TERN_ERR_BUSY, "kv_cache_update: threadpool is running another decode");
    }
    tern_status st = context_kv_update(ctx);
    tern_threadpool_release(ctx->pool);
    context_leave(ctx);
    return st;
}

extern "C" tern_status tern_kv_cache_defrag(tern_context * ctx) {
    if (!enter(ctx, "kv_cache_defrag")) return ctx ? TERN_ERR_BUSY : TERN_ERR_INVALID_ARG;
    if (!tern_threadpool_acquire(ctx->pool)) {
        context_leave(ctx);
        return tern_fail(TERN_ERR_BUSY, "kv_cache_defrag: threadpool is running another decode");
    }
    tern_status st = context_kv_defrag(ctx);
    tern_threadpool_release(ctx->pool);
    context_leave(ctx);
    return st;
}

extern "C" int32_t tern_kv_cache_used_cells(const tern_context * ctx) { return ctx ? (int32_t) ctx->kv.used : 0; }

extern "C" float tern_kv_cache_fragmentation(const tern_context * ctx) {
    return ctx ? kv_cache_fragmentation(&ctx->kv) : 0.0f;
}

}  // namespace tern
