// Parsed options into library parameters, one meaning per flag (args_apply.h).
#include "args_apply.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void cli_apply_model(const cli_args & a, tern_model_params * mp) {
    if (a.has(O_NO_MMAP)) mp->use_mmap = 0;
    if (a.has(O_MLOCK)) mp->use_mlock = 1;
    if (a.has(O_CHECK_TENSORS)) mp->check_tensors = 1;
    if (a.has(O_NO_REPACK)) mp->repack = 0;
}

tern_type cli_kv_type(const char * name) {
    if (!strcmp(name, "f32")) return TERN_TYPE_F32;
    if (!strcmp(name, "q8_0")) return TERN_TYPE_Q8_0;
    if (!strcmp(name, "q4_0")) return TERN_TYPE_Q4_0;
    return TERN_TYPE_F16;
}

void cli_apply_context(const cli_args & a, tern_context_params * cp, int32_t n_ctx_train) {
    const long long n_ctx = a.num(O_CTX, 4096);
    cp->n_ctx = (uint32_t) (n_ctx == 0 || (n_ctx_train > 0 && n_ctx > n_ctx_train) ? n_ctx_train : n_ctx);
    long long n_batch = a.num(O_BATCH, 512);
    if (a.has(O_UBATCH) && a.num(O_UBATCH, 0) < n_batch) n_batch = a.num(O_UBATCH, 0);
    cp->n_batch = (uint32_t) n_batch;
    const long n_online = sysconf(_SC_NPROCESSORS_ONLN);
    cp->n_threads = (int32_t) a.num(O_THREADS, n_online > 0 && n_online < 4 ? n_online : 4);
    cp->type_k = cli_kv_type(a.str(O_CACHE_TYPE_K, "f16"));
    cp->type_v = cli_kv_type(a.str(O_CACHE_TYPE_V, "f16"));
}

// A random seed when none is given (llama-cli's default): /dev/urandom, else the clock and the pid.
static uint32_t random_seed(void) {
    uint32_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &s, sizeof(s)) != (ssize_t) sizeof(s)) s = 0;
        close(fd);
    }
    if (s == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = (uint32_t) ts.tv_nsec ^ ((uint32_t) ts.tv_sec << 7) ^ ((uint32_t) getpid() << 16);
    }
    return s;
}

uint32_t cli_apply_sampling(const cli_args & a, tern_sampler_params * sp, uint32_t n_ctx) {
    sp->temp = a.flt(O_TEMP, 0.8f);
    const long long k = a.num(O_TOP_K, 40);
    sp->top_k = k < 0 ? 0 : (int32_t) k;  // negative: off, as 0 (llama.cpp)
    sp->top_p = a.flt(O_TOP_P, 0.95f);
    sp->min_p = a.flt(O_MIN_P, 0.05f);
    sp->repeat_penalty = a.flt(O_REPEAT_PENALTY, 1.0f);
    sp->presence_penalty = a.flt(O_PRESENCE_PENALTY, 0.0f);
    sp->frequency_penalty = a.flt(O_FREQUENCY_PENALTY, 0.0f);
    const long long last_n = a.num(O_REPEAT_LAST_N, 64);
    sp->penalty_last_n = last_n < 0 ? (int32_t) n_ctx : (int32_t) last_n;  // -1: the context, as llama.cpp
    const long long seed = a.num(O_SEED, -1);
    sp->seed = seed < 0 ? random_seed() : (uint32_t) seed;
    return sp->seed;
}

std::vector<cli_bias> cli_logit_biases(const cli_args & a) {
    std::vector<cli_bias> v;
    for (const std::string & s : a.items[O_LOGIT_BIAS]) {
        char * end;
        const long t = strtol(s.c_str(), &end, 10);
        v.push_back({(tern_token) t, strtof(end, NULL)});
    }
    return v;
}

bool cli_biases_check(const char * cmd, const std::vector<cli_bias> & biases, const tern_model * m, bool ignore_eos) {
    const int32_t n_vocab = tern_model_n_vocab(m);
    for (const cli_bias & b : biases) {
        if (b.token >= n_vocab) {
            fprintf(stderr, "%s: --logit-bias: token %d is outside the vocabulary of %d\n", cmd, b.token, n_vocab);
            return false;
        }
    }
    // A bias that bans every token leaves nothing to sample: refused, not run.
    std::vector<bool> banned((size_t) n_vocab, false);
    int32_t n_banned = 0;
    for (const cli_bias & b : biases) {
        if (b.bias == -INFINITY && !banned[(size_t) b.token]) { banned[(size_t) b.token] = true; n_banned++; }
    }
    for (tern_token t = 0; ignore_eos && t < n_vocab; t++) {
        if (tern_token_is_eog(m, t) && !banned[(size_t) t]) { banned[(size_t) t] = true; n_banned++; }
    }
    if (n_banned == n_vocab) {
        fprintf(stderr, "%s: --logit-bias%s bans all %d tokens: nothing could be generated\n", cmd,
                ignore_eos ? " with --ignore-eos" : "", n_vocab);
        return false;
    }
    return true;
}

void cli_biases_apply(const std::vector<cli_bias> & biases, float * logits) {
    if (logits) for (const cli_bias & b : biases) logits[b.token] += b.bias;
}

std::string cli_process_escapes(const std::string & in) {
    std::string out;
    for (size_t i = 0; i < in.size(); i++) {
        if (in[i] != '\\' || i + 1 == in.size()) { out += in[i]; continue; }
        const char c = in[++i];
        switch (c) {
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case '\'': out += '\''; break;
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case 'x':
                if (i + 2 < in.size()) {
                    const char x[3] = { in[i + 1], in[i + 2], 0 };
                    char * end = NULL;
                    const long v = strtol(x, &end, 16);
                    if (end == x + 2) {
                        out += (char) v;
                        i += 2;
                        break;
                    }
                }
                out += "\\x";
                break;
            default: out += '\\'; out += c; break;
        }
    }
    return out;
}

std::vector<std::string> cli_stop_strings(const cli_args & a, bool escape) {
    std::vector<std::string> v;
    for (const std::string & s : a.items[O_REVERSE_PROMPT]) v.push_back(escape ? cli_process_escapes(s) : s);
    return v;
}
