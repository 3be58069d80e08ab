// `tern info` on any valid GGUF (issue 10 item 5): every shared model and
// vocabulary, and files Tern cannot run made here with Tern's writer (an
// architecture not compiled in, a missing tensor, an unknown tokenizer or
// pre-tokenizer, no vocabulary, no architecture) exit 0 with their metadata,
// tokenizer, tensors and one `runnable: no (why)` line; broken files (bad
// magic, truncated, empty) exit non-zero with one error line on stderr.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "cli_test_util.h"
#include "gguf_test_util.h"
#include "tools/gguf_rewrite.h"

static std::string g_bin, g_shared;

// Run a shell command; returns its exit status and what it printed on stdout.
static int run(const std::string & cmd, std::string & out) { return run_command(cmd, &out); }

static bool has(const std::string & s, const std::string & what) { return s.find(what) != std::string::npos; }

// The value of a "name:   value" line of tern info ("" when absent).
static std::string line_of(const std::string & out, const std::string & name) {
    size_t at = out.find("\n" + name + ":");
    if (at == std::string::npos) return "";
    at = out.find_first_not_of(' ', at + name.size() + 2);
    return out.substr(at, out.find('\n', at) - at);
}

static void test_shared_files(void) {
    int n_models = 0, n_vocabs = 0;
    for (const char * dir : {"models", "vocab"}) {
        for (const std::string & path : list_gguf(g_shared + "/" + dir)) {
            std::string out;
            int rc = run(g_bin + " info -m " + shell_quote(path) + " 2>/dev/null", out);
            const std::string runnable = line_of(out, "runnable");
            const bool vocab = std::string(dir) == "vocab";
            CHECK_MSG(rc == 0 && has(out, "\ntokenizer:") && has(out, "\ntensors (") && has(out, "\ntotal:"),
                      "tern info %s: exit %d\n%s", path.c_str(), rc, out.c_str());
            // The shared models all run; the vocabularies have no weights.
            CHECK_MSG(vocab ? runnable == "no (no weights: a vocabulary-only file)" : runnable == "yes",
                      "%s: runnable: %s", path.c_str(), runnable.c_str());
            (vocab ? n_vocabs : n_models)++;
        }
    }
    CHECK(n_models >= 20 && n_vocabs >= 10);
    printf("shared files: %d models, %d vocabularies described\n", n_models, n_vocabs);
}

struct unrunnable {
    const char * name;
    const char * base;  // under the shared folder
    gguf_edit edit;
    const char * why;   // expected inside the runnable line
    const char * also;  // expected elsewhere in the output (or NULL)
};

static void test_unrunnable(const std::string & dir) {
    const std::string stories = "models/stories260K.gguf";
    std::vector<unrunnable> cases = {
        {"arch.gguf", "models/stories260K.gguf", {{{"general.architecture", "mamba"}}, {}, {}},
         "no (unknown architecture 'mamba'", "architecture:    mamba"},
        {"no-tensor.gguf", "models/stories260K.gguf", {{}, {}, {"output_norm.weight"}}, "output_norm.weight", NULL},
        {"t5.gguf", "models/stories260K.gguf", {{{"tokenizer.ggml.model", "t5"}}, {}, {}},
         "no (tokenizer.ggml.model: unknown tokenizer 't5')", "tokenizer:       t5, 512 tokens"},
        {"no-vocab.gguf", "models/stories260K.gguf",
         {{}, {"tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
               "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
               "tokenizer.ggml.padding_token_id"}, {}},
         "no (tokenizer.ggml.model: missing", ", 0 tokens"},
        {"no-arch.gguf", "models/stories260K.gguf", {{}, {"general.architecture"}, {}},
         "no (missing key 'general.architecture')", "architecture:    (none)"},
        {"pre.gguf", "vocab/ggml-vocab-gpt-2.gguf", {{{"tokenizer.ggml.pre", "no-such-pre"}}, {}, {}},
         "no (no weights: a vocabulary-only file; tokenizer.ggml.pre: unknown pre-tokenizer 'no-such-pre')",
         "tokenizer:       gpt2 / no-such-pre, 50257 tokens"},
        {"pre-model.gguf", "models/stories260K.gguf", {{{"tokenizer.ggml.model", "gpt2"},
                                                        {"tokenizer.ggml.pre", "no-such-pre"}}, {}, {}},
         "no (tokenizer.ggml.pre: unknown pre-tokenizer 'no-such-pre')", NULL},
    };
    for (const unrunnable & c : cases) {
        const std::string path = dir + "/" + c.name;
        std::string err;
        bool ok = gguf_rewrite(g_shared + "/" + c.base, path, c.edit, &err);
        CHECK_MSG(ok, "%s: %s", c.name, err.c_str());
        if (!ok) continue;
        std::string out;
        int rc = run(g_bin + " info -m " + shell_quote(path) + " 2>/dev/null", out);
        const std::string runnable = line_of(out, "runnable");
        CHECK_MSG(rc == 0 && has(runnable, c.why) && has(out, "\ntensors (") && (!c.also || has(out, c.also)),
                  "tern info %s: exit %d, runnable: '%s'\n%s", c.name, rc, runnable.c_str(), out.c_str());
        printf("%-16s runnable: %s\n", c.name, runnable.c_str());
        // The same through the other load paths.
        for (const char * mode : {" --no-mmap", " --blob"}) {
            std::string out2;
            rc = run(g_bin + " info" + mode + " -m " + shell_quote(path) + " 2>/dev/null", out2);
            CHECK_MSG(rc == 0 && line_of(out2, "runnable") == runnable, "tern info%s %s: exit %d", mode, c.name, rc);
        }
        // Running it is refused with the reason.
        rc = run(g_bin + " run -m " + shell_quote(path) + " -p hi -n 1 2>&1", out);
        CHECK_MSG(rc != 0, "tern run %s: exit 0", c.name);
        remove(path.c_str());
    }

    // The tensors of a file whose architecture is unknown are all listed.
    std::string out;
    const std::string path = dir + "/arch2.gguf";
    std::string err;
    CHECK(gguf_rewrite(g_shared + "/" + stories, path, {{{"general.architecture", "mamba"}}, {}, {}}, &err));
    CHECK(run(g_bin + " info -m " + shell_quote(path) + " --meta 2>/dev/null", out) == 0);
    std::string orig;
    CHECK(run(g_bin + " info -m " + shell_quote(g_shared + "/" + stories) + " 2>/dev/null", orig) == 0);
    CHECK_MSG(line_of(out, "total") == line_of(orig, "total") && !line_of(out, "total").empty(), "total: %s vs %s",
              line_of(out, "total").c_str(), line_of(orig, "total").c_str());
    CHECK(has(out, "general.architecture                         mamba"));
    // Tokenizing with a vocabulary Tern cannot use fails (its load warns why).
    const std::string pre = dir + "/pre2.gguf";
    CHECK(gguf_rewrite(g_shared + "/vocab/ggml-vocab-gpt-2.gguf", pre, {{{"tokenizer.ggml.pre", "no-such-pre"}}, {}, {}},
                       &err));
    CHECK(run(g_bin + " tokenize -m " + shell_quote(pre) + " -p hello 2>&1", out) != 0 && has(out, "'no-such-pre'"));
    remove(path.c_str());
    remove(pre.c_str());
}

static void test_broken_files(const std::string & dir) {
    std::vector<uint8_t> model = read_bytes(g_shared + "/models/stories260K.gguf");
    std::vector<uint8_t> vocab = read_bytes(g_shared + "/vocab/ggml-vocab-gpt-2.gguf");
    CHECK(model.size() > 4096 && vocab.size() > 4096);
    if (model.size() <= 4096 || vocab.size() <= 4096) return;
    std::vector<uint8_t> bad_magic = model;
    memcpy(bad_magic.data(), "GGUX", 4);
    struct broken {
        const char * name;
        std::vector<uint8_t> bytes;
    } files[] = {
        {"truncated-header.gguf", std::vector<uint8_t>(model.begin(), model.begin() + 1000)},
        {"truncated-data.gguf", std::vector<uint8_t>(model.begin(), model.end() - 100)},
        {"truncated-vocab.gguf", std::vector<uint8_t>(vocab.begin(), vocab.begin() + vocab.size() / 2)},
        {"bad-magic.gguf", bad_magic},
        {"empty.gguf", {}},
        {"text.gguf", std::vector<uint8_t>({'h', 'e', 'l', 'l', 'o', '\n'})},
    };
    for (const broken & b : files) {
        const std::string path = dir + "/" + b.name;
        CHECK(write_bytes(path, b.bytes));
        std::string err;
        int rc = run(g_bin + " info -m " + shell_quote(path) + " 2>&1 >/dev/null", err);
        size_t lines = 0;
        for (char c : err) lines += c == '\n';
        CHECK_MSG(rc != 0 && lines == 1 && err.rfind("tern: ", 0) == 0, "%s: exit %d, stderr:\n%s", b.name, rc,
                  err.c_str());
        remove(path.c_str());
    }
}

// Peak RSS (KB) of `tern info ARGS...`, -1 when it fails.
extern char ** environ;
static long info_peak_rss_kb(const std::vector<std::string> & args) {
    const std::string bin = std::string(getenv("TERN_BIN_DIR")) + "/tern";
    std::vector<std::string> all = {bin, "info"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (std::string & a : all) argv.push_back(&a[0]);
    argv.push_back(NULL);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    const int err = posix_spawn(&pid, bin.c_str(), &fa, NULL, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) return -1;
    int st = 0;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
    return ru.ru_maxrss;
}

// tern info touches no weight (issue 23, item 13): its peak RSS on a 5 MB
// Q8_0 model (every matmul weight repackable) is that of --vocab-only, which
// binds no weight at all, within 1.5 MB; a repack at load made its own copy
// of ~4 MB of weights.
static void test_no_weights_touched(void) {
    const std::string model = g_shared + "/models/ktest-llama-Q8_0.gguf";
    long full = -1, vocab = -1;
    for (int rep = 0; rep < 3; rep++) {  // the smallest of three: page-cache and allocator noise
        const long f = info_peak_rss_kb({"-m", model}), v = info_peak_rss_kb({"-m", model, "--vocab-only"});
        if (f > 0 && (full < 0 || f < full)) full = f;
        if (v > 0 && (vocab < 0 || v < vocab)) vocab = v;
    }
    printf("tern info peak RSS: %ld KB, --vocab-only %ld KB\n", full, vocab);
    CHECK_MSG(full > 0 && vocab > 0 && full - vocab < 1536, "tern info: %ld KB peak RSS, --vocab-only %ld KB", full, vocab);
    std::string out;
    CHECK(run(g_bin + " info -m " + shell_quote(model), out) == 0 && has(line_of(out, "load"), "repack 0.00"));
}

// Strings from the file are printed inert (issue 23, item 10): an escape
// sequence and a carriage return in a metadata value and in the tokenizer
// name come out as \x1b and \r, never as the raw bytes.
static void test_control_chars(const std::string & dir) {
    const std::string path = dir + "/evil.gguf";
    gguf_edit e;
    e.set_str = {{"general.name", "evil\x1b[2J\x1b]0;pwned\x07\rname"}, {"tokenizer.ggml.pre", "pre\x1b[31m"}};
    std::string err;
    CHECK_MSG(gguf_rewrite(g_shared + "/models/stories260K.gguf", path, e, &err), "%s", err.c_str());
    std::string out;
    CHECK(run(g_bin + " info --meta -m " + shell_quote(path) + " 2>/dev/null", out) == 0);
    CHECK_MSG(out.find('\x1b') == std::string::npos && out.find('\r') == std::string::npos && out.find('\x07') == std::string::npos,
              "raw control bytes printed");
    CHECK_MSG(has(out, "evil\\x1b[2J\\x1b]0;pwned\\x07\\rname") && has(out, "pre\\x1b[31m"), "escaped: %s", out.c_str());
    unlink(path.c_str());
}

static void test_help(void) {
    std::string out;
    CHECK(run(g_bin + " info --help", out) == 0 && has(out, "runnable: no") && has(out, "pre-tokenizer"));
}

int main(void) {
    const char * bin = getenv("TERN_BIN_DIR");
    if (!bin) { fprintf(stderr, "TERN_BIN_DIR is not set\n"); return 2; }
    g_bin = shell_quote(std::string(bin) + "/tern");
    g_shared = tern_test_shared_dir();
    temp_dir dir;
    test_shared_files();
    test_unrunnable(dir.path);
    test_broken_files(dir.path);
    test_help();
    test_no_weights_touched();
    test_control_chars(dir.path);
    return tern_test_summary();
}
