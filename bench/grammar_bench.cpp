// tern-grammar-bench: text generation with and without a grammar, in one
// process and interleaved, so the ratio is measured on the same machine state.
//
//   tern-grammar-bench -m qwen2.5-0.5b-Q4_0.gguf --grammar-file json.gbnf -n 64 -r 5 -t 2
//
// Each repetition runs two generations of n tokens from the same prompt:
// greedy sampling alone, then greedy sampling under the grammar (the grammar
// restarts whenever its text is complete, so every token is constrained; no
// token budget). A token's time is its decode plus its sampling, as
// llama-cli's eval + sampling times add up. Printed per model: tokens/s
// without and with the grammar (median of the repetitions), their ratio,
// grammar milliseconds per token, and how each token was settled: the chain's
// choice fitted, the best candidates checked in order, or a walk over the
// whole vocabulary.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sample/sampler.h"
#include "sample/sampler_grammar.h"
#include "tern.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool read_file(const char * path, std::string * out) {
    FILE * f = fopen(path, "rb");
    if (!f) return false;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out->append(buf, n);
    fclose(f);
    return true;
}

struct run_stats {
    double ms = 0;          // decode + sampling of the generated tokens
    double sample_ms = 0;   // sampling alone
    int    tokens = 0;
};

// n tokens after the prompt; the grammar (when attached) restarts at each complete text.
static bool generate(tern_model * m, tern_context * ctx, tern_sampler * smpl, const std::vector<tern_token> & prompt, int n,
                     bool grammar, run_stats * st, std::string * text) {
    tern_kv_cache_clear(ctx);
    tern_sampler_reset(smpl);
    if (tern_decode(ctx, tern_batch_get_one(const_cast<tern_token *>(prompt.data()), (int32_t) prompt.size())) != TERN_OK) return false;
    int32_t pos = (int32_t) prompt.size();
    for (int k = 0; k < n; k++) {
        const double t0 = now_ms();
        tern_token t = tern_sampler_sample(smpl, ctx, -1);
        const double t1 = now_ms();
        if (t < 0) {
            fprintf(stderr, "tern-grammar-bench: sampling: %s\n", tern_last_error());
            return false;
        }
        if (grammar && (tern_token_is_eog(m, t) || tern_sampler_grammar_state(smpl) == 2)) tern_sampler_grammar_reset(smpl, -1);
        if (text && !tern_token_is_eog(m, t)) {
            char buf[256];
            int32_t len = tern_token_to_piece(m, t, buf, sizeof(buf), 1);
            if (len > 0) text->append(buf, (size_t) len);
        }
        tern_batch b = tern_batch_get_one(&t, 1);
        b.pos = &pos;
        if (tern_decode(ctx, b) != TERN_OK) return false;
        pos++;
        st->ms += now_ms() - t0;
        st->sample_ms += t1 - t0;
        st->tokens++;
    }
    return true;
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int main(int argc, char ** argv) {
    std::vector<std::string> models;
    std::string grammar, prompt = "{\"name\":";
    int n = 64, reps = 5, threads = 2;
    bool show = false;
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        auto next = [&]() { return i + 1 < argc ? argv[++i] : (const char *) ""; };
        if (!strcmp(a, "-m")) {
            std::string list = next();
            for (size_t at = 0; at <= list.size();) {
                size_t e = list.find(',', at);
                if (e == std::string::npos) e = list.size();
                if (e > at) models.push_back(list.substr(at, e - at));
                at = e + 1;
            }
        } else if (!strcmp(a, "--grammar-file")) {
            if (!read_file(next(), &grammar)) { fprintf(stderr, "tern-grammar-bench: cannot read the grammar\n"); return 2; }
        } else if (!strcmp(a, "--grammar")) {
            grammar = next();
        } else if (!strcmp(a, "-p")) {
            prompt = next();
        } else if (!strcmp(a, "-n")) {
            n = atoi(next());
        } else if (!strcmp(a, "-r")) {
            reps = atoi(next());
        } else if (!strcmp(a, "-t")) {
            threads = atoi(next());
        } else if (!strcmp(a, "--show")) {
            show = true;
        } else {
            fprintf(stderr,
                    "usage: tern-grammar-bench -m A.gguf[,B.gguf] (--grammar-file F | --grammar G) [-p PROMPT] [-n 64] "
                    "[-r 5] [-t 2] [--show]\n");
            return 2;
        }
    }
    if (models.empty() || grammar.empty() || n <= 0 || reps <= 0 || threads <= 0) {
        fprintf(stderr, "tern-grammar-bench: -m and a grammar are required (see --help)\n");
        return 2;
    }
    printf("| model | n_vocab | threads | tokens | t/s without grammar | t/s with grammar | ratio | grammar ms/token | chain's choice / best-first / walks |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const std::string & path : models) {
        tern_model * m = NULL;
        if (tern_model_load_file(path.c_str(), NULL, &m) != TERN_OK) {
            fprintf(stderr, "tern-grammar-bench: %s: %s\n", path.c_str(), tern_last_error());
            return 1;
        }
        tern_context_params cp = tern_context_default_params();
        cp.n_ctx = (uint32_t) (n + 256);
        cp.n_threads = threads;
        tern_context * ctx = NULL;
        tern_sampler_params sp = tern_sampler_default_params();
        sp.temp = 0.0f;
        tern_sampler * plain = NULL, * constrained = NULL;
        if (tern_context_create(m, &cp, &ctx) != TERN_OK || tern_sampler_create(m, &sp, NULL, 0, &plain) != TERN_OK ||
            tern_sampler_create(m, &sp, NULL, 0, &constrained) != TERN_OK ||
            tern_sampler_init_grammar(constrained, m, grammar.c_str(), NULL, NULL, 0) != TERN_OK) {
            fprintf(stderr, "tern-grammar-bench: %s: %s\n", path.c_str(), tern_last_error());
            return 1;
        }
        std::vector<tern_token> toks(prompt.size() + 8);
        int32_t n_tok = tern_tokenize(m, prompt.data(), (int32_t) prompt.size(), toks.data(), (int32_t) toks.size(), 1, 0);
        toks.resize(n_tok > 0 ? (size_t) n_tok : 0);
        std::vector<double> tps_plain, tps_gram, gram_ms;
        // One warm-up of each, then the repetitions, interleaved.
        run_stats w;
        std::string shown;
        if (!generate(m, ctx, plain, toks, 8, false, &w, NULL) || !generate(m, ctx, constrained, toks, 8, true, &w, NULL)) return 1;
        const tern::sampler_grammar * sg = constrained->grammar;
        const uint64_t chosen0 = sg->n_chosen, top0 = sg->n_top, walks0 = sg->n_walks;
        for (int r = 0; r < reps; r++) {
            run_stats a, b;
            if (!generate(m, ctx, plain, toks, n, false, &a, NULL)) return 1;
            if (!generate(m, ctx, constrained, toks, n, true, &b, r == 0 && show ? &shown : NULL)) return 1;
            tps_plain.push_back(a.tokens * 1e3 / a.ms);
            tps_gram.push_back(b.tokens * 1e3 / b.ms);
            gram_ms.push_back((b.sample_ms - a.sample_ms) / b.tokens);
        }
        const uint64_t chosen = sg->n_chosen - chosen0, top = sg->n_top - top0, walks = sg->n_walks - walks0;
        const double tp = median(tps_plain), tg = median(tps_gram);
        const char * name = strrchr(path.c_str(), '/');
        printf("| %s | %d | %d | %d | %.2f | %.2f | %.2f | %.3f | %llu / %llu / %llu |\n", name ? name + 1 : path.c_str(),
               tern_model_n_vocab(m), threads, n, tp, tg, tg / tp, median(gram_ms), (unsigned long long) chosen,
               (unsigned long long) top, (unsigned long long) walks);
        if (show) fprintf(stderr, "%s: %s\n", path.c_str(), shown.c_str());
        tern_sampler_free(plain);
        tern_sampler_free(constrained);
        tern_context_free(ctx);
        tern_model_free(m);
    }
    return 0;
}
