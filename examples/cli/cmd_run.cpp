// tern run: generate text from a prompt, streaming it to stdout.
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <string>
#include <vector>
#include "cli.h"
#include "run_context.h"

#include <time.h>
#include <unistd.h>

static void run_usage(FILE * f) {
    fprintf(f,
        "usage: tern run -m FILE -p PROMPT [options]\n"
        "\n"
        "Generates text after the prompt and streams it to stdout.\n"
        "\n"
        "options:\n"
        "  -m, --model FILE         GGUF model\n"
        "  -p, --prompt TEXT        prompt (BOS added when the model asks for it)\n"
        "  -n, --n-predict N        tokens to generate (default 128; -1: until end of\n"
        "                           generation or a full context)\n"
        "  -c, --ctx-size N         context size in tokens (default 4096, at most the\n"
        "                           model's training context; 0: the training context)\n"
        "  -b, --batch-size N       tokens per graph evaluation (default 512)\n"
        "  -t, --threads N          threads (default: the online CPUs, at most 4)\n"
        "  --temp T                 temperature (default 0.8; 0: greedy)\n"
        "  --top-k K                top-k (default 40; 0: off)\n"
        "  --top-p P                top-p (default 0.95; 1: off)\n"
        "  --min-p P                min-p (default 0.05; 0: off)\n"
        "  --repeat-penalty R       repetition penalty (default 1.0: off)\n"
        "  --repeat-last-n N        tokens the penalty looks back over (default 64)\n"
        "  --seed S                 sampler seed (default 0)\n"
        "  --keep N                 tokens of the prompt kept when the context is full (default 0;\n"
        "                           -1: all); the rest is halved and shifted, as llama-cli does\n"
        "  --no-context-shift       stop at a full context instead (a note on stderr, exit 0)\n"
        "  --grp-attn-n N           Self-Extend group factor (default 1: off)\n"
        "  --grp-attn-w W           Self-Extend window (default 512)\n"
        "  -ctk, --cache-type-k T   KV cache key type: f16 (default), f32, q8_0, q4_0\n"
        "  -ctv, --cache-type-v T   KV cache value type: the same choices\n"
        "  --prompt-cache FILE      reuse the KV state saved after the same prompt prefix;\n"
        "                           save it there after the prompt\n"
        "  --no-mmap                read() the model instead of mapping it\n"
        "  --check-tensors          refuse a model whose weights or block scales hold NaN/Inf\n"
        "  --no-repack              keep the weights in the file's layout (default: rewritten at load\n"
        "                           into the CPU kernels' interleaved layout where they have one)\n"
        "  --json                   stream nothing; print one JSON object at the end:\n"
        "                           prompt_tokens, tokens, text, timings\n"
        "  --logits-out FILE        write float32 logits [n_prompt][n_vocab] of every\n"
        "                           prompt position (the prompt decoded in one batch)\n"
        "  -h, --help               this text\n");
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static std::string piece(tern_model * m, tern_token t) {
    char buf[256];
    int32_t n = tern_token_to_piece(m, t, buf, sizeof(buf), 0);
    if (n == INT32_MIN) return std::string();  // not a token of this vocabulary (the sampler never gives one)
    if (n < 0) {
        std::vector<char> big(-n);
        n = tern_token_to_piece(m, t, big.data(), (int32_t) big.size(), 0);
        return std::string(big.data(), n > 0 ? n : 0);
    }
    return std::string(buf, n);
}

int cmd_run(int argc, char ** argv) {
    const char * path = NULL, * prompt = NULL, * logits_out = NULL;
    long n_online = sysconf(_SC_NPROCESSORS_ONLN);
    long n_predict = 128, n_ctx = 4096, n_batch = 512, n_threads = n_online > 0 && n_online < 4 ? n_online : 4;
    long seed = 0, last_n = 64;
    bool json = false, context_shift = true;
    long n_keep = 0, ga_n = 1, ga_w = 512;
    const char * prompt_cache = NULL;
    tern_type type_k = TERN_TYPE_F16, type_v = TERN_TYPE_F16;
    tern_model_params mp = tern_model_default_params();
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = 0.8f; sp.top_k = 40; sp.top_p = 0.95f; sp.min_p = 0.05f; sp.repeat_penalty = 1.0f;
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        bool ok = true;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) ok = cli_value(argc, argv, i, path);
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) ok = cli_value(argc, argv, i, prompt);
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) ok = cli_int(argc, argv, i, n_predict, -1, INT32_MAX);
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) ok = cli_int(argc, argv, i, n_ctx, 0, INT32_MAX);
        else if (!strcmp(a, "-b") || !strcmp(a, "--batch-size")) ok = cli_int(argc, argv, i, n_batch, 1, INT32_MAX);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) ok = cli_int(argc, argv, i, n_threads, 1, TERN_MAX_THREADS);
        else if (!strcmp(a, "--temp")) ok = cli_float(argc, argv, i, sp.temp);
        else if (!strcmp(a, "--top-k")) { long k; ok = cli_int(argc, argv, i, k, 0, INT32_MAX); sp.top_k = (int32_t) k; }
        else if (!strcmp(a, "--top-p")) ok = cli_float(argc, argv, i, sp.top_p);
        else if (!strcmp(a, "--min-p")) ok = cli_float(argc, argv, i, sp.min_p);
        else if (!strcmp(a, "--repeat-penalty")) ok = cli_float(argc, argv, i, sp.repeat_penalty);
        else if (!strcmp(a, "--repeat-last-n")) ok = cli_int(argc, argv, i, last_n, -1, INT32_MAX);
        else if (!strcmp(a, "--seed")) ok = cli_int(argc, argv, i, seed, 0, (long) (UINT32_MAX > LONG_MAX ? LONG_MAX : UINT32_MAX));
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
        else if (!strcmp(a, "--no-repack")) mp.repack = 0;
        else if (!strcmp(a, "--check-tensors")) mp.check_tensors = 1;
        else if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--logits-out")) ok = cli_value(argc, argv, i, logits_out);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { run_usage(stdout); return 0; }
        else { fprintf(stderr, "tern run: unknown option '%s'\n", a); run_usage(stderr); return 1; }
        if (!ok) return 1;
    }
    if (!path || !prompt) { fprintf(stderr, "tern run: -m FILE and -p PROMPT are required\n"); return 1; }
    if (n_ctx < 0 || n_batch <= 0 || n_threads <= 0) {
        fprintf(stderr, "tern run: -c must be >= 0, -b and -t > 0\n");
        return 1;
    }
    sp.seed = (uint32_t) seed;
    sp.penalty_last_n = (int32_t) last_n;

    tern_model * m = cli_load_model(path, mp);
    if (!m) return 1;
    const double load_ms = tern_model_load_ms(m);
    const int32_t n_vocab = tern_model_n_vocab(m);

    // Prompt tokens.
    std::vector<tern_token> tokens(strlen(prompt) + 8);
    int32_t n_prompt = tern_tokenize(m, prompt, (int32_t) strlen(prompt), tokens.data(), (int32_t) tokens.size(),
                                     1, 0);
    if (n_prompt <= 0) {
        fprintf(stderr, "tern run: %s\n", n_prompt == 0 ? "the prompt has no tokens" : tern_last_error());
        tern_model_free(m);
        return 1;
    }
    tokens.resize(n_prompt);

    tern_context_params cp = tern_context_default_params();
    const int32_t n_train = tern_model_n_ctx_train(m);
    cp.n_ctx = (uint32_t) (n_ctx == 0 || n_ctx > n_train ? n_train : n_ctx);
    cp.n_batch = (uint32_t) n_batch;
    cp.n_threads = (int32_t) n_threads;
    cp.type_k = type_k;
    cp.type_v = type_v;
    if (ga_n > 1 && (ga_w % ga_n != 0)) {
        fprintf(stderr, "tern run: --grp-attn-w %ld must be a multiple of --grp-attn-n %ld\n", ga_w, ga_n);
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
    tern_context * ctx = NULL;
    tern_status st = tern_context_create(m, &cp, &ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "tern run: %s: %s\n", tern_status_str(st), tern_last_error());
        tern_model_free(m);
        return 1;
    }
    tern_sampler * smpl = NULL;
    st = tern_sampler_create(m, &sp, NULL, 0, &smpl);
    if (st != TERN_OK) {
        fprintf(stderr, "tern run: %s: %s\n", tern_status_str(st), tern_last_error());
        tern_context_free(ctx);
        tern_model_free(m);
        return 1;
    }

    int rc = 0;
    std::string text;
    std::vector<tern_token> generated;
    if (!json) {
        fputs(prompt, stdout);
        fflush(stdout);
    }
    // --keep: tokens of the prompt that a context shift keeps (BOS always).
    const int32_t keep = n_keep < 0 || n_keep > n_prompt ? n_prompt
                       : (int32_t) n_keep + (tern_add_bos(m) && n_prompt > 0 && tokens[0] == tern_token_bos(m));
    run_self_extend ga = { (int32_t) ga_n, (int32_t) ga_w, 0 };
    int32_t n_past = 0;          // position of the next token
    const double t0 = now_ms();
    // Prompt: what the prompt cache does not already hold.
    bool logits_ready = false;
    int32_t n_reused = 0;
    if (prompt_cache && !logits_out) n_reused = run_prompt_cache_load(ctx, prompt_cache, tokens, &logits_ready);
    const int32_t n_prompt_eval = logits_ready ? 0 : n_prompt - n_reused;
    n_past = n_reused;
    if (!logits_ready) {
        std::vector<tern_pos> pos(n_prompt_eval);
        for (int32_t i = 0; i < n_prompt_eval; i++) pos[i] = n_reused + i;
        tern_batch b = tern_batch_get_one(tokens.data() + n_reused, n_prompt_eval);
        b.pos = pos.data();
        if (logits_out) {
            std::vector<int8_t> all(n_prompt_eval, 1);
            b.logits = all.data();
            st = tern_decode(ctx, b);
        } else {
            st = tern_decode(ctx, b);
        }
        n_past = n_prompt;
    }
    if (st == TERN_OK && prompt_cache && !logits_out && n_prompt_eval > 0) run_prompt_cache_save(ctx, prompt_cache, tokens);
    const double t1 = now_ms();
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
    double t_gen = 0;
    const char * stop = "length";
    if (st == TERN_OK && rc == 0) {
        const double g0 = now_ms();
        for (long k = 0; n_predict < 0 || k < n_predict; k++) {
            tern_token t = tern_sampler_sample(smpl, ctx, -1);
            if (t < 0 || tern_token_is_eog(m, t)) { stop = "eog"; break; }
            generated.push_back(t);
            std::string pc = piece(m, t);
            text += pc;
            if (!json) { fputs(pc.c_str(), stdout); fflush(stdout); }
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
        t_gen = now_ms() - g0;
    }
    if (st != TERN_OK) {
        fprintf(stderr, "\ntern run: %s: %s\n", tern_status_str(st), tern_last_error());
        rc = 1;
    }
    if (!json) {
        fputc('\n', stdout);
    } else if (rc == 0) {
        std::string out = "{\"prompt_tokens\": [";
        for (int32_t i = 0; i < n_prompt; i++) out += (i ? ", " : "") + std::to_string(tokens[i]);
        out += "], \"tokens\": [";
        for (size_t i = 0; i < generated.size(); i++) out += (i ? ", " : "") + std::to_string(generated[i]);
        out += "], \"text\": ";
        json_append_string(out, text);
        char timings[256];
        snprintf(timings, sizeof(timings),
                 ", \"stop\": \"%s\", \"timings\": {\"load_ms\": %.3f, \"prompt_eval_tokens\": %d, "
                 "\"prompt_ms\": %.3f, \"prompt_tokens_per_s\": %.2f, \"gen_ms\": %.3f, \"gen_tokens_per_s\": %.2f}}",
                 stop, load_ms, n_prompt_eval, t1 - t0, (t1 - t0) > 0 ? n_prompt_eval * 1e3 / (t1 - t0) : 0.0, t_gen,
                 t_gen > 0 ? generated.size() * 1e3 / t_gen : 0.0);
        out += timings;
        puts(out.c_str());
    }
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
    return rc;
}
