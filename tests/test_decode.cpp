// Decode behaviour a user relies on: bit-identical logits for any thread
// count and batch split, a full context that stays usable, exact memory
// sizing, abort, and clear errors for bad models and batches.
#include <math.h>
#include <string.h>
#include <algorithm>
#include <string>
#include <vector>
#include "check.h"
#include "reference.h"
#include "tern.h"

static std::string g_shared;

static tern_model * load(const std::string & name) {
    tern_model * m = NULL;
    tern_model_params mp = tern_model_default_params();
    std::string path = g_shared + "/models/" + name;
    tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
    CHECK_MSG(st == TERN_OK, "%s: %s", name.c_str(), tern_last_error());
    return m;
}

static tern_context * make_ctx(tern_model * m, uint32_t n_ctx, uint32_t n_batch, int n_threads, int logits_all,
                               tern_threadpool * pool = NULL) {
    tern_context_params cp = tern_context_default_params();
    cp.pool = pool;
    cp.n_ctx = n_ctx;
    cp.n_batch = n_batch;
    cp.n_threads = n_threads;
    cp.logits_all = logits_all;
    tern_context * ctx = NULL;
    tern_status st = tern_context_create(m, &cp, &ctx);
    CHECK_MSG(st == TERN_OK, "context: %s", tern_last_error());
    return ctx;
}

static std::vector<tern_token> prompt_tokens(tern_model * m, const char * text) {
    std::vector<tern_token> t(strlen(text) + 8);
    int n = tern_tokenize(m, text, (int) strlen(text), t.data(), (int) t.size(), 1, 0);
    CHECK(n > 0);
    t.resize(n > 0 ? n : 0);
    return t;
}

// Logits of every prompt position followed by 8 greedy steps, flattened.
static std::vector<float> run(tern_model * m, const std::vector<tern_token> & prompt, int n_threads, uint32_t n_batch) {
    std::vector<float> out;
    // Every graph on the whole pool (min_step_bytes 0): these models are small
    // enough that the default would run their decode on the caller alone.
    tern_threadpool * pool = NULL;
    if (n_threads > 1) {
        tern_threadpool_params tp = tern_threadpool_default_params(n_threads);
        tp.min_step_bytes = 0;
        CHECK_MSG(tern_threadpool_create(&tp, &pool) == TERN_OK, "pool: %s", tern_last_error());
    }
    tern_context * ctx = make_ctx(m, 128, n_batch, n_threads, 1, pool);
    if (!ctx) {
        tern_threadpool_free(pool);
        return out;
    }
    std::vector<tern_token> p = prompt;
    const int nv = tern_model_n_vocab(m);
    if (tern_decode(ctx, tern_batch_get_one(p.data(), (int) p.size())) != TERN_OK) {
        CHECK_MSG(false, "decode: %s", tern_last_error());
        tern_context_free(ctx);
        return out;
    }
    for (size_t i = 0; i < p.size(); i++) {
        const float * l = tern_get_logits_ith(ctx, (int) i);
        out.insert(out.end(), l, l + nv);
    }
    for (int k = 0; k < 8; k++) {
        const float * l = tern_get_logits_ith(ctx, -1);
        tern_token t = 0;
        for (int j = 1; j < nv; j++) if (l[j] > l[t]) t = j;
        if (tern_decode(ctx, tern_batch_get_one(&t, 1)) != TERN_OK) { CHECK(false); break; }
        l = tern_get_logits_ith(ctx, -1);
        out.insert(out.end(), l, l + nv);
    }
    tern_context_free(ctx);
    tern_threadpool_free(pool);
    return out;
}

static void test_threads_and_batches(const char * name) {
    tern_model * m = load(name);
    if (!m) return;
    std::vector<tern_token> p = prompt_tokens(m, "The little dog was very happy because");
    std::vector<float> base = run(m, p, 1, 64);
    CHECK(!base.empty());
    const int threads[] = { 2, 3, 8 };
    for (int t : threads) {
        std::vector<float> other = run(m, p, t, 64);
        CHECK_MSG(other.size() == base.size() && memcmp(other.data(), base.data(), base.size() * 4) == 0,
                  "%s: logits with %d threads differ from 1 thread", name, t);
    }
    // A prompt longer than n_batch is split into ubatches: the same logits up
    // to summation order (a one-token ubatch takes llama.cpp's single-row
    // order in attention, several tokens its tinyBLAS order), same argmax.
    std::vector<float> split = run(m, p, 2, 3);
    CHECK(split.size() == base.size());
    const int nv = tern_model_n_vocab(m);
    double worst = 0;
    bool same_argmax = true;
    for (size_t r = 0; split.size() == base.size() && r < base.size() / nv; r++) {
        int a = 0, b = 0;
        for (int j = 0; j < nv; j++) {
            worst = std::max(worst, (double) fabsf(split[r * nv + j] - base[r * nv + j]));
            if (split[r * nv + j] > split[r * nv + a]) a = j;
            if (base[r * nv + j] > base[r * nv + b]) b = j;
        }
        same_argmax = same_argmax && a == b;
    }
    CHECK_MSG(worst < 1e-3 && same_argmax, "%s: n_batch 3 vs 64: max diff %g, same argmax %d", name, worst, same_argmax);
    tern_model_free(m);
}

static void test_context_full(void) {
    tern_model * m = load("stories260K.gguf");
    if (!m) return;
    tern_context * ctx = make_ctx(m, 32, 32, 2, 0);
    if (!ctx) { tern_model_free(m); return; }
    std::vector<tern_token> toks(40, 300);
    toks[0] = 1;
    CHECK(tern_decode(ctx, tern_batch_get_one(toks.data(), 20)) == TERN_OK);
    CHECK(tern_kv_cache_seq_pos_max(ctx, 0) == 19);
    tern_status st = tern_decode(ctx, tern_batch_get_one(toks.data(), 20));
    CHECK(st == TERN_ERR_CONTEXT_FULL);
    CHECK(strlen(tern_last_error()) > 0);
    CHECK(tern_kv_cache_seq_pos_max(ctx, 0) == 19);  // nothing of the failed batch kept
    // Still usable: 12 more tokens fit exactly; the logits equal a fresh context's.
    CHECK(tern_decode(ctx, tern_batch_get_one(toks.data() + 20, 12)) == TERN_OK);
    std::vector<float> a(tern_get_logits_ith(ctx, -1), tern_get_logits_ith(ctx, -1) + tern_model_n_vocab(m));
    tern_context * fresh = make_ctx(m, 32, 32, 2, 0);
    CHECK(tern_decode(fresh, tern_batch_get_one(toks.data(), 32)) == TERN_OK);
    const float * b = tern_get_logits_ith(fresh, -1);
    CHECK(b && memcmp(a.data(), b, a.size() * 4) == 0);
    tern_token one = 5;
    CHECK(tern_decode(ctx, tern_batch_get_one(&one, 1)) == TERN_ERR_CONTEXT_FULL);
    // Removing positions frees cells.
    CHECK(tern_kv_cache_seq_rm(ctx, 0, 28, -1) == 1);
    CHECK(tern_kv_cache_seq_pos_max(ctx, 0) == 27);
    CHECK(tern_decode(ctx, tern_batch_get_one(&one, 1)) == TERN_OK);
    tern_context_free(fresh);
    tern_context_free(ctx);
    tern_model_free(m);
}

static int abort_now(void *) { return 1; }

static void test_memory_and_errors(void) {
    tern_model * m = load("TinyStories-656K-Q8_0.gguf");
    if (!m) return;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 64;
    cp.n_batch = 16;
    cp.n_threads = 2;
    const size_t need = tern_context_mem_size(m, &cp);
    CHECK(need > 0);
    // Exactly the size asked for is enough...
    std::vector<unsigned char> buf(need);
    cp.arena = buf.data();
    cp.arena_size = need;
    tern_context * ctx = NULL;
    CHECK_MSG(tern_context_create(m, &cp, &ctx) == TERN_OK, "%s", tern_last_error());
    if (ctx) {
        tern_mem_audit audit;
        tern_context_mem_audit(ctx, &audit);
        // The arena is the caller's buffer less alignment; the persistent parts fill it.
        CHECK_MSG(audit.used <= audit.total && audit.total <= need && audit.total + 128 > need,
                  "used %zu total %zu need %zu", audit.used, audit.total, need);
        CHECK(audit.kv_cache + audit.activations + audit.work + audit.logits + audit.graph + audit.other <= audit.used);
        CHECK(audit.kv_cache + audit.activations + audit.work + audit.logits + audit.graph + audit.other + 128 > need);
        CHECK(audit.kv_cache > 0 && audit.activations > 0 && audit.logits > 0);
        std::vector<tern_token> p = prompt_tokens(m, "Once upon a time");
        CHECK(tern_decode(ctx, tern_batch_get_one(p.data(), (int) p.size())) == TERN_OK);
        tern_token bad = 1 << 20;
        CHECK(tern_decode(ctx, tern_batch_get_one(&bad, 1)) == TERN_ERR_INVALID_ARG);
        tern_context_free(ctx);
    }
    // ...and a smaller one fails cleanly.
    cp.arena_size = need - 4096;
    ctx = NULL;
    CHECK(tern_context_create(m, &cp, &ctx) == TERN_ERR_NO_MEMORY && ctx == NULL);

    // Abort leaves the context as it was.
    cp.arena = NULL;
    cp.arena_size = 0;
    cp.abort_callback = abort_now;
    CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
    if (ctx) {
        std::vector<tern_token> p = prompt_tokens(m, "Once upon a time");
        CHECK(tern_decode(ctx, tern_batch_get_one(p.data(), (int) p.size())) == TERN_ERR_ABORTED);
        CHECK(tern_kv_cache_seq_pos_max(ctx, 0) == -1);
        tern_context_free(ctx);
    }
    tern_model_free(m);
}

static void test_bad_models(void) {
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    // general.architecture "llama" -> "llamb": the value right after the key.
    std::string raw;
    read_file_bytes(g_shared + "/models/stories260K.gguf", raw);
    const std::string key = "general.architecture";
    size_t at = raw.find(key);
    CHECK(at != std::string::npos);
    if (at != std::string::npos) {
        std::string copy = raw;
        copy[at + key.size() + 4 + 8 + 4] = 'b';  // key, u32 type, u64 length, "llam|a"
        tern_status st = tern_model_load_blob(copy.data(), copy.size(), &mp, &m);
        CHECK_MSG(st == TERN_ERR_UNSUPPORTED && strstr(tern_last_error(), "llamb"), "%d %s", st, tern_last_error());
    }
    // A required tensor renamed away.
    std::string missing = raw;
    size_t t = missing.find("output_norm.weight");
    CHECK(t != std::string::npos);
    if (t != std::string::npos) {
        missing[t + 10] = 'X';
        tern_status st = tern_model_load_blob(missing.data(), missing.size(), &mp, &m);
        CHECK_MSG(st == TERN_ERR_FORMAT && strstr(tern_last_error(), "output_norm.weight"), "%d %s", st,
                  tern_last_error());
    }
    // A file that does not exist.
    CHECK(tern_model_load_file("/nonexistent/model.gguf", &mp, &m) == TERN_ERR_IO);
}

// tern_context_mem_size over a grid of small shapes (where the planner's
// temporary scratch, not the final buffers, sets the peak) and models: a
// context in exactly that many bytes is created (at several alignments of the
// caller's buffer) and decodes; one byte less is refused with
// TERN_ERR_NO_MEMORY whatever the alignment.
static void test_mem_size_grid(const char * name) {
    tern_model * m = load(name);
    if (!m) return;
    int created = 0, cases = 0;
    for (uint32_t n_ctx : {1u, 2u, 8u, 33u, 256u}) {
        for (uint32_t n_batch : {1u, 2u, 7u, 64u}) {
            for (int32_t threads : {1, 3}) {
                tern_context_params cp = tern_context_default_params();
                cp.n_ctx = n_ctx;
                cp.n_batch = n_batch;
                cp.n_threads = threads;
                const size_t need = tern_context_mem_size(m, &cp);
                CHECK(need > 0);
                std::vector<unsigned char> buf(need + 64);
                for (size_t shift : {(size_t) 0, (size_t) 1, (size_t) 63}) {
                    // Different distances to the arena's next 64-byte boundary:
                    // the size needed must not depend on where the buffer lies.
                    unsigned char * at = buf.data() + shift;
                    cp.arena = at;
                    cp.arena_size = need;
                    tern_context * ctx = NULL;
                    cases++;
                    tern_status st = tern_context_create(m, &cp, &ctx);
                    CHECK_MSG(st == TERN_OK, "%s n_ctx %u n_batch %u threads %d shift %zu: %s", name, n_ctx, n_batch,
                              threads, shift, tern_last_error());
                    if (ctx) {
                        created++;
                        tern_token t = 1;
                        CHECK(tern_decode(ctx, tern_batch_get_one(&t, 1)) == TERN_OK);
                        tern_context_free(ctx);
                    }
                    cp.arena_size = need - 1;
                    ctx = NULL;
                    st = tern_context_create(m, &cp, &ctx);
                    CHECK_MSG(st == TERN_ERR_NO_MEMORY && ctx == NULL, "%s n_ctx %u n_batch %u threads %d shift %zu: "
                              "one byte less gave %s", name, n_ctx, n_batch, threads, shift, tern_status_str(st));
                    if (ctx) tern_context_free(ctx);
                }
            }
        }
    }
    printf("mem_size grid %s: %d of %d contexts created in exactly tern_context_mem_size bytes, "
           "one byte less refused\n", name, created, cases);
    tern_model_free(m);
}

int main(void) {
    g_shared = tern_test_shared_dir();
    test_threads_and_batches("stories260K.gguf");
    test_threads_and_batches("TinyStories-656K-Q8_0.gguf");
    test_threads_and_batches("ktest-llama-s08-Q4_K_M.gguf");
    test_threads_and_batches("ktest-qwen2-s08-Q8_0.gguf");
    test_context_full();
    test_memory_and_errors();
    test_mem_size_grid("stories260K.gguf");
    test_mem_size_grid("ktest-qwen2-s08-Q8_0.gguf");
    test_mem_size_grid("TinyStories-656K-Q4_K_M.gguf");
    test_mem_size_grid("ktest-llama-F16.gguf");
    test_bad_models();
    return tern_test_summary();
}
