// tern-bench: prompt processing (pp) and text generation (tg) speed, like
// llama-bench. For tg it also prints the effective bandwidth, model bytes x
// tokens/s: decode reads every weight once per token, so this is the figure to
// hold against the machine's memory bandwidth.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>
#include "tern.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(FILE * f) {
    fprintf(f,
        "usage: tern-bench -m MODEL [-p N_PROMPT] [-n N_GEN] [-t THREADS] [-r REPS]\n"
        "  -p N   prompt tokens for the pp test (default 512; 0 skips it)\n"
        "  -n N   generated tokens for the tg test (default 128; 0 skips it)\n"
        "  -t N   threads (default 4)\n"
        "  -r N   repetitions, mean and standard deviation reported (default 3)\n");
}

struct stats { double mean, sd; };

static stats summarize(const std::vector<double> & v) {
    stats s = { 0, 0 };
    for (double x : v) s.mean += x;
    s.mean /= v.size();
    for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
    s.sd = v.size() > 1 ? sqrt(s.sd / (v.size() - 1)) : 0;
    return s;
}

int main(int argc, char ** argv) {
    const char * path = NULL;
    int n_prompt = 512, n_gen = 128, n_threads = 4, reps = 3;
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        const char * v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!v) { usage(stderr); return 1; }
        if (!strcmp(a, "-m")) path = v;
        else if (!strcmp(a, "-p")) n_prompt = atoi(v);
        else if (!strcmp(a, "-n")) n_gen = atoi(v);
        else if (!strcmp(a, "-t")) n_threads = atoi(v);
        else if (!strcmp(a, "-r")) reps = atoi(v);
        else { usage(stderr); return 1; }
        i++;
    }
    if (!path || reps < 1 || n_threads < 1 || n_prompt < 0 || n_gen < 0) { usage(stderr); return 1; }

    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    if (tern_model_load_file(path, &mp, &m) != TERN_OK) {
        fprintf(stderr, "tern-bench: %s\n", tern_last_error());
        return 1;
    }
    const int32_t n_vocab = tern_model_n_vocab(m);
    const uint64_t bytes = tern_model_size(m);
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = (uint32_t) (n_prompt + n_gen > 0 ? n_prompt + n_gen : 1);
    if (cp.n_ctx > (uint32_t) tern_model_n_ctx_train(m)) cp.n_ctx = (uint32_t) tern_model_n_ctx_train(m);
    cp.n_batch = n_prompt > 0 ? (uint32_t) n_prompt : 1;
    if (cp.n_batch > cp.n_ctx) cp.n_batch = cp.n_ctx;
    cp.n_threads = n_threads;
    tern_context * ctx = NULL;
    if (tern_context_create(m, &cp, &ctx) != TERN_OK) {
        fprintf(stderr, "tern-bench: %s\n", tern_last_error());
        tern_model_free(m);
        return 1;
    }
    tern_mem_audit audit;
    tern_context_mem_audit(ctx, &audit);
    printf("model: %s (%s, %.2f MiB of weights), context arena %.2f MiB, %d threads, SIMD %s\n\n", path,
           tern_model_arch(m), bytes / 1048576.0, audit.total / 1048576.0, n_threads, TERN_SIMD_TARGET);
    printf("| test   |          t/s |  ms/token | effective GB/s |\n|--------|--------------|-----------|----------------|\n");

    // Token ids spread over the vocabulary (content does not change the cost).
    std::vector<tern_token> toks(n_prompt > 0 ? n_prompt : 1);
    for (size_t i = 0; i < toks.size(); i++) toks[i] = (tern_token) ((i * 7919 + 1) % n_vocab);
    int rc = 0;
    if (n_prompt > 0 && rc == 0) {
        std::vector<double> tps;
        for (int r = 0; r < reps + 1 && rc == 0; r++) {  // first run warms up
            tern_kv_cache_clear(ctx);
            double t0 = now_s();
            if (tern_decode(ctx, tern_batch_get_one(toks.data(), n_prompt)) != TERN_OK) rc = 1;
            double dt = now_s() - t0;
            if (r > 0) tps.push_back(n_prompt / dt);
        }
        if (rc == 0) {
            stats s = summarize(tps);
            printf("| pp%-4d | %7.1f ± %-4.0f | %9.3f | %14s |\n", n_prompt, s.mean, s.sd, 1e3 / s.mean, "");
        }
    }
    if (n_gen > 0 && rc == 0) {
        std::vector<double> tps;
        for (int r = 0; r < reps + 1 && rc == 0; r++) {
            tern_kv_cache_clear(ctx);
            tern_token t = toks[0];
            double t0 = now_s();
            for (int k = 0; k < n_gen && rc == 0; k++) {
                if (tern_decode(ctx, tern_batch_get_one(&t, 1)) != TERN_OK) rc = 1;
                t = (tern_token) ((t * 31 + 7) % n_vocab);
            }
            double dt = now_s() - t0;
            if (r > 0) tps.push_back(n_gen / dt);
        }
        if (rc == 0) {
            stats s = summarize(tps);
            printf("| tg%-4d | %7.1f ± %-4.0f | %9.3f | %14.2f |\n", n_gen, s.mean, s.sd, 1e3 / s.mean,
                   bytes * s.mean / 1e9);
        }
    }
    if (rc) fprintf(stderr, "tern-bench: %s\n", tern_last_error());
    tern_context_free(ctx);
    tern_model_free(m);
    return rc;
}
