// Shell helpers of the tests that run Tern's programs as a user does
// (test_cli, test_cli_info, test_cli_options, test_chat_cli, test_grammar_cli).
#pragma once
#include <stdio.h>
#include <sys/wait.h>

#include <string>

// s as one shell word: single-quoted, a ' inside as '\''.
static inline std::string shell_quote(const std::string & s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Runs cmd through the shell: its exit status (-1 when it could not run or did
// not exit), its stdout in *out. With err_file and err, the command's stderr
// (the whole command: it runs in a subshell) goes to err_file and comes back in *err.
static inline int run_command(const std::string & cmd, std::string * out, const std::string * err_file = NULL,
                              std::string * err = NULL) {
    out->clear();
    const bool capture_err = err_file && err;
    FILE * p = popen(capture_err ? ("(" + cmd + ") 2>" + shell_quote(*err_file)).c_str() : cmd.c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
    const int st = pclose(p);
    if (capture_err) {
        err->clear();
        if (FILE * f = fopen(err_file->c_str(), "rb")) {
            while ((n = fread(buf, 1, sizeof(buf), f)) > 0) err->append(buf, n);
            fclose(f);
        }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
