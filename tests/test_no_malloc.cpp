// After tern_context_create, decode and sampling never touch the heap, nor do
// the KV cache's sequence operations, the K-shift, defragmentation and state
// save/restore into a caller buffer, tokenizing into caller scratch
// (tern_tokenize_in), and sampling under a grammar (its checks, its walks over
// the vocabulary, its resets): this test interposes
// malloc/calloc/realloc/free (forwarding to glibc's) and counts the calls.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

// devices: the model fully placed on them (builds with the sim device: its
// worker thread, queue, captures and copies take no heap after creation either).
static void run_model(const char * name, int n_threads, const char * devices = NULL) {
    std::string path = std::string(tern_test_shared_dir()) + "/models/" + name;
    tern_model_params mp = tern_model_default_params();
    mp.devices = devices;
    mp.n_gpu_layers = devices ? -1 : 0;
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
    CHECK_MSG(g_calls == 0, "%s (%d threads%s%s): %ld heap calls during decode", name, n_threads, devices ? ", " : "",
              devices ? devices : "", (long) g_calls);
    printf("%s, %d threads%s%s: %ld heap calls in 64 decode steps, sequence ops, K-shift, defrag, state io\n", name,
           n_threads, devices ? ", on " : "", devices ? devices : "", (long) g_calls);
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
}

// Greedy tokens of the standard path (heap) for comparison.
static std::vector<tern_token> greedy_heap(const std::string & path, const char * text, int n) {
    std::vector<tern_token> out;
    tern_model * m = NULL;
    if (tern_model_load_file(path.c_str(), NULL, &m) != TERN_OK) return out;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 128;
    tern_context * ctx = NULL;
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = 0.0f;
    tern_sampler * smpl = NULL;
    if (tern_context_create(m, &cp, &ctx) == TERN_OK && tern_sampler_create(m, &sp, NULL, 0, &smpl) == TERN_OK) {
        tern_token toks[64];
        int32_t n_tok = tern_tokenize(m, text, (int32_t) strlen(text), toks, 64, 1, 0);
        tern_status st = n_tok > 0 ? tern_decode(ctx, tern_batch_get_one(toks, n_tok)) : TERN_ERR_INTERNAL;
        for (int k = 0; k < n && st == TERN_OK; k++) {
            tern_token t = tern_sampler_sample(smpl, ctx, -1);
            out.push_back(t);
            st = tern_decode(ctx, tern_batch_get_one(&t, 1));
        }
    }
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
    return out;
}

static std::vector<uint8_t> read_all(const std::string & path) {
    std::vector<uint8_t> bytes;
    FILE * f = fopen(path.c_str(), "rb");
    if (!f) return bytes;
    uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    fclose(f);
    return bytes;
}

// The firmware shape, counted end to end: the model a blob in caller memory,
// its tables in caller memory, the context, sampler and tokenizer scratch in
// caller memory, one thread. Every call from sizing to freeing is counted.
static void run_end_to_end(const char * name) {
    const std::string path = std::string(tern_test_shared_dir()) + "/models/" + name;
    const std::vector<uint8_t> file = read_all(path);
    CHECK_MSG(!file.empty(), "cannot read %s", path.c_str());
    if (file.empty()) return;
    const char * text = "Once upon a time, there was a little girl.";
    const std::vector<tern_token> want = greedy_heap(path, text, 24);
    // All memory the library will use, obtained before counting.
    std::vector<uint8_t> blob_mem(file.size() + 64), model_mem(1 << 22), ctx_mem(1 << 24), smpl_mem(1 << 20),
        tok_mem(1 << 16);
    uint8_t * blob = blob_mem.data() + (64 - (uintptr_t) blob_mem.data() % 64) % 64;
    memcpy(blob, file.data(), file.size());
    std::vector<tern_token> got;
    got.reserve(64);

    g_calls = 0;
    g_counting = 1;
    tern_model_params mp = tern_model_default_params();
    const size_t model_bytes = tern_model_mem_size_blob(blob, file.size(), &mp);
    mp.arena = model_mem.data();
    mp.arena_size = model_bytes;
    tern_model * m = NULL;
    tern_status st = model_bytes > 0 && model_bytes <= model_mem.size() ? tern_model_load_blob(blob, file.size(), &mp, &m)
                                                                        : TERN_ERR_NO_MEMORY;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 128;
    cp.n_batch = 32;
    cp.n_threads = 1;
    const size_t ctx_bytes = st == TERN_OK ? tern_context_mem_size(m, &cp) : 0;
    cp.arena = ctx_mem.data();
    cp.arena_size = ctx_bytes;
    tern_context * ctx = NULL;
    if (st == TERN_OK) st = ctx_bytes > 0 && ctx_bytes <= ctx_mem.size() ? tern_context_create(m, &cp, &ctx) : TERN_ERR_NO_MEMORY;
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = 0.0f;
    const size_t smpl_bytes = st == TERN_OK ? tern_sampler_mem_size(m, &sp) : 0;
    tern_sampler * smpl = NULL;
    if (st == TERN_OK) st = smpl_bytes <= smpl_mem.size() ? tern_sampler_create(m, &sp, smpl_mem.data(), smpl_bytes, &smpl) : TERN_ERR_NO_MEMORY;
    tern_token toks[64];
    int32_t n_tok = 0;
    if (st == TERN_OK) {
        const size_t need = tern_tokenize_scratch_size(m, (int32_t) strlen(text));
        n_tok = need <= tok_mem.size() ? tern_tokenize_in(m, text, (int32_t) strlen(text), toks, 64, 1, 0, tok_mem.data(), need) : -1;
        if (n_tok <= 0) st = TERN_ERR_INTERNAL;
    }
    if (st == TERN_OK) st = tern_decode(ctx, tern_batch_get_one(toks, n_tok));
    for (int k = 0; k < 24 && st == TERN_OK; k++) {
        tern_token t = tern_sampler_sample(smpl, ctx, -1);
        got.push_back(t);
        st = tern_decode(ctx, tern_batch_get_one(&t, 1));
    }
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
    g_counting = 0;
    CHECK_MSG(st == TERN_OK, "%s end to end: %s", name, tern_last_error());
    CHECK_MSG(got == want && !want.empty(), "%s: caller-memory greedy tokens differ from the heap path's", name);
    CHECK_MSG(g_calls == 0, "%s: %ld heap calls from model sizing to free", name, (long) g_calls);
    printf("%s: blob + caller memory, sizing to free (load %zu B, context %zu B, sampler %zu B, %d tokens): "
           "%ld heap calls\n", name, model_bytes, ctx_bytes, smpl_bytes, (int) got.size(), (long) g_calls);

    // Exact: one byte less is refused at every alignment, the size itself loads.
    for (size_t shift = 0; shift < 3 && model_bytes > 0; shift++) {
        static const size_t kShifts[3] = {0, 1, 63};
        tern_model_params q = tern_model_default_params();
        q.arena = model_mem.data() + (64 - (uintptr_t) model_mem.data() % 64) % 64 + kShifts[shift];
        q.arena_size = model_bytes - 1;
        tern_model * bad = NULL;
        CHECK(tern_model_load_blob(blob, file.size(), &q, &bad) == TERN_ERR_NO_MEMORY && bad == NULL);
        q.arena_size = model_bytes;
        CHECK_MSG(tern_model_load_blob(blob, file.size(), &q, &bad) == TERN_OK, "%s", tern_last_error());
        tern_model_free(bad);
    }

    // Files in caller memory: mapped (tables only) and read (the file's bytes too).
    for (int use_mmap = 0; use_mmap < 2; use_mmap++) {
        tern_model_params q = tern_model_default_params();
        q.use_mmap = use_mmap;
        g_calls = 0;
        g_counting = 1;
        const size_t bytes = tern_model_mem_size_file(path.c_str(), &q);
        g_counting = 0;
        CHECK_MSG(g_calls == 0 || !use_mmap, "mem_size_file (mmap) made %ld heap calls", (long) g_calls);
        std::vector<uint8_t> mem(bytes);
        q.arena = mem.data();
        q.arena_size = bytes - 1;
        tern_model * fm = NULL;
        CHECK(bytes > 0 && tern_model_load_file(path.c_str(), &q, &fm) == TERN_ERR_NO_MEMORY && fm == NULL);
        q.arena_size = bytes;
        g_calls = 0;
        g_counting = 1;
        st = tern_model_load_file(path.c_str(), &q, &fm);
        g_counting = 0;
        CHECK_MSG(st == TERN_OK, "%s file in caller memory (mmap %d): %s", name, use_mmap, tern_last_error());
        CHECK_MSG(g_calls == 0, "%s file load in caller memory (mmap %d): %ld heap calls", name, use_mmap, (long) g_calls);
        CHECK(!use_mmap ? bytes > file.size() : bytes < file.size());
        tern_model_free(fm);
    }
}

// A constrained decode: the grammar (from a JSON schema) is set up before
// counting; 64 sampled steps with their grammar checks and vocabulary walks,
// then a reset and 16 more, take no heap.
static void run_grammar(const char * name, float temp, bool json) {
    std::string path = std::string(tern_test_shared_dir()) + "/models/" + name;
    tern_model * m = NULL;
    CHECK_MSG(tern_model_load_file(path.c_str(), NULL, &m) == TERN_OK, "%s", tern_last_error());
    if (!m) return;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 128;
    cp.n_threads = 2;
    tern_context * ctx = NULL;
    CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = temp;
    sp.seed = 3;
    tern_sampler * smpl = NULL;
    CHECK(tern_sampler_create(m, &sp, NULL, 0, &smpl) == TERN_OK);
    const char * schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
                          "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}},\"required\":[\"name\"]}";
    std::vector<char> g(8192);
    // TinyStories-656K's vocabulary has no '{': words for it.
    if (!TERN_WITH_JSON_SCHEMA) json = false;
    if (json) CHECK(tern_json_schema_to_grammar(schema, 0, g.data(), (int32_t) g.size()) > 0);
    else snprintf(g.data(), g.size(), "root ::= ([A-Za-z]+ [ ,])* [A-Za-z]+ \".\"");
    CHECK_MSG(tern_sampler_init_grammar(smpl, m, g.data(), NULL, NULL, 0) == TERN_OK, "%s", tern_last_error());
    CHECK(tern_sampler_grammar_reset(smpl, 64) == TERN_OK);
    tern_token prompt[4] = { 1, 400, 401, 402 };
    if (!ctx || !smpl) return;
    g_calls = 0;
    g_counting = 1;
    tern_status st = tern_decode(ctx, tern_batch_get_one(prompt, 4));
    int steps = 0, failed = 0;
    for (int round = 0; round < 2 && st == TERN_OK; round++) {
        const int n = round == 0 ? 64 : 16;
        for (int k = 0; k < n && st == TERN_OK; k++, steps++) {
            tern_token t = tern_sampler_sample(smpl, ctx, -1);
            if (t < 0) { failed++; break; }
            if (tern_token_is_eog(m, t) || tern_sampler_grammar_state(smpl) == 2) break;
            st = tern_decode(ctx, tern_batch_get_one(&t, 1));
        }
        tern_sampler_reset(smpl);
        tern_sampler_grammar_reset(smpl, 16);
    }
    g_counting = 0;
    CHECK_MSG(st == TERN_OK && failed == 0, "%s: %s", name, tern_last_error());
    CHECK_MSG(g_calls == 0, "%s: %ld heap calls during a constrained decode", name, (long) g_calls);
    printf("%s, grammar, temp %.1f: %ld heap calls in %d constrained steps\n", name, (double) temp, (long) g_calls, steps);
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
}

int main(void) {
    run_end_to_end("stories260K.gguf");
    run_end_to_end("TinyStories-656K-Q8_0.gguf");
    run_model("stories260K.gguf", 1);
    run_model("stories260K.gguf", 3);
    run_model("TinyStories-656K-Q8_0.gguf", 2);
    run_grammar("stories260K.gguf", 0.0f, true);
    run_grammar("stories260K.gguf", 1.0f, true);
    run_grammar("TinyStories-656K-Q8_0.gguf", 1.0f, false);
#if TERN_WITH_DEVICE_SIM
    run_model("stories260K.gguf", 2, "sim0");
    run_model("TinyStories-656K-Q8_0.gguf", 2, "sim0:refuse=ATTN,sim1");
#endif
    return tern_test_summary();
}
