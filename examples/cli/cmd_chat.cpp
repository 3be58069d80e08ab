// tern chat: a conversation with an instruct model, formatted by its chat
// template. The history stays in the KV cache: each turn formats the whole
// conversation (as llama.cpp's chat examples do) and decodes only the part
// after what was already decoded. Interactive on a terminal (or any stdin):
// Ctrl-C stops the reply in progress, Ctrl-C at the prompt or Ctrl-D exits,
// /clear forgets the conversation (the system prompt stays). For scripts:
// --messages FILE.json answers one conversation; --print-prompt prints the
// formatted prompt and exits.
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "chat_json.h"
#include "cli.h"

static void chat_usage(FILE * f) {
    fprintf(f,
        "usage: tern chat -m FILE [options]\n"
        "\n"
        "Chats with an instruct model: type a message, the reply streams back. The\n"
        "history stays in the KV cache; each turn evaluates only the new text.\n"
        "Ctrl-C stops a reply; Ctrl-C at the prompt or Ctrl-D exits; /clear starts over.\n"
        "\n"
        "options:\n"
        "  -m, --model FILE         GGUF model\n"
        "  -sys, --system-prompt S  system message\n"
        "  --chat-template T        a built-in template name (chatml, llama3, ...) or Jinja\n"
        "                           source (default: the model's tokenizer.chat_template,\n"
        "                           else chatml with a note)\n"
        "  --messages FILE.json     answer this conversation ([{\"role\": ..., \"content\": ...}])\n"
        "                           and exit\n"
        "  --print-prompt           with --messages: print the formatted prompt and exit\n"
        "                           (-m is only read for its template; not needed with\n"
        "                           --chat-template)\n"
        "  -n, --n-predict N        most tokens per reply (default -1: until the end of the turn)\n"
        "  -c, --ctx-size N         context size (default 4096, at most the training context)\n"
        "  -t, --threads N          threads (default: the online CPUs, at most 4)\n"
        "  --temp T                 temperature (default 0.8; 0: greedy)\n"
        "  --top-k K, --top-p P, --min-p P, --repeat-penalty R   as tern run\n"
        "  -s, --seed S             sampler seed (default 0)\n"
        "  --no-perf                no timings line after each reply\n"
        "  -h, --help               this text\n");
}

static volatile sig_atomic_t g_interrupted = 0;
static void on_sigint(int) { g_interrupted = 1; }

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Format messages; empty string and an error line when the template fails.
static bool format_chat(const char * tmpl, const std::vector<chat_msg> & msgs, bool add_assistant, std::string * out) {
    std::vector<tern_chat_message> v;
    for (const chat_msg & m : msgs) v.push_back({m.role.c_str(), m.content.c_str()});
    int32_t n = tern_chat_apply_template(tmpl, v.data(), v.size(), add_assistant, NULL, 0);
    if (n < 0) {
        fprintf(stderr, "tern chat: template '%.40s': %s\n", tmpl ? tmpl : "chatml", tern_last_error());
        return false;
    }
    std::vector<char> buf((size_t) n + 1);
    tern_chat_apply_template(tmpl, v.data(), v.size(), add_assistant, buf.data(), n + 1);
    out->assign(buf.data(), (size_t) n);
    return true;
}

static std::string piece(const tern_model * m, tern_token t) {
    char buf[256];
    int32_t n = tern_token_to_piece(m, t, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, (size_t) n) : std::string();
}

struct chat_session {
    tern_model * m;
    tern_context * ctx;
    tern_sampler * smpl;
    const char * tmpl;
    uint32_t n_ctx, n_batch;
    long n_predict;
    bool perf;
    std::vector<chat_msg> history;
    size_t decoded_len;  // bytes of the formatted conversation already in the cache
    int32_t n_past;
};

// Decode text (special tokens parsed) at n_past in n_batch pieces.
static tern_status feed(chat_session * s, const std::string & text, bool first, int32_t * n_tokens) {
    std::vector<tern_token> toks(text.size() + 8);
    int32_t n = tern_tokenize(s->m, text.data(), (int32_t) text.size(), toks.data(), (int32_t) toks.size(), first, 1);
    if (n < 0) {
        fprintf(stderr, "tern chat: %s\n", tern_last_error());
        return TERN_ERR_INVALID_ARG;
    }
    *n_tokens = n;
    for (int32_t i = 0; i < n; i += (int32_t) s->n_batch) {
        const int32_t k = n - i < (int32_t) s->n_batch ? n - i : (int32_t) s->n_batch;
        std::vector<tern_pos> pos(k);
        for (int32_t j = 0; j < k; j++) pos[j] = s->n_past + j;
        tern_batch b = tern_batch_get_one(toks.data() + i, k);
        b.pos = pos.data();
        tern_status st = tern_decode(s->ctx, b);
        if (st != TERN_OK) return st;
        s->n_past += k;
    }
    return TERN_OK;
}

// One assistant turn: format, decode the new part, stream the reply.
// Returns false when the conversation cannot go on (full context, an error).
static bool reply(chat_session * s, std::string * out) {
    std::string formatted;
    if (!format_chat(s->tmpl, s->history, true, &formatted)) return false;
    const std::string fresh = formatted.substr(s->decoded_len < formatted.size() ? s->decoded_len : formatted.size());
    const tern_perf_data p0 = tern_perf_context(s->ctx);
    int32_t n_prompt = 0;
    const double t0 = now_ms();
    tern_status st = feed(s, fresh, s->decoded_len == 0, &n_prompt);
    const double t1 = now_ms();
    if (st == TERN_ERR_CONTEXT_FULL || (st == TERN_OK && (uint32_t) s->n_past >= s->n_ctx)) {
        fprintf(stderr, "\ntern chat: context full (%u tokens): /clear to start over\n", s->n_ctx);
        return false;
    }
    if (st != TERN_OK) {
        fprintf(stderr, "\ntern chat: %s: %s\n", tern_status_str(st), tern_last_error());
        return false;
    }
    out->clear();
    g_interrupted = 0;
    int32_t n_gen = 0;
    bool full = false;
    for (long k = 0; s->n_predict < 0 || k < s->n_predict; k++) {
        if (g_interrupted) break;
        tern_token t = tern_sampler_sample(s->smpl, s->ctx, -1);
        if (t < 0 || tern_token_is_eog(s->m, t)) break;
        const std::string pc = piece(s->m, t);
        *out += pc;
        fputs(pc.c_str(), stdout);
        fflush(stdout);
        n_gen++;
        if ((uint32_t) s->n_past >= s->n_ctx) { full = true; break; }
        tern_batch b = tern_batch_get_one(&t, 1);
        tern_pos pos = s->n_past;
        b.pos = &pos;
        if (tern_decode(s->ctx, b) != TERN_OK) { full = true; break; }
        s->n_past++;
    }
    fputc('\n', stdout);
    fflush(stdout);
    if (s->perf) {
        const tern_perf_data p1 = tern_perf_context(s->ctx);
        const double e_ms = p1.t_eval_ms - p0.t_eval_ms;
        const int32_t e_n = p1.n_eval - p0.n_eval;
        fprintf(stderr, "[prompt %d tokens %.1f ms %.1f t/s | reply %d tokens %.1f ms %.1f t/s]\n", n_prompt, t1 - t0,
                t1 > t0 ? n_prompt * 1e3 / (t1 - t0) : 0.0, n_gen, e_ms, e_ms > 0 ? e_n * 1e3 / e_ms : 0.0);
    }
    if (g_interrupted) fprintf(stderr, "[stopped]\n");
    s->history.push_back({"assistant", *out});
    std::string so_far;
    if (!format_chat(s->tmpl, s->history, false, &so_far)) return false;
    s->decoded_len = so_far.size();
    if (full) {
        fprintf(stderr, "tern chat: context full (%u tokens): /clear to start over\n", s->n_ctx);
        return false;
    }
    return true;
}

int cmd_chat(int argc, char ** argv) {
    const char * path = NULL, * system_prompt = NULL, * tmpl_arg = NULL, * messages_file = NULL;
    bool print_prompt = false, perf = true;
    long n_online = sysconf(_SC_NPROCESSORS_ONLN);
    long n_predict = -1, n_ctx = 4096, n_threads = n_online > 0 && n_online < 4 ? n_online : 4, seed = 0;
    tern_sampler_params sp = tern_sampler_default_params();
    sp.temp = 0.8f; sp.top_k = 40; sp.top_p = 0.95f; sp.min_p = 0.05f; sp.repeat_penalty = 1.0f;
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        bool ok = true;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) ok = cli_value(argc, argv, i, path);
        else if (!strcmp(a, "-sys") || !strcmp(a, "--system-prompt")) ok = cli_value(argc, argv, i, system_prompt);
        else if (!strcmp(a, "--chat-template")) ok = cli_value(argc, argv, i, tmpl_arg);
        else if (!strcmp(a, "--messages")) ok = cli_value(argc, argv, i, messages_file);
        else if (!strcmp(a, "--print-prompt")) print_prompt = true;
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) ok = cli_int(argc, argv, i, n_predict, -1, INT32_MAX);
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) ok = cli_int(argc, argv, i, n_ctx, 0, INT32_MAX);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) ok = cli_int(argc, argv, i, n_threads, 1, TERN_MAX_THREADS);
        else if (!strcmp(a, "--temp")) ok = cli_float(argc, argv, i, sp.temp);
        else if (!strcmp(a, "--top-k")) { long k; ok = cli_int(argc, argv, i, k, 0, INT32_MAX); sp.top_k = (int32_t) k; }
        else if (!strcmp(a, "--top-p")) ok = cli_float(argc, argv, i, sp.top_p);
        else if (!strcmp(a, "--min-p")) ok = cli_float(argc, argv, i, sp.min_p);
        else if (!strcmp(a, "--repeat-penalty")) ok = cli_float(argc, argv, i, sp.repeat_penalty);
        else if (!strcmp(a, "-s") || !strcmp(a, "--seed")) ok = cli_int(argc, argv, i, seed, 0, (long) (UINT32_MAX > LONG_MAX ? LONG_MAX : UINT32_MAX));
        else if (!strcmp(a, "--no-perf")) perf = false;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { chat_usage(stdout); return 0; }
        else { fprintf(stderr, "tern chat: unknown option '%s'\n", a); chat_usage(stderr); return 1; }
        if (!ok) return 1;
    }
    if (print_prompt && !messages_file) { fprintf(stderr, "tern chat: --print-prompt needs --messages FILE\n"); return 1; }
    if (!path && !(print_prompt && tmpl_arg)) { fprintf(stderr, "tern chat: -m FILE is required\n"); return 1; }

    std::vector<chat_msg> messages;
    if (messages_file) {
        std::string text, error;
        if (!cli_read_file(messages_file, text, CLI_MAX_TEXT_BYTES)) return 1;
        if (!chat_json_parse_messages(text, &messages, &error)) {
            fprintf(stderr, "tern chat: %s: %s\n", messages_file, error.c_str());
            return 1;
        }
    }

    // The model: only its vocabulary and template for --print-prompt.
    tern_model * m = NULL;
    if (path) {
        tern_model_params mp = tern_model_default_params();
        mp.vocab_only = print_prompt;
        m = cli_load_model(path, mp);
        if (!m) return 1;
    }
    std::string tmpl;
    if (tmpl_arg) {
        tmpl = tmpl_arg;
    } else {
        const int32_t n = tern_model_chat_template(m, NULL, 0);
        if (n > 0) {
            std::vector<char> buf((size_t) n + 1);
            tern_model_chat_template(m, buf.data(), buf.size());
            tmpl.assign(buf.data(), (size_t) n);
        } else {
            tmpl = "chatml";
            if (!print_prompt) fprintf(stderr, "tern chat: the model has no chat template: using chatml\n");
        }
    }
    // Check the template once, before anything else happens.
    std::string probe;
    if (!format_chat(tmpl.c_str(), {{"user", "hi"}}, true, &probe)) {
        tern_model_free(m);
        return 1;
    }
    if (print_prompt) {
        std::string formatted;
        const bool ok = format_chat(tmpl.c_str(), messages, true, &formatted);
        if (ok) fwrite(formatted.data(), 1, formatted.size(), stdout);
        tern_model_free(m);
        return ok ? 0 : 1;
    }

    tern_context_params cp = tern_context_default_params();
    const int32_t n_train = tern_model_n_ctx_train(m);
    cp.n_ctx = (uint32_t) (n_ctx == 0 || n_ctx > n_train ? n_train : n_ctx);
    cp.n_batch = cp.n_ctx < 512 ? cp.n_ctx : 512;
    cp.n_threads = (int32_t) n_threads;
    sp.seed = (uint32_t) seed;
    tern_context * ctx = NULL;
    tern_sampler * smpl = NULL;
    tern_status st = tern_context_create(m, &cp, &ctx);
    if (st == TERN_OK) st = tern_sampler_create(m, &sp, NULL, 0, &smpl);
    if (st != TERN_OK) {
        fprintf(stderr, "tern chat: %s: %s\n", tern_status_str(st), tern_last_error());
        tern_context_free(ctx);
        tern_model_free(m);
        return 1;
    }
    chat_session s = {m, ctx, smpl, tmpl.c_str(), cp.n_ctx, cp.n_batch, n_predict, perf, {}, 0, 0};
    int rc = 0;
    if (messages_file) {
        s.history = messages;
        std::string out;
        rc = reply(&s, &out) ? 0 : 1;
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_sigint;
        sigaction(SIGINT, &sa, NULL);  // no SA_RESTART: a Ctrl-C interrupts the read at the prompt
        if (system_prompt) s.history.push_back({"system", system_prompt});
        const bool tty = isatty(0);
        std::string line;
        for (;;) {
            if (tty) { fputs("> ", stdout); fflush(stdout); }
            g_interrupted = 0;
            line.clear();
            int c;
            while ((c = fgetc(stdin)) != EOF && c != '\n') line += (char) c;
            if (g_interrupted || (c == EOF && line.empty())) {
                if (tty) fputc('\n', stdout);
                break;  // Ctrl-C at the prompt or Ctrl-D (end of input): a clean exit
            }
            if (line == "/clear") {
                tern_kv_cache_clear(ctx);
                tern_sampler_reset(smpl);
                s.history.clear();
                if (system_prompt) s.history.push_back({"system", system_prompt});
                s.decoded_len = 0;
                s.n_past = 0;
                fprintf(stderr, "[cleared]\n");
                continue;
            }
            if (line.empty()) continue;
            s.history.push_back({"user", line});
            std::string out;
            if (!reply(&s, &out)) break;
        }
    }
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
    return rc;
}
