// The `tern` command as a user runs it: `tern info` on every shared model
// (three load paths), one clear error line for bad files, and
// `tern run --temp 0 -n 32` printing the same stories as llama.cpp.
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/wait.h>
#include <algorithm>
#include <string>
#include <vector>
#include "check.h"
#include "cli_test_util.h"
#include "reference.h"

static std::string g_bin, g_shared;

// Run a shell command; returns its exit status and stdout (stderr -> err if given).
static int run(const std::string & cmd, std::string & out) { return run_command(cmd, &out); }

static void test_info_all_models(void) {
    DIR * d = opendir((g_shared + "/models").c_str());
    CHECK(d != NULL);
    if (!d) return;
    int n = 0;
    while (struct dirent * e = readdir(d)) {
        std::string name = e->d_name;
        if (name.size() < 5 || name.substr(name.size() - 5) != ".gguf") continue;
        const std::string path = shell_quote(g_shared + "/models/" + name);
        const char * modes[] = { "", " --no-mmap", " --blob" };
        const char * path_names[] = { "mmap", "read", "blob" };
        for (int k = 0; k < 3; k++) {
            std::string out;
            int rc = run(g_bin + " info -m " + path + modes[k] + " 2>&1", out);
            CHECK_MSG(rc == 0, "tern info %s%s: exit %d\n%s", name.c_str(), modes[k], rc, out.c_str());
            CHECK(out.find("architecture:") != std::string::npos && out.find("tensors (") != std::string::npos &&
                  out.find("total:") != std::string::npos);
            CHECK_MSG(out.find(std::string("load:            ") + path_names[k]) != std::string::npos, "%s: %s",
                      name.c_str(), path_names[k]);
        }
        n++;
    }
    closedir(d);
    CHECK(n >= 20);
    // Every vocabulary file too (issue 10 item 5): exit 0, metadata and
    // tokenizer printed, one line saying why it cannot run.
    d = opendir((g_shared + "/vocab").c_str());
    CHECK(d != NULL);
    if (!d) return;
    int n_vocab = 0;
    while (struct dirent * e = readdir(d)) {
        std::string name = e->d_name;
        if (name.size() < 5 || name.substr(name.size() - 5) != ".gguf") continue;
        std::string out;
        int rc = run(g_bin + " info -m " + shell_quote(g_shared + "/vocab/" + name) + " 2>/dev/null", out);
        CHECK_MSG(rc == 0 && out.find("tokenizer:") != std::string::npos &&
                  out.find("runnable:        no (") != std::string::npos, "tern info %s: exit %d\n%s", name.c_str(), rc,
                  out.c_str());
        n_vocab++;
    }
    closedir(d);
    CHECK(n_vocab >= 10);
    std::string out;
    CHECK(run(g_bin + " info -m " + shell_quote(g_shared + "/models/stories260K.gguf") + " 2>&1", out) == 0 &&
          out.find("runnable:        yes") != std::string::npos);
}

static void test_bad_files(void) {
    char dir[] = "/tmp/tern_cli_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    std::string bytes;
    read_file_bytes(g_shared + "/models/stories260K.gguf", bytes);
    struct bad { const char * name; std::string data; } files[] = {
        { "truncated.gguf", bytes.substr(0, 1000) },
        { "badmagic.gguf", "GGUX" + bytes.substr(4) },
        { "empty.gguf", "" },
    };
    for (const bad & b : files) {
        std::string path = std::string(dir) + "/" + b.name;
        FILE * f = fopen(path.c_str(), "wb");
        fwrite(b.data.data(), 1, b.data.size(), f);
        fclose(f);
        std::string err, out;
        int rc = run(g_bin + " info -m " + shell_quote(path) + " 2>&1 >/dev/null", err);
        CHECK_MSG(rc != 0, "%s: exit 0", b.name);
        size_t lines = 0;
        for (char c : err) lines += c == '\n';
        CHECK_MSG(lines == 1 && err.rfind("tern: ", 0) == 0, "%s: stderr was:\n%s", b.name, err.c_str());
        rc = run(g_bin + " run -m " + shell_quote(path) + " -p hi 2>/dev/null", out);
        CHECK(rc != 0);
        remove(path.c_str());
    }
    std::string err;
    CHECK(run(g_bin + " info -m /nonexistent.gguf 2>&1", err) != 0 && err.find("/nonexistent.gguf") != std::string::npos);
    CHECK(run(g_bin + " run 2>&1", err) != 0);
    CHECK(run(g_bin + " frobnicate 2>&1", err) != 0);
    CHECK(run(g_bin + " --help", err) == 0 && err.find("tokenize") != std::string::npos);
    CHECK(run(g_bin + " run --help", err) == 0 && err.find("--logits-out") != std::string::npos);
    rmdir(dir);
}

// Value of "key": "..." in a JSON object (our own output).
static std::string json_text(const std::string & s, const std::string & key) {
    size_t at = s.find("\"" + key + "\": ");
    if (at == std::string::npos) return "<missing>";
    size_t i = at + key.size() + 4;
    return refjson::parse_string(s, i);
}

static void test_run_stories(void) {
    const char * stems[] = { "stories260K", "TinyStories-656K-Q8_0", "TinyStories-656K-F32", "TinyStories-656K-Q4_K_M" };
    for (const char * stem : stems) {
        for (int i = 0; i < 2; i++) {
            reference_case rc;
            std::string name = std::string(stem) + "." + std::to_string(i);
            if (!reference_load(g_shared + "/reference", name, rc)) { CHECK_MSG(false, "%s", name.c_str()); continue; }
            std::string out;
            int st = run(g_bin + " run -m " + shell_quote(g_shared + "/models/" + rc.model) + " -p " + shell_quote(rc.prompt) +
                         " --temp 0 -n 32 --json 2>/dev/null", out);
            CHECK(st == 0);
            const std::string text = json_text(out, "text");
            CHECK_MSG(text == rc.greedy_text, "%s:\n  tern:      %s\n  llama.cpp: %s", name.c_str(), text.c_str(),
                      rc.greedy_text.c_str());
            // The streamed text is the prompt followed by the same story.
            st = run(g_bin + " run -m " + shell_quote(g_shared + "/models/" + rc.model) + " -p " + shell_quote(rc.prompt) +
                     " --temp 0 -n 32 2>/dev/null", out);
            CHECK(st == 0 && out == rc.prompt + rc.greedy_text + "\n");
        }
    }
}

static void test_tokenize(void) {
    std::string out;
    int st = run(g_bin + " tokenize -m " + shell_quote(g_shared + "/models/stories260K.gguf") + " -p 'Once upon a time'", out);
    CHECK(st == 0 && out == "1 403 407 261 378\n");
    st = run(g_bin + " tokenize -m " + shell_quote(g_shared + "/models/stories260K.gguf") + " --no-bos -p 'Once upon a time'", out);
    CHECK(st == 0 && out == "403 407 261 378\n");
}

// `tern --version` names the kernel set in use; TERN_KERNELS=scalar forces the references.
static void test_version(void) {
    std::string out;
    int st = run(g_bin + " --version", out);
    CHECK_MSG(st == 0 && out.find("tern ") == 0 && out.find("kernels: ") != std::string::npos, "%s", out.c_str());
    st = run("TERN_KERNELS=scalar " + g_bin + " --version", out);
    CHECK_MSG(st == 0 && out.find("kernels: scalar (") != std::string::npos, "%s", out.c_str());
    st = run("TERN_KERNELS=no-such-set " + g_bin + " --version 2>&1", out);
    CHECK_MSG(st == 0 && out.find("unknown kernel set") != std::string::npos, "%s", out.c_str());
}

// Numeric flags parse strictly: the whole string, in range, finite; one error
// line and a non-zero exit otherwise (never a value silently cut to 32 bits).
static void test_number_flags(void) {
    const std::string base = g_bin + " run -m " + shell_quote(g_shared + "/models/stories260K.gguf") + " -p Once -n 2 --temp 0 ";
    const char * bad[][2] = {
        {"-t 4294967297", "out of range"}, {"-t 0", "out of range"},           {"-b 99999999999", "out of range"},
        {"-c 4294967296", "out of range"}, {"--top-k 4294967297", "out of range"}, {"--seed 4294967296", "out of range"},
        {"--seed -2", "out of range"},     {"-n 12x", "needs an integer"},     {"-t ' 2'", "needs an integer"},
        {"--temp nan", "not a finite"},    {"--top-p inf", "not a finite"},    {"--temp 0.5q", "needs a number"},
    };
    for (const auto & b : bad) {
        std::string out;
        const int st = run(base + b[0] + " 2>&1", out);
        CHECK_MSG(st != 0 && out.find(b[1]) != std::string::npos && out.find('\n') == out.size() - 1,
                  "tern run %s: exit %d: %s", b[0], st, out.c_str());
    }
    std::string out;
    CHECK(run(base + "-t 2 --seed 4294967295 --top-k 40 2>/dev/null", out) == 0);
}

// Inputs without end or without a writer (issue 8 class 6): devices, FIFOs and
// directories are refused at once with one error line, never read forever,
// waited on or thrown out of main. `timeout` turns a hang into exit 124.
static void test_unbounded_inputs(void) {
    char fifo[] = "/tmp/tern_cli_fifo_XXXXXX";
    int fd = mkstemp(fifo);
    if (fd >= 0) { close(fd); unlink(fifo); }
    CHECK(mkfifo(fifo, 0600) == 0);
    const std::string stories = shell_quote(g_shared + "/models/stories260K.gguf");
    const std::string cases[][2] = {
        {" info --blob -m /dev/zero", "not a regular file"},
        {" info -m /dev/zero", "not a regular file"},
        {" tokenize -m " + stories + " -f /dev/zero", "not a regular file"},
        {" info -m " + std::string(fifo), "not a regular file"},
        {" info --blob -m " + std::string(fifo), "not a regular file"},
        {" info --no-mmap -m " + std::string(fifo), "not a regular file"},
        {" run -m " + std::string(fifo) + " -p x", "not a regular file"},
        {" tokenize -m " + stories + " -f " + std::string(fifo), "not a regular file"},
        {" info -m /tmp", "not a regular file"},
    };
    for (const auto & c : cases) {
        std::string out;
        const int st = run("timeout 10 " + g_bin + c[0] + " 2>&1", out);
        CHECK_MSG(st != 0 && st != 124 && out.find(c[1]) != std::string::npos && out.find("terminate") == std::string::npos,
                  "tern%s: exit %d: %s", c[0].c_str(), st, out.c_str());
    }
    unlink(fifo);
}

// Long generations (issue 7): a context shift keeps generating past a full
// context, --no-context-shift stops there cleanly, --prompt-cache evaluates
// nothing the second time, a quantized cache and Self-Extend run.
static std::string json_field(const std::string & s, const std::string & key) {
    size_t at = s.find("\"" + key + "\": ");
    if (at == std::string::npos) return "";
    at += key.size() + 4;
    size_t end = s.find_first_of(",}", at);
    return s.substr(at, end - at);
}

static int count_tokens(const std::string & json) {
    size_t at = json.find("\"tokens\": [");
    if (at == std::string::npos) return -1;
    size_t end = json.find(']', at);
    std::string list = json.substr(at + 11, end - at - 11);
    if (list.find_first_not_of(' ') == std::string::npos) return 0;
    int n = 1;
    for (char c : list) n += c == ',';
    return n;
}

static void test_long_generation(void) {
    const std::string base = g_bin + " run -m " + shell_quote(g_shared + "/models/stories260K.gguf") + " --temp 0 ";
    std::string out;
    int st = run(base + "-p 'Once upon a time' -c 64 --keep 8 -n 300 --json 2>/dev/null", out);
    CHECK_MSG(st == 0 && count_tokens(out) == 300, "--keep 8 -n 300 -c 64: exit %d, %d tokens", st, count_tokens(out));
    st = run(base + "-p 'Once upon a time' -c 64 -n 300 --no-context-shift 2>&1 >/dev/null", out);
    CHECK_MSG(st == 0 && out.find("context full") != std::string::npos, "--no-context-shift: exit %d: %s", st, out.c_str());
    st = run(base + "-p 'Once upon a time' -c 64 -n 300 --no-context-shift --json 2>/dev/null", out);
    CHECK(st == 0 && json_field(out, "stop") == "\"context_full\"" && count_tokens(out) > 50 && count_tokens(out) < 64);
    // Prompt cache: the second run evaluates 0 prompt tokens and says the same.
    char cache[] = "/tmp/tern_prompt_cache_XXXXXX";
    int fd = mkstemp(cache);
    if (fd >= 0) { close(fd); unlink(cache); }
    const std::string pc = base + "-p 'Once upon a time, there was a little' -n 24 --json --prompt-cache " + cache +
                           " 2>/dev/null";
    std::string first, second;
    CHECK(run(pc, first) == 0 && run(pc, second) == 0);
    CHECK_MSG(json_field(first, "prompt_eval_tokens") != "0" && json_field(second, "prompt_eval_tokens") == "0" &&
              json_field(first, "text") == json_field(second, "text") && !json_field(first, "text").empty(),
              "prompt cache: %s / %s", first.c_str(), second.c_str());
    unlink(cache);
    // A quantized cache and Self-Extend run to the end with exit 0.
    CHECK(run(base + "-p 'Once upon a time' -n 20 -ctk q8_0 -ctv q8_0 2>/dev/null", out) == 0);
    CHECK(run(base + "-p 'Once upon a time' -n 20 -ctk q5_1 2>&1", out) != 0 && out.find("q4_0") != std::string::npos);
    CHECK(run(base + "-p 'Once upon a time' -c 64 --grp-attn-n 4 --grp-attn-w 32 -n 100 --json 2>/dev/null", out) == 0);
    CHECK(count_tokens(out) > 50);
}

// llama-cli habits (issue 10 item 3/4): each flag does what llama-cli's does.
static void test_run_flags(void) {
    const std::string model = shell_quote(g_shared + "/models/stories260K.gguf");
    const std::string base = g_bin + " run -m " + model + " ";
    std::string out, err;
    // -f FILE and -f - read the prompt; the same greedy text as -p.
    char pf[] = "/tmp/tern_prompt_XXXXXX";
    int fd = mkstemp(pf);
    CHECK(fd >= 0 && write(fd, "Once upon a time", 16) == 16);
    if (fd >= 0) close(fd);
    std::string by_p, by_f, by_stdin;
    run(base + "-p 'Once upon a time' -n 12 --temp 0 --no-perf", by_p);
    run(base + "-f " + pf + " -n 12 --temp 0 --no-perf", by_f);
    run("cat " + std::string(pf) + " | " + base + "-f - -n 12 --temp 0 --no-perf", by_stdin);
    CHECK_MSG(!by_p.empty() && by_p == by_f && by_p == by_stdin, "-f: '%s' / '%s' / '%s'", by_p.c_str(), by_f.c_str(),
              by_stdin.c_str());
    unlink(pf);
    // Escapes on by default (\n is a newline token), off with --no-escape.
    std::string esc, noesc;
    run(base + "-p 'Once\\nupon' -n 0 --json --no-perf", esc);
    run(base + "-p 'Once\\nupon' -n 0 --json --no-perf --no-escape", noesc);
    CHECK_MSG(esc.find("[1, 403, 13,") != std::string::npos && noesc.find("[1, 403, 13,") == std::string::npos,
              "escapes: %s / %s", esc.c_str(), noesc.c_str());
    // -s fixes the seed (same text at --temp 1); without it the seed is random and reported.
    std::string s1, s2;
    run(base + "-p Once -n 24 --temp 1 -s 42 --no-perf", s1);
    run(base + "-p Once -n 24 --temp 1 --seed 42 --no-perf", s2);
    CHECK(s1 == s2 && !s1.empty());
    std::string seeds;
    bool differ = false;
    for (int i = 0; i < 3; i++) {
        run(base + "-p Once -n 24 --temp 1 --json --no-perf", out);
        const std::string sd = json_field(out, "seed");
        CHECK(!sd.empty());
        if (i > 0 && sd != seeds) differ = true;
        seeds = sd;
    }
    CHECK_MSG(differ, "the default seed is not random");
    CHECK(run(base + "-p Once -n 2 -s 7 -v --no-perf 2>&1 >/dev/null", err) == 0 && err.find("seed 7") != std::string::npos);
    // -r: stops right after the stop string; JSON says so.
    run(base + "-p 'Once upon a time' -n 64 --temp 0 -r Lily --json --no-perf", out);
    CHECK_MSG(json_field(out, "stop") == "\"stop_string\"" && out.find("Lily\"") != std::string::npos, "-r: %s", out.c_str());
    // --ignore-eos: a story pushed to end at once (EOS, token 2, biased +100) goes on.
    std::string eos, no_eos;
    run(base + "-p 'Once upon a time' -n 40 --temp 0 --json --no-perf -l 2+100", eos);
    run(base + "-p 'Once upon a time' -n 40 --temp 0 --json --no-perf -l 2+100 --ignore-eos", no_eos);
    CHECK_MSG(json_field(eos, "stop") == "\"eog\"" && count_tokens(eos) == 0 && json_field(no_eos, "stop") == "\"length\"" &&
              count_tokens(no_eos) == 40, "--ignore-eos: %s / %s", json_field(eos, "stop").c_str(),
              json_field(no_eos, "stop").c_str());
    // --logit-bias: +100 forces a token, -inf removes the greedy choice.
    run(base + "-p 'Once upon a time' -n 5 --temp 0 --json --no-perf -l 300+100", out);
    CHECK_MSG(out.find("\"tokens\": [300, 300, 300, 300, 300]") != std::string::npos, "-l +100: %s", out.c_str());
    std::string plain;
    run(base + "-p 'Once upon a time' -n 1 --temp 0 --json --no-perf", plain);
    const std::string first = plain.substr(plain.find("\"tokens\": [") + 11);
    const std::string tok = first.substr(0, first.find(']'));
    run(base + "-p 'Once upon a time' -n 1 --temp 0 --json --no-perf --logit-bias " + tok + "-inf", out);
    CHECK_MSG(out.find("\"tokens\": [" + tok + "]") == std::string::npos && count_tokens(out) == 1, "-l -inf: %s", out.c_str());
    CHECK(run(base + "-p x -n 1 -l 99999+1 2>&1", out) != 0 && out.find("outside the vocabulary") != std::string::npos);
    CHECK(run(base + "-p x -n 1 -l 12x 2>&1", out) != 0 && out.find("TOKEN+BIAS") != std::string::npos);
    // Penalties are accepted and change a greedy story (the window includes the prompt).
    std::string pen;
    run(base + "-p 'Once upon a time' -n 32 --temp 0 --no-perf", plain);
    run(base + "-p 'Once upon a time' -n 32 --temp 0 --no-perf --repeat-penalty 1.5 --presence-penalty 0.5 "
        "--frequency-penalty 0.5", pen);
    CHECK(!pen.empty() && pen != plain);
    // --version, -ngl and -ub as llama.cpp users type them, --mlock.
    CHECK(run(g_bin + " run --version", out) == 0 && out.find("kernels:") != std::string::npos);
    CHECK(run(base + "-p Once -n 4 --temp 0 -ngl 99 -ub 8 --mlock --no-perf 2>&1", out) == 0 &&
          out.find("no accelerator") != std::string::npos);
    // Timings on stderr unless --no-perf; the generation rate counts decodes.
    CHECK(run(base + "-p Once -n 8 --temp 0 2>&1 >/dev/null", err) == 0 && err.find("prompt eval time") != std::string::npos &&
          err.find("/     7 runs") != std::string::npos);
    CHECK(run(base + "-p Once -n 8 --temp 0 --no-perf 2>&1 >/dev/null", err) == 0 && err.find("eval time") == std::string::npos);
    // Special tokens in the prompt are parsed as `tern tokenize --parse-special` does,
    // and on a qwen2 vocabulary <|im_start|> is one token.
    const std::string qwen = shell_quote(g_shared + "/models/ktest-qwen2-s08-Q8_0.gguf");
    std::string ids;
    run(g_bin + " run -m " + qwen + " -p '<|im_start|>user' -n 0 --json --no-perf", out);
    run(g_bin + " tokenize -m " + qwen + " -p '<|im_start|>user' --parse-special", ids);
    std::string listed = json_field(out, "prompt_tokens");
    std::string want = ids.substr(0, ids.find('\n'));
    for (char & c : want) if (c == ' ') c = ',';
    std::string got;
    for (char c : out.substr(out.find('[') + 1, out.find(']') - out.find('[') - 1)) if (c != ' ') got += c;
    CHECK_MSG(got == want, "run prompt tokens %s, tokenize %s", got.c_str(), want.c_str());
    run(g_bin + " tokenize -m " + shell_quote(g_shared + "/vocab/ggml-vocab-qwen2.gguf") + " -p '<|im_start|>user' --parse-special --no-bos", ids);
    CHECK_MSG(std::count(ids.begin(), ids.end(), ' ') == 1, "<|im_start|>user: %s", ids.c_str());
}

// "key": [ ... ] of our JSON, brackets included ("" when missing).
static std::string json_array(const std::string & s, const std::string & key) {
    size_t at = s.find("\"" + key + "\": [");
    if (at == std::string::npos) return "";
    at += key.size() + 4;
    return s.substr(at, s.find(']', at) - at + 1);
}

// More of llama-cli's behaviour (issue 10 items 3/4): the details of -f, -e,
// -r, --repeat-last-n -1, special tokens and the timings.
static void test_run_llama_cli(void) {
    const std::string model = shell_quote(g_shared + "/models/stories260K.gguf");
    const std::string base = g_bin + " run -m " + model + " ";
    std::string out, ref, err;
    // -f - keeps standard input byte for byte (tern chat's --print-prompt
    // output ends with a newline that matters); -f FILE drops one trailing
    // newline as llama-cli does (test_llama_inputs).
    char pf[] = "/tmp/tern_prompt_nl_XXXXXX";
    int fd = mkstemp(pf);
    CHECK(fd >= 0 && write(fd, "Once upon a time\n", 17) == 17);
    if (fd >= 0) close(fd);
    run(base + "-p 'Once upon a time\n' -n 0 --json --no-perf", ref);
    CHECK_MSG(ref.find(", 13]") != std::string::npos, "-p newline: %s", ref.c_str());
    run(base + "-f - -n 0 --json --no-perf < " + pf, out);
    CHECK_MSG(json_array(out, "prompt_tokens") == json_array(ref, "prompt_tokens"), "-f - newline: %s", out.c_str());
    unlink(pf);
    CHECK(run(base + "-f /nonexistent/prompt.txt -n 1 2>&1", out) != 0 && out.find("/nonexistent/prompt.txt") != std::string::npos);
    CHECK(run(base + "-p x -f - -n 1 2>&1 < /dev/null", out) != 0);
    // -e (the default) and --escape: \n, \xNN (\x20 is a space), \\ kept as one backslash.
    std::string e1, e2, lit;
    run(base + "-p 'Once\\x20upon\\na' -n 0 --json --no-perf -e", e1);
    run(base + "-p 'Once\\x20upon\\na' -n 0 --json --no-perf --escape", e2);
    run(base + "-p \"$(printf 'Once upon\\na')\" -n 0 --json --no-perf --no-escape", lit);
    CHECK_MSG(!e1.empty() && json_array(e1, "prompt_tokens") == json_array(lit, "prompt_tokens") &&
              json_array(e1, "prompt_tokens") == json_array(e2, "prompt_tokens"),
              "-e: %s / %s", e1.c_str(), lit.c_str());
    run(base + "-p 'a\\\\nb' -n 0 --json --no-perf", e1);
    run(base + "-p 'a\\nb' -n 0 --json --no-perf --no-escape", lit);
    CHECK_MSG(json_array(e1, "prompt_tokens") == json_array(lit, "prompt_tokens"), "\\\\: %s / %s", e1.c_str(), lit.c_str());
    // -r: escapes apply to it too; one or two characters after the stop
    // string in the same token still stop (llama-cli without -i); a stop string
    // across the end of the prompt stops, one inside the prompt does not.
    run(base + "-p 'Once upon a time' -n 64 --temp 0 --json --no-perf -r 'a\\x20big'", out);
    CHECK_MSG(json_field(out, "stop") == "\"stop_string\"" && json_text(out, "text").size() >= 5 &&
              json_text(out, "text").compare(json_text(out, "text").size() - 5, 5, "a big") == 0, "-r escaped: %s", out.c_str());
    run(base + "-p 'Once upon a time' -n 64 --temp 0 --json --no-perf -r Lily", ref);
    run(base + "-p 'Once upon a time' -n 64 --temp 0 --json --no-perf -r Lil", out);
    CHECK_MSG(json_field(out, "stop") == "\"stop_string\"" && json_text(out, "text") == json_text(ref, "text"), "-r Lil: %s",
              out.c_str());
    run(base + "-p 'Once upon a' -n 64 --temp 0 --json --no-perf -r 'a time'", out);
    CHECK_MSG(json_field(out, "stop") == "\"stop_string\"" && count_tokens(out) == 1, "-r across the prompt: %s", out.c_str());
    run(base + "-p 'Once upon a time' -n 6 --temp 0 --json --no-perf -r time -r Once", out);
    CHECK_MSG(json_field(out, "stop") == "\"length\"" && count_tokens(out) == 6, "-r in the prompt: %s", out.c_str());
    // Several -r: the first one met stops.
    run(base + "-p 'Once upon a time' -n 64 --temp 0 --json --no-perf -r zzzz -r little", out);
    CHECK_MSG(json_field(out, "stop") == "\"stop_string\"" && json_text(out, "text") == ", there was a little", "-r -r: %s",
              out.c_str());
    // A stop string that is one special token matches that token (BOS forced by -l).
    run(base + "-p Hi -n 3 --temp 0 --json --no-perf -l 1+100 -r '<s>'", out);
    CHECK_MSG(json_field(out, "stop") == "\"stop_string\"" && count_tokens(out) == 1, "-r <s>: %s", out.c_str());
    run(base + "-p Hi -n 3 --temp 0 --json --no-perf -l 1+100", out);
    CHECK_MSG(json_field(out, "stop") == "\"length\"" && count_tokens(out) == 3, "-l 1+100: %s", out.c_str());
    CHECK(run(base + "-p Hi -n 1 -r '' 2>&1", out) != 0 && out.find("option -r: an empty value") != std::string::npos);
    // Special tokens in the prompt: "</s>" is token 2, as `tern tokenize --parse-special` says.
    run(base + "-p '</s>Once' -n 0 --json --no-perf", out);
    std::string ids;
    run(g_bin + " tokenize -m " + model + " -p '</s>Once' --parse-special", ids);
    std::string want = "[" + ids.substr(0, ids.find('\n')) + "]";
    for (size_t at; (at = want.find(' ')) != std::string::npos;) want.replace(at, 1, ",");
    std::string got = out.substr(out.find('['), out.find(']') - out.find('[') + 1);
    for (size_t at; (at = got.find(' ')) != std::string::npos;) got.erase(at, 1);
    CHECK_MSG(got == "[1,2,403]" && got == want, "special: run %s, tokenize %s", got.c_str(), want.c_str());
    run(g_bin + " tokenize -m " + model + " -p '</s>Once'", ids);
    CHECK_MSG(ids.find(" 2 ") == std::string::npos && std::count(ids.begin(), ids.end(), ' ') > 3, "no parse: %s", ids.c_str());
    // qwen2 vocabulary: <|im_start|> is one token with --parse-special, several without.
    const std::string qv = shell_quote(g_shared + "/vocab/ggml-vocab-qwen2.gguf");
    run(g_bin + " tokenize -m " + qv + " -p '<|im_start|>' --parse-special --no-bos", ids);
    CHECK_MSG(ids == "151644\n", "<|im_start|>: %s", ids.c_str());
    run(g_bin + " tokenize -m " + qv + " -p '<|im_start|>' --no-bos", ids);
    CHECK_MSG(std::count(ids.begin(), ids.end(), ' ') >= 2, "<|im_start|> literal: %s", ids.c_str());
    std::string pen_off;
    // The prompt is in the penalty window: the greedy first token " was" (286)
    // is a prompt token, so a presence penalty changes it, unless the window is 0.
    const std::string girl = "-p 'Once upon a time, there was a little girl. The little girl' -n 1 --temp 0 --json --no-perf ";
    run(base + girl, ref);
    run(base + girl + "--presence-penalty 100", out);
    run(base + girl + "--presence-penalty 100 --repeat-last-n 0", pen_off);
    CHECK_MSG(ref.find("\"tokens\": [286]") != std::string::npos && out.find("\"tokens\": [286]") == std::string::npos &&
              count_tokens(out) == 1 && pen_off.find("\"tokens\": [286]") != std::string::npos,
              "penalty window: %s / %s / %s", ref.c_str(), out.c_str(), pen_off.c_str());
    run(base + girl + "--presence-penalty 100 --repeat-last-n -1", out);  // -1: the whole context
    CHECK_MSG(out.find("\"tokens\": [286]") == std::string::npos && count_tokens(out) == 1, "-1: %s", out.c_str());
    run(base + girl + "--frequency-penalty 100", out);
    CHECK_MSG(out.find("\"tokens\": [286]") == std::string::npos && count_tokens(out) == 1, "frequency: %s", out.c_str());
    // Timings as llama_perf_context_print: load, prompt eval (tokens), eval (runs = tokens - 1), total.
    CHECK(run(base + "-p 'Once upon a time' -n 5 --temp 0 2>&1 >/dev/null", err) == 0);
    CHECK_MSG(err.find("load time =") != std::string::npos && err.find("/     5 tokens (") != std::string::npos &&
              err.find("/     4 runs") != std::string::npos && err.find("tokens per second") != std::string::npos &&
              err.find("total time =") != std::string::npos, "timings: %s", err.c_str());
    run(base + "-p 'Once upon a time' -n 5 --temp 0 --json 2>/dev/null", out);
    CHECK_MSG(json_field(out, "eval_runs") == "4" && json_field(out, "prompt_eval_tokens") == "5" &&
              !json_field(out, "gen_tokens_per_s").empty() && !json_field(out, "total_ms").empty() &&
              !json_field(out, "load_ms").empty(), "json timings: %s", out.c_str());
    // -ub alone, -ngl 0 (no note), --check-tensors, --mlock with --no-mmap.
    CHECK(run(base + "-p 'Once upon a time, there was' -n 4 --temp 0 -ub 2 --no-perf 2>&1", out) == 0);
    run(base + "-p 'Once upon a time, there was' -n 4 --temp 0 --no-perf 2>&1", ref);
    CHECK_MSG(out == ref, "-ub 2: %s / %s", out.c_str(), ref.c_str());
    CHECK(run(base + "-p Once -n 2 --temp 0 -ngl 0 --no-perf 2>&1 >/dev/null", err) == 0 && err.empty());
    CHECK(run(base + "-p Once -n 2 --temp 0 --check-tensors --no-mmap --mlock --no-perf 2>/dev/null", out) == 0 && !out.empty());
    // The default seed is random: of three --temp 1 stories, not all are the same
    // (a fixed seed would make them equal; three equal by chance is negligible).
    // (Sampling wide open: a confident tiny model under top-k/top-p often repeats
    // one story whatever the seed.)
    std::string t[3];
    for (int i = 0; i < 3; i++) run(base + "-p Once -n 32 --temp 2 --top-k 0 --top-p 1 --min-p 0 --no-perf", t[i]);
    CHECK_MSG(!t[0].empty() && !(t[0] == t[1] && t[1] == t[2]), "three random-seed runs gave '%s'", t[0].c_str());
    CHECK(run(g_bin + " run --help", out) == 0 && out.find("--reverse-prompt") != std::string::npos &&
          out.find("--no-perf") != std::string::npos && out.find("--logit-bias") != std::string::npos);
}

// Requests that cannot be honoured are refused with one line, not dropped
// (issue 23, item 9): --prompt-cache with --logits-out, a logit bias that
// bans every token; and -n -1's help says what a context shift does to it.
static void test_refused_requests(void) {
    const std::string model = shell_quote(g_shared + "/models/stories260K.gguf");
    const std::string base = g_bin + " run -m " + model + " -p Once -n 4 --temp 0 --no-perf ";
    std::string out;
    char dir[] = "/tmp/tern_refused_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const std::string cache = std::string(dir) + "/cache", logits = std::string(dir) + "/logits", err = std::string(dir) + "/err";
    int rc = run(base + "--prompt-cache " + cache + " --logits-out " + logits + " 2>" + err, out);
    std::string e;
    {
        FILE * f = fopen(err.c_str(), "r");
        char buf[1024];
        size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
        if (f) fclose(f);
        e.assign(buf, n);
    }
    struct stat st;
    CHECK_MSG(rc == 1 && out.empty() && e.find("cannot be used together") != std::string::npos && stat(cache.c_str(), &st) != 0 &&
              stat(logits.c_str(), &st) != 0, "--prompt-cache with --logits-out: exit %d, '%s'", rc, e.c_str());
    // Every token of stories260K's 512 banned (the end of generation by --ignore-eos).
    std::string bans;
    for (int t = 0; t < 512; t++) bans += " -l " + std::to_string(t) + "-inf";
    rc = run(base + bans + " 2>" + err, out);
    CHECK_MSG(rc == 1 && out.empty(), "every token banned: exit %d, '%s'", rc, out.c_str());
    bans.clear();
    for (int t = 0; t < 512; t++) if (t != 2) bans += " -l " + std::to_string(t) + "-inf";  // 2: </s>
    rc = run(base + bans + " --ignore-eos 2>" + err, out);
    CHECK_MSG(rc == 1 && out.empty(), "every token banned with --ignore-eos: exit %d, '%s'", rc, out.c_str());
    rc = run(base + bans + " 2>" + err, out);  // </s> is left: it ends the text at once
    CHECK_MSG(rc == 0, "all but </s> banned: exit %d", rc);
    unlink(err.c_str());
    rmdir(dir);
    run(g_bin + " run --help", out);
    CHECK_MSG(out.find("with context shift on, that may be never") != std::string::npos, "-n -1 help: %s", out.c_str());
}

// What llama-cli accepts (issue 23, item 8): -s -1 (random), a negative
// --top-k (off), and -f FILE with one trailing newline dropped.
static void test_llama_inputs(void) {
    const std::string model = shell_quote(g_shared + "/models/stories260K.gguf");
    const std::string base = g_bin + " run -m " + model + " -n 8 --no-perf ";
    std::string a, b;
    CHECK(run(base + "-p Once -s -1 --temp 1", a) == 0 && !a.empty());
    CHECK(run(base + "-p Once --top-k -5 --temp 0.8 -s 7", a) == 0 && run(base + "-p Once --top-k 0 --temp 0.8 -s 7", b) == 0);
    CHECK_MSG(!a.empty() && a == b, "--top-k -5 differs from --top-k 0: '%s' / '%s'", a.c_str(), b.c_str());
    char pf[] = "/tmp/tern_prompt_nl_XXXXXX";
    const int fd = mkstemp(pf);
    CHECK(fd >= 0 && write(fd, "Once upon a time\n", 17) == 17);
    if (fd >= 0) close(fd);
    CHECK(run(base + "-f " + pf + " --temp 0 --json", a) == 0 && run(base + "-p 'Once upon a time' --temp 0 --json", b) == 0);
    CHECK_MSG(json_array(a, "prompt_tokens") == json_array(b, "prompt_tokens") && !json_array(a, "prompt_tokens").empty(),
              "-f FILE kept its trailing newline: %s / %s", json_array(a, "prompt_tokens").c_str(), json_array(b, "prompt_tokens").c_str());
    unlink(pf);
    // tern tokenize: -f - reads standard input; --pieces prints `ID -> 'PIECE'` a line.
    const std::string tok = g_bin + " tokenize -m " + model + " ";
    CHECK(run("printf 'Once upon a time' | " + tok + "-f -", a) == 0 && run(tok + "-p 'Once upon a time'", b) == 0);
    CHECK_MSG(!a.empty() && a == b, "tokenize -f -: '%s' / '%s'", a.c_str(), b.c_str());
    CHECK(run(tok + "-p 'Once upon a time' --pieces", a) == 0);
    size_t n_ids = 1;
    for (char c : b) n_ids += c == ' ';
    size_t n_lines = 0;
    for (char c : a) n_lines += c == '\n';
    std::string joined;  // the pieces after BOS's, in order: the text (SPM's leading space)
    for (size_t at = 0, line = 0; at < a.size(); line++) {
        const size_t end = a.find('\n', at), open = a.find(" -> '", at);
        if (end == std::string::npos || open == std::string::npos || open > end) break;
        if (line > 0) joined += a.substr(open + 5, end - 1 - (open + 5));
        at = end + 1;
    }
    CHECK_MSG(n_lines == n_ids && joined == " Once upon a time", "--pieces (%zu ids):\n%s", n_ids, a.c_str());
}

int main(void) {
    const char * bin = getenv("TERN_BIN_DIR");
    if (!bin) { fprintf(stderr, "TERN_BIN_DIR is not set\n"); return 2; }
    g_bin = shell_quote(std::string(bin) + "/tern");
    g_shared = tern_test_shared_dir();
    test_info_all_models();
    test_bad_files();
    test_run_stories();
    test_tokenize();
    test_version();
    test_number_flags();
    test_unbounded_inputs();
    test_long_generation();
    test_run_flags();
    test_run_llama_cli();
    test_refused_requests();
    test_llama_inputs();
    return tern_test_summary();
}
