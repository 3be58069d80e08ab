// The grammar stage in the sampler chain on the shared models: every output
// of a 64-token greedy and sampled run under a JSON schema parses and
// validates against the schema (json_validate.h, a validator apart from the
// converter); "yes" | "no" gives one of the two; a grammar that takes every
// text leaves greedy decoding unchanged (the chain's choice is kept); tokens
// chosen elsewhere advance it; setup errors; caller memory of exactly
// tern_sampler_grammar_mem_size() bytes.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include <dirent.h>

#include <algorithm>

#include "check.h"
#include "json_validate.h"
#include "sample/sampler.h"
#include "tern.h"

// The shared models whose vocabulary can write JSON: TinyStories-656K's (and the
// ktest models, which copy it) has no token holding '{' at all.
static const char * const k_models[] = {"stories260K.gguf"};

static const char * const k_schemas[] = {
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}",
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":12},"
    "\"age\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":120},"
    "\"pets\":{\"type\":\"array\",\"items\":{\"enum\":[\"cat\",\"dog\",\"fish\"]},\"maxItems\":3}},"
    "\"required\":[\"name\",\"age\"],\"additionalProperties\":false}",
    "{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},"
    "\"tag\":{\"type\":\"string\",\"pattern\":\"^[a-z]{1,8}$\"}},\"required\":[\"id\",\"tag\"]},\"minItems\":1,\"maxItems\":3}",
    "{\"anyOf\":[{\"type\":\"boolean\"},{\"type\":\"number\"},{\"$ref\":\"#/$defs/pt\"}],"
    "\"$defs\":{\"pt\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"number\"},\"y\":{\"type\":\"number\"}},"
    "\"required\":[\"x\",\"y\"]}}}",
    "{\"type\":\"string\",\"format\":\"date\"}",
    "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"},\"note\":{\"type\":[\"string\",\"null\"]}},"
    "\"required\":[\"ok\",\"note\"]}",
};

static std::string schema_grammar(const char * schema) {
    int32_t n = tern_json_schema_to_grammar(schema, 0, NULL, 0);
    CHECK_MSG(n > 0, "%s: %s", schema, tern_last_error());
    if (n <= 0) return std::string();
    std::vector<char> buf((size_t) n + 1);
    CHECK(tern_json_schema_to_grammar(schema, 0, buf.data(), (int32_t) buf.size()) == n);
    return std::string(buf.data(), (size_t) n);
}

static std::string piece(const tern_model * m, tern_token t) {
    char buf[256];
    int32_t n = tern_token_to_piece(m, t, buf, sizeof(buf), 1);
    return n > 0 ? std::string(buf, (size_t) n) : std::string();
}

struct run_result {
    std::string text;
    std::vector<tern_token> tokens;
    bool ok = false;
    std::string stop;
};

// Up to n tokens after the prompt, constrained by the grammar (budget n).
static run_result generate(tern_model * m, const char * prompt, const std::string & grammar, float temp, uint32_t seed,
                           int n, bool with_grammar = true) {
    run_result r;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 256;
    cp.n_threads = 2;
    tern_context * ctx = NULL;
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = temp;
    sp.seed = seed;
    tern_sampler * smpl = NULL;
    if (tern_context_create(m, &cp, &ctx) != TERN_OK || tern_sampler_create(m, &sp, NULL, 0, &smpl) != TERN_OK) {
        CHECK_MSG(false, "setup: %s", tern_last_error());
        tern_context_free(ctx);
        return r;
    }
    if (with_grammar) {
        tern_status st = tern_sampler_init_grammar(smpl, m, grammar.c_str(), NULL, NULL, 0);
        if (st == TERN_OK) st = tern_sampler_grammar_reset(smpl, n);
        CHECK_MSG(st == TERN_OK, "grammar: %s", tern_last_error());
        if (st != TERN_OK) {
            tern_sampler_free(smpl);
            tern_context_free(ctx);
            return r;
        }
    }
    tern_token toks[64];
    int32_t n_tok = tern_tokenize(m, prompt, (int32_t) strlen(prompt), toks, 64, 1, 0);
    tern_status st = tern_decode(ctx, tern_batch_get_one(toks, n_tok));
    r.stop = "length";
    for (int k = 0; k < n && st == TERN_OK; k++) {
        tern_token t = tern_sampler_sample(smpl, ctx, -1);
        if (t < 0) {
            r.stop = "error";
            break;
        }
        if (tern_token_is_eog(m, t)) { r.stop = "eog"; break; }
        r.tokens.push_back(t);
        r.text += piece(m, t);
        if (with_grammar && tern_sampler_grammar_state(smpl) == 2) { r.stop = "grammar"; break; }
        st = tern_decode(ctx, tern_batch_get_one(&t, 1));
    }
    r.ok = st == TERN_OK && r.stop != "error";
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    return r;
}

static tern_model * load(const char * name) {
    std::string path = std::string(tern_test_shared_dir()) + "/models/" + name;
    tern_model * m = NULL;
    CHECK_MSG(tern_model_load_file(path.c_str(), NULL, &m) == TERN_OK, "%s: %s", name, tern_last_error());
    return m;
}

static void test_schemas(void) {
    int runs = 0, valid = 0;
    for (const char * name : k_models) {
        tern_model * m = load(name);
        if (!m) continue;
        for (const char * schema : k_schemas) {
            std::string g = schema_grammar(schema);
            if (g.empty()) continue;
            for (int mode = 0; mode < 4; mode++) {   // greedy, then three sampled seeds
                const float temp = mode == 0 ? 0.0f : 1.0f;
                run_result r = generate(m, "Once upon a time", g, temp, 1000u + (uint32_t) mode, 64);
                std::string why;
                bool ok = r.ok && json_validates(r.text, schema, &why);
                CHECK_MSG(ok, "%s, %s, mode %d (%s, %zu tokens): '%s' does not validate: %s", name, schema, mode,
                          r.stop.c_str(), r.tokens.size(), r.text.c_str(), why.c_str());
                runs++;
                valid += ok;
                if (mode == 0 && schema == k_schemas[0]) printf("%s greedy: %s\n", name, r.text.c_str());
            }
        }
        tern_model_free(m);
    }
    printf("schema-constrained runs: %d of %d parse and validate\n", valid, runs);
}

// Every shared vocabulary (real ones: Qwen2's 152k BPE tokens, Llama's SPM,
// GPT-2, ...), loaded vocab only, driven by random logits (the worst case: the
// chain's choice almost never fits, so every step walks the vocabulary): 64
// tokens under each schema always validate, greedy and sampled in turn (each
// schema meets both modes over the vocabularies).
static void test_vocabularies(void) {
    const std::string dir = std::string(tern_test_shared_dir()) + "/vocab";
    std::vector<std::string> files;
    if (DIR * d = opendir(dir.c_str())) {
        while (dirent * e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) files.push_back(n);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    int runs = 0, valid = 0, vocabs = 0;
    for (const std::string & f : files) {
        tern_model_params mp = tern_model_default_params();
        mp.vocab_only = 1;
        tern_model * m = NULL;
        if (tern_model_load_file((dir + "/" + f).c_str(), &mp, &m) != TERN_OK) continue;
        if (tern_vocab_type_of(m) == TERN_VOCAB_WPM) { tern_model_free(m); continue; }   // BERT: no generation
        const int32_t n_vocab = tern_model_n_vocab(m);
        std::vector<float> logits((size_t) n_vocab);
        vocabs++;
        for (size_t si = 0; si < sizeof(k_schemas) / sizeof(k_schemas[0]); si++) {
            std::string g = schema_grammar(k_schemas[si]);
            {
                const int mode = (int) ((si + (size_t) vocabs) % 2);
                tern_sampler_params sp = tern_sampler_default_params();
                sp.temp = mode == 0 ? 0.0f : 1.0f;
                sp.seed = 17u + (uint32_t) si;
                tern_sampler * smpl = NULL;
                CHECK(tern_sampler_create(m, &sp, NULL, 0, &smpl) == TERN_OK);
                tern_status st = tern_sampler_init_grammar(smpl, m, g.c_str(), NULL, NULL, 0);
                if (st == TERN_OK) st = tern_sampler_grammar_reset(smpl, 64);
                CHECK_MSG(st == TERN_OK, "%s: %s", f.c_str(), tern_last_error());
                uint64_t rng = 0x9e3779b97f4a7c15ull * (si + 1) + (uint64_t) mode;
                std::string text, error;
                for (int k = 0; k < 64 && st == TERN_OK; k++) {
                    for (int32_t i = 0; i < n_vocab; i++) {
                        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                        logits[(size_t) i] = (float) ((rng >> 40) & 0xffff) / 4096.0f;
                    }
                    tern_token t = tern::sampler_sample_logits(smpl, logits.data(), n_vocab);
                    if (t < 0) { error = tern_last_error(); break; }
                    if (tern_token_is_eog(m, t)) break;
                    text += piece(m, t);
                    if (tern_sampler_grammar_state(smpl) == 2) break;
                }
                std::string why;
                bool ok = error.empty() && json_validates(text, k_schemas[si], &why);
                CHECK_MSG(ok, "%s, schema %zu, mode %d: '%s' %s %s", f.c_str(), si, mode, text.c_str(), error.c_str(),
                          why.c_str());
                runs++;
                valid += ok;
                tern_sampler_free(smpl);
            }
        }
        tern_model_free(m);
    }
    CHECK(vocabs >= 8);
    printf("random logits over %d vocabularies: %d of %d schema-constrained runs validate\n", vocabs, valid, runs);
}

// A vocabulary that cannot write the grammar's text: a clear error, no crash.
static void test_unwritable(void) {
    tern_model * m = load("TinyStories-656K-Q8_0.gguf");
    if (!m) return;
    run_result r = generate(m, "Once", "root ::= \"{\" [a-z]+ \"}\"", 0.0f, 0, 16);
    CHECK(!r.ok && strstr(tern_last_error(), "no token"));
    tern_model_free(m);
}

static void test_yes_no(void) {
    tern_model * m = load("stories260K.gguf");
    if (!m) return;
    for (int mode = 0; mode < 6; mode++) {
        run_result r = generate(m, "Is the sky blue?", "root ::= \"yes\" | \"no\"", mode ? 1.5f : 0.0f, (uint32_t) mode, 64);
        CHECK_MSG(r.ok && (r.text == "yes" || r.text == "no"), "yes/no gave '%s'", r.text.c_str());
    }
    tern_model_free(m);
}

// A grammar that takes any text: the chain's choice always stands.
static void test_permissive(void) {
    tern_model * m = load("TinyStories-656K-Q8_0.gguf");
    if (!m) return;
    const std::string any = "root ::= [^\\x00]*";
    run_result a = generate(m, "Once upon a time", any, 0.0f, 0, 48, true);
    run_result b = generate(m, "Once upon a time", any, 0.0f, 0, 48, false);
    CHECK_MSG(a.ok && a.tokens == b.tokens, "greedy under [^\\x00]* differs: '%s' vs '%s'", a.text.c_str(), b.text.c_str());
    run_result c = generate(m, "Once upon a time", any, 0.9f, 7, 48, true);
    run_result d = generate(m, "Once upon a time", any, 0.9f, 7, 48, false);
    CHECK_MSG(c.ok && c.tokens == d.tokens, "sampled under [^\\x00]* differs");
    tern_model_free(m);
}

static void test_api(void) {
    tern_model * m = load("stories260K.gguf");
    if (!m) return;
    tern_sampler * smpl = NULL;
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = 0.0f;
    CHECK(tern_sampler_create(m, &sp, NULL, 0, &smpl) == TERN_OK);
    // Setup errors name what is wrong.
    CHECK(tern_sampler_init_grammar(smpl, m, "root ::= \"a\" | root \"b\"", NULL, NULL, 0) == TERN_ERR_INVALID_ARG &&
          strstr(tern_last_error(), "left recursion"));
    CHECK(tern_sampler_init_grammar(smpl, m, "root ::= [a-z\n", NULL, NULL, 0) == TERN_ERR_INVALID_ARG &&
          strstr(tern_last_error(), "line 2"));
    CHECK(tern_sampler_init_grammar(smpl, m, "root ::= x\nx ::= \"a\" x", NULL, NULL, 0) == TERN_ERR_INVALID_ARG &&
          strstr(tern_last_error(), "admits no finite text"));
    CHECK(tern_sampler_init_grammar(smpl, m, "root ::= \"a\"", "start", NULL, 0) == TERN_ERR_INVALID_ARG &&
          strstr(tern_last_error(), "'start'"));
    CHECK(tern_sampler_grammar_state(smpl) == -1);
    CHECK(tern_json_schema_to_grammar("{\"type\":\"array\",\"uniqueItems\":true}", 0, NULL, 0) == -(int32_t) TERN_ERR_INVALID_ARG &&
          strstr(tern_last_error(), "'uniqueItems'"));
    CHECK(tern_json_schema_to_grammar("{\"type\":\"number\",\"minimum\":0}", 0, NULL, 0) == -(int32_t) TERN_ERR_INVALID_ARG &&
          strstr(tern_last_error(), "'minimum'"));
    CHECK(tern_json_schema_to_grammar("{\"type\":\"number\",\"minimum\":0}", 1, NULL, 0) > 0);
    CHECK(tern_json_schema_to_grammar("{\"type\": ", 0, NULL, 0) == -(int32_t) TERN_ERR_INVALID_ARG);

    // Caller memory of exactly the size asked.
    // (SPM writes a word's leading space into its token: " Once", " upon", ...)
    const char * g = "root ::= \" Once\" \" upon\"? \" a time\"";
    size_t need = tern_sampler_grammar_mem_size(m, g, NULL);
    CHECK(need > 0);
    std::vector<uint8_t> mem(need);
    CHECK_MSG(tern_sampler_init_grammar(smpl, m, g, NULL, mem.data(), need - 1) == TERN_ERR_NO_MEMORY, "one byte less");
    CHECK_MSG(tern_sampler_init_grammar(smpl, m, g, NULL, mem.data(), need) == TERN_OK, "%s", tern_last_error());
    CHECK(tern_sampler_grammar_state(smpl) == 0);
    // Tokens chosen elsewhere advance the grammar; one that does not fit is refused.
    tern_token toks[16], dog[4];
    int32_t n = tern_tokenize(m, "Once upon a time", 16, toks, 16, 0, 0);
    int32_t n_dog = tern_tokenize(m, "dog", 3, dog, 4, 0, 0);
    CHECK(n == 4 && piece(m, toks[0]) == " Once" && n_dog >= 1);
    CHECK(tern_sampler_grammar_accept(smpl, toks[0]) == TERN_OK);
    CHECK(tern_sampler_grammar_accept(smpl, dog[0]) == TERN_ERR_INVALID_ARG);
    for (int32_t i = 1; i < n; i++) CHECK(tern_sampler_grammar_accept(smpl, toks[i]) == TERN_OK);
    CHECK(tern_sampler_grammar_state(smpl) == 2);
    // reset: back to the start.
    tern_sampler_reset(smpl);
    CHECK(tern_sampler_grammar_state(smpl) == 0);
    // A budget too small for the text by the byte count: the tokens that bring it
    // closest to complete (" Once", " a", ...), then a clear error past the budget.
    CHECK(tern_sampler_grammar_reset(smpl, 2) == TERN_OK);
    tern_context * ctx = NULL;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 64;
    CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
    tern_token bos = tern_token_bos(m);
    CHECK(tern_decode(ctx, tern_batch_get_one(&bos, 1)) == TERN_OK);
    tern_token t1 = tern_sampler_sample(smpl, ctx, -1);
    CHECK_MSG(t1 >= 0 && piece(m, t1) == " Once", "%d '%s'", t1, t1 >= 0 ? piece(m, t1).c_str() : tern_last_error());
    CHECK(tern_decode(ctx, tern_batch_get_one(&t1, 1)) == TERN_OK);
    tern_token t2 = tern_sampler_sample(smpl, ctx, -1);
    CHECK_MSG(t2 >= 0 && piece(m, t2).rfind(" a", 0) == 0, "'%s'", t2 >= 0 ? piece(m, t2).c_str() : tern_last_error());
    CHECK(tern_decode(ctx, tern_batch_get_one(&t2, 1)) == TERN_OK);
    CHECK(tern_sampler_sample(smpl, ctx, -1) == -1 && strstr(tern_last_error(), "within the 0 tokens left"));
    tern_context_free(ctx);
    tern_sampler_free(smpl);
    tern_model_free(m);
}

// Two ctest tests run this program: test_grammar_sampler (the model runs,
// decode on two threads) and test_grammar_vocabs (`--vocabularies`: random
// logits over every shared vocabulary, no context and no thread, labelled
// single_thread so that the ThreadSanitizer pass leaves its minutes out).
int main(int argc, char ** argv) {
    tern_test_shared_dir();
    if (argc > 1 && strcmp(argv[1], "--vocabularies") == 0) {
        test_vocabularies();
        return tern_test_summary();
    }
    test_api();
    test_yes_no();
    test_permissive();
    test_unwritable();
    test_schemas();
    return tern_test_summary();
}
