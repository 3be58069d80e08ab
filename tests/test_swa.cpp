// Sliding-window attention (phi3) on files made at run time from the shared
// llama models (tests/tools/phi3_from_llama.h), checked by the envelope rule
// (tests/envelope.h):
// 1. Window 0: the phi3 rewrites of stories260K and TinyStories-656K-Q8_0
//    against llama.cpp's references for the llama files (both sets): the fused
//    q|k|v and gate|up row views (repacked ones too), NEOX rope on permuted
//    rows and q scaled before attention compute the same network (up to where
//    q meets its F16 rounding: the F16 rule for stories260K).
// 2. Window 12: stories260K-phi3-swa12 against llama.cpp's outputs for that
//    very file (tests/data/phi3, from the peer's `golden`), and the window
//    matters: llama.cpp's greedy text for it differs from the window-0 one.
// 3. Reuse: the same case in a context only 4 cells longer than the prompt:
//    the 32 greedy tokens fit only in cells the window left behind, and come
//    out the same; the window-0 file in that context stops with CONTEXT_FULL.
//
// 4. Units: the window in the mask, which cells may be freed (a cell shared by
//    two sequences only when both have left it behind), and phi3 files that
//    must be refused (no sliding_window key for an unknown shape, no attn_qkv).
//
// test_swa --make DIR writes the phi3 files into DIR (to run `golden` on them).
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string>
#include <vector>
#include "check.h"
#include "envelope.h"
#include "reference.h"
#include "tern.h"
#include "kv/kv_cache.h"
#include "tools/phi3_from_llama.h"

static const uint32_t kWindow = 12;

struct made_file {
    const char * llama;  // in <shared>/models
    const char * phi3;
    uint32_t n_swa;
};
static const made_file kFiles[] = {
    { "stories260K.gguf", "stories260K-phi3.gguf", 0 },
    { "stories260K.gguf", "stories260K-phi3-swa12.gguf", kWindow },
    { "TinyStories-656K-Q8_0.gguf", "TinyStories-656K-Q8_0-phi3.gguf", 0 },
};

static bool make_files(const std::string & shared, const std::string & dir) {
    for (const made_file & f : kFiles) {
        std::string err;
        const bool ok = phi3_from_llama(shared + "/models/" + f.llama, dir + "/" + f.phi3, f.n_swa, &err);
        CHECK_MSG(ok, "%s: %s", f.phi3, err.c_str());
        if (!ok) return false;
    }
    return true;
}

// 1. The window-0 rewrites compute the llama network.
static void check_no_window(const std::string & shared, const std::string & dir) {
    const struct { const char * stem; const char * phi3; } cases[] = {
        { "stories260K.0", "stories260K-phi3.gguf" },
        { "stories260K.1", "stories260K-phi3.gguf" },
        { "TinyStories-656K-Q8_0.0", "TinyStories-656K-Q8_0-phi3.gguf" },
        { "TinyStories-656K-Q8_0.1", "TinyStories-656K-Q8_0-phi3.gguf" },
    };
    for (const char * set : {"reference", "reference-avx512"}) {
        for (const auto & c : cases) {
            reference_case rc;
            CHECK_MSG(reference_load(shared + "/" + set, c.stem, rc), "%s/%s: cannot read the reference", set, c.stem);
            if (rc.n_vocab == 0) continue;
            // phi3 rounds q to F16 after its 1/sqrt(head size) scale, llama before it
            // (stories260K: 1/sqrt(8), no power of 2), so the F32 model moves like an
            // F16 one: llama.cpp's own llama and phi3 files differ by 0.011 in a
            // logit on the tests/data/phi3 prompt. The F16 rule (KL) holds.
            envelope_rule rule = envelope_rule_for(rc.model);
            if (rule.f32_model) {
                rule.f32_model = false;
                rule.f16_model = true;
            }
            envelope_check(rc, std::string(set) + "/" + c.stem + " as phi3", dir + "/" + c.phi3, rule, envelope_run());
        }
    }
}

// 2 and 3.
static void check_window(const std::string & data, const std::string & dir) {
    reference_case swa, full;
    CHECK_MSG(reference_load(data, "stories260K-phi3-swa12.0", swa), "%s: cannot read stories260K-phi3-swa12.0", data.c_str());
    CHECK_MSG(reference_load(data, "stories260K-phi3.0", full), "%s: cannot read stories260K-phi3.0", data.c_str());
    if (swa.n_vocab == 0 || full.n_vocab == 0) return;
    CHECK(swa.prompt == full.prompt);
    CHECK_MSG(swa.prompt_tokens.size() > 2 * kWindow, "the prompt (%zu tokens) must outgrow the window", swa.prompt_tokens.size());
    CHECK_MSG(swa.greedy_tokens != full.greedy_tokens, "llama.cpp's greedy text is the same with and without the window: the case tests nothing");

    std::vector<int> with_window, without;
    envelope_run run;
    run.greedy_out = &with_window;
    envelope_check(swa, "stories260K-phi3-swa12.0", dir + "/stories260K-phi3-swa12.gguf", envelope_rule_for(swa.model), run);
    run.greedy_out = &without;
    envelope_check(full, "stories260K-phi3.0", dir + "/stories260K-phi3.gguf", envelope_rule_for(full.model), run);
    CHECK(with_window != without);

    // Reuse: 4 cells more than the prompt, and a window of 12 < 4 + 12.
    envelope_run small;
    small.n_ctx = (uint32_t) swa.prompt_tokens.size() + 4;
    envelope_check(swa, "stories260K-phi3-swa12.0, n_ctx = prompt + 4", dir + "/stories260K-phi3-swa12.gguf", envelope_rule_for(swa.model), small);

    // Without a window nothing may be reused: the fifth generated token finds the cache full.
    tern_model * m = NULL;
    tern_model_params mp = tern_model_default_params();
    if (tern_model_load_file((dir + "/stories260K-phi3.gguf").c_str(), &mp, &m) != TERN_OK) {
        CHECK_MSG(false, "load: %s", tern_last_error());
        return;
    }
    CHECK(tern_model_n_swa(m) == 0);
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = small.n_ctx;
    tern_context * ctx = NULL;
    CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
    std::vector<tern_token> toks(full.prompt_tokens.begin(), full.prompt_tokens.end());
    tern_status st = ctx ? tern_decode(ctx, tern_batch_get_one(toks.data(), (int32_t) toks.size())) : TERN_ERR_INTERNAL;
    CHECK(st == TERN_OK);
    int generated = 0;
    while (st == TERN_OK && generated < 8) {
        tern_token t = full.greedy_tokens[(size_t) generated];
        st = tern_decode(ctx, tern_batch_get_one(&t, 1));
        if (st == TERN_OK) generated++;
    }
    CHECK_MSG(st == TERN_ERR_CONTEXT_FULL && generated == 4, "window 0, n_ctx %u: %d tokens, then status %d", cp.n_ctx, generated, (int) st);
    tern_context_free(ctx);
    tern_model_free(m);

    // The window's own model reports it.
    if (tern_model_load_file((dir + "/stories260K-phi3-swa12.gguf").c_str(), &mp, &m) == TERN_OK) {
        CHECK(tern_model_n_swa(m) == (int32_t) kWindow);
        tern_model_free(m);
    }
}

// 4. The cache's side of the window on a 1-layer cache of 8 cells.
static void check_cache_units() {
    const uint32_t n_cells = 8;
    std::vector<uint8_t> buf(arena_buffer_size(kv_cache_mem_size(n_cells, 1)));
    tern_arena arena;
    arena_init(&arena, buf.data(), buf.size());
    kv_cache kv;
    CHECK(kv_cache_init(&kv, &arena, n_cells, 1, 32, 32, TERN_TYPE_F16, TERN_TYPE_F16) == TERN_OK);
    // Cells 0..5: positions 0..5; 0..2 shared by sequences 0 and 1, 3..5 sequence 0 only.
    for (uint32_t i = 0; i < 6; i++) {
        kv.cells[i].pos = (tern_pos) i;
        kv.cells[i].seq_mask = i < 3 ? 3 : 1;
    }
    kv.used = 6;
    // Mask of a sequence-0 token at position 6 with a window of 4: positions 3..6 visible.
    float mask[8];
    const tern_pos pos = 6;
    const uint64_t seq0 = 1;
    int32_t bound = -1;
    kv_cache_fill_mask(&kv, 8, 8, 1, &pos, &seq0, 4, mask, &bound);
    for (uint32_t j = 0; j < 8; j++) {
        const bool visible = j >= 3 && j < 6;
        CHECK_MSG((mask[j] == 0.0f) == visible, "window mask cell %u: %g", j, mask[j]);
    }
    CHECK(bound == 6);  // one past the last visible cell
    kv_cache_fill_mask(&kv, 8, 8, 1, &pos, &seq0, 0, mask, &bound);  // no window: all six
    for (uint32_t j = 0; j < 8; j++) CHECK((mask[j] == 0.0f) == (j < 6));
    CHECK(bound == 6);

    // Sequence 0 goes on at 6, sequence 1 at 3: window 4 -> cells 0..2 are still
    // visible to sequence 1 (3 - 0 < 4), nothing may go.
    tern_pos next[TERN_MAX_SEQ];
    for (uint32_t s = 0; s < TERN_MAX_SEQ; s++) next[s] = 0;
    next[0] = 6;
    next[1] = 3;
    CHECK(kv_cache_free_outside_window(&kv, 4, 8, next) == 0);
    // Sequence 1 at 5: cells 0 and 1 (5 - pos >= 4) go, at most the 1 asked for first.
    next[1] = 5;
    CHECK(kv_cache_free_outside_window(&kv, 4, 1, next) == 1);
    CHECK(kv.cells[0].seq_mask == 0 && kv.cells[1].seq_mask == 3 && kv.used == 5);
    CHECK(kv_cache_free_outside_window(&kv, 4, 8, next) == 1);
    CHECK(kv.cells[1].seq_mask == 0 && kv.cells[2].seq_mask == 3 && kv.used == 4);
}

// 4. phi3 files that must be refused, with the reason.
static void check_refused(const std::string & dir) {
    struct { gguf_edit edit; const char * why; } cases[] = {
        { {{}, {"phi3.attention.sliding_window"}, {}}, "phi3.attention.sliding_window" },
        { {{}, {}, {"blk.0.attn_qkv.weight"}}, "blk.0.attn_qkv.weight" },
    };
    for (auto & c : cases) {
        const std::string path = dir + "/refused.gguf";
        std::string err;
        CHECK_MSG(gguf_rewrite(dir + "/stories260K-phi3-swa12.gguf", path, c.edit, &err), "%s", err.c_str());
        tern_model * m = NULL;
        tern_model_params mp = tern_model_default_params();
        const tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
        CHECK_MSG(st == TERN_ERR_FORMAT && strstr(tern_last_error(), c.why), "without %s: status %d, '%s'", c.why, (int) st,
                  tern_last_error());
        if (m) tern_model_free(m);
        unlink(path.c_str());
    }
}

int main(int argc, char ** argv) {
    const std::string shared = tern_test_shared_dir();
    if (argc == 3 && std::string(argv[1]) == "--make") return make_files(shared, argv[2]) ? 0 : 1;
    const char * src = getenv("TERN_SOURCE_DIR");
    CHECK_MSG(src != NULL, "TERN_SOURCE_DIR is not set");
    if (!src) return tern_test_summary();
    char tmp[] = "/tmp/tern_swa_XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    const std::string dir = tmp;
    if (make_files(shared, dir)) {
        check_no_window(shared, dir);
        check_window(std::string(src) + "/tests/data/phi3", dir);
        check_refused(dir);
    }
    check_cache_units();
    for (const made_file & f : kFiles) unlink((dir + "/" + f.phi3).c_str());
    rmdir(tmp);
    return tern_test_summary();
}
