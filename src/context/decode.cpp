// tern_decode: a batch -> KV cells -> graph (reused per shape) -> logits.
#include "context/context.h"
#include "core/status.h"
#include "port.h"

#include <inttypes.h>
#include <float.h>
#include <math.h>
#include <string.h>

namespace tern {

// Batch storage: token, pos, n_seq_id, logits arrays of n_tokens, the
// seq_id pointer array, then n_tokens rows of n_seq_max ids; each part
// 8-byte aligned.
static size_t batch_part(size_t bytes) { return (bytes + 7) & ~(size_t) 7; }

extern "C" size_t tern_batch_mem_size(int32_t n_tokens, int32_t n_seq_max) {
    if (n_tokens <= 0 || n_seq_max <= 0 || n_seq_max > TERN_MAX_SEQ) return 0;
    const size_t n = (size_t) n_tokens;
    return batch_part(n * sizeof(tern_token)) + batch_part(n * sizeof(tern_pos)) + batch_part(n * sizeof(int32_t)) +
           batch_part(n * sizeof(int8_t)) + batch_part(n * sizeof(tern_seq_id *)) +
           batch_part(n * (size_t) n_seq_max * sizeof(tern_seq_id)) + 8;
}

extern "C" tern_batch tern_batch_init_in(void * mem, size_t size, int32_t n_tokens, int32_t n_seq_max) {
    tern_batch b;
    memset(&b, 0, sizeof(b));
    const size_t need = tern_batch_mem_size(n_tokens, n_seq_max);
    if (!mem || need == 0 || size < need) {
        tern_fail(TERN_ERR_INVALID_ARG, "batch_init_in: %zu bytes given, %zu needed for %" PRId32 " tokens of %" PRId32 " sequences",
                  size, need, n_tokens, n_seq_max);
        return b;
    }
    memset(mem, 0, need);
    uint8_t * p = (uint8_t *) (((uintptr_t) mem + 7) & ~(uintptr_t) 7);
    const size_t n = (size_t) n_tokens;
    b.token = (tern_token *) p; p += batch_part(n * sizeof(tern_token));
    b.pos = (tern_pos *) p; p += batch_part(n * sizeof(tern_pos));
    b.n_seq_id = (int32_t *) p; p += batch_part(n * sizeof(int32_t));
    b.logits = (int8_t *) p; p += batch_part(n * sizeof(int8_t));
    b.seq_id = (tern_seq_id **) p; p += batch_part(n * sizeof(tern_seq_id *));
    for (size_t i = 0; i < n; i++) b.seq_id[i] = (tern_seq_id *) p + i * (size_t) n_seq_max;
    return b;  // n_tokens 0: the caller fills up to n_tokens entries
}

extern "C" tern_batch tern_batch_init(int32_t n_tokens, int32_t n_seq_max) {
    const size_t need = tern_batch_mem_size(n_tokens, n_seq_max);
    void * mem = need ? port_alloc(need) : NULL;
    tern_batch b = tern_batch_init_in(mem, need, n_tokens, n_seq_max);
    if (!b.token && mem) port_free(mem);
    return b;
}

extern "C" void tern_batch_free(tern_batch batch) {
    // token is the start of the one block (8-byte aligned allocations start aligned).
    if (batch.token) port_free(batch.token);
}

extern "C" tern_batch tern_batch_get_one(tern_token * tokens, int32_t n_tokens) {
    tern_batch b;
    memset(&b, 0, sizeof(b));
    b.n_tokens = n_tokens;
    b.token = tokens;
    return b;
}

namespace {

// The largest position a token may have: one more must still be an int32
// (a batch without positions continues at pos_max + 1).
const tern_pos kMaxPos = INT32_MAX - 1;

// Check every token, sequence id and position before anything changes.
//
// Position rules (as llama.cpp's batch validation): positions are in
// [0, kMaxPos]; within one sequence they strictly increase through the batch,
// and the first one is past every position the cache already holds for that
// sequence (re-decoding a held position would leave two cells with one
// position). To revisit a position, remove it first (tern_kv_cache_seq_rm).
// With a sliding window, a token must not need a position the window freed
// (kv_cache.h: swa_lost): a rollback deeper than the cells kept is refused,
// never computed without them.
tern_status window_check(const tern_context * ctx, int32_t i, tern_pos pos, tern_seq_id id) {
    const uint32_t n_swa = ctx->model->hp.n_swa;
    const tern_pos lost = ctx->kv.swa_lost[id];
    if (n_swa == 0 || lost < 0 || (int64_t) pos >= (int64_t) lost + n_swa) return TERN_OK;
    return tern_fail(TERN_ERR_INVALID_ARG,
                     "batch token %" PRId32 ": position %" PRId32 " of sequence %" PRId32 " attends positions from %lld on (window %" PRIu32 "), "
                     "but the window already freed positions up to %" PRId32 " (the lowest held: tern_kv_cache_seq_pos_min = %" PRId32 "): "
                     "decode that sequence again from its start",
                     i, pos, id, (long long) pos - n_swa + 1, n_swa, lost, kv_cache_seq_pos_min(&ctx->kv, id));
}

tern_status batch_validate(const tern_context * ctx, const tern_batch * b) {
    const uint32_t n_vocab = ctx->model->hp.n_vocab;
    if (b->n_tokens <= 0 || !b->token) return tern_fail(TERN_ERR_INVALID_ARG, "empty batch");
    if (b->seq_id && !b->pos) {
        return tern_fail(TERN_ERR_INVALID_ARG, "batch with sequence ids needs positions (pos is NULL)");
    }
    // Highest position held per sequence (-1: none), then the batch's own as it goes.
    tern_pos last[TERN_MAX_SEQ];
    kv_cache_pos_max_all(&ctx->kv, last);
    if (!b->pos && (int64_t) last[0] + b->n_tokens > (int64_t) kMaxPos) {
        return tern_fail(TERN_ERR_INVALID_ARG, "batch of %" PRId32 " tokens after position %" PRId32 " of sequence 0 passes the largest "
                         "position %" PRId32, b->n_tokens, last[0], kMaxPos);
    }
    if (!b->pos) TERN_TRY(window_check(ctx, 0, last[0] + 1, 0));  // its first (lowest) position
    for (int32_t i = 0; i < b->n_tokens; i++) {
        if (b->token[i] < 0 || (uint32_t) b->token[i] >= n_vocab) {
            return tern_fail(TERN_ERR_INVALID_ARG, "batch token %" PRId32 ": id %" PRId32 " is outside the vocabulary [0, %" PRIu32 ")", i,
                             b->token[i], n_vocab);
        }
        if (!b->pos) continue;  // continues sequence 0: valid by the check above
        const tern_pos pos = b->pos[i];
        if (pos < 0 || pos > kMaxPos) {
            return tern_fail(TERN_ERR_INVALID_ARG, "batch token %" PRId32 ": position %" PRId32 " outside [0, %" PRId32 "]", i, pos, kMaxPos);
        }
        const int32_t n = b->seq_id ? (b->n_seq_id ? b->n_seq_id[i] : 1) : 1;
        if (n < 1 || n > (int32_t) ctx->params.n_seq_max) {
            return tern_fail(TERN_ERR_INVALID_ARG, "batch token %" PRId32 ": %" PRId32 " sequence ids (1 to %" PRIu32 ")", i, n,
                             ctx->params.n_seq_max);
        }
        if (b->seq_id && !b->seq_id[i]) return tern_fail(TERN_ERR_INVALID_ARG, "batch token %" PRId32 ": seq_id is NULL", i);
        uint64_t seen = 0;
        for (int32_t k = 0; k < n; k++) {
            const tern_seq_id id = b->seq_id ? b->seq_id[i][k] : 0;
            if (id < 0 || (uint32_t) id >= ctx->params.n_seq_max) {
                return tern_fail(TERN_ERR_INVALID_ARG, "batch token %" PRId32 ": sequence id %" PRId32 " outside [0, %" PRIu32 ")", i, id,
                                 ctx->params.n_seq_max);
            }
            if (seen & ((uint64_t) 1 << id)) {
                return tern_fail(TERN_ERR_INVALID_ARG, "batch token %" PRId32 ": sequence id %" PRId32 " given twice", i, id);
            }
            seen |= (uint64_t) 1 << id;
            if (pos <= last[id]) {
                return tern_fail(TERN_ERR_INVALID_ARG,
                                 "batch token %" PRId32 ": position %" PRId32 " of sequence %" PRId32 " is not past %" PRId32 ", the last position the "
                                 "cache or the batch already holds for it (remove it first with seq_rm)",
                                 i, pos, id, last[id]);
            }
            TERN_TRY(window_check(ctx, i, pos, id));
            last[id] = pos;
        }
    }
    return TERN_OK;
}

bool batch_wants_logits(const tern_context * ctx, const tern_batch * b, int32_t i) {
    if (ctx->params.logits_all) return true;
    if (b->logits) return b->logits[i] != 0;
    return i == b->n_tokens - 1;
}

uint64_t batch_seq_mask(const tern_batch * b, int32_t i) {
    if (!b->seq_id) return 1;
    uint64_t mask = 0;
    const int32_t n = b->n_seq_id ? b->n_seq_id[i] : 1;
    for (int32_t s = 0; s < n; s++) mask |= (uint64_t) 1 << b->seq_id[i][s];
    return mask;
}

// Free the cells the decode in progress took.
void rollback_cells(tern_context * ctx, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        kv_cell * c = &ctx->kv.cells[ctx->changed_cells[i]];
        c->pos = -1;
        c->seq_mask = 0;
    }
    ctx->kv.used -= n;
}

void fill_i32(tern_tensor * t, const int32_t * values, uint32_t n) { memcpy(t->data, values, sizeof(int32_t) * n); }

// Evaluate tokens [i0, i0 + n) of the batch; their cells are already taken.
tern_status decode_ubatch(tern_context * ctx, const tern_batch * b, int32_t i0, uint32_t n, uint32_t * next_row) {
    const tern_model * m = ctx->model;

    uint32_t n_outputs = 0;
    for (uint32_t i = 0; i < n; i++) n_outputs += batch_wants_logits(ctx, b, i0 + (int32_t) i) ? 1 : 0;
    // A ubatch with no wanted logits still computes one row (the graph's
    // shape needs it); it is not stored.
    const uint32_t n_graph_outputs = n_outputs ? n_outputs : 1;

    // The graph depends on the batch's shape only (it spans every cell of the
    // cache): rebuilt when that changes, or after another kind ran.
    // With devices that offload large matmuls, batches below their threshold
    // have a plan of their own.
    forward_shape shape = { n, n_graph_outputs };
    const exec_plan * plan = ctx->offload_threshold && n < ctx->offload_threshold ? &ctx->plan_small : &ctx->plan;
    if (ctx->built_kind != GRAPH_FORWARD || ctx->built_plan != plan || shape.n_tokens != ctx->built.n_tokens ||
        shape.n_outputs != ctx->built.n_outputs) {
        ctx->built_kind = GRAPH_NONE;
        TERN_TRY(forward_build(m, &ctx->kv, shape, &ctx->gb, &ctx->graph, &ctx->io));
        TERN_TRY(exec_bind(&ctx->exec, plan, &ctx->gb, &ctx->graph));
        ctx->built = shape;
        ctx->built_plan = plan;
        ctx->built_kind = GRAPH_FORWARD;
        ctx->graphs_built++;
    }

    // Inputs. The mask is filled over the cells up to the highest used one
    // (padded), the bounds tell each token where to stop.
    fill_i32(ctx->io.tokens, b->token + i0, n);
    fill_i32(ctx->io.pos, ctx->positions, n);
    fill_i32(ctx->io.slots, ctx->slots, n);
    // A model whose layers all window (phi3) has the window in its one mask; one
    // that windows some (gemma2) has a second mask for those.
    const uint32_t n_kv = kv_cache_n_kv(&ctx->kv);
    kv_cache_fill_mask(&ctx->kv, n_kv, ctx->kv.n_cells, n, ctx->positions, ctx->seq_masks, hparams_swa_mixed(&m->hp) ? 0 : m->hp.n_swa,
                       (float *) ctx->io.mask->data, (int32_t *) ctx->io.bounds->data);
    if (ctx->io.mask_swa) {
        kv_cache_fill_mask(&ctx->kv, n_kv, ctx->kv.n_cells, n, ctx->positions, ctx->seq_masks, m->hp.n_swa,
                           (float *) ctx->io.mask_swa->data, (int32_t *) ctx->io.bounds_swa->data);
    }
    int32_t * ids = (int32_t *) ctx->io.out_ids->data;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (batch_wants_logits(ctx, b, i0 + (int32_t) i)) ids[k++] = (int32_t) i;
    }
    if (k == 0) ids[0] = (int32_t) n - 1;

    // Decode batches (one token per sequence) may be captured and replayed on
    // the devices; prompts run op by op unless the context asks otherwise.
    uint64_t seen = 0;
    bool decode = true;
    for (uint32_t i = 0; i < n && decode; i++) {
        decode = (ctx->seq_masks[i] & seen) == 0;
        seen |= ctx->seq_masks[i];
    }
    TERN_TRY(exec_run(&ctx->exec, plan, &ctx->graph, ctx->params.abort_callback, ctx->params.abort_callback_data,
                      decode || ctx->params.capture_prefill));

    // Logits rows of this ubatch -> the context's logits, in batch order. (The
    // out_ids input is not read back: the planner reuses input bytes once
    // their last reader has run.)
    const size_t row_bytes = sizeof(float) * m->hp.n_vocab;
    const float * src = (const float *) exec_output(plan, ctx->io.logits)->data;
    uint32_t r = 0;
    for (uint32_t i = 0; i < n && r < n_outputs; i++) {
        if (!batch_wants_logits(ctx, b, i0 + (int32_t) i)) continue;
        float * row = ctx->logits + (size_t) (*next_row) * m->hp.n_vocab;
        memcpy(row, src + (size_t) r * m->hp.n_vocab, row_bytes);
        // NaN/Inf weights or activations poison every later token: refuse the
        // batch instead of handing garbage to a sampler (which would pick token 0).
        for (uint32_t v = 0; v < m->hp.n_vocab; v++) {
            if (!(fabsf(row[v]) <= FLT_MAX)) {
                return tern_fail(TERN_ERR_NUMERIC, "logits of batch token %" PRId32 " turned non-finite (logit %" PRIu32 " is %g): "
                                 "the model's weights or hyper-parameters hold NaN/Inf (try --check-tensors)",
                                 i0 + (int32_t) i, v, (double) row[v]);
            }
        }
        ctx->output_row[i0 + (int32_t) i] = (int32_t) (*next_row);
        (*next_row)++;
        r++;
    }
    return TERN_OK;
}

tern_status decode_batch(tern_context * ctx, tern_batch batch);

}  // namespace

// One call at a time per context, one decode at a time per pool: both are
// taken with an atomic flag, so misuse from several threads is refused with
// TERN_ERR_BUSY instead of racing on the KV cache or the pool's workers.
extern "C" tern_status tern_decode(tern_context * ctx, tern_batch batch) {
    if (!ctx) return tern_fail(TERN_ERR_INVALID_ARG, "context is NULL");
    if (!context_enter(ctx)) {
        return tern_fail(TERN_ERR_BUSY, "context is in use by another thread (one call at a time per context)");
    }
    if (!tern_threadpool_acquire(ctx->pool)) {
        context_leave(ctx);
        return tern_fail(TERN_ERR_BUSY, "threadpool is running another decode (contexts sharing a pool must take "
                         "turns)");
    }
    const int64_t t0 = port_time_us();
    tern_status st = decode_batch(ctx, batch);
    if (st == TERN_OK) {
        const int64_t dt = port_time_us() - t0;
        if (batch.n_tokens > 1) {
            ctx->t_p_eval_us += dt;
            ctx->n_p_eval += batch.n_tokens;
        } else {
            ctx->t_eval_us += dt;
            ctx->n_eval += 1;
        }
    }
    tern_threadpool_release(ctx->pool);
    context_leave(ctx);
    return st;
}

namespace {

tern_status decode_batch(tern_context * ctx, tern_batch batch) {
    TERN_TRY(batch_validate(ctx, &batch));
    // Pending position changes first (the batch's attention reads those keys),
    // then compaction when the cache is fragmented past the threshold.
    TERN_TRY(context_kv_update(ctx));
    if (ctx->params.defrag_thold > 0.0f && kv_cache_fragmentation(&ctx->kv) > ctx->params.defrag_thold) {
        TERN_TRY(context_kv_defrag(ctx));
    }
    const uint32_t n_tokens = (uint32_t) batch.n_tokens;
    kv_cache * kv = &ctx->kv;
    if (n_tokens > kv->n_cells - kv->used && ctx->model->hp.n_swa > 0 && !hparams_swa_mixed(&ctx->model->hp)) {
        // Sliding window: reuse the cells no later token can attend. Positions of
        // a sequence only grow (batch_validate), so past its highest one
        // nothing older than the window is seen again.
        tern_pos next_pos[TERN_MAX_SEQ];
        kv_cache_pos_max_all(kv, next_pos);
        for (uint32_t s = 0; s < TERN_MAX_SEQ; s++) next_pos[s]++;
        // Every such cell, not only as many as needed: which positions are
        // lost must not depend on where cells sit (a defragmented cache loses
        // the same ones).
        kv_cache_free_outside_window(kv, ctx->model->hp.n_swa, kv->n_cells, next_pos);
    }
    if (n_tokens > kv->n_cells - kv->used) {
        return tern_fail(TERN_ERR_CONTEXT_FULL, "batch of %" PRIu32 " tokens does not fit: %" PRIu32 " of %" PRIu32 " KV cells free", n_tokens,
                         kv->n_cells - kv->used, kv->n_cells);
    }
    uint32_t n_outputs = 0;
    for (int32_t i = 0; i < batch.n_tokens; i++) n_outputs += batch_wants_logits(ctx, &batch, i) ? 1 : 0;
    if (n_outputs > ctx->logits_rows) {
        return tern_fail(TERN_ERR_INVALID_ARG, "batch asks for %" PRIu32 " logits rows; the context keeps %" PRIu32 " (n_batch, or n_ctx with logits_all)",
                         n_outputs, ctx->logits_rows);
    }
    // Without explicit positions the batch continues sequence 0.
    const tern_pos pos0 = batch.pos ? 0 : kv_cache_seq_pos_max(kv, 0) + 1;

    for (uint32_t i = 0; i < n_tokens; i++) ctx->output_row[i] = -1;
    ctx->n_batch_last = batch.n_tokens;
    const uint32_t head0 = kv->head;  // restored with the cells when the batch fails
    uint32_t taken = 0;
    uint32_t next_row = 0;
    for (uint32_t i0 = 0; i0 < n_tokens; i0 += ctx->params.n_batch) {
        const uint32_t n = n_tokens - i0 < ctx->params.n_batch ? n_tokens - i0 : ctx->params.n_batch;
        if (!kv_cache_find_slots(kv, n, ctx->slots)) {
            rollback_cells(ctx, taken);
            kv->head = head0;
            return tern_fail(TERN_ERR_INTERNAL, "KV cache: free cells vanished during a decode");
        }
        for (uint32_t i = 0; i < n; i++) {
            const int32_t bi = (int32_t) (i0 + i);
            ctx->positions[i] = batch.pos ? batch.pos[bi] : pos0 + bi;
            ctx->seq_masks[i] = batch_seq_mask(&batch, bi);
            kv_cell * c = &kv->cells[ctx->slots[i]];
            c->pos = ctx->positions[i];
            c->delta = 0;
            c->seq_mask = ctx->seq_masks[i];
            ctx->changed_cells[taken++] = ctx->slots[i];
        }
        kv->used += n;
        kv_cache_placed(kv, ctx->slots, n);
        tern_status st = decode_ubatch(ctx, &batch, (int32_t) i0, n, &next_row);
        if (st != TERN_OK) {
            // Nothing of a failed or aborted batch is kept.
            rollback_cells(ctx, taken);
            kv->head = head0;
            for (uint32_t i = 0; i < n_tokens; i++) ctx->output_row[i] = -1;
            return st;
        }
    }
    return TERN_OK;
}

}  // namespace

extern "C" float * tern_get_logits_ith(tern_context * ctx, int32_t i) {
    if (!ctx) return NULL;
    if (i < 0) i += ctx->n_batch_last;
    if (i < 0 || i >= ctx->n_batch_last) {
        tern_fail(TERN_ERR_INVALID_ARG, "logits index %" PRId32 " outside the last batch of %" PRId32 " tokens", i, ctx->n_batch_last);
        return NULL;
    }
    const int32_t row = ctx->output_row[i];
    if (row < 0) {
        tern_fail(TERN_ERR_INVALID_ARG, "logits of batch token %" PRId32 " were not requested", i);
        return NULL;
    }
    return ctx->logits + (size_t) row * ctx->model->hp.n_vocab;
}

}  // namespace tern
