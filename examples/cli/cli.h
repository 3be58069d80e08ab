// The `tern` command: shared helpers of its subcommands.
#pragma once
#include <stdint.h>
#include <string>
#include "tern.h"

int cmd_info(int argc, char ** argv);
int cmd_run(int argc, char ** argv);
int cmd_tokenize(int argc, char ** argv);
int cmd_chat(int argc, char ** argv);

// Option parsing: value of argv[i + 1] for a flag, with a clear error when missing.
bool cli_value(int argc, char ** argv, int & i, const char *& out);
// A whole-string integer in [lo, hi]; anything else is one clear error line.
// long long: the same range on every target (long is 32 bits on armhf).
bool cli_int(int argc, char ** argv, int & i, long long & out, long long lo, long long hi);
// A whole-string finite number.
bool cli_float(int argc, char ** argv, int & i, float & out);

// `tern --version`: version, kernel set in use, sets compiled.
void cli_print_version(void);

// Load a model with a progress bar on stderr when stderr is a terminal.
// Prints one clear error line and returns NULL on failure.
tern_model * cli_load_model(const char * path, tern_model_params params);

// Read a whole regular file of at most max_bytes into out; false (after one
// error line on stderr) when it is not a regular file, too big or unreadable.
bool cli_read_file(const char * path, std::string & out, size_t max_bytes);
// Standard input, bounded like a file (CLI_MAX_TEXT_BYTES); false after one
// error line naming `who`.
bool cli_read_stdin(const char * who, std::string & out);
// What a prompt or text file may hold (tern_tokenize takes an int32 length).
#define CLI_MAX_TEXT_BYTES ((size_t) 256 << 20)

// Text from a model file made inert for a terminal: control bytes (0x00-0x1f,
// 0x7f: escape sequences, carriage returns) as \n \r \t or \xNN, at most
// max_bytes of the input (then "..."). Everything else as it is.
std::string cli_printable(const char * text, size_t n, size_t max_bytes = (size_t) -1);
static inline std::string cli_printable(const std::string & text, size_t max_bytes = (size_t) -1) {
    return cli_printable(text.data(), text.size(), max_bytes);
}

// Append text as a JSON string literal: control bytes as \u00XX, invalid UTF-8 as U+FFFD.
void json_append_string(std::string & out, const std::string & text);
