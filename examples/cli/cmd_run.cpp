// tern run: generate text from a prompt, streaming it to stdout, with
// llama-cli's flags and habits (special tokens and escapes in the prompt, a
// random seed by default, stop strings, logit biases, timings on stderr).
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cli.h"
#include "device_flags.h"
#include "grammar_flags.h"
#include "run_context.h"

static const char * const run_usage_head =
        "usage: tern run -m FILE [-p PROMPT | -f FILE] [options]\n"
        "\n"
        "Generates text after the prompt and streams it to stdout; timings go to stderr.\n"
        "\n"
        "options:\n"
        "  -m, --model FILE         GGUF model\n"
        "  -p, --prompt TEXT        prompt (BOS added when the model asks for it; special\n"
        "                           tokens such as <|im_start|> are parsed, as llama-cli does;\n"
        "                           default: empty, the text starts after BOS)\n"
        "  -f, --file FILE          read the prompt from a file (-: standard input), byte for\n"
        "                           byte but one trailing newline of a FILE, as llama-cli\n"
        "  -e, --escape             process escapes in the prompt and the -r strings:\n"
        "                           \\n \\r \\t \\' \\\" \\\\ \\xNN (default)\n"
        "  --no-escape              take the prompt literally\n"
        "  -n, --n-predict N        tokens to generate (default 128; -1: until end of\n"
        "                           generation: with context shift on, that may be never;\n"
        "                           with --no-context-shift, at the latest a full context)\n"
        "  -c, --ctx-size N         context size in tokens (default 4096, at most the\n"
        "                           model's training context; 0: the training context)\n"
        "  -b, --batch-size N       tokens per graph evaluation (default 512)\n"
        "  -ub, --ubatch-size N     the same limit, as llama.cpp's physical batch (the smaller wins)\n"
        "  -t, --threads N          threads (default: the online CPUs, at most 4)\n";
static const char * const run_usage_tail =
        "  --temp T                 temperature (default 0.8; 0: greedy)\n"
        "  --top-k K                top-k (default 40; 0 or negative: off)\n"
        "  --top-p P                top-p (default 0.95; 1: off)\n"
        "  --min-p P                min-p (default 0.05; 0: off)\n"
        "  --repeat-penalty R       repetition penalty (default 1.0: off)\n"
        "  --presence-penalty P     presence penalty (default 0: off)\n"
        "  --frequency-penalty F    frequency penalty (default 0: off)\n"
        "  --repeat-last-n N        tokens the penalties look back over, prompt included\n"
        "                           (default 64; 0: off; -1: the context size)\n"
        "  -s, --seed S             sampler seed (default and -1: random; printed with -v and --json)\n"
        "  -r, --reverse-prompt S   stop when the generated text ends with S, or S and at most\n"
        "                           2 more characters, as llama-cli without -i (repeatable)\n"
        "  --ignore-eos             never end at an end-of-generation token\n"
        "  -l, --logit-bias T(+|-)B add B to token T's logit before sampling (repeatable;\n"
        "                           e.g. 15043+1, 15043-inf)\n"
        "  --keep N                 tokens of the prompt kept when the context is full (default 0;\n"
        "                           -1: all); the rest is halved and shifted, as llama-cli does\n"
        "  --no-context-shift       stop at a full context instead (a note on stderr, exit 0)\n"
        "  --grp-attn-n N           Self-Extend group factor (default 1: off)\n"
        "  --grp-attn-w W           Self-Extend window (default 512)\n"
        "  -ctk, --cache-type-k T   KV cache key type: f16 (default), f32, q8_0, q4_0\n"
        "  -ctv, --cache-type-v T   KV cache value type: the same choices\n"
        "  --prompt-cache FILE      reuse the KV state saved after the same prompt prefix;\n"
        "                           save it there after the prompt (replaced whole; a FILE that\n"
        "                           exists and is not a Tern state is refused, never overwritten)\n"
        "  --no-mmap                read() the model instead of mapping it\n"
        "  --mlock                  lock the mapped model in memory\n"
        "  --check-tensors          refuse a model whose weights or block scales hold NaN/Inf\n"
        "  --no-repack              keep the weights in the file's layout (default: rewritten at load\n"
        "                           into the CPU kernels' interleaved layout where they have one)\n"
        "  --no-perf                no timings on stderr at the end (load, prompt eval, eval,\n"
        "                           total, as llama_perf_context_print)\n"
        "  -v, --verbose            the seed and settings on stderr, and how each graph runs\n"
        "                           (splits and copies, with devices)\n"
        "  --json                   stream nothing; print one JSON object at the end:\n"
        "                           prompt_tokens, tokens, text, stop (length, eog, stop_string,\n"
        "                           grammar, context_full), seed, timings (sample_ms: sampling with\n"
        "                           any grammar; gen_wall_ms: the whole generation loop)\n"
        "  --logits-out FILE        write float32 logits [n_prompt][n_vocab] of every\n"
        "                           prompt position (the prompt decoded in one batch)\n"
        "  --version                version, kernel set and the devices present with their features\n"
        "  -h, --help               this text\n";

static void run_usage(FILE * f) {
    fprintf(f, "%s%s%s%s", run_usage_head, cli_devices_help, cli_grammar_help, run_usage_tail);
}

static std::string piece(tern_model * m, tern_token t, int special = 0) {
    char buf[256];
    int32_t n = tern_token_to_piece(m, t, buf, sizeof(buf), special);
    if (n == INT32_MIN) return std::string();  // not a token of this vocabulary (the sampler never gives one)
    if (n < 0) {
        std::vector<char> big(-n);
        n = tern_token_to_piece(m, t, big.data(), (int32_t) big.size(), special);
        return std::string(big.data(), n > 0 ? n : 0);
    }
    return std::string(buf, n);
}

// llama.cpp's string_process_escapes: \n \r \t \' \" \\ and \xNN (two characters
// strtol reads whole in base 16); anything else stays as written.
static std::string process_escapes(const std::string & in) {
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


// A random seed when none is given (llama-cli's default): the clock and the pid.
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

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

struct logit_bias {
    tern_token token;
    float bias;
};

// "TOKEN+BIAS" or "TOKEN-BIAS" (BIAS may be inf).
static bool parse_bias(const char * s, logit_bias * out) {
    char * end;
    errno = 0;
    const long t = strtol(s, &end, 10);
    if (end == s || errno || t < 0 || t > INT32_MAX || (*end != '+' && *end != '-')) return false;
    const char * b = end;
    char * bend;
    const float v = strtof(b, &bend);
    if (bend == b || *bend != 0 || isnan(v)) return false;
    out->token = (tern_token) t;
    out->bias = v;
    return true;
}

// -r as llama-cli checks it without -i: the text of the last 32 tokens
// (special tokens written out) holds a stop string starting no earlier than
// its length + 2 characters from the end (a token may carry a little more),
// or the last token is a stop string that is one token. Here the match must
// also reach the generated text: a stop string inside the prompt stops nothing.
struct stop_check {
    std::vector<std::string> strings;
    std::vector<tern_token> single;  // stop strings that tokenize to one token
};

static bool stop_found(tern_model * m, const stop_check & sc, const std::vector<tern_token> & prompt,
                       const std::vector<tern_token> & generated) {
    if (sc.strings.empty() || generated.empty()) return false;
    const tern_token last = generated.back();
    for (tern_token t : sc.single) if (t == last) return true;
    const size_t n_prev = 32;
    const size_t n_gen = generated.size() < n_prev ? generated.size() : n_prev;
    const size_t n_old = n_gen < n_prev ? (prompt.size() < n_prev - n_gen ? prompt.size() : n_prev - n_gen) : 0;
    std::string tail;
    for (size_t i = prompt.size() - n_old; i < prompt.size(); i++) tail += piece(m, prompt[i], 1);
    const size_t prompt_chars = tail.size();
    for (size_t i = generated.size() - n_gen; i < generated.size(); i++) tail += piece(m, generated[i], 1);
    for (const std::string & s : sc.strings) {
        size_t from = tail.size() > s.size() + 2 ? tail.size() - (s.size() + 2) : 0;
        for (size_t at; (at = tail.find(s, from)) != std::string::npos; from = at + 1) {
            if (at + s.size() > prompt_chars) return true;
        }
    }
    return false;
}

int cmd_run(int argc, char ** argv) {
    const double t_start_ms = now_ms();
    const char * path = NULL, * prompt_arg = NULL, * prompt_file = NULL, * logits_out = NULL, * prompt_cache = NULL;
    long n_online = sysconf(_SC_NPROCESSORS_ONLN);
    long long n_predict = 128, n_ctx = 4096, n_batch = 512, n_ubatch = 0, n_threads = n_online > 0 && n_online < 4 ? n_online : 4;
    long long seed = -1, last_n = 64, n_keep = 0, ga_n = 1, ga_w = 512;
    cli_devices dev;
    cli_grammar grammar;
    bool json = false, context_shift = true, escape = true, ignore_eos = false, perf = true, verbose = false;
    std::vector<std::string> stops;
    std::vector<logit_bias> biases;
    tern_type type_k = TERN_TYPE_F16, type_v = TERN_TYPE_F16;
    tern_model_params mp = tern_model_default_params();
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = 0.8f; sp.top_k = 40; sp.top_p = 0.95f; sp.min_p = 0.05f; sp.repeat_penalty = 1.0f;
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        bool ok = true;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) ok = cli_value(argc, argv, i, path);
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) ok = cli_value(argc, argv, i, prompt_arg);
        else if (!strcmp(a, "-f") || !strcmp(a, "--file")) ok = cli_value(argc, argv, i, prompt_file);
        else if (!strcmp(a, "-e") || !strcmp(a, "--escape")) escape = true;
        else if (!strcmp(a, "--no-escape")) escape = false;
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) ok = cli_int(argc, argv, i, n_predict, -1, INT32_MAX);
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) ok = cli_int(argc, argv, i, n_ctx, 0, INT32_MAX);
        else if (!strcmp(a, "-b") || !strcmp(a, "--batch-size")) ok = cli_int(argc, argv, i, n_batch, 1, INT32_MAX);
        else if (!strcmp(a, "-ub") || !strcmp(a, "--ubatch-size")) ok = cli_int(argc, argv, i, n_ubatch, 1, INT32_MAX);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) ok = cli_int(argc, argv, i, n_threads, 1, TERN_MAX_THREADS);
        else if (cli_device_flag("tern run", argc, argv, i, dev, &ok)) {}
        else if (cli_grammar_flag("tern run", argc, argv, i, grammar, &ok)) {}
        else if (!strcmp(a, "--temp")) ok = cli_float(argc, argv, i, sp.temp);
        else if (!strcmp(a, "--top-k")) {  // negative: off, as 0 (llama.cpp)
            long long k;
            ok = cli_int(argc, argv, i, k, INT32_MIN, INT32_MAX);
            sp.top_k = k < 0 ? 0 : (int32_t) k;
        }
        else if (!strcmp(a, "--top-p")) ok = cli_float(argc, argv, i, sp.top_p);
        else if (!strcmp(a, "--min-p")) ok = cli_float(argc, argv, i, sp.min_p);
        else if (!strcmp(a, "--repeat-penalty")) ok = cli_float(argc, argv, i, sp.repeat_penalty);
        else if (!strcmp(a, "--presence-penalty")) ok = cli_float(argc, argv, i, sp.presence_penalty);
        else if (!strcmp(a, "--frequency-penalty")) ok = cli_float(argc, argv, i, sp.frequency_penalty);
        else if (!strcmp(a, "--repeat-last-n")) ok = cli_int(argc, argv, i, last_n, -1, INT32_MAX);
        else if (!strcmp(a, "-s") || !strcmp(a, "--seed")) ok = cli_int(argc, argv, i, seed, -1, (long long) UINT32_MAX);  // -1: random
        else if (!strcmp(a, "-r") || !strcmp(a, "--reverse-prompt")) {
            const char * v;
            ok = cli_value(argc, argv, i, v);
            if (ok && !*v) { fprintf(stderr, "tern run: %s: an empty stop string\n", a); ok = false; }
            if (ok) stops.push_back(v);
        }
        else if (!strcmp(a, "--ignore-eos")) ignore_eos = true;
        else if (!strcmp(a, "-l") || !strcmp(a, "--logit-bias")) {
            const char * v;
            logit_bias b;
            ok = cli_value(argc, argv, i, v);
            if (ok && !parse_bias(v, &b)) {
                fprintf(stderr, "tern run: %s: '%s' is not TOKEN+BIAS or TOKEN-BIAS\n", a, v);
                ok = false;
            }
            if (ok) biases.push_back(b);
        }
        else if (!strcmp(a, "--keep")) ok = cli_int(argc, argv, i, n_keep, -1, INT32_MAX);
        else if (!strcmp(a, "--no-context-shift")) context_shift = false;
        else if (!strcmp(a, "--grp-attn-n") || !strcmp(a, "-gan")) ok = cli_int(argc, argv, i, ga_n, 1, 1 << 20);
        else if (!strcmp(a, "--grp-attn-w") || !strcmp(a, "-gaw")) ok = cli_int(argc, argv, i, ga_w, 1, INT32_MAX);
        else if (!strcmp(a, "-ctk") || !strcmp(a, "--cache-type-k") || !strcmp(a, "-ctv") || !strcmp(a, "--cache-type-v")) {
            const char * v;
            ok = cli_value(argc, argv, i, v);
            tern_type t = TERN_TYPE_F16;
            if (ok && !strcmp(v, "f16")) t = TERN_TYPE_F16;
            else if (ok && !strcmp(v, "f32")) t = TERN_TYPE_F32;
            else if (ok && !strcmp(v, "q8_0")) t = TERN_TYPE_Q8_0;
            else if (ok && !strcmp(v, "q4_0")) t = TERN_TYPE_Q4_0;
            else if (ok) { fprintf(stderr, "tern run: %s: '%s' is not f16, f32, q8_0 or q4_0\n", a, v); ok = false; }
            if (a[3] == 'k' || !strcmp(a, "--cache-type-k")) type_k = t; else type_v = t;
        }
        else if (!strcmp(a, "--prompt-cache")) ok = cli_value(argc, argv, i, prompt_cache);
        else if (!strcmp(a, "--no-mmap")) mp.use_mmap = 0;
        else if (!strcmp(a, "--mlock")) mp.use_mlock = 1;
        else if (!strcmp(a, "--no-repack")) mp.repack = 0;
        else if (!strcmp(a, "--check-tensors")) mp.check_tensors = 1;
        else if (!strcmp(a, "--no-perf")) perf = false;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) verbose = true;
        else if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--logits-out")) ok = cli_value(argc, argv, i, logits_out);
        else if (!strcmp(a, "--version")) { cli_print_version(); return 0; }
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { run_usage(stdout); return 0; }
        else { fprintf(stderr, "tern run: unknown option '%s'\n", a); run_usage(stderr); return 1; }
        if (!ok) return 1;
    }
    if (dev.list) {
        cli_list_devices(stdout);
        return 0;
    }
    if (!path || (prompt_arg && prompt_file)) {
        fprintf(stderr, "tern run: -m FILE is required, with at most one of -p PROMPT and -f FILE\n");
        return 1;
    }
    if (prompt_cache && logits_out) {
        fprintf(stderr, "tern run: --prompt-cache and --logits-out cannot be used together (a cached prompt's logits "
                "are not computed again)\n");
        return 1;
    }
    if (prompt_cache && !run_prompt_cache_check(prompt_cache, path)) return 1;
    std::string prompt;   // none given: empty (generation starts after BOS), as llama-cli
    if (prompt_arg) prompt = prompt_arg;
    else if (prompt_file && !strcmp(prompt_file, "-")) {
        if (!cli_read_stdin("tern run", prompt)) return 1;
    } else if (prompt_file) {
        if (!cli_read_file(prompt_file, prompt, CLI_MAX_TEXT_BYTES)) return 1;
        if (!prompt.empty() && prompt.back() == '\n') prompt.pop_back();  // as llama-cli's -f
    }
    if (escape) {
        prompt = process_escapes(prompt);
        for (std::string & s : stops) s = process_escapes(s);
    }
    if (prompt.size() > (size_t) INT32_MAX) { fprintf(stderr, "tern run: the prompt is too long\n"); return 1; }
    tern_context_params cp = tern_context_default_params();
    cli_devices_apply("tern run", dev, &mp, &cp);
    if (n_ubatch > 0 && n_ubatch < n_batch) n_batch = n_ubatch;
    const uint32_t used_seed = seed < 0 ? random_seed() : (uint32_t) seed;
    sp.seed = used_seed;

    tern_model * m = cli_load_model(path, mp);
    if (!m) return 1;
    cli_devices_loaded("tern run", dev, m);
    const int32_t n_vocab = tern_model_n_vocab(m);
    for (const logit_bias & b : biases) {
        if (b.token >= n_vocab) {
            fprintf(stderr, "tern run: --logit-bias: token %d is outside the vocabulary of %d\n", b.token, n_vocab);
            tern_model_free(m);
            return 1;
        }
    }
    if (ignore_eos) {  // as llama.cpp: every end-of-generation token biased to -inf
        for (tern_token t = 0; t < n_vocab; t++) {
            if (tern_token_is_eog(m, t)) biases.push_back({t, -INFINITY});
        }
    }
    {   // A bias that bans every token leaves nothing to sample: refused, not run.
        std::vector<bool> banned((size_t) n_vocab, false);
        int32_t n_banned = 0;
        for (const logit_bias & b : biases) {
            if (b.bias == -INFINITY && !banned[(size_t) b.token]) { banned[(size_t) b.token] = true; n_banned++; }
        }
        if (n_banned == n_vocab) {
            fprintf(stderr, "tern run: --logit-bias%s bans all %d tokens: nothing could be generated\n",
                    ignore_eos ? " with --ignore-eos" : "", n_vocab);
            tern_model_free(m);
            return 1;
        }
    }

    // Prompt tokens, special tokens parsed (llama-cli's behaviour).
    std::vector<tern_token> tokens(prompt.size() + 8);
    int32_t n_prompt = tern_tokenize(m, prompt.data(), (int32_t) prompt.size(), tokens.data(), (int32_t) tokens.size(),
                                     1, 1);
    if (n_prompt <= 0) {
        fprintf(stderr, "tern run: %s\n", n_prompt == 0 ? "the prompt has no tokens" : tern_last_error());
        tern_model_free(m);
        return 1;
    }
    tokens.resize(n_prompt);

    const int32_t n_train = tern_model_n_ctx_train(m);
    cp.n_ctx = (uint32_t) (n_ctx == 0 || n_ctx > n_train ? n_train : n_ctx);
    sp.penalty_last_n = last_n < 0 ? (int32_t) cp.n_ctx : (int32_t) last_n;  // -1: the context, as llama.cpp
    cp.n_batch = (uint32_t) n_batch;
    cp.n_threads = (int32_t) n_threads;
    cp.type_k = type_k;
    cp.type_v = type_v;
    if (ga_n > 1 && (ga_w % ga_n != 0)) {
        fprintf(stderr, "tern run: --grp-attn-w %lld must be a multiple of --grp-attn-n %lld\n", ga_w, ga_n);
        tern_model_free(m);
        return 1;
    }
    // --logits-out: the whole prompt in one batch, logits of every position kept.
    if (logits_out) {
        cp.logits_all = 1;
        if (cp.n_batch < (uint32_t) n_prompt) cp.n_batch = (uint32_t) n_prompt;
    }
    if ((uint32_t) n_prompt > cp.n_ctx) {
        fprintf(stderr, "tern run: the prompt is %d tokens, more than the context of %u (-c)\n", n_prompt, cp.n_ctx);
        tern_model_free(m);
        return 1;
    }
    if (verbose) {
        fprintf(stderr, "tern run: seed %u, %d prompt tokens, context %u, batch %u, threads %d, kernels %s\n", used_seed,
                n_prompt, cp.n_ctx, cp.n_batch, cp.n_threads, tern_kernels_name());
    }
    tern_context * ctx = NULL;
    tern_status st = tern_context_create(m, &cp, &ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "tern run: %s: %s\n", tern_status_str(st), tern_last_error());
        tern_model_free(m);
        return 1;
    }
    cli_print_placement(stderr, m, ctx);
    if (verbose) cli_print_model_devices(stderr, m);
    if (verbose) {
        const int32_t need = tern_context_describe(ctx, NULL, 0);
        std::string text(need > 0 ? (size_t) need + 1 : 1, 0);
        if (need > 0 && tern_context_describe(ctx, &text[0], text.size()) == need) fprintf(stderr, "%s", text.c_str());
    }
    tern_sampler * smpl = NULL;
    st = tern_sampler_create(m, &sp, NULL, 0, &smpl);
    if (st != TERN_OK) {
        fprintf(stderr, "tern run: %s: %s\n", tern_status_str(st), tern_last_error());
        tern_context_free(ctx);
        tern_model_free(m);
        return 1;
    }
    if (!cli_grammar_attach("tern run", grammar, smpl, m, n_predict)) {
        tern_sampler_free(smpl);
        tern_context_free(ctx);
        tern_model_free(m);
        return 1;
    }
    // The penalty window starts with the prompt, as llama-cli's does (the grammar does not see it).
    for (tern_token t : tokens) tern_sampler_accept(smpl, t);
    stop_check sc;
    sc.strings = stops;
    for (const std::string & s : stops) {  // a stop string that is one (special) token also matches by id
        tern_token one[2];
        if (tern_tokenize(m, s.data(), (int32_t) s.size(), one, 2, 0, 1) == 1) sc.single.push_back(one[0]);
    }

    int rc = 0;
    std::string text;
    std::vector<tern_token> generated;
    if (!json) {
        fwrite(prompt.data(), 1, prompt.size(), stdout);  // all of it, a NUL byte too
        fflush(stdout);
    }
    // --keep: tokens of the prompt that a context shift keeps (BOS always).
    const int32_t keep = n_keep < 0 || n_keep > n_prompt ? n_prompt
                       : (int32_t) n_keep + (tern_add_bos(m) && n_prompt > 0 && tokens[0] == tern_token_bos(m));
    run_self_extend ga = { (int32_t) ga_n, (int32_t) ga_w, 0 };
    int32_t n_past = 0;  // position of the next token
    // Prompt: what the prompt cache does not already hold.
    bool logits_ready = false;
    int32_t n_reused = 0;
    if (prompt_cache && !logits_out) n_reused = run_prompt_cache_load(ctx, prompt_cache, tokens, &logits_ready);
    const int32_t n_prompt_eval = logits_ready ? 0 : n_prompt - n_reused;
    n_past = n_reused;
    if (!logits_ready) {
        std::vector<tern_pos> pos(n_prompt_eval);
        for (int32_t i = 0; i < n_prompt_eval; i++) pos[i] = n_reused + i;
        std::vector<int8_t> all(n_prompt_eval, 1);
        tern_batch b = tern_batch_get_one(tokens.data() + n_reused, n_prompt_eval);
        b.pos = pos.data();
        if (logits_out) b.logits = all.data();
        st = tern_decode(ctx, b);
        n_past = n_prompt;
    }
    if (st == TERN_OK && prompt_cache && !logits_out && n_prompt_eval > 0 && !run_prompt_cache_save(ctx, prompt_cache, tokens)) {
        rc = 1;  // asked for and not saved: an error, not a note
    }
    if (st == TERN_OK && logits_out) {
        FILE * f = fopen(logits_out, "wb");
        bool ok = f != NULL;
        for (int32_t i = 0; ok && i < n_prompt; i++) {
            const float * row = tern_get_logits_ith(ctx, i);
            ok = row && fwrite(row, sizeof(float), n_vocab, f) == (size_t) n_vocab;
        }
        if (f) ok = (fclose(f) == 0) && ok;
        if (!ok) { fprintf(stderr, "tern run: cannot write '%s'\n", logits_out); rc = 1; }
    }
    const char * stop = "length";
    double t_sample_ms = 0.0, t_gen_ms = 0.0;   // sampling (grammar included) and the whole generation loop
    int32_t n_sampled = 0;
    const double t_gen0 = now_ms();
    if (st == TERN_OK && rc == 0) {
        for (long long k = 0; n_predict < 0 || k < n_predict; k++) {
            float * logits = tern_get_logits_ith(ctx, -1);
            if (logits) for (const logit_bias & b : biases) logits[b.token] += b.bias;
            const double ts0 = now_ms();
            tern_token t = tern_sampler_sample(smpl, ctx, -1);
            t_sample_ms += now_ms() - ts0;
            n_sampled++;
            if (t < 0) {   // a grammar that cannot go on, or bad logits
                fprintf(stderr, "\ntern run: sampling: %s\n", tern_last_error());
                rc = 1;
                break;
            }
            if (tern_token_is_eog(m, t)) { stop = "eog"; break; }
            generated.push_back(t);
            std::string pc = piece(m, t);
            text += pc;
            if (!json) { fwrite(pc.data(), 1, pc.size(), stdout); fflush(stdout); }  // a NUL byte kept, not a cut
            if (stop_found(m, sc, tokens, generated)) { stop = "stop_string"; break; }
            if (tern_sampler_grammar_state(smpl) == 2) { stop = "grammar"; break; }   // complete, nothing can follow
            if (n_predict >= 0 && k + 1 == n_predict) break;
            // Room for the token: a full cache shifts (or stops), Self-Extend regroups.
            if (tern_kv_cache_used_cells(ctx) >= (int32_t) cp.n_ctx) {
                if (!context_shift || ga.n > 1 || run_context_shift(ctx, keep, &n_past) == 0) {
                    fprintf(stderr, "\ntern run: context full (%u tokens)%s\n", cp.n_ctx,
                            context_shift ? "" : "; --no-context-shift: stopping");
                    stop = "context_full";
                    break;
                }
            }
            run_self_extend_step(ctx, &ga, &n_past);
            tern_batch b = tern_batch_get_one(&t, 1);
            tern_pos pos = n_past;
            b.pos = &pos;
            st = tern_decode(ctx, b);
            if (st != TERN_OK) break;
            n_past++;
        }
    }
    t_gen_ms = now_ms() - t_gen0;
    if (st != TERN_OK) {
        fprintf(stderr, "\ntern run: %s: %s\n", tern_status_str(st), tern_last_error());
        rc = 1;
    }
    // Timings from the context's counters (llama_perf_context_print's): decodes
    // of several tokens are prompt evaluation, single-token decodes the eval runs
    // (one fewer than the generated tokens: the last one is never decoded).
    tern_perf_data pd;
    tern_perf_context(ctx, &pd);
    const double p_tps = pd.t_p_eval_ms > 0 ? pd.n_p_eval * 1e3 / pd.t_p_eval_ms : 0.0;
    const double e_tps = pd.t_eval_ms > 0 ? pd.n_eval * 1e3 / pd.t_eval_ms : 0.0;
    const double t_total_ms = now_ms() - t_start_ms;
    if (!json) {
        fputc('\n', stdout);
        fflush(stdout);
    } else if (rc == 0) {
        std::string out = "{\"prompt_tokens\": [";
        for (int32_t i = 0; i < n_prompt; i++) out += (i ? ", " : "") + std::to_string(tokens[i]);
        out += "], \"tokens\": [";
        for (size_t i = 0; i < generated.size(); i++) out += (i ? ", " : "") + std::to_string(generated[i]);
        out += "], \"text\": ";
        json_append_string(out, text);
        char tail[1024];
        snprintf(tail, sizeof(tail),
                 ", \"stop\": \"%s\", \"seed\": %u, \"timings\": {\"load_ms\": %.3f, \"load_file_ms\": %.3f, "
                 "\"load_repack_ms\": %.3f, \"load_upload_ms\": %.3f, \"prompt_eval_tokens\": %d, "
                 "\"prompt_ms\": %.3f, \"prompt_tokens_per_s\": %.2f, \"eval_runs\": %d, \"gen_ms\": %.3f, "
                 "\"gen_tokens_per_s\": %.2f, \"sample_ms\": %.3f, \"sample_runs\": %d, \"gen_wall_ms\": %.3f, "
                 "\"total_ms\": %.3f}",
                 stop, used_seed, pd.t_load_ms, pd.t_load_file_ms, pd.t_load_repack_ms, pd.t_load_upload_ms, n_prompt_eval,
                 pd.t_p_eval_ms, p_tps, pd.n_eval, pd.t_eval_ms, e_tps, t_sample_ms, n_sampled, t_gen_ms, t_total_ms);
        out += tail;
        snprintf(tail, sizeof(tail),
                 ", \"graphs\": {\"built\": %llu, \"splits\": %llu, \"copies_h2d\": %llu, \"copies_d2h\": %llu, "
                 "\"copies_d2d\": %llu, \"bytes_h2d\": %llu, \"bytes_d2h\": %llu, \"bytes_d2d\": %llu, \"launches\": %llu, "
                 "\"captures\": %llu, \"replays\": %llu, \"hits\": %llu, \"misses\": %llu, \"evictions\": %llu, "
                 "\"capture_failures\": %llu, \"submissions\": %llu}}",
                 (unsigned long long) pd.graphs_built, (unsigned long long) pd.splits, (unsigned long long) pd.copies_h2d,
                 (unsigned long long) pd.copies_d2h, (unsigned long long) pd.copies_d2d, (unsigned long long) pd.bytes_h2d,
                 (unsigned long long) pd.bytes_d2h, (unsigned long long) pd.bytes_d2d, (unsigned long long) pd.launches,
                 (unsigned long long) pd.captures, (unsigned long long) pd.replays, (unsigned long long) pd.hits,
                 (unsigned long long) pd.misses, (unsigned long long) pd.evictions, (unsigned long long) pd.capture_failures,
                 (unsigned long long) pd.submissions);
        out += tail;
        puts(out.c_str());
    }
    if (perf) {
        fprintf(stderr, "tern_perf:        load time = %10.2f ms (file %.2f, repack %.2f, device upload %.2f)\n", pd.t_load_ms,
                pd.t_load_file_ms, pd.t_load_repack_ms, pd.t_load_upload_ms);
        fprintf(stderr, "tern_perf: prompt eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)\n",
                pd.t_p_eval_ms, pd.n_p_eval, pd.n_p_eval ? pd.t_p_eval_ms / pd.n_p_eval : 0.0, p_tps);
        fprintf(stderr, "tern_perf:        eval time = %10.2f ms / %5d runs   (%8.2f ms per token, %8.2f tokens per second)\n",
                pd.t_eval_ms, pd.n_eval, pd.n_eval ? pd.t_eval_ms / pd.n_eval : 0.0, e_tps);
        fprintf(stderr, "tern_perf:    sampling time = %10.2f ms / %5d runs   (%8.2f ms per token, %8.2f tokens per second)\n",
                t_sample_ms, n_sampled, n_sampled ? t_sample_ms / n_sampled : 0.0,
                t_sample_ms > 0 ? n_sampled * 1e3 / t_sample_ms : 0.0);
        fprintf(stderr, "tern_perf:       total time = %10.2f ms / %5d tokens\n", t_total_ms,
                pd.n_p_eval + pd.n_eval);
        if (verbose || pd.splits > 0) {
            fprintf(stderr, "tern_perf:           graphs = %llu built, %llu splits, %llu captures, %llu replays (%llu hits, %llu misses, "
                    "%llu evictions, %llu failed captures), %llu eager launches, %llu device submissions\n",
                    (unsigned long long) pd.graphs_built, (unsigned long long) pd.splits, (unsigned long long) pd.captures,
                    (unsigned long long) pd.replays, (unsigned long long) pd.hits, (unsigned long long) pd.misses,
                    (unsigned long long) pd.evictions, (unsigned long long) pd.capture_failures, (unsigned long long) pd.launches,
                    (unsigned long long) pd.submissions);
            fprintf(stderr, "tern_perf:           copies = %llu host->device (%llu bytes), %llu device->host (%llu bytes), "
                    "%llu device->device (%llu bytes)\n",
                    (unsigned long long) pd.copies_h2d, (unsigned long long) pd.bytes_h2d, (unsigned long long) pd.copies_d2h,
                    (unsigned long long) pd.bytes_d2h, (unsigned long long) pd.copies_d2d, (unsigned long long) pd.bytes_d2d);
        }
    }
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
    return rc;
}
