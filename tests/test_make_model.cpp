// tern-make-model as a user runs it: the tiny shapes load with
// tern_model_load_file and decode to finite logits; the tensors carry
// llama.cpp's names, shapes and types (K-quant fallbacks, Q6_K output, qwen2
// biases and tied embeddings); the tokenizer is the vocabulary file's; the
// file is the same for any thread count; bad options fail with a message.
#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <string>
#include <vector>
#include "gguf_test_util.h"
#include "tern.h"

static std::string g_tool, g_shared;

// Run the tool with `args` (the default vocabulary comes from TERN_SHARED_DIR,
// which ctest sets); returns its exit status, stdout and stderr in `out`.
static int make(const std::string & args, std::string & out) {
    out.clear();
    FILE * p = popen((g_tool + " " + args + " 2>&1").c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static tern_model * load(const std::string & path) {
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
    CHECK_MSG(st == TERN_OK, "%s: %s", path.c_str(), tern_last_error());
    return st == TERN_OK ? m : NULL;
}

static bool tensor_type(tern_model * m, const char * name, tern_type * type) {
    for (int32_t i = 0; i < tern_model_n_tensors(m); i++) {
        tern_tensor_info ti;
        if (tern_model_tensor_info(m, i, &ti) == TERN_OK && strcmp(ti.name, name) == 0) {
            *type = ti.type;
            return true;
        }
    }
    return false;
}

static bool has_type(tern_model * m, const char * name, tern_type want) {
    tern_type t = TERN_TYPE_COUNT;
    return tensor_type(m, name, &t) && t == want;
}

// Prompt then 4 greedy steps; every logit finite and the logits not all equal.
static void check_decodes(tern_model * m, const char * what) {
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 64;
    cp.n_batch = 16;
    cp.n_threads = 2;
    tern_context * ctx = NULL;
    CHECK_MSG(tern_context_create(m, &cp, &ctx) == TERN_OK, "%s: context: %s", what, tern_last_error());
    if (!ctx) return;
    tern_token toks[16];
    const char * text = "Once upon a time";
    int n = tern_tokenize(m, text, (int) strlen(text), toks, 16, 1, 0);
    CHECK(n > 0);
    const int nv = tern_model_n_vocab(m);
    bool ok = n > 0 && tern_decode(ctx, tern_batch_get_one(toks, n)) == TERN_OK;
    for (int step = 0; ok && step < 4; step++) {
        const float * l = tern_get_logits_ith(ctx, -1);
        bool finite = l != NULL, varied = false;
        tern_token best = 0;
        for (int j = 0; finite && j < nv; j++) {
            finite = isfinite(l[j]);
            varied = varied || l[j] != l[0];
            if (l[j] > l[best]) best = j;
        }
        CHECK_MSG(finite && varied, "%s: step %d: finite %d, varied %d", what, step, finite, varied);
        ok = tern_decode(ctx, tern_batch_get_one(&best, 1)) == TERN_OK;
    }
    CHECK_MSG(ok, "%s: decode: %s", what, tern_last_error());
    tern_context_free(ctx);
}

static void test_tiny_llama(const temp_dir & dir) {
    const char * types[] = { "F32", "F16", "Q8_0", "Q4_0", "Q4_K", "Q6_K" };
    for (const char * type : types) {
        const std::string path = dir.file(std::string("tiny-") + type + ".gguf");
        std::string out;
        int rc = make("--shape tiny --type " + std::string(type) + " --threads 2 -o " + path, out);
        CHECK_MSG(rc == 0, "tiny %s: exit %d\n%s", type, rc, out.c_str());
        tern_model * m = rc == 0 ? load(path) : NULL;
        if (!m) continue;
        CHECK(strcmp(tern_model_arch(m), "llama") == 0);
        CHECK(tern_model_n_vocab(m) == 32000 && tern_model_n_embd(m) == 64 && tern_model_n_layer(m) == 2);
        CHECK(tern_model_n_head(m) == 4 && tern_model_n_head_kv(m) == 2 && tern_model_n_ff(m) == 128);
        CHECK(tern_model_n_ctx_train(m) == 2048);
        CHECK(has_type(m, "blk.1.attn_norm.weight", TERN_TYPE_F32) && has_type(m, "output_norm.weight", TERN_TYPE_F32));
        char buf[64];
        CHECK(tern_model_meta_val_str(m, "tokenizer.ggml.model", buf, sizeof(buf)) > 0 && strcmp(buf, "llama") == 0);
        check_decodes(m, type);
        tern_model_free(m);
    }
    // Rows of 64 and 128 are no whole K-quant blocks: llama.cpp's fallbacks;
    // the output of a K-quant model is Q6_K, here its fallback Q8_0.
    tern_model * m = load(dir.file("tiny-Q4_K.gguf"));
    if (m) {
        CHECK(has_type(m, "token_embd.weight", TERN_TYPE_Q5_0) && has_type(m, "blk.0.ffn_down.weight", TERN_TYPE_Q5_0));
        CHECK(has_type(m, "output.weight", TERN_TYPE_Q8_0));
        tern_model_free(m);
    }
    m = load(dir.file("tiny-Q4_0.gguf"));
    if (m) {
        CHECK(has_type(m, "blk.0.attn_q.weight", TERN_TYPE_Q4_0) && has_type(m, "output.weight", TERN_TYPE_Q4_0));
        tern_model_free(m);
    }
}

static void test_tiny_qwen2(const temp_dir & dir) {
    const std::string path = dir.file("tiny-qwen2.gguf");
    std::string out;
    int rc = make("--shape tiny-qwen2 --type Q8_0 -o " + path, out);
    CHECK_MSG(rc == 0, "tiny-qwen2: exit %d\n%s", rc, out.c_str());
    tern_model * m = rc == 0 ? load(path) : NULL;
    if (!m) return;
    CHECK(strcmp(tern_model_arch(m), "qwen2") == 0 && tern_model_n_vocab(m) == 151936);
    tern_type t;
    CHECK(!tensor_type(m, "output.weight", &t));  // tied embeddings
    CHECK(has_type(m, "blk.1.attn_k.bias", TERN_TYPE_F32) && has_type(m, "blk.1.attn_v.weight", TERN_TYPE_Q8_0));
    CHECK(tern_model_rope_freq_base(m) == 1000000.0f);
    check_decodes(m, "tiny-qwen2");
    tern_model_free(m);
}

static void test_reproducible(const temp_dir & dir) {
    std::string out;
    CHECK(make("--shape tiny --type Q4_K --threads 1 -o " + dir.file("a.gguf"), out) == 0);
    CHECK(make("--shape tiny --type Q4_K --threads 2 -o " + dir.file("b.gguf"), out) == 0);
    CHECK(make("--shape tiny --type Q4_K --seed 7 -o " + dir.file("c.gguf"), out) == 0);
    std::vector<uint8_t> a = read_bytes(dir.file("a.gguf")), b = read_bytes(dir.file("b.gguf"));
    std::vector<uint8_t> c = read_bytes(dir.file("c.gguf"));
    CHECK(!a.empty() && a == b);
    CHECK(a.size() == c.size() && a != c);
}

static void test_bad_options(const temp_dir & dir) {
    std::string out;
    CHECK(make("--shape tiny --type Q9_9 -o " + dir.file("x.gguf"), out) != 0 && out.find("Q9_9") != std::string::npos);
    CHECK(make("--shape huge -o " + dir.file("x.gguf"), out) != 0 && out.find("huge") != std::string::npos);
    CHECK(make("--shape tiny", out) != 0);  // no -o
    CHECK(make("--shape tiny --vocab /nonexistent.gguf -o " + dir.file("x.gguf"), out) != 0 &&
          out.find("/nonexistent.gguf") != std::string::npos);
    CHECK(write_bytes(dir.file("not.gguf"), std::vector<uint8_t>(64, 'x')));
    CHECK(make("--shape tiny --vocab " + dir.file("not.gguf") + " -o " + dir.file("y.gguf"), out) != 0 &&
          out.find("not.gguf") != std::string::npos);
    CHECK(make("--shape tiny --vocab " + g_shared + "/models/stories260K.gguf -o " + dir.file("z.gguf"), out) == 0);
    tern_model * m = load(dir.file("z.gguf"));
    if (m) {
        CHECK(tern_model_n_vocab(m) == 512);  // n_vocab follows the vocabulary
        tern_model_free(m);
    }
}

int main(void) {
    const char * bin = getenv("TERN_BIN_DIR");
    if (!bin) { fprintf(stderr, "TERN_BIN_DIR is not set\n"); return 2; }
    g_tool = std::string(bin) + "/tern-make-model";
    g_shared = tern_test_shared_dir();
    temp_dir dir;
    test_tiny_llama(dir);
    test_tiny_qwen2(dir);
    test_reproducible(dir);
    test_bad_options(dir);
    return tern_test_summary();
}
