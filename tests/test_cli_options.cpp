// The option table of tern run, tern chat, tern tokenize, tern info and
// tern-bench (examples/cli/options.h), walked against the real programs:
//   - every name of every option is accepted by every command that lists it,
//     as `--opt value` and `--opt=value`, and parses to the same value in each
//     (TERN_CLI_PRINT_OPTIONS=1 prints what was parsed);
//   - a name in two options is either the same meaning (same kind, the same
//     value parsed alike by every command) or names its difference (`differs`,
//     llama-bench's -p and -r);
//   - a mistyped flag gets "did you mean", and every command-line error is one
//     line ending in "(see `<cmd> --help`)", never the usage;
//   - every --help lists every option of its command (generated from the table);
//   - llama-bench's `-ngl 0 -fa 0 -ub 512 -ctk f16` runs, -fa 1 is refused;
//   - tern chat's -r and -l mean what they mean in tern run.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "check.h"
#include "cli_test_util.h"
#include "options.h"

static std::string g_bin_dir, g_model, g_errfile;

// Runs a shell command: exit status, stdout in *out and stderr in *err.
static int run(const std::string & cmd, std::string * out, std::string * err) { return run_command(cmd, out, &g_errfile, err); }

static const unsigned k_cmds[] = { CLI_RUN, CLI_CHAT, CLI_TOKENIZE, CLI_INFO, CLI_BENCH };

static std::string program(unsigned cmd) {
    switch (cmd) {
        case CLI_RUN: return shell_quote(g_bin_dir + "/tern") + " run";
        case CLI_CHAT: return shell_quote(g_bin_dir + "/tern") + " chat";
        case CLI_TOKENIZE: return shell_quote(g_bin_dir + "/tern") + " tokenize";
        case CLI_INFO: return shell_quote(g_bin_dir + "/tern") + " info";
        default: return shell_quote(g_bin_dir + "/tern-bench");
    }
}

static const char * cmd_name(unsigned cmd) {
    switch (cmd) {
        case CLI_RUN: return "tern run";
        case CLI_CHAT: return "tern chat";
        case CLI_TOKENIZE: return "tern tokenize";
        case CLI_INFO: return "tern info";
        default: return "tern-bench";
    }
}

// A valid value of an option: its sample, else one derived from its kind.
static std::string sample(const cli_opt & o) {
    if (o.sample) return o.sample;
    switch (o.kind) {
        case K_INT: {
            long long v = 2;
            if (v < o.lo) v = o.lo;
            if (v > o.hi) v = o.hi;
            return "0" + std::to_string(v);  // a leading zero: parsed, not copied
        }
        case K_FLOAT: return "0.50";
        case K_CHOICE: {
            const std::string c = o.choices;
            const size_t comma = c.find(',');
            return comma == std::string::npos ? c : c.substr(comma + 1, c.find(',', comma + 1) - comma - 1);
        }
        default: return "x";
    }
}

// What TERN_CLI_PRINT_OPTIONS printed for one option: the text after "KEY=".
static std::string parsed_value(const std::string & out) {
    const size_t eq = out.find('=');
    const size_t nl = out.find('\n');
    if (eq == std::string::npos || nl == std::string::npos || nl != out.size() - 1) return "<" + out + ">";
    return out.substr(eq + 1, nl - eq - 1);
}

static std::string parse_only(unsigned cmd, const std::string & args, int * rc) {
    std::string out, err;
    *rc = run("TERN_CLI_PRINT_OPTIONS=1 " + program(cmd) + " " + args, &out, &err);
    if (*rc != 0) return "<exit " + std::to_string(*rc) + ": " + err + ">";
    return parsed_value(out);
}

// Every name of every option, by every command that lists it, both spellings.
static void test_walk(void) {
    int walked = 0;
    for (size_t i = 0; i < cli_n_options; i++) {
        const cli_opt & o = cli_options[i];
        if (o.id == O_HELP) continue;  // prints the help (test_help)
        const std::string v = sample(o);
        std::string first;  // the value as the first command parsed it
        for (unsigned cmd : k_cmds) {
            if (!(o.cmds & cmd)) continue;
            for (const char * name : o.names) {
                if (!name) continue;
                int rc;
                const std::string got = parse_only(cmd, std::string(name) + (o.arg ? " " + shell_quote(v) : ""), &rc);
                CHECK_MSG(rc == 0, "%s %s %s: %s", cmd_name(cmd), name, v.c_str(), got.c_str());
                if (first.empty()) first = got;
                CHECK_MSG(got == first, "%s %s %s parsed to '%s', elsewhere '%s'", cmd_name(cmd), name, v.c_str(),
                          got.c_str(), first.c_str());
                if (o.kind == K_FLAG) CHECK_MSG(got == "1", "%s %s: '%s'", cmd_name(cmd), name, got.c_str());
                if (o.kind == K_INT) CHECK_MSG(got == v.substr(1), "%s %s %s: '%s'", cmd_name(cmd), name, v.c_str(), got.c_str());
                if (o.arg && !strncmp(name, "--", 2)) {
                    const std::string eq = parse_only(cmd, shell_quote(std::string(name) + "=" + v), &rc);
                    CHECK_MSG(rc == 0 && eq == got, "%s %s=%s: '%s', not '%s'", cmd_name(cmd), name, v.c_str(), eq.c_str(),
                              got.c_str());
                }
                if (o.list) {  // a list: both items kept, in order
                    const std::string two = parse_only(cmd, std::string(name) + " " + shell_quote(v + "," + v), &rc);
                    CHECK_MSG(rc == 0 && two == got + "|" + got, "%s %s %s,%s: '%s'", cmd_name(cmd), name, v.c_str(),
                              v.c_str(), two.c_str());
                }
                walked++;
            }
        }
    }
    CHECK(walked > 100);
}

// A name shared by two options: the same meaning, or a difference named.
static void test_shared_names(void) {
    std::map<std::string, std::vector<const cli_opt *>> by_name;
    for (size_t i = 0; i < cli_n_options; i++)
        for (const char * n : cli_options[i].names)
            if (n) by_name[n].push_back(&cli_options[i]);
    int compared = 0;
    for (const auto & e : by_name) {
        const std::vector<const cli_opt *> & v = e.second;
        for (size_t a = 0; a < v.size(); a++) {
            for (size_t b = a + 1; b < v.size(); b++) {
                const cli_opt & x = *v[a], & y = *v[b];
                CHECK_MSG(!(x.cmds & y.cmds), "%s: two options for one command", e.first.c_str());
                if (x.differs || y.differs) continue;  // llama.cpp's own tools give the name two meanings
                CHECK_MSG(x.kind == y.kind && !x.arg == !y.arg, "%s: another kind of value in another command",
                          e.first.c_str());
                // The same value, parsed by a command of each, gives the same item.
                const std::string s = sample(x);
                int rc1, rc2;
                const unsigned cx = x.cmds & -x.cmds, cy = y.cmds & -y.cmds;  // the first command of each
                const std::string px = parse_only(cx, e.first + (x.arg ? " " + shell_quote(s) : ""), &rc1);
                const std::string py = parse_only(cy, e.first + (y.arg ? " " + shell_quote(s) : ""), &rc2);
                CHECK_MSG(rc1 == 0 && rc2 == 0 && px == py, "%s %s: '%s' in %s, '%s' in %s", e.first.c_str(), s.c_str(),
                          px.c_str(), cmd_name(cx), py.c_str(), cmd_name(cy));
                compared++;
            }
        }
    }
    CHECK(compared >= 8);  // -m -n -t -b -ub -ngl -ctk -ctv --graph-cache ... between tern and tern-bench
}

// Mistyped flags and bad values: one line, "did you mean", "see --help".
static void test_errors(void) {
    struct { unsigned cmd; const char * args; const char * want; } cases[] = {
        {CLI_RUN, "--tmep 0", "unknown option '--tmep'; did you mean --temp?"},
        {CLI_RUN, "--repeat-penalti 1.1", "did you mean --repeat-penalty?"},
        {CLI_CHAT, "--n-predcit 4", "did you mean --n-predict?"},
        {CLI_CHAT, "--presense-penalty 1", "did you mean --presence-penalty?"},
        {CLI_TOKENIZE, "--piece", "did you mean --pieces?"},
        {CLI_INFO, "--mta", "did you mean --meta?"},
        {CLI_BENCH, "--n-prmpt 8", "did you mean --n-prompt?"},
        {CLI_BENCH, "-ngll 1", "did you mean -ngl?"},
        {CLI_RUN, "--zzzzzzzzzz", "unknown option '--zzzzzzzzzz'"},
        {CLI_CHAT, "--json", "--json is an option of tern run, not of tern chat"},
        {CLI_RUN, "-n", "option -n needs a value"},
        {CLI_RUN, "-n 12x", "option -n needs an integer, not '12x'"},
        {CLI_CHAT, "--top-p=inf", "option --top-p: inf is not a finite number"},
        {CLI_RUN, "--no-perf=1", "option --no-perf takes no value"},
        {CLI_RUN, "-ctk q5_1", "option -ctk: 'q5_1' is not one of f16|f32|q8_0|q4_0"},
        {CLI_CHAT, "-l 15", "option -l: '15' is not TOKEN+BIAS or TOKEN-BIAS"},
        {CLI_CHAT, "-r ''", "option -r: an empty value"},
        {CLI_BENCH, "-p 1,,2", "option -p: empty item in '1,,2'"},
        {CLI_BENCH, "-fa 1", "option -fa: '1': flash attention is not implemented in Tern"},
        {CLI_BENCH, "-nkvo 2", "option -nkvo: '2' is not one of 0|1"},
    };
    for (const auto & c : cases) {
        std::string out, err;
        const int rc = run(program(c.cmd) + " -m " + shell_quote(g_model) + " " + c.args, &out, &err);
        const std::string see = std::string("(see `") + cmd_name(c.cmd) + " --help`)\n";
        const bool one_line = err.find('\n') == err.size() - 1;
        CHECK_MSG(rc == (c.cmd == CLI_BENCH ? 2 : 1) && out.empty() && one_line &&
                      err.rfind(std::string(cmd_name(c.cmd)) + ": ", 0) == 0 && err.find(c.want) != std::string::npos &&
                      err.size() >= see.size() && err.compare(err.size() - see.size(), see.size(), see) == 0,
                  "%s %s: exit %d, stderr '%s' (want '%s')", cmd_name(c.cmd), c.args, rc, err.c_str(), c.want);
    }
    // A mistyped command.
    std::string o2, e2;
    CHECK(run(shell_quote(g_bin_dir + "/tern") + " rnu -m x", &o2, &e2) == 1 &&
          e2 == "tern: unknown command 'rnu'; did you mean run? (see `tern --help`)\n");
    // No suggestion for a name that is nothing like any option.
    std::string out, err;
    run(program(CLI_RUN) + " --zzzzzzzzzz", &out, &err);
    CHECK_MSG(err.find("did you mean") == std::string::npos, "%s", err.c_str());
}

// --help: every option of the command listed (generated), none of another's only.
static void test_help(void) {
    for (unsigned cmd : k_cmds) {
        std::string out, err;
        const int rc = run(program(cmd) + " --help", &out, &err);
        CHECK_MSG(rc == 0 && err.empty(), "%s --help: exit %d", cmd_name(cmd), rc);
        std::map<std::string, bool> lefts;  // "  -n, --n-predict N" -> whether cmd takes it
        for (size_t i = 0; i < cli_n_options; i++) {
            const cli_opt & o = cli_options[i];
            std::string left = "  ";
            for (int k = 0; k < 3 && o.names[k]; k++) left += std::string(k ? ", " : "") + o.names[k];
            if (o.arg) left += std::string(" ") + o.arg;
            lefts[left] = lefts[left] || (o.cmds & cmd);
        }
        for (const auto & l : lefts) {
            const bool listed = out.find("\n" + l.first + "  ") != std::string::npos ||
                                out.find("\n" + l.first + "\n") != std::string::npos;
            CHECK_MSG(listed == l.second, "%s --help %s '%s'", cmd_name(cmd), listed ? "lists" : "lacks", l.first.c_str());
        }
    }
}

// llama-bench's command line, as a llama.cpp user types it.
static void test_bench_llama_flags(void) {
    std::string out, err;
    int rc = run(program(CLI_BENCH) + " -m " + shell_quote(g_model) + " -ngl 0 -fa 0 -ub 512 -ctk f16 -p 8 -n 4 -r 1 -o csv", &out, &err);
    CHECK_MSG(rc == 0 && out.find("\"pp8\"") != std::string::npos && out.find("\"tg4\"") != std::string::npos,
              "-ngl 0 -fa 0 -ub 512 -ctk f16: exit %d: %s%s", rc, out.c_str(), err.c_str());
    // Lists, as llama-bench takes them: 2 ubatch sizes x 2 key types x (pp + tg) = 8 rows.
    rc = run(program(CLI_BENCH) + " -m " + shell_quote(g_model) + " -ub 4,512 -ctk f16,f32 -ctv f16 -nkvo 0 -p 8 -n 2 -r 1 -o csv",
             &out, &err);
    size_t rows = 0;
    for (char c : out) rows += c == '\n';
    CHECK_MSG(rc == 0 && rows == 9 && out.find(",\"4\",\"f32\",\"f16\",") != std::string::npos,
              "-ub 4,512 -ctk f16,f32: exit %d: %s%s", rc, out.c_str(), err.c_str());
}

// tern chat's -r and -l: as in tern run (the same table entries, the same code).
static void test_chat_sampling_flags(void) {
    char path[] = "/tmp/tern_opts_msgs_XXXXXX";
    const int fd = mkstemp(path);
    const char msgs[] = "[{\"role\": \"user\", \"content\": \"Once upon a time\"}]";
    CHECK(fd >= 0 && write(fd, msgs, sizeof(msgs) - 1) == (ssize_t) (sizeof(msgs) - 1));
    if (fd >= 0) close(fd);
    const std::string base = program(CLI_CHAT) + " -m " + shell_quote(g_model) + " --chat-template chatml --messages " + path +
                             " -n 24 --temp 0 --no-perf";
    std::string full, cut, err;
    CHECK(run(base, &full, &err) == 0 && full.size() > 12);
    // A stop string from the middle of the reply ends it there (or at most 2 characters after).
    const std::string stop = full.substr(6, 4);
    CHECK(run(base + " -r " + shell_quote(stop), &cut, &err) == 0);
    const size_t at = full.find(stop);
    CHECK_MSG(cut.size() < full.size() && cut.size() >= at + stop.size() + 1 && cut.size() <= at + stop.size() + 3 &&
                  full.compare(0, cut.size() - 1, cut, 0, cut.size() - 1) == 0,
              "-r '%s': '%s' of '%s'", stop.c_str(), cut.c_str(), full.c_str());
    // -l: a token outside the vocabulary is refused as in tern run; a bias of
    // +100 on token 300 makes greedy decoding pick it every time, as in tern run.
    CHECK(run(base + " -l 99999+1", &cut, &err) == 1 && err.find("outside the vocabulary") != std::string::npos);
    std::string gen;
    CHECK(run(base + " -n 5 -l 300+100", &cut, &err) == 0);
    CHECK(run(program(CLI_RUN) + " -m " + shell_quote(g_model) + " -p Once -n 5 --temp 0 --no-perf -l 300+100", &gen, &err) == 0);
    CHECK_MSG(cut.size() > 1 && cut != full && gen.size() > cut.size() &&
                  gen.compare(gen.size() - cut.size(), cut.size(), cut) == 0,
              "-l 300+100: chat '%s', run '%s'", cut.c_str(), gen.c_str());
    // The penalties are accepted and change nothing at their neutral values.
    CHECK(run(base + " --presence-penalty 0 --frequency-penalty 0 --repeat-penalty 1 -s -1 --top-k -1", &cut, &err) == 0 &&
          cut == full);
    unlink(path);
}

int main(void) {
    const char * bin = getenv("TERN_BIN_DIR");
    const char * src = getenv("TERN_SOURCE_DIR");
    if (!bin || !src) { fprintf(stderr, "TERN_BIN_DIR and TERN_SOURCE_DIR must be set\n"); return 2; }
    g_bin_dir = bin;
    g_model = std::string(src) + "/examples/models/stories260K.gguf";
    char errfile[] = "/tmp/tern_opts_err_XXXXXX";
    const int fd = mkstemp(errfile);
    if (fd >= 0) close(fd);
    g_errfile = errfile;
    test_walk();
    test_shared_names();
    test_errors();
    test_help();
    test_bench_llama_flags();
    test_chat_sampling_flags();
    unlink(errfile);
    return tern_test_summary();
}
