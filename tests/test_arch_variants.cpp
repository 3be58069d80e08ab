// Newer llama-family layouts on files made at run time from the shared trained
// TinyStories-656K files (tests/tools/gguf_extend.h), checked by the envelope
// rule (tests/envelope.h) against llama.cpp's outputs for those very files
// (tests/data/<variant>/, README there says how they were made):
//
//   llama3   Llama 3.1/3.2's layout: rope_freqs.weight, the llama3 RoPE
//            frequency factors, and the keys a Llama 3.2 GGUF has beyond the
//            shared file's (gguf_extension_llama3). F32, F16, Q8_0, Q4_K_M.
//   phi3     Phi-3.5-mini's LongRoPE layout (phi35_extension below) on the
//            phi3 rewrite (tests/tools/phi3_from_llama.h): long and short
//            factors, chosen by context, and the attention factor. F32 with
//            either set, Q8_0 with the long one.
//   granite  Granite 3.x's embedding, residual, attention and logit scales
//            (gguf_extension_granite). F32, Q8_0.
//   gemma2   Gemma 2's structure with random weights, 26 layers of width 64
//            (tests/tools/make_random_model.h), a window of 4 on the even
//            layers: F32 and Q8_0, and F32 with a window of 4096 (the window
//            matters). Random weights: greedy tokens up to the first small margin.
//   qwen3    Qwen3's structure with random weights (q/k norms, key_length 32
//            != n_embd / n_head), 8 layers of width 64: F32, Q8_0.
//   smollm3  SmolLM3's structure with random weights, 8 layers of width 128
//            (layers 3 and 7 without RoPE): F32, Q8_0; the same weights as a
//            llama file give the peer other outputs (the skipped RoPE matters).
//   gemma3   Gemma 3's structure with random weights, 12 layers of width 64
//            (layers 5 and 11 global, linear RoPE scaling 8 there; the others
//            windowed, window 4, base 10000): F32, Q8_0, and F32 with a window
//            of 4096 (the window matters).
// llama3, phi3, granite and gemma2 against llama.cpp c392e509 (its envelope);
// qwen3, smollm3 and gemma3, which it predates, against ik_llama.cpp with the
// ik peer rule (tests/envelope.h).
//
// For each: prompt logits at every position and 32 greedy tokens inside the
// envelope; the factors matter (llama.cpp's outputs for the file differ from
// its outputs for the source file on the same prompt, far beyond the rule); a
// saved state restores (the K-shift and sequence cases: test_kv_cache); files
// with bad factors are refused with the reason.
//
// test_arch_variants --make DIR writes the files into DIR (to run `golden` /
// `golden-ik` on them), every architecture's, and the smollm3 weights as llama.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "check.h"
#include "envelope.h"
#include "reference.h"
#include "tern.h"
#include "tools/gguf_extend.h"
#include "tools/phi3_from_llama.h"
#include "tools/make_random_model.h"
#include "model/arch.h"

namespace {

// TinyStories-656K: head size 16, rope base 10000 (its file's keys).
const int kRot = 16;
const float kBase = 10000.0f;

enum variant_kind { LLAMA3, LONGROPE_SHORT, LONGROPE_LONG, GRANITE, GEMMA2, GEMMA2_NO_WINDOW, QWEN3, SMOLLM3, SMOLLM3_AS_LLAMA,
                    GEMMA3, GEMMA3_NO_WINDOW };

bool random_weights(variant_kind k) { return k >= GEMMA2; }
bool ik_peer(variant_kind k) { return k >= QWEN3; }

struct variant {
    variant_kind kind;
    const char * source;  // in <shared>/models
    const char * made;    // written into the test's folder
    const char * data;    // tests/data/<data>: the peer's outputs, <made stem>.1.*
    bool quantized, f16;
};

const variant kVariants[] = {
    { LLAMA3, "TinyStories-656K-F32.gguf", "TinyStories-656K-llama3-F32.gguf", "llama3", false, false },
    { LLAMA3, "TinyStories-656K-F16.gguf", "TinyStories-656K-llama3-F16.gguf", "llama3", false, true },
    { LLAMA3, "TinyStories-656K-Q8_0.gguf", "TinyStories-656K-llama3-Q8_0.gguf", "llama3", true, false },
    { LLAMA3, "TinyStories-656K-Q4_K_M.gguf", "TinyStories-656K-llama3-Q4_K_M.gguf", "llama3", true, false },
    { LONGROPE_SHORT, "TinyStories-656K-F32.gguf", "TinyStories-656K-phi3-longrope-short-F32.gguf", "phi3", false, false },
    { LONGROPE_LONG, "TinyStories-656K-F32.gguf", "TinyStories-656K-phi3-longrope-long-F32.gguf", "phi3", false, false },
    { LONGROPE_LONG, "TinyStories-656K-Q8_0.gguf", "TinyStories-656K-phi3-longrope-long-Q8_0.gguf", "phi3", true, false },
    { GRANITE, "TinyStories-656K-F32.gguf", "TinyStories-656K-granite-F32.gguf", "granite", false, false },
    { GRANITE, "TinyStories-656K-Q8_0.gguf", "TinyStories-656K-granite-Q8_0.gguf", "granite", true, false },
    { GEMMA2, "F32", "gemma2-tiny-F32.gguf", "gemma2", false, false },
    { GEMMA2, "Q8_0", "gemma2-tiny-Q8_0.gguf", "gemma2", true, false },
    { GEMMA2_NO_WINDOW, "F32", "gemma2-tiny-nowindow-F32.gguf", "gemma2", false, false },
    { QWEN3, "F32", "qwen3-tiny-F32.gguf", "qwen3", false, false },
    { QWEN3, "Q8_0", "qwen3-tiny-Q8_0.gguf", "qwen3", true, false },
    { SMOLLM3, "F32", "smollm3-tiny-F32.gguf", "smollm3", false, false },
    { SMOLLM3, "Q8_0", "smollm3-tiny-Q8_0.gguf", "smollm3", true, false },
    { GEMMA3, "F32", "gemma3-tiny-F32.gguf", "gemma3", false, false },
    { GEMMA3, "Q8_0", "gemma3-tiny-Q8_0.gguf", "gemma3", true, false },
    { GEMMA3_NO_WINDOW, "F32", "gemma3-tiny-nowindow-F32.gguf", "gemma3", false, false },
};

// Made for the peer only (its outputs show the skipped RoPE matters), not checked against Tern.
const variant kSmollm3AsLlama = { SMOLLM3_AS_LLAMA, "F32", "smollm3-tiny-asllama-F32.gguf", "smollm3", false, false };

bool arch_compiled(variant_kind k) {
    switch (k) {
        case LLAMA3: case SMOLLM3_AS_LLAMA: return true;
        case GRANITE: return TERN_WITH_ARCH_GRANITE;
        case GEMMA2: case GEMMA2_NO_WINDOW: return TERN_WITH_ARCH_GEMMA2;
        case QWEN3: return TERN_WITH_ARCH_QWEN3;
        case SMOLLM3: return TERN_WITH_ARCH_SMOLLM3;
        case GEMMA3: case GEMMA3_NO_WINDOW: return TERN_WITH_ARCH_GEMMA3;
        default: return TERN_WITH_ARCH_PHI3;
    }
}

const uint32_t kGemmaWindow = 4;

// The random-weight files' structures (tests/tools/make_random_model.h); the
// gemma2 spec is the default one. qwen3 and smollm3 take embeddings of std
// 0.25: with 1 the tied output gave logits of std 8, and the peer's own
// quantized activations (ik_llama's) then moved the mean KL past 3e-3
// (qwen3 Q8_0: 6.8e-3, smollm3 1.8e-2) where a trained model's stays inside it.
const float kStdEmbd = 0.25f;
random_model_spec random_spec(const variant & v) {
    random_model_spec s;
    s.type = strcmp(v.source, "Q8_0") == 0 ? TERN_TYPE_Q8_0 : TERN_TYPE_F32;
    switch (v.kind) {
        case GEMMA2: case GEMMA2_NO_WINDOW:
            s.n_swa = v.kind == GEMMA2 ? kGemmaWindow : 4096;
            break;
        case QWEN3:  // Qwen3-0.6B's proportions: key_length above n_embd / n_head, GQA
            s.arch = "qwen3";
            s.n_layer = 8;
            s.std_embd = kStdEmbd;
            break;
        case SMOLLM3: case SMOLLM3_AS_LLAMA:  // head size n_embd / n_head (no key_length), GQA 2:1
            s.arch = "smollm3";
            s.n_embd = 128;
            s.n_ff = 256;
            s.n_layer = 8;
            s.rope_base = 5.0e6f;  // SmolLM3-3B's
            s.std_embd = kStdEmbd;
            s.std_other = 0.05f;  // width 128 without post-norms: 0.12 gave F32 diffs of 0.6 and a Q8_0 KL past the bound
            if (v.kind == SMOLLM3_AS_LLAMA) s.written_arch = "llama";
            break;
        default:  // gemma3: Gemma 3 1B's MQA, 2 global layers of 12
            s.arch = "gemma3";
            s.n_layer = 12;
            s.n_head_kv = 1;
            s.n_swa = v.kind == GEMMA3 ? kGemmaWindow : 4096;
            // Embeddings of std 0.5: at 0.25 (logits of std 2) the F32 file sat at 0.55 of the
            // ik bound (5e-3 of 1e-2: Tern's F16 rounding of Q and the softmax weights, c392e509's
            // semantics, against ik_llama's F32) and Q8_0 at 0.48; at 0.5 (logits of std 4)
            // 0.31-0.38 and 0.03. The argmax then follows the input token, as gemma2's does.
            s.std_embd = 0.5f;
            s.std_other = 0.08f;
            break;
    }
    return s;
}

bool make_file(const std::string & shared, const std::string & dir, const variant & v, std::string * err) {
    const std::string src = shared + "/models/" + v.source, dst = dir + "/" + v.made;
    if (v.kind == LLAMA3) return gguf_extend(src, dst, gguf_extension_llama3(kRot, kBase, 2048), err);
    if (v.kind == GRANITE) return gguf_extend(src, dst, gguf_extension_granite(), err);
    if (random_weights(v.kind)) {  // stories260K's vocabulary
        return make_random_model(random_spec(v), shared + "/models/stories260K.gguf", dst, err);
    }
    const std::string tmp = dst + ".phi3";
    const bool ok = phi3_from_llama(src, tmp, 262144, err) &&
                    gguf_extend(tmp, dst, gguf_extension_phi35(kRot, v.kind == LONGROPE_LONG ? 256 : 4096), err);
    unlink(tmp.c_str());
    return ok;
}

bool make_files(const std::string & shared, const std::string & dir, bool for_peer) {
    std::vector<variant> vs(std::begin(kVariants), std::end(kVariants));
    if (for_peer) vs.push_back(kSmollm3AsLlama);
    for (const variant & v : vs) {
        if (!for_peer && !arch_compiled(v.kind)) continue;
        std::string err;
        const bool ok = make_file(shared, dir, v, &err);
        CHECK_MSG(ok, "%s: %s", v.made, err.c_str());
        if (!ok) return false;
    }
    return true;
}

std::string stem_of(const char * made) {
    std::string s = made;
    return s.substr(0, s.size() - 5);  // ".gguf"
}

void check_envelope(const std::string & data, const std::string & dir) {
    for (const variant & v : kVariants) {
        if (!arch_compiled(v.kind)) continue;
        reference_case rc;
        const std::string stem = stem_of(v.made) + ".1";
        CHECK_MSG(reference_load(data + "/" + v.data, stem, rc), "%s/%s: cannot read the reference", v.data, stem.c_str());
        if (rc.n_vocab == 0) continue;
        envelope_rule rule;
        rule.real_model = !random_weights(v.kind);  // trained: every greedy token must match
        rule.f32_model = !v.quantized && !v.f16;
        rule.f16_model = v.f16;
        rule.ik_peer = ik_peer(v.kind);
        envelope_check(rc, stem, dir + "/" + v.made, rule, envelope_run());
    }
}

// llama.cpp's outputs with the factors (or granite's scales) against its
// outputs for the source file (../shared/reference, same prompt): the case
// must test them.
void check_matters(const std::string & shared, const std::string & data, const char * dir, const char * stem) {
    reference_case with, without;
    CHECK(reference_load(data + "/" + dir, stem, with));
    CHECK(reference_load(shared + "/reference", "TinyStories-656K-F32.1", without));
    if (with.n_vocab == 0 || without.n_vocab == 0) return;
    CHECK(with.prompt == without.prompt && with.prompt_tokens == without.prompt_tokens);
    double max_diff = 0;
    for (size_t i = 0; i < with.prompt_logits.size() && i < without.prompt_logits.size(); i++) {
        max_diff = std::max(max_diff, (double) fabsf(with.prompt_logits[i] - without.prompt_logits[i]));
    }
    printf("%s: llama.cpp's prompt logits move by %.3g from the source file's; greedy text: \"%s\"\n", stem, max_diff,
           with.greedy_text.c_str());
    CHECK_MSG(max_diff > 0.5, "%s: llama.cpp's logits move by only %.3g: the case tests nothing", stem, max_diff);
    CHECK_MSG(with.greedy_tokens != without.greedy_tokens, "%s: the source file's greedy text", stem);
}

// LongRoPE: the two sets give llama.cpp different outputs (the choice is
// tested), and Tern chooses as llama.cpp does, by a sequence's share of the
// context: the long-factor file with n_ctx 512 over 4 sequences (128 each, not
// past its original 256) gives the short-factor file's logits, bit for bit.
void check_longrope_choice(const std::string & data, const std::string & dir) {
    reference_case s, l;
    CHECK(reference_load(data + "/phi3", "TinyStories-656K-phi3-longrope-short-F32.1", s));
    CHECK(reference_load(data + "/phi3", "TinyStories-656K-phi3-longrope-long-F32.1", l));
    if (s.n_vocab == 0 || l.n_vocab == 0) return;
    double max_diff = 0;
    for (size_t i = 0; i < s.prompt_logits.size() && i < l.prompt_logits.size(); i++) {
        max_diff = std::max(max_diff, (double) fabsf(s.prompt_logits[i] - l.prompt_logits[i]));
    }
    printf("LongRoPE: llama.cpp's prompt logits with the long and the short factors differ by %.3g\n", max_diff);
    CHECK_MSG(max_diff > 0.5 && s.greedy_tokens != l.greedy_tokens, "long and short factors: max diff %.3g", max_diff);

    std::vector<float> rows[2];
    const char * files[2] = { "TinyStories-656K-phi3-longrope-short-F32.gguf", "TinyStories-656K-phi3-longrope-long-F32.gguf" };
    for (int f = 0; f < 2; f++) {
        tern_model * m = NULL;
        tern_model_params mp = tern_model_default_params();
        if (tern_model_load_file((dir + "/" + files[f]).c_str(), &mp, &m) != TERN_OK) {
            CHECK_MSG(false, "%s: %s", files[f], tern_last_error());
            return;
        }
        tern_context_params cp = tern_context_default_params();
        cp.n_ctx = 512;
        cp.n_seq_max = f == 0 ? 1 : 4;
        tern_context * ctx = NULL;
        CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
        std::vector<tern_token> toks(s.prompt_tokens.begin(), s.prompt_tokens.end());
        if (ctx && tern_decode(ctx, tern_batch_get_one(toks.data(), (int32_t) toks.size())) == TERN_OK) {
            const float * lg = tern_get_logits_ith(ctx, -1);
            rows[f].assign(lg, lg + s.n_vocab);
        }
        tern_context_free(ctx);
        tern_model_free(m);
    }
    CHECK_MSG(!rows[0].empty() && rows[0] == rows[1], "the long-factor file over 4 sequences does not use the short factors");
}

// gemma2: the window matters (llama.cpp's outputs for the windowed file differ
// from those for the same weights with a window of 4096), and the prompt
// outgrows the window.
// gemma3: the same with ik_llama's outputs. smollm3: its outputs for the same
// weights as a llama file (RoPE on every layer) differ: the skipped RoPE matters.
void check_differ(const std::string & data, const char * arch, const char * stem, const char * other, const char * what) {
    reference_case w, f;
    CHECK(reference_load(data + "/" + arch, stem, w));
    CHECK(reference_load(data + "/" + arch, other, f));
    if (w.n_vocab == 0 || f.n_vocab == 0) return;
    CHECK(w.prompt_tokens == f.prompt_tokens);
    CHECK_MSG(w.prompt_tokens.size() > 2 * kGemmaWindow, "the prompt (%zu tokens) must outgrow the window", w.prompt_tokens.size());
    double max_diff = 0;
    for (size_t i = 0; i < w.prompt_logits.size() && i < f.prompt_logits.size(); i++) {
        max_diff = std::max(max_diff, (double) fabsf(w.prompt_logits[i] - f.prompt_logits[i]));
    }
    printf("%s: the peer's prompt logits %s differ by %.3g\n", arch, what, max_diff);
    CHECK_MSG(max_diff > 0.5, "%s: %s: the peer's logits move by only %.3g", arch, what, max_diff);
}

// A saved state restores into a fresh context: the next token's logits are the same, bit for bit.
void check_state_of(const std::string & path) {
    tern_model * m = NULL;
    tern_model_params mp = tern_model_default_params();
    if (tern_model_load_file(path.c_str(), &mp, &m) != TERN_OK) {
        CHECK_MSG(false, "%s: %s", path.c_str(), tern_last_error());
        return;
    }
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 64;
    tern_context * a = NULL, * b = NULL;
    CHECK(tern_context_create(m, &cp, &a) == TERN_OK && tern_context_create(m, &cp, &b) == TERN_OK);
    if (a && b) {
        tern_token toks[8] = { 1, 80, 147, 201, 282, 57, 313, 398 };  // < 512: stories260K's vocabulary in the random files
        CHECK(tern_decode(a, tern_batch_get_one(toks, 7)) == TERN_OK);
        std::vector<uint8_t> state(tern_state_get_size(a));
        CHECK(tern_state_get_data(a, state.data(), state.size()) == state.size());
        CHECK(tern_state_set_data(b, state.data(), state.size()) == state.size());
        CHECK(tern_decode(a, tern_batch_get_one(toks + 7, 1)) == TERN_OK);
        CHECK(tern_decode(b, tern_batch_get_one(toks + 7, 1)) == TERN_OK);
        const float * la = tern_get_logits_ith(a, -1), * lb = tern_get_logits_ith(b, -1);
        CHECK(la && lb && memcmp(la, lb, sizeof(float) * (size_t) tern_model_n_vocab(m)) == 0);
    }
    tern_context_free(a);
    tern_context_free(b);
    tern_model_free(m);
}

// Llama 3 and the random-weight architectures' F32 files.
void check_state(const std::string & dir) {
    for (const variant & v : kVariants) {
        if (arch_compiled(v.kind) && (&v == &kVariants[0] || (random_weights(v.kind) && !v.quantized))) {
            check_state_of(dir + "/" + v.made);
        }
    }
}

// Files with factors Tern must refuse, with the reason.
void check_refused(const std::string & shared, const std::string & dir) {
    const std::string src = shared + "/models/TinyStories-656K-F32.gguf";
    struct bad {
        std::vector<float> factors;
        tern_status status;
        const char * why;
    };
    std::vector<float> zero = llama3_rope_factors(kBase, kRot, 32.0f, 1.0f, 4.0f, 128.0f);
    zero[3] = 0.0f;
    std::vector<float> nan_f = zero;
    nan_f[3] = NAN;
    const bad cases[] = {
        { std::vector<float>(kRot, 1.0f), TERN_ERR_SHAPE, "rope_freqs.weight" },  // n_rot values, not n_rot / 2
        { zero, TERN_ERR_FORMAT, "factor 3 is 0" },
        { nan_f, TERN_ERR_FORMAT, "factor 3 is nan" },
    };
    for (const bad & c : cases) {
        gguf_extension e;
        e.add_f32.push_back({ "rope_freqs.weight", c.factors });
        const std::string path = dir + "/refused.gguf";
        std::string err;
        CHECK_MSG(gguf_extend(src, path, e, &err), "%s", err.c_str());
        tern_model * m = NULL;
        tern_model_params mp = tern_model_default_params();
        const tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
        CHECK_MSG(st == c.status && strstr(tern_last_error(), c.why), "%s: status %d, '%s'", c.why, (int) st, tern_last_error());
        if (m) tern_model_free(m);
        unlink(path.c_str());
    }
    if (TERN_WITH_ARCH_GEMMA3) {  // gemma3 without its window (required, as ik_llama reads it)
        const std::string path = dir + "/refused.gguf";
        std::string err;
        gguf_edit e;
        e.drop_keys = { "gemma3.attention.sliding_window" };
        CHECK_MSG(gguf_rewrite(dir + "/gemma3-tiny-F32.gguf", path, e, &err), "%s", err.c_str());
        tern_model * m = NULL;
        tern_model_params mp = tern_model_default_params();
        const tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
        CHECK_MSG(st == TERN_ERR_FORMAT && strstr(tern_last_error(), "gemma3.attention.sliding_window"), "status %d, '%s'", (int) st,
                  tern_last_error());
        if (m) tern_model_free(m);
        unlink(path.c_str());
    }
    if (TERN_WITH_ARCH_GRANITE) {  // granite without one of its four scales
        const std::string path = dir + "/refused.gguf";
        std::string err;
        gguf_edit e;
        e.drop_keys = { "granite.logit_scale" };
        CHECK_MSG(gguf_rewrite(dir + "/TinyStories-656K-granite-F32.gguf", path, e, &err), "%s", err.c_str());
        tern_model * m = NULL;
        tern_model_params mp = tern_model_default_params();
        const tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
        CHECK_MSG(st == TERN_ERR_FORMAT && strstr(tern_last_error(), "granite.logit_scale"), "status %d, '%s'", (int) st, tern_last_error());
        if (m) tern_model_free(m);
        unlink(path.c_str());
    }
}

}  // namespace

int main(int argc, char ** argv) {
    const std::string shared = tern_test_shared_dir();
    if (argc == 3 && std::string(argv[1]) == "--make") return make_files(shared, argv[2], true) ? 0 : 1;
    const char * src = getenv("TERN_SOURCE_DIR");
    CHECK_MSG(src != NULL, "TERN_SOURCE_DIR is not set");
    if (!src) return tern_test_summary();
    char tmp[] = "/tmp/tern_variants_XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    const std::string dir = tmp;
    const std::string data = std::string(src) + "/tests/data";
    if (make_files(shared, dir, false)) {
        check_envelope(data, dir);
        check_matters(shared, data, "llama3", "TinyStories-656K-llama3-F32.1");
        if (TERN_WITH_ARCH_GRANITE) check_matters(shared, data, "granite", "TinyStories-656K-granite-F32.1");
        check_state(dir);
        if (TERN_WITH_ARCH_PHI3) check_longrope_choice(data, dir);
        if (TERN_WITH_ARCH_GEMMA2) check_differ(data, "gemma2", "gemma2-tiny-F32.1", "gemma2-tiny-nowindow-F32.1", "with and without the window");
        if (TERN_WITH_ARCH_GEMMA3) check_differ(data, "gemma3", "gemma3-tiny-F32.1", "gemma3-tiny-nowindow-F32.1", "with and without the window");
        if (TERN_WITH_ARCH_SMOLLM3) {
            check_differ(data, "smollm3", "smollm3-tiny-F32.1", "smollm3-tiny-asllama-F32.1", "with and without RoPE on every 4th layer");
        }
        check_refused(shared, dir);
    }
    for (const variant & v : kVariants) unlink((dir + "/" + v.made).c_str());
    rmdir(tmp);
    return tern_test_summary();
}
