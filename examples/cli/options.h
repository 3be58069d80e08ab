// One option table for the command-line tools: `tern run`, `tern chat`,
// `tern tokenize`, `tern info` and `tern-bench` (bench/ links this module as
// the static library tern_cli_options; both sit above the library, never in
// it). A descriptor says a flag's names, its value (kind, range, choices), its
// help text, which commands take it and where its value goes (an id into
// cli_args). One parser reads every command line, so a flag of the same name
// parses the same way wherever it is accepted; --help is generated from the
// table, so it lists exactly what the parser takes.
//
// Habits kept from llama.cpp: `--opt value` and `--opt=value`; a mistyped flag
// gets "did you mean --xyz?"; an error is one line that ends with
// "(see `tern run --help`)". tern-bench follows llama-bench where llama-bench
// gives a flag of the same name another meaning (-p, -r: prompt tokens and
// repetitions there, prompt text and stop strings in llama-cli); such a
// descriptor names the difference in `differs` (tests/test_cli_options.cpp
// walks the table and checks the rest agree).
//
// TERN_CLI_PRINT_OPTIONS=1 in the environment: after a successful parse the
// command prints every option given as `NAME=VALUE` lines (values as parsed:
// 012 -> 12) and exits 0. The table test compares these across commands.
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <string>
#include <vector>

// The commands, as bits of cli_opt::cmds.
enum {
    CLI_RUN = 1,
    CLI_CHAT = 2,
    CLI_TOKENIZE = 4,
    CLI_INFO = 8,
    CLI_BENCH = 16,
};

// Where a value goes: one slot of cli_args per id.
enum cli_id {
    // every command
    O_HELP, O_VERSION, O_MODEL,
    // text in
    O_PROMPT, O_FILE, O_ESCAPE, O_NO_ESCAPE,
    // generation and context
    O_N_PREDICT, O_CTX, O_BATCH, O_UBATCH, O_THREADS,
    // devices
    O_NGL, O_DEVICE, O_OVERRIDE_TENSOR, O_TENSOR_SPLIT, O_NKVO, O_NO_OP_OFFLOAD, O_GRAPH_CACHE, O_LIST_DEVICES,
    // structured output
    O_GRAMMAR, O_GRAMMAR_FILE, O_JSON_SCHEMA, O_JSON_SCHEMA_FILE,
    // sampling
    O_TEMP, O_TOP_K, O_TOP_P, O_MIN_P, O_REPEAT_PENALTY, O_PRESENCE_PENALTY, O_FREQUENCY_PENALTY,
    O_REPEAT_LAST_N, O_SEED, O_REVERSE_PROMPT, O_IGNORE_EOS, O_LOGIT_BIAS,
    // long generations
    O_KEEP, O_NO_CONTEXT_SHIFT, O_GRP_ATTN_N, O_GRP_ATTN_W,
    // KV cache and model loading
    O_CACHE_TYPE_K, O_CACHE_TYPE_V, O_PROMPT_CACHE, O_NO_MMAP, O_MLOCK, O_CHECK_TENSORS, O_NO_REPACK,
    // output
    O_NO_PERF, O_VERBOSE, O_JSON, O_LOGITS_OUT,
    // tern chat
    O_SYSTEM, O_CHAT_TEMPLATE, O_CHAT_TEMPLATE_FILE, O_CHAT_TEMPLATE_KWARGS, O_JINJA, O_NO_JINJA, O_MESSAGES,
    O_PRINT_PROMPT,
    // tern tokenize
    O_PIECES, O_NO_BOS, O_PARSE_SPECIAL,
    // tern info
    O_BLOB, O_VOCAB_ONLY, O_META,
    // tern-bench (llama-bench's flags: lists where llama-bench takes lists)
    B_MODEL, B_N_PROMPT, B_N_GEN, B_PG, B_DEPTH, B_THREADS, B_BATCH, B_UBATCH, B_REPS, B_OUTPUT,
    B_NGL, B_NKVO, B_GRAPH_CACHE, B_CACHE_TYPE_K, B_CACHE_TYPE_V, B_FLASH_ATTN,
    CLI_N_IDS
};

enum cli_kind {
    K_FLAG,    // no value
    K_INT,     // a whole decimal integer in [lo, hi]
    K_FLOAT,   // a whole finite number
    K_STRING,  // any text (non-empty when nonempty is set)
    K_CHOICE,  // one of `choices` (comma-separated)
    K_CHECK,   // text checked by `check` (logit bias, -ot, -ts, -pg)
};

// A check for K_CHECK values: false after writing why into *why.
typedef bool (*cli_check_fn)(const char * value, std::string * why);

struct cli_opt {
    cli_id       id;
    const char * names[3];   // short first ("-n"), then long ones; NULL-padded
    const char * arg;        // the value's name in --help ("N"); NULL for a flag
    unsigned     cmds;       // CLI_* bits
    cli_kind     kind;
    long long    lo, hi;     // K_INT: the range
    const char * choices;    // K_CHOICE: "f16,f32,q8_0,q4_0"
    cli_check_fn check;      // K_CHECK
    bool         list;       // comma-separated items, each checked (llama-bench's lists)
    bool         nonempty;   // K_STRING: "" refused
    const char * sample;     // a valid value for the table test (NULL: derived from the kind)
    const char * differs;    // NULL, or why this flag means something else than another of its name
    const char * help;       // '\n' starts a continuation line
};

extern const cli_opt cli_options[];
extern const size_t cli_n_options;

// One command: its bit, its name in messages ("tern run"), the usage text
// above the options and any text below them.
struct cli_command {
    unsigned     bit;
    const char * name;
    const char * usage_head;
    const char * usage_tail;
};

// What a command line said: per id, every item given, in order (a repeated
// flag appends; a list appends each item), and the argument index of its last
// occurrence (which of several related flags came last).
struct cli_args {
    std::vector<std::string> items[CLI_N_IDS];
    int last[CLI_N_IDS] = {};

    bool has(cli_id id) const { return !items[id].empty(); }
    const char * str(cli_id id, const char * def = NULL) const { return has(id) ? items[id].back().c_str() : def; }
    long long num(cli_id id, long long def) const;  // the last item (already checked)
    float flt(cli_id id, float def) const;
    std::vector<long long> nums(cli_id id) const;   // every item
};

enum cli_result { CLI_GO, CLI_EXIT_OK, CLI_ERROR };

// Parse argv[1..argc) for `cmd`. CLI_ERROR after one line on stderr;
// CLI_EXIT_OK after --help (printed to stdout) or TERN_CLI_PRINT_OPTIONS.
cli_result cli_parse(const cli_command & cmd, int argc, char ** argv, cli_args * out);

// --help for a command, generated from the table.
void cli_print_help(FILE * f, const cli_command & cmd);

// The option a name denotes for a command (NULL: none).
const cli_opt * cli_find(unsigned cmd_bit, const char * name);

// Levenshtein distance (for "did you mean").
size_t cli_edit_distance(const std::string & a, const std::string & b);

// One error line: "<cmd>: <what> (see `<cmd> --help`)".
void cli_error(const cli_command & cmd, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
