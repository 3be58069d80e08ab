// Weights repacked at load (model/repack.h): for every shared model whose
// types the kernel set in use repacks, the mmap (private, copy-on-write) and
// read paths with repacking give the same prompt logits as the same kernel
// set without it (repack = 0) and as the blob path (never repacked): the
// repacked tiles keep the scalar reference's float steps, so bit for bit;
// the file on disk is unchanged afterwards; a second model from the same
// file loads and agrees.
#include <stdio.h>
#include <string.h>
#include <string>
#include <vector>
#include "check.h"
#include "tern.h"

static std::string g_shared;

static bool read_file(const std::string & path, std::vector<unsigned char> & out) {
    FILE * f = fopen(path.c_str(), "rb");
    if (!f) return false;
    unsigned char buf[1 << 16];
    size_t n;
    out.clear();
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.insert(out.end(), buf, buf + n);
    fclose(f);
    return true;
}

// Prompt logits of a fixed prompt, all positions.
static std::vector<float> logits_of(tern_model * m) {
    std::vector<float> out;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 64;
    cp.n_batch = 64;
    cp.n_threads = 2;
    cp.logits_all = 1;
    tern_context * ctx = NULL;
    if (tern_context_create(m, &cp, &ctx) != TERN_OK) {
        CHECK_MSG(false, "context: %s", tern_last_error());
        return out;
    }
    tern_token toks[32];
    const char * text = "The little dog was very happy because";
    const int n = tern_tokenize(m, text, (int) strlen(text), toks, 32, 1, 0);
    CHECK(n > 2);
    if (n > 2 && tern_decode(ctx, tern_batch_get_one(toks, n)) == TERN_OK) {
        const int nv = tern_model_n_vocab(m);
        for (int i = 0; i < n; i++) {
            const float * l = tern_get_logits_ith(ctx, i);
            out.insert(out.end(), l, l + nv);
        }
    }
    tern_context_free(ctx);
    return out;
}

static tern_model * load(const std::string & path, int use_mmap, int repack) {
    tern_model_params mp = tern_model_default_params();
    mp.use_mmap = use_mmap;
    mp.repack = repack;
    tern_model * m = NULL;
    CHECK_MSG(tern_model_load_file(path.c_str(), &mp, &m) == TERN_OK, "%s: %s", path.c_str(), tern_last_error());
    return m;
}

static void check_model(const std::string & name) {
    const std::string path = g_shared + "/models/" + name;
    std::vector<unsigned char> before, after;
    CHECK(read_file(path, before));

    tern_model * plain = load(path, 1, 0);
    if (!plain) return;
    const std::vector<float> want = logits_of(plain);
    CHECK(!want.empty());

    tern_model * mapped = load(path, 1, 1);
    tern_model * mapped2 = load(path, 1, 1);  // a second private mapping of the same file
    tern_model * read = load(path, 0, 1);
    tern_model_params bp = tern_model_default_params();
    tern_model * blob = NULL;
    CHECK(tern_model_load_blob(before.data(), before.size(), &bp, &blob) == TERN_OK);
    int same = 0;
    for (tern_model * m : {mapped, mapped2, read, blob}) {
        if (!m) continue;
        const std::vector<float> got = logits_of(m);
        const bool eq = got.size() == want.size() && memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0;
        CHECK_MSG(eq, "%s (%s, repacked): logits differ from the file layout's", name.c_str(), tern_model_load_path(m));
        same += eq;
    }
    CHECK(read_file(path, after));
    CHECK_MSG(before == after, "%s: the file changed on disk", name.c_str());
    printf("%-32s kernels %s: %d of 4 repacking loads bit-identical to repack = 0\n", name.c_str(), tern_kernels_name(), same);
    for (tern_model * m : {plain, mapped, mapped2, read, blob}) tern_model_free(m);
}

int main(void) {
    g_shared = tern_test_shared_dir();
    for (const char * name : {"ktest-llama-Q4_0.gguf", "ktest-llama-Q8_0.gguf", "TinyStories-656K-Q8_0.gguf",
                              "ktest-llama-Q5_0.gguf", "ktest-llama-IQ4_NL.gguf", "ktest-llama-Q4_1.gguf", "ktest-llama-Q5_1.gguf",
                              "TinyStories-656K-Q4_0.gguf", "ktest-qwen2-Q8_0.gguf", "ktest-llama-Q4_K_M.gguf",
                              "ktest-llama-Q5_K_M.gguf", "ktest-llama-Q6_K.gguf", "ktest-llama-Q3_K_M.gguf"}) {
        check_model(name);
    }
    return tern_test_summary();
}
