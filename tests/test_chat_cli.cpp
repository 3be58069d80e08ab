// `tern chat` as a user runs it: --print-prompt equals the library's
// formatting for several templates, a bad messages file is one clear error,
// --messages answers deterministically at --temp 0, and a real terminal
// session (tmux) chats two turns and exits cleanly on Ctrl-D.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "tern.h"

static std::string g_bin, g_shared;

static int run(const std::string & cmd, std::string & out) {
    out.clear();
    FILE * p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static std::string write_temp(const std::string & text) {
    char path[] = "/tmp/tern_chat_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return "";
    if (write(fd, text.data(), text.size()) != (ssize_t) text.size()) { close(fd); return ""; }
    close(fd);
    return path;
}

static void test_print_prompt(void) {
    const std::string file = write_temp(
        "[{\"role\": \"system\", \"content\": \"Be brief.\"},\n"
        " {\"role\": \"user\", \"content\": \"Hi \\\"there\\\" \\u00e9\\ud83d\\ude00\"},\n"
        " {\"role\": \"assistant\", \"content\": \"Hello.\", \"name\": \"bot\", \"extra\": [1, {\"a\": null}]},\n"
        " {\"role\": \"user\", \"content\": \"Line one\\nline two\"}]");
    const tern_chat_message msgs[] = {
        {"system", "Be brief."}, {"user", "Hi \"there\" \xc3\xa9\xf0\x9f\x98\x80"}, {"assistant", "Hello."},
        {"user", "Line one\nline two"},
    };
    for (const char * t : {"chatml", "llama3", "llama2", "mistral-v7", "phi3", "gemma", "zephyr", "deepseek3"}) {
        char want[4096];
        const int32_t n = tern_chat_apply_template(t, msgs, 4, 1, want, sizeof(want));
        std::string out;
        const int rc = run(g_bin + " chat --messages " + file + " --print-prompt --chat-template " + t, out);
        CHECK_MSG(rc == 0 && n > 0 && out == std::string(want, (size_t) n), "%s: exit %d:\n%s", t, rc, out.c_str());
    }
    // The model's own template, or chatml when it has none.
    std::string out;
    CHECK(run(g_bin + " chat -m '" + g_shared + "/models/stories260K.gguf' --messages " + file + " --print-prompt", out) == 0 &&
          out.rfind("<|im_start|>system\nBe brief.<|im_end|>", 0) == 0);
    CHECK(run(g_bin + " chat --messages " + file + " --print-prompt --chat-template nosuch 2>&1", out) != 0 &&
          out.find("nosuch") != std::string::npos);
    unlink(file.c_str());
    // Malformed files: one line naming the place.
    for (const char * bad : {"[{\"role\": \"user\", \"content\": \"x\"", "{}", "[{\"role\": \"user\"}]",
                             "[{\"role\": \"user\", \"content\": \"\\ud800\"}]", "[1]"}) {
        const std::string f = write_temp(bad);
        const int rc = run(g_bin + " chat --messages " + f + " --print-prompt --chat-template chatml 2>&1", out);
        CHECK_MSG(rc != 0 && out.find("line 1, column") != std::string::npos, "%s: exit %d: %s", bad, rc, out.c_str());
        unlink(f.c_str());
    }
}

static void test_messages_reply(void) {
    const std::string file = write_temp("[{\"role\": \"user\", \"content\": \"Once upon a time\"}]");
    const std::string cmd = g_bin + " chat -m '" + g_shared + "/models/TinyStories-656K-Q8_0.gguf' --chat-template chatml "
                            "--messages " + file + " --temp 0 -n 24 --no-perf 2>/dev/null";
    std::string a, b;
    CHECK(run(cmd, a) == 0 && run(cmd, b) == 0);
    CHECK_MSG(a == b && a.size() > 10, "replies differ or are empty: '%s' / '%s'", a.c_str(), b.c_str());
    unlink(file.c_str());
}

// A real terminal: tmux runs the chat; keys go in, the screen is read back.
static bool wait_for(const std::string & session, const std::string & text, int count, std::string * screen) {
    for (int i = 0; i < 200; i++) {
        run("tmux capture-pane -p -S -200 -t " + session + " 2>/dev/null", *screen);
        size_t n = 0, at = 0;
        while ((at = screen->find(text, at)) != std::string::npos) { n++; at += text.size(); }
        if ((int) n >= count) return true;
        usleep(100 * 1000);
    }
    return false;
}

static int test_tmux(void) {
    std::string out;
    if (run("command -v tmux", out) != 0) {
        const char * ci = getenv("CI");
        if (ci && !strcmp(ci, "true")) { fprintf(stderr, "tmux is missing (required in CI)\n"); return 1; }
        fprintf(stderr, "skipped: the interactive test needs tmux\n");
        return 77;
    }
    const std::string session = "tern_chat_test_" + std::to_string(getpid());
    const std::string cmd = g_bin + " chat -m '" + g_shared + "/models/TinyStories-656K-Q8_0.gguf' --chat-template chatml "
                            "--temp 0 -n 16 -c 256; echo EXIT=$?; sleep 60";
    CHECK(run("tmux new-session -d -s " + session + " -x 200 -y 60 \"" + cmd + "\"", out) == 0);
    std::string screen;
    bool ok = wait_for(session, "\n>", 1, &screen);  // capture-pane drops the trailing space
    CHECK_MSG(ok, "no prompt:\n%s", screen.c_str());
    run("tmux send-keys -t " + session + " 'Once upon a time there was a cat' Enter", out);
    ok = ok && wait_for(session, "reply ", 1, &screen);
    CHECK_MSG(ok, "first reply or timings missing:\n%s", screen.c_str());
    run("tmux send-keys -t " + session + " 'The cat was happy' Enter", out);
    ok = ok && wait_for(session, "reply ", 2, &screen);
    CHECK_MSG(ok, "second reply or timings missing:\n%s", screen.c_str());
    run("tmux send-keys -t " + session + " C-d", out);
    ok = ok && wait_for(session, "EXIT=", 1, &screen);
    CHECK_MSG(ok && screen.find("EXIT=0") != std::string::npos, "no clean exit on Ctrl-D:\n%s", screen.c_str());
    // Both replies are on the screen: text between each user line and its timings.
    const size_t u1 = screen.find("Once upon a time there was a cat"), t1 = screen.find("[prompt", u1);
    const size_t u2 = screen.find("The cat was happy"), t2 = screen.find("[prompt", u2);
    CHECK_MSG(u1 != std::string::npos && t1 != std::string::npos && t1 > u1 + 34 && u2 != std::string::npos &&
              t2 != std::string::npos && t2 > u2 + 19, "replies not found:\n%s", screen.c_str());
    run("tmux kill-session -t " + session + " 2>/dev/null", out);
    return 0;
}

int main(void) {
    const char * bin = getenv("TERN_BIN_DIR");
    if (!bin) { fprintf(stderr, "TERN_BIN_DIR is not set\n"); return 2; }
    g_bin = std::string(bin) + "/tern";
    g_shared = tern_test_shared_dir();
    test_print_prompt();
    test_messages_reply();
    const int rc = test_tmux();
    if (rc != 0) return rc;
    return tern_test_summary();
}
