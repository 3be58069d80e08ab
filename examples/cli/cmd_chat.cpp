// tern chat: a conversation with an instruct model, formatted by its chat
// template. The history stays in the KV cache: each turn formats the whole
// conversation (as llama.cpp's chat examples do) and decodes only the text after
// what the cache already holds. The cache holds exactly the formatted prompt of
// the last turn plus the reply's tokens, so the next turn's text starts with the
// template's end-of-turn marker; should a template change text already decoded
// (one that trims replies, say), the cache is cut back to the last point where
// the two agree and decoding resumes there.
//
// Interactive on a terminal (or any stdin): Ctrl-C stops the reply (or the
// prompt evaluation) in progress, Ctrl-C at the prompt or Ctrl-D exits with
// status 0, /clear forgets the conversation (the system prompt stays). A full
// context stops the reply with a note; the chat goes on (/clear makes room).
// For scripts: --messages FILE.json answers one conversation; --print-prompt
// prints the formatted prompt and exits.
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
#include "device_flags.h"
#include "args_apply.h"
#include "grammar_flags.h"
#include "options.h"

static const cli_command chat_command = {
    CLI_CHAT, "tern chat",
    "usage: tern chat -m FILE [options]\n"
    "       tern chat [-m FILE | --chat-template T] --messages FILE.json [--print-prompt]\n"
    "\n"
    "Chats with an instruct model: type a message, the reply streams back, and a\n"
    "timings line follows on stderr. The history stays in the KV cache; each turn\n"
    "evaluates only the new text. Ctrl-C stops a reply; Ctrl-C at the prompt or\n"
    "Ctrl-D exits; /clear starts over (keeping the system prompt); a line ending\n"
    "in \\ continues on the next line. Options take their value as `--opt value`\n"
    "or `--opt=value`; the sampling, context and device flags are tern run's.\n"
    "\n"
    "options:\n",
    NULL,
};

static volatile sig_atomic_t g_interrupted = 0;
static volatile sig_atomic_t g_abort_decode = 0;  // Ctrl-C may abort the decode in progress (prompt only)
static void on_sigint(int) { g_interrupted = 1; }
static int abort_cb(void *) { return g_abort_decode && g_interrupted; }

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// How the conversation is formatted: the template (NULL: the model's own) and
// whether Jinja source runs in the engine or is matched to a built-in.
struct chat_format {
    const tern_model * model;
    const char *       tmpl;
    bool               jinja;
    const char *       kwargs;   // --chat-template-kwargs: a JSON object, or NULL
};

// Whether the Jinja engine runs the template (else a built-in formats it).
static bool uses_jinja(const chat_format & f) {
    if (!f.jinja || !f.tmpl) return f.jinja;   // NULL: the model's own template
    const char * names[64];
    const int32_t n = tern_chat_builtin_templates(names, 64);
    for (int32_t i = 0; i < n && i < 64; i++) {
        if (!strcmp(f.tmpl, names[i])) return false;
    }
    return true;
}

// Format messages; false after an error line when the template fails.
static bool format_chat(const chat_format & f, const std::vector<chat_msg> & msgs, bool add_assistant, std::string * out) {
    std::vector<tern_chat_message> v;
    v.reserve(msgs.size());
    for (const chat_msg & m : msgs) v.push_back({m.role.c_str(), m.content.c_str()});
    tern_chat_params p = tern_chat_default_params();
    p.tmpl = f.tmpl;
    p.use_jinja = f.jinja;
    p.add_generation_prompt = add_assistant;
    p.extra_json = f.kwargs;
    const char * shown = f.tmpl ? f.tmpl : "(the model's)";
    const int32_t n = tern_chat_apply(f.model, &p, v.data(), v.size(), NULL, 0);
    if (n < 0) {
        const char * why = tern_last_error();  // it may quote the template: escaped too
        fprintf(stderr, "tern chat: template '%s': %s\n", cli_printable(shown, strlen(shown), 40).c_str(),
                cli_printable(why, strlen(why)).c_str());
        return false;
    }
    std::vector<char> buf((size_t) n + 1);
    if (tern_chat_apply(f.model, &p, v.data(), v.size(), buf.data(), (int32_t) buf.size()) != n) {
        fprintf(stderr, "tern chat: template: %s\n", tern_last_error());
        return false;
    }
    out->assign(buf.data(), (size_t) n);
    return true;
}

static std::string piece(const tern_model * m, tern_token t) {
    char buf[128];
    int32_t n = tern_token_to_piece(m, t, buf, sizeof(buf), 0);
    if (n >= 0) return std::string(buf, (size_t) n);
    if (n == INT32_MIN) return std::string();
    std::vector<char> big((size_t) -n);
    n = tern_token_to_piece(m, t, big.data(), (int32_t) big.size(), 0);
    return n > 0 ? std::string(big.data(), (size_t) n) : std::string();
}

// A point where the cache and the text agree: the first `bytes` bytes of
// `cached` are exactly the tokens at positions [0, n_past).
struct chat_mark {
    size_t bytes;
    int32_t n_past;
};

struct chat_session {
    tern_model * m;
    tern_context * ctx;
    tern_sampler * smpl;
    chat_format fmt;
    uint32_t n_ctx, n_batch;
    long long n_predict;
    bool perf, verbose;
    bool grammar;                  // each reply restarts the grammar
    std::vector<cli_bias> biases;  // -l, added to the logits before each sample
    std::vector<std::string> stops;  // -r: a reply ends with one (or it and at most 2 more characters)
    std::vector<chat_msg> history;
    std::string cached;            // the text whose tokens the cache holds
    std::vector<chat_mark> marks;  // increasing; marks[0] = {0, 0}
    int32_t n_past;
};

static void session_clear(chat_session * s) {
    tern_kv_cache_clear(s->ctx);
    tern_sampler_reset(s->smpl);
    s->cached.clear();
    s->marks.assign(1, chat_mark{0, 0});
    s->n_past = 0;
}

// Cut the cache back to the last mark at or before `bytes` of cached text.
static void session_truncate(chat_session * s, size_t bytes) {
    while (s->marks.size() > 1 && s->marks.back().bytes > bytes) s->marks.pop_back();
    const chat_mark & k = s->marks.back();
    if (k.n_past < s->n_past) tern_kv_cache_seq_rm(s->ctx, 0, k.n_past, -1);
    s->cached.resize(k.bytes);
    s->n_past = k.n_past;
}

enum feed_result { FEED_OK, FEED_FULL, FEED_STOPPED, FEED_ERROR };

// Decode text (special tokens parsed; BOS when the cache is empty) after what
// the cache holds, n_batch tokens at a time. Anything but FEED_OK leaves the
// cache as it was. *n_tokens: how many tokens the text made.
static feed_result feed(chat_session * s, const std::string & text, int32_t * n_tokens) {
    *n_tokens = 0;
    if (text.size() > (size_t) INT32_MAX - 16) {
        fprintf(stderr, "\ntern chat: the conversation is too long\n");
        return FEED_ERROR;
    }
    std::vector<tern_token> toks(text.size() + 16);
    const int add_bos = s->n_past == 0;
    int32_t n = tern_tokenize(s->m, text.data(), (int32_t) text.size(), toks.data(), (int32_t) toks.size(), add_bos, 1);
    if (n < 0 && n != INT32_MIN) {
        toks.resize((size_t) -n);
        n = tern_tokenize(s->m, text.data(), (int32_t) text.size(), toks.data(), (int32_t) toks.size(), add_bos, 1);
    }
    if (n < 0) {
        fprintf(stderr, "\ntern chat: %s\n", tern_last_error());
        return FEED_ERROR;
    }
    *n_tokens = n;
    if (n == 0) {
        fprintf(stderr, "tern chat: the formatted conversation is empty: nothing to answer\n");
        return FEED_ERROR;
    }
    if ((int64_t) s->n_past + n > (int64_t) s->n_ctx) return FEED_FULL;
    const int32_t start = s->n_past;
    std::vector<tern_pos> pos(s->n_batch);
    feed_result r = FEED_OK;
    g_abort_decode = 1;
    for (int32_t i = 0; i < n; i += (int32_t) s->n_batch) {
        if (g_interrupted) { r = FEED_STOPPED; break; }
        const int32_t k = n - i < (int32_t) s->n_batch ? n - i : (int32_t) s->n_batch;
        for (int32_t j = 0; j < k; j++) pos[j] = start + i + j;
        tern_batch b = tern_batch_get_one(toks.data() + i, k);
        b.pos = pos.data();
        const tern_status st = tern_decode(s->ctx, b);
        if (st == TERN_ERR_ABORTED) { r = FEED_STOPPED; break; }
        if (st == TERN_ERR_CONTEXT_FULL) { r = FEED_FULL; break; }
        if (st != TERN_OK) {
            fprintf(stderr, "\ntern chat: %s: %s\n", tern_status_str(st), tern_last_error());
            r = FEED_ERROR;
            break;
        }
    }
    g_abort_decode = 0;
    if (r != FEED_OK) {
        tern_kv_cache_seq_rm(s->ctx, 0, start, -1);
        return r;
    }
    for (int32_t i = 0; i < n; i++) tern_sampler_accept(s->smpl, toks[(size_t) i]);  // the penalties see the conversation
    s->n_past = start + n;
    s->cached += text;
    s->marks.push_back(chat_mark{s->cached.size(), s->n_past});
    return FEED_OK;
}

// -r as tern run checks it (llama-cli without -i): the reply ends with a stop
// string, or with one and at most 2 more characters (a token may carry more).
static bool stop_found(const std::vector<std::string> & stops, const std::string & reply) {
    for (const std::string & stop : stops) {
        const size_t from = reply.size() > stop.size() + 2 ? reply.size() - (stop.size() + 2) : 0;
        if (reply.find(stop, from) != std::string::npos) return true;
    }
    return false;
}

enum turn_result { TURN_DONE, TURN_STOPPED, TURN_FULL, TURN_NO_ROOM, TURN_ERROR };

static void print_full(const chat_session * s, bool in_prompt, int32_t n_more) {
    if (in_prompt)
        fprintf(stderr, "tern chat: context full: this turn needs %d tokens, %u of %u are free "
                "(/clear starts over; -c sets the size)\n", n_more, s->n_ctx - (uint32_t) s->n_past, s->n_ctx);
    else
        fprintf(stderr, "tern chat: context full (%u tokens): reply stopped (/clear starts over; -c sets the size)\n",
                s->n_ctx);
}

// One assistant turn for s->history (ending with the user's message): format,
// decode what the cache lacks, stream the reply to stdout and add it to the
// history. TURN_NO_ROOM and a prompt stopped by Ctrl-C leave history and cache
// as they were, less the last message (the caller drops it).
static turn_result turn(chat_session * s, std::string * reply) {
    reply->clear();
    std::string formatted;
    if (!format_chat(s->fmt, s->history, true, &formatted)) return TURN_ERROR;
    // The cache must hold a prefix of the new text: cut it back to where they agree.
    size_t same = 0;
    const size_t lim = s->cached.size() < formatted.size() ? s->cached.size() : formatted.size();
    while (same < lim && s->cached[same] == formatted[same]) same++;
    // The logits come from the last token decoded: there must be new text, so
    // a cache that holds it all already is cut back by at least one mark.
    if (same == formatted.size() && same > 0) same--;
    const int32_t n_had = s->n_past;
    const bool changed = same < s->cached.size();
    if (changed) session_truncate(s, same);
    if (s->verbose) {
        fprintf(stderr, "tern chat: cache: %d tokens kept", s->n_past);
        if (changed) fprintf(stderr, ", %d cut back (the new text differs from byte %zu on)", n_had - s->n_past, same);
        fputc('\n', stderr);
    }

    int32_t n_prompt = 0;
    const double t0 = now_ms();
    const feed_result fr = feed(s, formatted.substr(s->cached.size()), &n_prompt);
    const double t_prompt = now_ms() - t0;
    if (fr == FEED_FULL) { print_full(s, true, n_prompt); return TURN_NO_ROOM; }
    if (fr == FEED_STOPPED) { fprintf(stderr, "[stopped]\n"); return TURN_NO_ROOM; }
    if (fr == FEED_ERROR) return TURN_ERROR;

    int32_t n_eval = 0;
    double t_eval = 0;
    bool full = false, stopped = false, failed = false;
    if (s->grammar && tern_sampler_grammar_reset(s->smpl, s->n_predict < 0 || s->n_predict > INT32_MAX ? -1 : (int32_t) s->n_predict) != TERN_OK) {
        fprintf(stderr, "tern chat: grammar: %s\n", tern_last_error());
        return TURN_ERROR;
    }
    for (long long k = 0; s->n_predict < 0 || k < s->n_predict; k++) {
        if (g_interrupted) { stopped = true; break; }
        cli_biases_apply(s->biases, tern_get_logits_ith(s->ctx, -1));
        tern_token t = tern_sampler_sample(s->smpl, s->ctx, -1);
        if (t < 0) {
            fprintf(stderr, "\ntern chat: sampling: %s\n", tern_last_error());
            failed = true;
            break;
        }
        if (tern_token_is_eog(s->m, t)) break;
        const std::string pc = piece(s->m, t);
        *reply += pc;
        fwrite(pc.data(), 1, pc.size(), stdout);
        fflush(stdout);
        if (s->grammar && tern_sampler_grammar_state(s->smpl) == 2) break;   // the grammar's text is complete
        if (stop_found(s->stops, *reply)) break;
        if ((uint32_t) s->n_past >= s->n_ctx) { full = true; break; }
        tern_batch b = tern_batch_get_one(&t, 1);
        tern_pos pos = s->n_past;
        b.pos = &pos;
        const double e0 = now_ms();
        const tern_status st = tern_decode(s->ctx, b);
        t_eval += now_ms() - e0;
        if (st == TERN_ERR_CONTEXT_FULL) { full = true; break; }
        if (st != TERN_OK) {
            fprintf(stderr, "\ntern chat: %s: %s\n", tern_status_str(st), tern_last_error());
            failed = true;
            break;
        }
        n_eval++;
        s->n_past++;
        s->cached += pc;
        s->marks.push_back(chat_mark{s->cached.size(), s->n_past});
    }
    fputc('\n', stdout);
    fflush(stdout);
    if (s->perf)
        fprintf(stderr, "prompt eval: %d tokens, %.2f ms, %.2f t/s | eval: %d tokens, %.2f ms, %.2f t/s\n", n_prompt,
                t_prompt, t_prompt > 0 ? n_prompt * 1e3 / t_prompt : 0.0, n_eval, t_eval,
                t_eval > 0 ? n_eval * 1e3 / t_eval : 0.0);
    s->history.push_back({"assistant", *reply});
    if (failed) return TURN_ERROR;
    if (full) { print_full(s, false, 0); return TURN_FULL; }
    if (stopped) { fprintf(stderr, "[stopped]\n"); return TURN_STOPPED; }
    return TURN_DONE;
}

// One line of input (without its newline); a line ending in '\' continues on
// the next. false at the end of input or on Ctrl-C (errno EINTR). Bounded
// as `tern run -f -` (CLI_MAX_TEXT_BYTES): a longer message, or one holding
// a NUL byte (it would cut the text), is read to its end and refused with a
// line on stderr (*refused; the chat goes on).
static bool read_line(std::string * line, bool tty, bool * refused) {
    line->clear();
    *refused = false;
    bool too_long = false, nul = false;
    for (;;) {
        int c;
        size_t start = line->size();
        while ((c = fgetc(stdin)) != EOF && c != '\n') {
            if (c == 0) nul = true;
            if (line->size() < CLI_MAX_TEXT_BYTES) *line += (char) c;
            else too_long = true;
        }
        if (g_interrupted) return false;
        if (too_long || nul) {
            fprintf(stderr, "tern chat: message refused: %s\n",
                    nul ? "it holds a NUL byte" : "longer than the limit of standard input (CLI_MAX_TEXT_BYTES)");
            line->clear();
            *refused = true;
            return true;
        }
        if (c == EOF && line->size() == start && start == 0) return false;
        if (!line->empty() && line->back() == '\r') line->pop_back();
        if (c != EOF && !line->empty() && line->back() == '\\') {
            line->back() = '\n';
            if (tty) { fputs(". ", stdout); fflush(stdout); }
            continue;
        }
        return true;
    }
}

int cmd_chat(int argc, char ** argv) {
    cli_args args;
    const cli_result pr = cli_parse(chat_command, argc, argv, &args);
    if (pr != CLI_GO) return pr == CLI_EXIT_OK ? 0 : 1;
    if (args.has(O_VERSION)) { cli_print_version(); return 0; }
    cli_devices dev;
    cli_devices_from_args(args, &dev);
    const char * path = args.str(O_MODEL), * system_prompt = args.str(O_SYSTEM), * tmpl_arg = args.str(O_CHAT_TEMPLATE);
    const char * messages_file = args.str(O_MESSAGES), * tmpl_file = args.str(O_CHAT_TEMPLATE_FILE);
    const char * kwargs = args.str(O_CHAT_TEMPLATE_KWARGS);
    const bool print_prompt = args.has(O_PRINT_PROMPT), perf = !args.has(O_NO_PERF), verbose = args.has(O_VERBOSE);
    const bool jinja = args.has(O_JINJA), no_jinja = args.has(O_NO_JINJA);
    const long long n_predict = args.num(O_N_PREDICT, -1);
    tern_sampler_params sp = tern_sampler_default_params();
    std::vector<cli_bias> biases = cli_logit_biases(args);
    cli_grammar grammar;
    if (print_prompt && !messages_file) { fprintf(stderr, "tern chat: --print-prompt needs --messages FILE.json\n"); return 1; }
    if (tmpl_arg && tmpl_file) {
        fprintf(stderr, "tern chat: give one of --chat-template and --chat-template-file\n");
        return 1;
    }
    std::string tmpl_text;
    if (tmpl_file) {
        if (!cli_read_file(tmpl_file, tmpl_text, CLI_MAX_TEXT_BYTES)) return 1;
        tmpl_arg = tmpl_text.c_str();
    }
    if (!path && !(print_prompt && tmpl_arg)) {
        fprintf(stderr, "tern chat: -m FILE is required (try tern chat --help)\n");
        return 1;
    }
    if (!cli_grammar_from_args("tern chat", args, &grammar)) return 1;
    if (kwargs) {
        // Checked before the model loads: the engine reads the object on every turn.
        tern_chat_params kp = tern_chat_default_params();
        kp.tmpl = "{{ '' }}";
        kp.messages_json = "[]";
        kp.extra_json = kwargs;
        if (tern_chat_apply(NULL, &kp, NULL, 0, NULL, 0) < 0) {
            const char * why = tern_last_error();
            fprintf(stderr, "tern chat: --chat-template-kwargs: %s\n", cli_printable(why, strlen(why)).c_str());
            return 1;
        }
    }

    std::vector<chat_msg> messages;
    if (messages_file) {
        std::string text, error;
        if (!cli_read_file(messages_file, text, CLI_MAX_TEXT_BYTES)) return 1;
        if (!chat_json_parse_messages(text, &messages, &error)) {
            fprintf(stderr, "tern chat: %s: %s\n", messages_file, error.c_str());
            return 1;
        }
        if (system_prompt) messages.insert(messages.begin(), chat_msg{"system", system_prompt});
    }

    // The model; for --print-prompt only its vocabulary and template.
    tern_model * m = NULL;
    tern_context_params cp = tern_context_default_params();
    if (path) {
        tern_model_params mp = tern_model_default_params();
        cli_apply_model(args, &mp);
        mp.vocab_only = print_prompt;
        if (!print_prompt) cli_devices_apply("tern chat", dev, &mp, &cp);
        m = cli_load_model(path, mp);
        if (!m) return 1;
        if (!print_prompt) cli_devices_loaded("tern chat", dev, m);
        if (!print_prompt && !cli_biases_check("tern chat", biases, m, false)) {
            tern_model_free(m);
            return 1;
        }
    }
    // The template: the one given (a built-in name, or source matched to a built-in
    // unless --jinja), else the model's own in the Jinja engine (unless --no-jinja),
    // else chatml with a note.
    chat_format fmt = {m, tmpl_arg, tmpl_arg ? jinja : !no_jinja, kwargs};
    if (!tmpl_arg) {
        const int32_t n = tern_model_chat_template(m, NULL, 0);
        if (n > 0) {
            std::vector<char> buf((size_t) n + 1);
            tern_model_chat_template(m, buf.data(), buf.size());
            if (memchr(buf.data(), 0, (size_t) n)) {  // it would end at the NUL, silently
                fprintf(stderr, "tern chat: the model's chat template holds a NUL byte: refused (give one with --chat-template)\n");
                tern_model_free(m);
                return 1;
            }
        } else {
            fmt.tmpl = "chatml";
            fprintf(stderr, "tern chat: the model has no chat template: using chatml\n");
        }
    }
    if (kwargs && !uses_jinja(fmt)) {
        fprintf(stderr, "tern chat: --chat-template-kwargs: the template is a built-in one, which takes no "
                        "variables: ignored\n");
    }
    // Check the template once, before anything else happens.
    std::string probe;
    if (!format_chat(fmt, {{"user", "hi"}}, true, &probe)) {
        tern_model_free(m);
        return 1;
    }
    if (print_prompt) {
        std::string formatted;
        const bool ok = format_chat(fmt, messages, true, &formatted);
        if (ok) fwrite(formatted.data(), 1, formatted.size(), stdout);
        tern_model_free(m);
        return ok ? 0 : 1;
    }

    cli_apply_context(args, &cp, tern_model_n_ctx_train(m));
    if (cp.n_batch > cp.n_ctx) cp.n_batch = cp.n_ctx;
    cp.abort_callback = abort_cb;
    cli_apply_sampling(args, &sp, cp.n_ctx);
    tern_context * ctx = NULL;
    tern_sampler * smpl = NULL;
    tern_status st = tern_context_create(m, &cp, &ctx);
    if (st == TERN_OK) st = tern_sampler_create(m, &sp, NULL, 0, &smpl);
    if (st == TERN_OK && !cli_grammar_attach("tern chat", grammar, smpl, m, n_predict)) {
        tern_sampler_free(smpl);
        tern_context_free(ctx);
        tern_model_free(m);
        return 1;
    }
    if (st != TERN_OK) {
        fprintf(stderr, "tern chat: %s: %s\n", tern_status_str(st), tern_last_error());
        tern_sampler_free(smpl);
        tern_context_free(ctx);
        tern_model_free(m);
        return 1;
    }
    cli_print_placement(stderr, m, ctx);
    if (verbose)
        fprintf(stderr, "tern chat: seed %u, context %u, batch %u, threads %d, template %s%s\n", sp.seed, cp.n_ctx,
                cp.n_batch, cp.n_threads, fmt.tmpl ? cli_printable(fmt.tmpl, strlen(fmt.tmpl), 40).c_str() : "(the model's)",
                fmt.jinja ? " (Jinja)" : "");
    chat_session s;
    s.m = m;
    s.ctx = ctx;
    s.smpl = smpl;
    s.fmt = fmt;
    s.n_ctx = cp.n_ctx;
    s.n_batch = cp.n_batch;
    s.n_predict = n_predict;
    s.perf = perf;
    s.verbose = verbose;
    s.grammar = !grammar.text.empty();
    s.biases = biases;
    s.stops = cli_stop_strings(args, true);
    s.marks.assign(1, chat_mark{0, 0});
    s.n_past = 0;

    int rc = 0;
    if (messages_file) {
        s.history = messages;
        std::string out;
        const turn_result r = turn(&s, &out);
        rc = r == TURN_DONE || r == TURN_FULL || r == TURN_STOPPED ? 0 : 1;  // a reply cut short is still a reply
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_sigint;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);  // no SA_RESTART: Ctrl-C at the prompt ends the read
        if (system_prompt) s.history.push_back({"system", system_prompt});
        const bool tty = isatty(0) != 0;
        std::string line;
        for (;;) {
            if (tty) { fputs("> ", stdout); fflush(stdout); }
            g_interrupted = 0;
            bool refused = false;
            if (!read_line(&line, tty, &refused)) {
                if (tty) fputc('\n', stdout);
                break;  // Ctrl-C at the prompt or Ctrl-D (end of input): a clean exit
            }
            if (refused) continue;
            if (line == "/clear") {
                session_clear(&s);
                s.history.clear();
                if (system_prompt) s.history.push_back({"system", system_prompt});
                fprintf(stderr, "[cleared]\n");
                continue;
            }
            if (line.empty()) continue;
            s.history.push_back({"user", line});
            std::string out;
            const turn_result r = turn(&s, &out);
            if (r == TURN_NO_ROOM) s.history.pop_back();  // the message was not taken
            if (r == TURN_ERROR) { rc = 1; break; }
        }
    }
    tern_sampler_free(smpl);
    tern_context_free(ctx);
    tern_model_free(m);
    return rc;
}
