// Performance counters (tern_perf_context), as llama_perf_context: tern_decode
// adds the time of each successful call, a batch of more than one token to
// prompt evaluation, a single token to generation. Reading them takes no
// memory and no lock (the caller does not decode on this context meanwhile).
#include "context/context.h"

#include <stdint.h>
#include <string.h>

namespace tern {

static int32_t saturate(int64_t n) { return n > INT32_MAX ? INT32_MAX : (int32_t) n; }

extern "C" void tern_perf_context(const tern_context * ctx, tern_perf_data * out) {
    if (!out) return;
    memset(out, 0, sizeof(*out));
    if (!ctx) return;
    out->t_load_ms = tern_model_load_ms(ctx->model);
    tern_model_load_split(ctx->model, &out->t_load_file_ms, &out->t_load_repack_ms, &out->t_load_upload_ms);
    out->t_p_eval_ms = (double) ctx->t_p_eval_us / 1000.0;
    out->t_eval_ms = (double) ctx->t_eval_us / 1000.0;
    out->n_p_eval = saturate(ctx->n_p_eval);
    out->n_eval = saturate(ctx->n_eval);
    out->graphs_built = ctx->graphs_built;
#if TERN_WITH_HAL
    const hal::hal_counters & c = ctx->hal.counters;
    out->splits = c.splits;
    out->copies_h2d = c.copies_h2d;
    out->copies_d2h = c.copies_d2h;
    out->copies_d2d = c.copies_d2d;
    out->bytes_h2d = c.bytes_h2d;
    out->bytes_d2h = c.bytes_d2h;
    out->bytes_d2d = c.bytes_d2d;
    out->launches = c.launches;
    out->captures = c.captures;
    out->replays = c.replays;
    out->hits = c.hits;
    out->misses = c.misses;
    out->evictions = c.evictions;
    out->capture_failures = c.capture_failures;
    out->submissions = c.submissions;
#endif
}

extern "C" void tern_perf_context_reset(tern_context * ctx) {
    if (!ctx) return;
    ctx->t_p_eval_us = 0;
    ctx->t_eval_us = 0;
    ctx->n_p_eval = 0;
    ctx->n_eval = 0;
    ctx->graphs_built = 0;
#if TERN_WITH_HAL
    memset(&ctx->hal.counters, 0, sizeof(ctx->hal.counters));
#endif
}

}  // namespace tern
