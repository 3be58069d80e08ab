// `tern chat` as a user runs it: --print-prompt equals the library's formatting
// for several templates, a bad messages file is one clear error with its line
// and column, --messages answers deterministically at --temp 0 (the greedy
// continuation of the formatted prompt), a piped conversation evaluates only
// each turn's new text and /clear starts over, a full context stops the reply
// and the chat goes on, and a real terminal session (tmux) chats two turns and
// exits with status 0 on Ctrl-D and on Ctrl-C at the prompt; Ctrl-C during a
// reply stops it and the chat goes on. Without tmux the
// test reports Skipped (exit 77), except with CI=true, where it fails.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "cli_test_util.h"
#include "tern.h"

static std::string g_bin, g_shared, g_model, g_errfile;

// Run a shell command; stdout into out, stderr (unless the command redirects it) into err.
static int run(const std::string & cmd, std::string & out, std::string * err = NULL) {
    return run_command(cmd, &out, &g_errfile, err);
}

static std::string write_temp(const std::string & text) {
    char path[] = "/tmp/tern_chat_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return "";
    const bool ok = write(fd, text.data(), text.size()) == (ssize_t) text.size();
    close(fd);
    return ok ? path : "";
}

static std::vector<std::string> lines(const std::string & s) {
    std::vector<std::string> v;
    size_t at = 0, nl;
    while ((nl = s.find('\n', at)) != std::string::npos) { v.push_back(s.substr(at, nl - at)); at = nl + 1; }
    if (at < s.size()) v.push_back(s.substr(at));
    return v;
}

static std::string format(const char * tmpl, const std::vector<tern_chat_message> & msgs, bool add_ass) {
    char buf[8192];
    const int32_t n = tern_chat_apply_template(tmpl, msgs.data(), msgs.size(), add_ass, buf, sizeof(buf));
    return n > 0 && n < (int32_t) sizeof(buf) ? std::string(buf, (size_t) n) : std::string();
}

// "prompt eval: N tokens" of each timings line, in order.
static std::vector<int> prompt_evals(const std::string & err) {
    std::vector<int> v;
    size_t at = 0;
    while ((at = err.find("prompt eval: ", at)) != std::string::npos) {
        at += 13;
        v.push_back(atoi(err.c_str() + at));
    }
    return v;
}

static void test_usage(void) {
    std::string out, err;
    CHECK(run(g_bin + " chat --help", out, &err) == 0);
    for (const char * flag : {"-m,", "--model", "-sys,", "--system-prompt", "--chat-template", "--messages",
                              "--print-prompt", "-n,", "--n-predict", "-c,", "--ctx-size", "-b,", "--batch-size", "-t,",
                              "--threads", "--temp", "--top-k", "--top-p", "--min-p", "--repeat-penalty",
                              "--repeat-last-n", "-s,", "--seed", "--no-perf", "-v,", "--verbose", "-h,", "--help",
                              "/clear", "Ctrl-C", "Ctrl-D", "--chat-template-file", "--chat-template-kwargs", "--jinja",
                              "--no-jinja"})
        CHECK_MSG(out.find(flag) != std::string::npos, "--help lacks %s", flag);
    CHECK(run(g_bin + " --help", out, &err) == 0 && out.find("chat") != std::string::npos);
    // Bad command lines: one error line, status 1.
    CHECK(run(g_bin + " chat", out, &err) == 1 && err.find("-m FILE is required") != std::string::npos);
    CHECK(run(g_bin + " chat --print-prompt --chat-template chatml", out, &err) == 1 && err.find("--messages") != std::string::npos);
    CHECK(run(g_bin + " chat -m " + shell_quote(g_model) + " --bogus", out, &err) == 1 && err.find("--bogus") != std::string::npos);
    CHECK(run(g_bin + " chat --messages /nonexistent.json --print-prompt --chat-template chatml", out, &err) == 1 &&
          err.find("/nonexistent.json") != std::string::npos);
}

static void test_print_prompt(void) {
    const std::string file = write_temp(
        "\xef\xbb\xbf[{\"role\": \"system\", \"content\": \"Be brief.\"},\n"
        " {\"role\": \"user\", \"content\": \"Hi \\\"there\\\" \\u00e9\\ud83d\\ude00 \\/\\b\\f\\t\\r\"},\n"
        " {\"role\": \"assistant\", \"content\": \"Hello.\", \"name\": \"bot\", \"extra\": [1, -2.5e+3, 0, true, {\"a\": null}]},\n"
        " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Line one\"}, {\"type\": \"image_url\", "
        "\"image_url\": {\"url\": \"x\"}}, {\"type\": \"text\", \"text\": \"line two\"}]}]");
    const std::vector<tern_chat_message> msgs = {
        {"system", "Be brief."}, {"user", "Hi \"there\" \xc3\xa9\xf0\x9f\x98\x80 /\b\f\t\r"}, {"assistant", "Hello."},
        {"user", "Line one\nline two"},
    };
    std::string out, err;
    for (const char * t : {"chatml", "llama3", "llama2", "llama2-sys", "mistral-v7", "phi3", "gemma", "zephyr",
                           "deepseek3", "command-r", "vicuna"}) {
        const std::string want = format(t, msgs, true);
        const int rc = run(g_bin + " chat --messages " + file + " --print-prompt --chat-template " + t, out, &err);
        CHECK_MSG(rc == 0 && !want.empty() && out == want, "%s: exit %d: %s\n%s", t, rc, err.c_str(), out.c_str());
    }
    // Jinja source is recognised as llama.cpp does (this one: chatml).
    const std::string jinja = "{% for message in messages %}{{\"<|im_start|>\" + message[\"role\"] + \"\\n\" + "
                              "message[\"content\"] + \"<|im_end|>\\n\"}}{% endfor %}";
    CHECK(run(g_bin + " chat --messages " + file + " --print-prompt --chat-template " + shell_quote(jinja), out, &err) == 0 &&
          out == format(jinja.c_str(), msgs, true) && out == format("chatml", msgs, true));
    // The model's own template, or chatml with a note when it has none (stories260K has none).
    CHECK(run(g_bin + " chat -m " + shell_quote(g_shared + "/models/stories260K.gguf") + " --messages " + file + " --print-prompt", out,
              &err) == 0 && out == format("chatml", msgs, true) && err.find("no chat template") != std::string::npos);
    // -sys goes first.
    std::vector<tern_chat_message> with_sys = msgs;
    with_sys.insert(with_sys.begin(), tern_chat_message{"system", "Say little."});
    CHECK(run(g_bin + " chat --messages " + file + " --print-prompt --chat-template chatml -sys 'Say little.'", out, &err) == 0 &&
          out == format("chatml", with_sys, true));
    CHECK(run(g_bin + " chat --messages " + file + " --print-prompt --chat-template nosuch", out, &err) == 1 &&
          err.find("nosuch") != std::string::npos);
    unlink(file.c_str());
    // null content is empty; an empty array formats nothing but the assistant's opening.
    const std::string f2 = write_temp("[{\"role\": \"user\", \"content\": null}]");
    CHECK(run(g_bin + " chat --messages " + f2 + " --print-prompt --chat-template chatml", out, &err) == 0 &&
          out == format("chatml", {{"user", ""}}, true));
    unlink(f2.c_str());
}

// The model's own template runs in the Jinja engine (Qwen2's adds its default
// system turn; --no-jinja matches it to the built-in chatml, which does not);
// --chat-template-file and --chat-template source run with --jinja; a
// template's error names its line.
static void test_jinja_flags(void) {
    const std::string msgs = write_temp("[{\"role\": \"system\", \"content\": \"  Be brief. \"}, "
                                        "{\"role\": \"user\", \"content\": \"Hi\"}]");
    const std::string user = write_temp("[{\"role\": \"user\", \"content\": \"Hi\"}]");
    const std::string qwen = shell_quote(g_shared + "/vocab/ggml-vocab-qwen2.gguf");
    std::string out, err;
    CHECK(run(g_bin + " chat -m " + qwen + " --messages " + user + " --print-prompt", out, &err) == 0 &&
          out == "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                 "<|im_start|>assistant\n");
    CHECK(run(g_bin + " chat -m " + qwen + " --messages " + user + " --print-prompt --no-jinja", out, &err) == 0 &&
          out == format("chatml", {{"user", "Hi"}}, true));
    const std::string src = "{%- for m in messages -%}\n[{{ m.role | upper }}] {{ m.content | trim }}\n{% endfor -%}\n"
                            "{%- if add_generation_prompt %}[ASSISTANT]{% endif %}";
    const std::string file = write_temp(src);
    const char * want = "[SYSTEM] Be brief.\n[USER] Hi\n[ASSISTANT]";
    CHECK_MSG(run(g_bin + " chat --messages " + msgs + " --print-prompt --chat-template-file " + file + " --jinja", out,
                  &err) == 0 && out == want, "%s%s", out.c_str(), err.c_str());
    CHECK(run(g_bin + " chat --messages " + msgs + " --print-prompt --chat-template " + shell_quote(src) + " --jinja", out, &err) == 0 &&
          out == want);
    // Without --jinja, source is matched to a built-in by its markers: this one has none.
    CHECK(run(g_bin + " chat --messages " + msgs + " --print-prompt --chat-template-file " + file, out, &err) == 1 &&
          out.empty());
    CHECK(run(g_bin + " chat --messages " + msgs + " --print-prompt --chat-template-file " + file + " --chat-template chatml",
              out, &err) == 1 && err.find("one of") != std::string::npos);
    const std::string bad = write_temp("{% for m in messages %}\n{{ raise_exception('System role not supported') }}\n"
                                       "{% endfor %}");
    CHECK_MSG(run(g_bin + " chat --messages " + msgs + " --print-prompt --chat-template-file " + bad + " --jinja", out, &err) ==
                  1 && err.find("System role not supported") != std::string::npos && err.find("line 2") != std::string::npos &&
                  lines(err).size() == 1,
              "%s", err.c_str());
    // --chat-template-kwargs: more variables (enable_thinking is undefined without it), checked
    // before anything loads; a built-in template takes none (a note).
    const std::string think = write_temp("{% if enable_thinking is defined %}T={{ enable_thinking }}{% else %}none{% endif %}"
                                         "|{{ date_string | length }}");
    const std::string base = g_bin + " chat --messages " + user + " --print-prompt --chat-template-file " + think + " --jinja";
    CHECK_MSG(run(base, out, &err) == 0 && out == "none|11", "%s%s", out.c_str(), err.c_str());
    CHECK(run(base + " --chat-template-kwargs '{\"enable_thinking\": true, \"date_string\": \"x\"}'", out, &err) == 0 &&
          out == "T=True|1");
    CHECK_MSG(run(base + " --chat-template-kwargs '[1]'", out, &err) == 1 && out.empty() &&
                  err.find("--chat-template-kwargs") != std::string::npos && err.find("JSON object") != std::string::npos &&
                  lines(err).size() == 1,
              "%s", err.c_str());
    CHECK(run(base + " --chat-template-kwargs '{\"a\": '", out, &err) == 1 && err.find("--chat-template-kwargs") != std::string::npos);
    CHECK(run(g_bin + " chat --messages " + user + " --print-prompt --chat-template chatml --chat-template-kwargs '{}'", out,
              &err) == 0 && out == format("chatml", {{"user", "Hi"}}, true) && err.find("ignored") != std::string::npos);
    for (const std::string & f : {msgs, user, file, bad, think}) unlink(f.c_str());
}

static void test_bad_json(void) {
    struct { const char * text, * where; } cases[] = {
        {"[{\"role\": \"user\", \"content\": \"x\"", "line 1, column 33: expected ',' or '}'"},
        {"{}", "line 1, column 1: expected '['"},
        {"", "line 1, column 1: expected '['"},
        {"[{\"role\": \"user\"}]", "line 1, column 2: a message needs \"role\" and \"content\""},
        {"[{\"role\": \"user\", \"content\": \"\\ud800\"}]", "line 1, column 31: a high surrogate"},
        {"[{\"role\": \"user\", \"content\": \"\\udc00\"}]", "line 1, column 31: a lone low surrogate"},
        {"[{\"role\": \"user\", \"content\": \"\\u12G4\"}]", "line 1, column 35: a \\u escape needs 4 hex digits"},
        {"[{\"role\": \"user\", \"content\": \"\\u0000\"}]", "line 1, column 31: \\u0000"},
        {"[{\"role\": \"user\", \"content\": \"\\q\"}]", "line 1, column 31: an unknown escape"},
        {"[{\"role\": \"user\", \"content\": \"a\nb\"}]", "line 1, column 32: a control character"},
        {"[{\"role\": \"user\", \"content\": \"x\"},]", "line 1, column 35: expected '{'"},
        {"[{\"role\": \"user\", \"content\": \"x\"}] x", "line 1, column 36: text after the array"},
        {"[{\"role\": 1, \"content\": \"x\"}]", "line 1, column 11: \"role\" must be a string"},
        {"[{\"role\": \"user\", \"content\": \"x\", \"n\": 01}]", "line 1, column 41: expected ',' or '}'"},
        {"[{\"role\": \"user\", \"content\": \"x\", \"n\": 1.}]", "line 1, column 42: a digit must follow the decimal point"},
        {"[{\"role\": \"user\", \"content\": \"x\", \"n\": tru}]", "line 1, column 40: expected a value"},
        {"[{\"role\": \"user\", \"content\": [{\"text\": \"x\"}]}]", "line 1, column 31: a content part needs \"type\""},
        {"[1]", "line 1, column 2: expected '{'"},
        // columns count characters, lines count newlines
        {"[{\"role\": \"user\", \"content\": \"\xc3\xa9\"}, 1]", "line 1, column 36: expected '{'"},
        {"[\n {\"role\": \"user\", \"content\": 1x}]", "line 2, column 30: \"content\" must be a string"},
    };
    std::string out, err;
    for (const auto & c : cases) {
        const std::string f = write_temp(c.text);
        const int rc = run(g_bin + " chat --messages " + f + " --print-prompt --chat-template chatml", out, &err);
        CHECK_MSG(rc == 1 && out.empty() && err.find(f + ": " + c.where) != std::string::npos && lines(err).size() == 1,
                  "%s: exit %d: %s (want %s)", c.text, rc, err.c_str(), c.where);
        unlink(f.c_str());
    }
    // Nesting is bounded: a deep file is an error, not a stack overflow.
    std::string deep = "[{\"role\": \"user\", \"content\": \"x\", \"n\": ";
    for (int i = 0; i < 100000; i++) deep += '[';
    const std::string f = write_temp(deep);
    CHECK(run(g_bin + " chat --messages " + f + " --print-prompt --chat-template chatml", out, &err) == 1 &&
          err.find("nested too deeply") != std::string::npos);
    unlink(f.c_str());
}

static void test_messages_reply(void) {
    const std::string file = write_temp("[{\"role\": \"user\", \"content\": \"Once upon a time\"}]");
    const std::string cmd = g_bin + " chat -m " + shell_quote(g_model) + " --chat-template chatml --messages " + file +
                            " --temp 0 -n 24";
    std::string a, b, err, prompt, cont;
    CHECK(run(cmd, a, &err) == 0 && err.find("prompt eval: ") != std::string::npos &&
          err.find(" t/s | eval: ") != std::string::npos);
    CHECK(run(cmd + " -s 7 --no-perf -t 1", b, &err) == 0 && err.find("prompt eval") == std::string::npos);
    CHECK_MSG(a == b && a.size() > 10 && a.back() == '\n', "replies differ or are empty: '%s' / '%s'", a.c_str(), b.c_str());
    // The reply is the greedy continuation of the formatted prompt (tern run on it).
    CHECK(run(g_bin + " chat --chat-template chatml --messages " + file + " --print-prompt", prompt, &err) == 0);
    const std::string pfile = write_temp(prompt);
    // -f - (standard input byte for byte: -f FILE would drop the final newline, as llama-cli)
    CHECK(run(g_bin + " run -m " + shell_quote(g_model) + " -f - --no-escape --temp 0 -n 24 --no-perf < " + pfile, cont, &err) == 0);
    const std::string reply = a.substr(0, a.size() - 1);
    if (!cont.empty() && cont.back() == '\n') cont.pop_back();
    CHECK_MSG(cont.size() >= reply.size() && cont.compare(cont.size() - reply.size(), reply.size(), reply) == 0,
              "chat: '%s'\nrun: '%s'", reply.c_str(), cont.c_str());
    unlink(pfile.c_str());
    unlink(file.c_str());
    // A prompt that cannot fit: one error line, status 1.
    const std::string big = write_temp("[{\"role\": \"user\", \"content\": \"" + std::string(2000, 'a') + "\"}]");
    CHECK(run(g_bin + " chat -m " + shell_quote(g_model) + " --chat-template chatml --messages " + big + " -c 64", a, &err) == 1 &&
          err.find("context full") != std::string::npos);
    unlink(big.c_str());
}

// A conversation on a pipe: each turn evaluates only its new text, /clear starts over.
static void test_piped(void) {
    tern_model_params mp = tern_model_default_params();
    mp.vocab_only = 1;
    tern_model * m = NULL;
    if (tern_model_load_file(g_model.c_str(), &mp, &m) != TERN_OK) { CHECK_MSG(0, "%s", tern_last_error()); return; }
    const std::string cmd = "printf 'Once upon a time\\nThe cat\\n/clear\\nOnce upon a time\\n' | " + g_bin + " chat -m " +
                            shell_quote(g_model) + " --chat-template chatml --temp 0 -n 16";
    std::string out, err;
    CHECK(run(cmd, out, &err) == 0);
    const std::vector<std::string> r = lines(out);
    const std::vector<int> pe = prompt_evals(err);
    CHECK_MSG(r.size() == 3 && pe.size() == 3 && err.find("[cleared]") != std::string::npos, "stdout:\n%s\nstderr:\n%s",
              out.c_str(), err.c_str());
    if (r.size() == 3 && pe.size() == 3) {
        CHECK_MSG(r[0] == r[2] && !r[0].empty(), "after /clear: '%s' vs '%s'", r[0].c_str(), r[2].c_str());
        tern_token toks[1024];
        // Turn 1: the whole formatted prompt, BOS first.
        const std::string p1 = format("chatml", {{"user", "Once upon a time"}}, true);
        const int32_t n1 = tern_tokenize(m, p1.data(), (int32_t) p1.size(), toks, 1024, 1, 1);
        CHECK_MSG(pe[0] == n1 && pe[2] == n1, "turn 1: %d tokens evaluated, %d in the prompt", pe[0], n1);
        // Turn 2: what follows the first prompt and reply (the end of the reply's turn, the new message).
        const std::string p2 = format("chatml", {{"user", "Once upon a time"}, {"assistant", r[0].c_str()}, {"user", "The cat"}}, true);
        const std::string had = p1 + r[0];
        CHECK(p2.compare(0, had.size(), had) == 0);
        const std::string fresh = p2.substr(had.size());
        const int32_t n2 = tern_tokenize(m, fresh.data(), (int32_t) fresh.size(), toks, 1024, 0, 1);
        CHECK_MSG(n2 > 0 && pe[1] == n2, "turn 2: %d tokens evaluated, %d new", pe[1], n2);
    }
    // -v names what the cache kept: with a template that trims replies (llama3), a reply
    // ending in a space is cut back in the cache and decoded again, the rest kept.
    CHECK(run("printf 'Once upon a time\\nThe cat\\n' | " + g_bin + " chat -m " + shell_quote(g_model) +
              " --chat-template llama3 --temp 0 -n 16 -v", out, &err) == 0);
    CHECK_MSG(err.find("cache: 0 tokens kept\n") != std::string::npos &&
              err.find("tokens kept, 1 cut back") != std::string::npos, "%s", err.c_str());
    tern_model_free(m);
}

// Untrusted text (issue 23, item 10): a message holding a NUL byte is refused
// with a line (never cut short at the NUL) and the chat goes on; a template
// with control bytes is named with them escaped in -v's line.
static void test_inert(void) {
    std::string out, err;
    const std::string cmd = "printf 'Once upon\\000 a time\\nOnce upon a time\\n' | " + g_bin + " chat -m " + shell_quote(g_model) +
                            " --chat-template chatml --temp 0 -n 8";
    CHECK(run(cmd, out, &err) == 0);
    CHECK_MSG(err.find("message refused: it holds a NUL byte") != std::string::npos && lines(out).size() == 1 &&
              prompt_evals(err).size() == 1, "stdout:\n%s\nstderr:\n%s", out.c_str(), err.c_str());
    // chatml by its markers, with an escape sequence in front.
    const std::string tmpl = "\x1b[31m{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                             "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    CHECK_MSG(run("printf 'Hi\\n' | " + g_bin + " chat -m " + shell_quote(g_model) + " --temp 0 -n 2 -v --chat-template " + shell_quote(tmpl), out,
                  &err) == 0, "%s", err.c_str());
    CHECK_MSG(err.find('\x1b') == std::string::npos && err.find("\\x1b[31m") != std::string::npos, "-v: %s", err.c_str());
}

// A full context stops the reply with a note; the chat goes on and /clear makes room.
static void test_full(void) {
    const std::string cmd = "printf 'Once upon a time\\nhi\\n/clear\\nOnce upon a time\\n' | " + g_bin + " chat -m " +
                            shell_quote(g_model) + " --chat-template chatml --temp 0 -n 30 -c 40";
    std::string out, err;
    CHECK(run(cmd, out, &err) == 0);
    const std::vector<std::string> r = lines(out);
    CHECK_MSG(r.size() == 2 && r[0] == r[1] && !r[0].empty() && err.find("context full (40 tokens): reply stopped") != std::string::npos &&
              err.find("context full: this turn needs") != std::string::npos, "stdout:\n%s\nstderr:\n%s", out.c_str(), err.c_str());
}

// A real terminal: tmux (its own server socket) runs the chat; keys go in, the screen is read back.
static std::string g_tmux;

static bool wait_for(const std::string & session, const std::string & text, int count, std::string * screen) {
    for (int i = 0; i < 300; i++) {
        run(g_tmux + " capture-pane -p -J -S -500 -t " + session + " 2>/dev/null", *screen);
        size_t n = 0, at = 0;
        while ((at = screen->find(text, at)) != std::string::npos) { n++; at += text.size(); }
        if ((int) n >= count) return true;
        usleep(100 * 1000);
    }
    return false;
}

static bool start_chat(const std::string & session, std::string * screen, const std::string & model = g_model,
                       const std::string & args = "-n 16") {
    const std::string cmd = "cd /tmp && " + g_bin + " chat -m " + shell_quote(model) +
                            " --chat-template chatml --temp 0 " + args + "; echo EXIT=$?; sleep 60";
    std::string out;
    if (run(g_tmux + " new-session -d -s " + session + " -x 200 -y 50 " + shell_quote(cmd), out) != 0) return false;
    return wait_for(session, "\n>", 1, screen);  // capture-pane drops the prompt's trailing space
}

static int test_tmux(void) {
    std::string out;
    if (run("command -v tmux >/dev/null 2>&1", out) != 0) {
        const char * ci = getenv("CI");
        if (ci && !strcmp(ci, "true")) {
            fprintf(stderr, "tmux is missing (required in CI)\n");
            return 1;
        }
        fprintf(stderr, "skipped: the interactive test needs tmux\n");
        return 77;
    }
    g_tmux = "env -u TMUX tmux -f /dev/null -L tern_chat_test_" + std::to_string(getpid());
    std::string screen;
    // Two turns, a timings line after each, Ctrl-D: status 0.
    bool ok = start_chat("a", &screen);
    CHECK_MSG(ok, "no prompt:\n%s", screen.c_str());
    if (ok) {
        run(g_tmux + " send-keys -t a 'Once upon a time there was a cat' Enter", out);
        ok = wait_for("a", "prompt eval: ", 1, &screen) && wait_for("a", "\n>", 2, &screen);
        CHECK_MSG(ok, "first reply or timings missing:\n%s", screen.c_str());
    }
    if (ok) {
        run(g_tmux + " send-keys -t a 'The cat was happy' Enter", out);
        ok = wait_for("a", "prompt eval: ", 2, &screen) && wait_for("a", "\n>", 3, &screen);
        CHECK_MSG(ok, "second reply or timings missing:\n%s", screen.c_str());
    }
    if (ok) {
        run(g_tmux + " send-keys -t a C-d", out);
        ok = wait_for("a", "EXIT=", 1, &screen);
        CHECK_MSG(ok && screen.find("EXIT=0") != std::string::npos, "no clean exit on Ctrl-D:\n%s", screen.c_str());
        // Each reply: text between the user's line and its timings line.
        const size_t u1 = screen.find("> Once upon a time there was a cat\n"), t1 = screen.find("prompt eval: ", u1);
        const size_t u2 = screen.find("> The cat was happy\n"), t2 = screen.find("prompt eval: ", u2);
        CHECK_MSG(u1 != std::string::npos && t1 != std::string::npos && t1 > u1 + 40 && u2 != std::string::npos &&
                  t2 != std::string::npos && t2 > u2 + 25 && screen.find(" t/s | eval: ") != std::string::npos,
                  "replies not found:\n%s", screen.c_str());
    }
    // Ctrl-C at the prompt: status 0.
    ok = start_chat("b", &screen);
    CHECK_MSG(ok, "no prompt:\n%s", screen.c_str());
    if (ok) {
        run(g_tmux + " send-keys -t b C-c", out);
        ok = wait_for("b", "EXIT=", 1, &screen);
        CHECK_MSG(ok && screen.find("EXIT=0") != std::string::npos, "no clean exit on Ctrl-C:\n%s", screen.c_str());
    }
    // Ctrl-C during a reply: the reply stops, the chat goes on. A synthetic
    // model (random weights: no end-of-generation token in sight) with no
    // length limit and a large context keeps replying for many seconds; Ctrl-C
    // goes as soon as the reply's first words are on the screen.
    ok = start_chat("c", &screen, g_shared + "/models/ktest-llama-F32.gguf", "-n -1 -t 1 -c 16384");
    CHECK_MSG(ok, "no prompt:\n%s", screen.c_str());
    if (ok) {
        const std::string line = "> Tell me a long story\n";
        run(g_tmux + " send-keys -t c 'Tell me a long story' Enter", out);
        ok = wait_for("c", line, 1, &screen);
        for (int i = 0; ok && i < 300; i++) {  // the reply is under way
            const size_t at = screen.find(line);
            if (at != std::string::npos && screen.size() > at + line.size() + 20) break;
            usleep(20 * 1000);
            run(g_tmux + " capture-pane -p -J -S -500 -t c 2>/dev/null", screen);
        }
        run(g_tmux + " send-keys -t c C-c", out);
        ok = ok && wait_for("c", "[stopped]", 1, &screen) && wait_for("c", "\n>", 2, &screen) &&
             screen.find("context full") == std::string::npos;
        CHECK_MSG(ok, "Ctrl-C did not stop the reply and return to the prompt:\n%s", screen.c_str());
    }
    if (ok) {
        run(g_tmux + " send-keys -t c C-d", out);
        ok = wait_for("c", "EXIT=", 1, &screen);
        CHECK_MSG(ok && screen.find("EXIT=0") != std::string::npos, "no clean exit after a stopped reply:\n%s",
                  screen.c_str());
    }
    run(g_tmux + " kill-server 2>/dev/null", out);
    return 0;
}

int main(void) {
    const char * bin = getenv("TERN_BIN_DIR");
    if (!bin) { fprintf(stderr, "TERN_BIN_DIR is not set\n"); return 2; }
    g_bin = shell_quote(std::string(bin) + "/tern");
    g_shared = tern_test_shared_dir();
    g_model = g_shared + "/models/TinyStories-656K-Q8_0.gguf";
    g_errfile = write_temp("");
    test_usage();
    test_print_prompt();
    test_jinja_flags();
    test_bad_json();
    test_messages_reply();
    test_piped();
    test_full();
    test_inert();
    const int rc = test_tmux();
    unlink(g_errfile.c_str());
    if (rc == 77 && g_checks_failed == 0) return 77;  // the rest passed; the terminal test could not run
    if (rc != 0 && rc != 77) return rc;
    return tern_test_summary();
}
