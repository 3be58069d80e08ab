// tern run's context management (examples/cli/run_context.h): the
// Self-Extend loop follows llama.cpp's main example position for position,
// a context shift keeps n_keep and halves the rest.
#include <string>
#include <vector>

#include "check.h"
#include "run_context.h"

int main(void) {
    // The loop on plain positions, worked by hand from llama.cpp's formulas:
    // ga_n 2, ga_w 4, tokens at 0..7 -> pairs share a position, n_past 8 -> 4.
    std::vector<int32_t> pos = {0, 1, 2, 3, 4, 5, 6, 7};
    int32_t n_past = 8;
    run_self_extend g = {2, 4, 0};
    run_self_extend_positions(pos, &g, &n_past);
    CHECK(n_past == 4);
    CHECK((pos == std::vector<int32_t>{0, 0, 1, 1, 2, 2, 3, 3}));
    // The same loop on a context's cells (seq_add / seq_div).
    const std::string path = std::string(tern_test_shared_dir()) + "/models/stories260K.gguf";
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    CHECK(tern_model_load_file(path.c_str(), &mp, &m) == TERN_OK);
    if (!m) return tern_test_summary();
    for (const run_self_extend & cfg : {run_self_extend{2, 4, 0}, run_self_extend{4, 32, 0}, run_self_extend{3, 9, 0}}) {
        tern_context_params cp = tern_context_default_params();
        cp.n_ctx = 128;
        cp.n_threads = 1;
        tern_context * ctx = NULL;
        CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
        if (!ctx) break;
        // The real run: 100 tokens, one at a time, the step before each.
        run_self_extend ga = cfg;
        int32_t n = 0;
        tern_status st = TERN_OK;
        for (int step = 0; step < 100 && st == TERN_OK; step++) {
            run_self_extend_step(ctx, &ga, &n);
            tern_token t = (tern_token) (3 + step);
            tern_batch b = tern_batch_get_one(&t, 1);
            tern_pos p = n;
            b.pos = &p;
            st = tern_decode(ctx, b);
            n++;
        }
        CHECK_MSG(st == TERN_OK, "%s", tern_last_error());
        // The same run replayed on plain positions.
        std::vector<int32_t> replay;
        run_self_extend g2 = cfg;
        int32_t n2 = 0;
        for (int step = 0; step < 100; step++) {
            run_self_extend_positions(replay, &g2, &n2);
            replay.push_back(n2);
            n2++;
        }
        int32_t lo = replay[0], hi = replay[0];
        for (int32_t x : replay) { lo = x < lo ? x : lo; hi = x > hi ? x : hi; }
        CHECK_MSG(tern_kv_cache_seq_pos_min(ctx, 0) == lo && tern_kv_cache_seq_pos_max(ctx, 0) == hi && n == n2,
                  "ga %d/%d: cells %d..%d, n_past %d; expected %d..%d, %d", cfg.n, cfg.w,
                  tern_kv_cache_seq_pos_min(ctx, 0), tern_kv_cache_seq_pos_max(ctx, 0), n, lo, hi, n2);
        CHECK(hi < 100);  // 100 tokens, grouped positions
        printf("Self-Extend %d/%d: 100 tokens at positions %d..%d, next %d\n", cfg.n, cfg.w, lo, hi, n);
        tern_context_free(ctx);
    }
    // Context shift: keep 4 of 20, discard 8, the rest moves back.
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 20;
    tern_context * ctx = NULL;
    CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
    if (ctx) {
        std::vector<tern_token> t(20, 7);
        CHECK(tern_decode(ctx, tern_batch_get_one(t.data(), 20)) == TERN_OK);
        int32_t n_past = 20;
        CHECK(run_context_shift(ctx, 4, &n_past) == 8);
        CHECK(n_past == 12 && tern_kv_cache_used_cells(ctx) == 12 && tern_kv_cache_seq_pos_max(ctx, 0) == 11);
        tern_token one = 9;
        CHECK(tern_decode(ctx, tern_batch_get_one(&one, 1)) == TERN_OK);
        tern_context_free(ctx);
    }
    tern_model_free(m);
    return tern_test_summary();
}
