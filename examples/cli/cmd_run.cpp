// tern run: generate text from a prompt, streaming it to stdout, with
// llama-cli's flags and habits (special tokens and escapes in the prompt, a
// random seed by default, stop strings, logit biases, timings on stderr).
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
#include "args_apply.h"
#include "grammar_flags.h"
#include "options.h"
#include "run_context.h"

static const cli_command run_command = {
    CLI_RUN, "tern run",
    "usage: tern run -m FILE [-p PROMPT | -f FILE] [options]\n"
    "\n"
    "Generates text after the prompt and streams it to stdout; timings go to stderr.\n"
    "Options take their value as `--opt value` or `--opt=value`.\n"
    "\n"
    "options:\n",
    NULL,
};

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

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
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
    cli_args args;
    const cli_result pr = cli_parse(run_command, argc, argv, &args);
    if (pr != CLI_GO) return pr == CLI_EXIT_OK ? 0 : 1;
    if (args.has(O_VERSION)) { cli_print_version(); return 0; }
    cli_devices dev;
    cli_devices_from_args(args, &dev);
    if (dev.list) {
        cli_list_devices(stdout);
        return 0;
    }
    const char * path = args.str(O_MODEL), * prompt_arg = args.str(O_PROMPT), * prompt_file = args.str(O_FILE);
    const char * logits_out = args.str(O_LOGITS_OUT), * prompt_cache = args.str(O_PROMPT_CACHE);
    const long long n_predict = args.num(O_N_PREDICT, 128), n_keep = args.num(O_KEEP, 0);
    const long long ga_n = args.num(O_GRP_ATTN_N, 1), ga_w = args.num(O_GRP_ATTN_W, 512);
    const bool json = args.has(O_JSON), context_shift = !args.has(O_NO_CONTEXT_SHIFT), ignore_eos = args.has(O_IGNORE_EOS);
    const bool escape = !args.has(O_NO_ESCAPE) || args.last[O_ESCAPE] > args.last[O_NO_ESCAPE];  // the last wins
    const bool perf = !args.has(O_NO_PERF), verbose = args.has(O_VERBOSE);
    std::vector<std::string> stops = cli_stop_strings(args, escape);
    std::vector<cli_bias> biases = cli_logit_biases(args);
    tern_model_params mp = tern_model_default_params();
    cli_apply_model(args, &mp);
    tern_sampler_params sp = tern_sampler_default_params();
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
    cli_grammar grammar;
    if (!cli_grammar_from_args("tern run", args, &grammar)) return 1;
    std::string prompt;   // none given: empty (generation starts after BOS), as llama-cli
    if (prompt_arg) prompt = prompt_arg;
    else if (prompt_file && !strcmp(prompt_file, "-")) {
        if (!cli_read_stdin("tern run", prompt)) return 1;
    } else if (prompt_file) {
        if (!cli_read_file(prompt_file, prompt, CLI_MAX_TEXT_BYTES)) return 1;
        if (!prompt.empty() && prompt.back() == '\n') prompt.pop_back();  // as llama-cli's -f
    }
    if (escape) {
        prompt = cli_process_escapes(prompt);
    }
    if (prompt.size() > (size_t) INT32_MAX) { fprintf(stderr, "tern run: the prompt is too long\n"); return 1; }
    tern_context_params cp = tern_context_default_params();
    cli_devices_apply("tern run", dev, &mp, &cp);

    tern_model * m = cli_load_model(path, mp);
    if (!m) return 1;
    cli_devices_loaded("tern run", dev, m);
    const int32_t n_vocab = tern_model_n_vocab(m);
    if (ignore_eos) {  // as llama.cpp: every end-of-generation token biased to -inf
        for (tern_token t = 0; t < n_vocab; t++) {
            if (tern_token_is_eog(m, t)) biases.push_back({t, -INFINITY});
        }
    }
    if (!cli_biases_check("tern run", biases, m, ignore_eos)) {
        tern_model_free(m);
        return 1;
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

    cli_apply_context(args, &cp, tern_model_n_ctx_train(m));
    const uint32_t used_seed = cli_apply_sampling(args, &sp, cp.n_ctx);
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
            cli_biases_apply(biases, logits);
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
