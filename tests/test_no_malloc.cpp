// After tern_context_create, decode and sampling never touch the heap, nor do
// the KV cache's sequence operations, the K-shift, defragmentation and state
// save/restore into a caller buffer, and tokenizing into caller scratch
// (tern_tokenize_in): this test interposes
// malloc/calloc/realloc/free (forwarding to glibc's) and counts the calls.
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <string>
#include <vector>
#include "check.h"
#include "tern.h"

extern "C" {
void * __libc_malloc(size_t);
void * __libc_calloc(size_t, size_t);
void * __libc_realloc(void *, size_t);
void   __libc_free(void *);
}

static volatile int g_counting = 0;
static volatile long g_calls = 0;

extern "C" void * malloc(size_t n) { if (g_counting) g_calls = g_calls + 1; return __libc_malloc(n); }
extern "C" void * calloc(size_t a, size_t b) { if (g_counting) g_calls = g_calls + 1; return __libc_calloc(a, b); }
extern "C" void * realloc(void * p, size_t n) { if (g_counting) g_calls = g_calls + 1; return __libc_realloc(p, n); }
extern "C" void free(void * p) { if (g_counting && p) g_calls = g_calls + 1; __libc_free(p); }

static void run_model(const char * name, int n_threads) {
    std::string path = std::string(tern_test_shared_dir()) + "/models/" + name;
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    CHECK_MSG(tern_model_load_file(path.c_str(), &mp, &m) == TERN_OK, "%s", tern_last_error());
    if (!m) return;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 128;
    cp.n_batch = 32;
    cp.n_threads = n_threads;
    tern_context * ctx = NULL;
    CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = 0.8f;
    sp.top_k = 40;
    sp.top_p = 0.95f;
    sp.min_p = 0.05f;
    sp.repeat_penalty = 1.1f;
    sp.seed = 42;
    tern_sampler * smpl = NULL;
    CHECK(tern_sampler_create(m, &sp, NULL, 0, &smpl) == TERN_OK);
    tern_token prompt[4] = { 1, 400, 401, 402 };
    if (!ctx || !smpl) return;

    g_calls = 0;
    g_counting = 1;
    tern_status st = tern_decode(ctx, tern_batch_get_one(prompt, 4));
    int steps = 0;
    for (; st == TERN_OK && steps < 64; steps++) {
        tern_token t = tern_sampler_sample(smpl, ctx, -1);
        st = tern_decode(ctx, tern_batch_get_one(&t, 1));
    }
    // Sequence operations, a K-shift, defragmentation, state to and from a
    // caller buffer (allocated before counting).
    g_counting = 0;
    std::vector<uint8_t> state(tern_state_get_size(ctx) + 4096);
    g_counting = 1;
    if (st == TERN_OK) {
        tern_kv_cache_seq_cp(ctx, 0, 0, 0, -1);
        tern_kv_cache_seq_rm(ctx, 0, 2, 10);
        tern_kv_cache_seq_add(ctx, 0, 10, -1, -8);
        tern_kv_cache_seq_div(ctx, 0, 30, -1, 2);
        st = tern_kv_cache_update(ctx);
        if (st == TERN_OK) st = tern_kv_cache_defrag(ctx);
        const size_t n = tern_state_get_data(ctx, state.data(), state.size());
        if (n == 0 || tern_state_set_data(ctx, state.data(), n) != n) st = TERN_ERR_INTERNAL;
        tern_token t = 5;
        tern_batch b = tern_batch_get_one(&t, 1);
        if (st == TERN_OK) st = tern_decode(ctx, b);
    }
    g_counting = 0;
    // Tokenizing into caller scratch takes no heap either.
    const char * text = "Once upon a time, there was a little girl.";
    std::vector<uint8_t> scratch(tern_tokenize_scratch_size(m, (int32_t) strlen(text)));
    std::vector<tern_token> toks(64);
    g_counting = 1;
    const int32_t n_tok = tern_tokenize_in(m, text, (int32_t) strlen(text), toks.data(), 64, 1, 1, scratch.data(),
                                           scratch.size());
    const int32_t n_small = tern_tokenize_in(m, text, (int32_t) strlen(text), toks.data(), 64, 1, 1, scratch.data(),
                                             scratch.size() - 1);
    g_counting = 0;
    CHECK_MSG(n_tok > 5 && n_small == INT32_MIN, "tokenize_in: %d, with one byte less %d", n_tok, n_small);
    CHECK_MSG(st == TERN_OK, "%s: %s", name, tern_last_error());
    CHECK(steps == 64);
    CHECK_MSG(g_calls == 0, "%s (%d threads): %ld heap calls during decode", name, n_threads, (long) g_calls);
    printf("%s, %d threads: %ld heap calls in 64 decode steps, sequence ops, K-shift, defrag, state io\n", name,
           n_threads, (long) g_calls);
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
}

int main(void) {
    run_model("stories260K.gguf", 1);
    run_model("stories260K.gguf", 3);
    run_model("TinyStories-656K-Q8_0.gguf", 2);
    return tern_test_summary();
}
