// The option table of tern run, tern chat, tern tokenize, tern info and
// tern-bench (options.h). Order: the order of --help.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "options.h"
#include "tern.h"

namespace {

const unsigned RUN = CLI_RUN, CHAT = CLI_CHAT, TOK = CLI_TOKENIZE, INFO = CLI_INFO, BENCH = CLI_BENCH;
const unsigned GEN = CLI_RUN | CLI_CHAT;  // the generating commands
const long long I32 = 2147483647LL;

// -l TOKEN+BIAS or TOKEN-BIAS (BIAS may be inf)
bool check_bias(const char * s, std::string * why) {
    char * end;
    const long t = strtol(s, &end, 10);
    const bool sign = *end == '+' || *end == '-';
    char * bend = end;
    const float v = sign ? strtof(end, &bend) : 0.0f;
    if (end == s || *s == '-' || *s == '+' || t < 0 || t > I32 || !sign || bend == end || *bend || isnan(v)) {
        *why = std::string("'") + s + "' is not TOKEN+BIAS or TOKEN-BIAS";
        return false;
    }
    return true;
}

// -ot PATTERN=DEV[,PATTERN=DEV...]
bool check_override(const char * s, std::string * why) {
    const std::string all = s;
    size_t at = 0;
    for (;;) {
        size_t comma = all.find(',', at);
        if (comma == std::string::npos) comma = all.size();
        const std::string one = all.substr(at, comma - at);
        if (one.find('=') == std::string::npos || one.front() == '=' || one.back() == '=') {
            *why = "'" + one + "' is not PATTERN=DEVICE";
            return false;
        }
        if (comma == all.size()) return true;
        at = comma + 1;
    }
}

// -ts A,B[,C...] (',' or '/' between proportions >= 0)
bool check_split(const char * s, std::string * why) {
    for (const char * p = s;;) {
        char * end = NULL;
        const float f = strtof(p, &end);
        if (end == p || !(f >= 0.0f) || !isfinite(f) || (*end && *end != ',' && *end != '/')) {
            *why = std::string("'") + s + "' is not a list of proportions (3,1)";
            return false;
        }
        if (!*end) return true;
        p = end + 1;
    }
}

bool digits(const std::string & s) {
    if (s.empty() || s.size() > 9) return false;
    for (char c : s) if (c < '0' || c > '9') return false;
    return true;
}

// -pg PP,TG
bool check_pg(const char * s, std::string * why) {
    const std::string v = s;
    const size_t comma = v.find(',');
    if (comma == std::string::npos || !digits(v.substr(0, comma)) || !digits(v.substr(comma + 1))) {
        *why = "'" + v + "' is not PP,TG (two counts)";
        return false;
    }
    return true;
}

// -fa 0|1: Tern's attention is llama.cpp's non-flash path; 1 cannot be honoured.
bool check_fa(const char * s, std::string * why) {
    if (!strcmp(s, "0") || !strcmp(s, "off")) return true;
    if (!strcmp(s, "1") || !strcmp(s, "on"))
        *why = std::string("'") + s + "': flash attention is not implemented in Tern (its attention is llama.cpp's non-flash path); use -fa 0";
    else
        *why = std::string("'") + s + "' is not 0 or 1";
    return false;
}

const char * const KV_TYPES = "f16,f32,q8_0,q4_0";

}  // namespace

#define OPT(id, n0, n1, n2, arg, cmds, kind, lo, hi, choices, check, list, nonempty, sample, differs, help) \
    { id, { n0, n1, n2 }, arg, cmds, kind, lo, hi, choices, check, list, nonempty, sample, differs, help }
#define FLAG(id, n0, n1, cmds, help) OPT(id, n0, n1, NULL, NULL, cmds, K_FLAG, 0, 0, NULL, NULL, false, false, NULL, NULL, help)
#define STR(id, n0, n1, arg, cmds, help) OPT(id, n0, n1, NULL, arg, cmds, K_STRING, 0, 0, NULL, NULL, false, false, NULL, NULL, help)
#define INT(id, n0, n1, arg, cmds, lo, hi, help) OPT(id, n0, n1, NULL, arg, cmds, K_INT, lo, hi, NULL, NULL, false, false, NULL, NULL, help)
#define FLT(id, n0, n1, arg, cmds, help) OPT(id, n0, n1, NULL, arg, cmds, K_FLOAT, 0, 0, NULL, NULL, false, false, NULL, NULL, help)
#define ILIST(id, n0, n1, arg, lo, hi, help) OPT(id, n0, n1, NULL, arg, BENCH, K_INT, lo, hi, NULL, NULL, true, false, NULL, NULL, help)

const cli_opt cli_options[] = {
    FLAG(O_HELP, "-h", "--help", RUN | CHAT | TOK | INFO | BENCH, "this text"),
    STR(O_MODEL, "-m", "--model", "FILE", RUN | CHAT | TOK | INFO,
        "GGUF model (the first part of a split model loads all parts)"),
    OPT(B_MODEL, "-m", "--model", NULL, "FILE", BENCH, K_STRING, 0, 0, NULL, NULL, true, false, NULL, NULL,
        "GGUF model(s) to test, a list (required)"),
    // -- text in
    STR(O_PROMPT, "-p", "--prompt", "TEXT", RUN,
        "prompt (BOS added when the model asks for it; special tokens such\n"
        "as <|im_start|> are parsed, as llama-cli does; default: empty,\n"
        "the text starts after BOS)"),
    STR(O_PROMPT, "-p", "--prompt", "TEXT", TOK, "text to tokenize"),
    OPT(O_FILE, "-f", "--file", NULL, "FILE", RUN, K_STRING, 0, 0, NULL, NULL, false, false, NULL,
        "llama-cli drops one trailing newline of a prompt file, llama-tokenize reads the file byte for byte",
        "read the prompt from a file (-: standard input), byte for byte but one\n"
        "trailing newline of a FILE, as llama-cli"),
    OPT(O_FILE, "-f", "--file", NULL, "FILE", TOK, K_STRING, 0, 0, NULL, NULL, false, false, NULL,
        "llama-tokenize reads the file byte for byte, llama-cli drops one trailing newline",
        "read the text from a file (-: standard input), byte for byte"),
    FLAG(O_ESCAPE, "-e", "--escape", RUN,
         "process escapes in the prompt and the -r strings:\n\\n \\r \\t \\' \\\" \\\\ \\xNN (default)"),
    FLAG(O_NO_ESCAPE, "--no-escape", NULL, RUN, "take the prompt literally"),
    // -- tern chat
    STR(O_SYSTEM, "-sys", "--system-prompt", "S", CHAT, "system message (with --messages: put first)"),
    STR(O_CHAT_TEMPLATE, "--chat-template", NULL, "T", CHAT,
        "a built-in template name (chatml, llama3, mistral-v7, ...)\n"
        "or Jinja source, matched to a built-in by its markers unless\n"
        "--jinja (default: the model's tokenizer.chat_template, run by\n"
        "the Jinja engine, else chatml with a note)"),
    STR(O_CHAT_TEMPLATE_FILE, "--chat-template-file", NULL, "F", CHAT, "the template's source from a file"),
    STR(O_CHAT_TEMPLATE_KWARGS, "--chat-template-kwargs", NULL, "JSON", CHAT,
        "more variables for a Jinja template, a JSON object, as\n"
        "llama-cli's: e.g. '{\"enable_thinking\": true}' (newer llama.cpp\n"
        "passes that by default; c392e509 and Tern leave it undefined)"),
    FLAG(O_JINJA, "--jinja", NULL, CHAT,
         "run --chat-template / --chat-template-file source in the Jinja\n"
         "engine, as llama-cli --jinja (dates: the clock, or the\n"
         "environment's SOURCE_DATE_EPOCH)"),
    FLAG(O_NO_JINJA, "--no-jinja", NULL, CHAT,
         "match the model's template to a built-in by its markers instead\n(llama-cli's default)"),
    STR(O_MESSAGES, "--messages", NULL, "FILE.json", CHAT,
        "answer this conversation and exit: an OpenAI-style array\n"
        "[{\"role\": \"user\", \"content\": \"...\"}, ...]"),
    FLAG(O_PRINT_PROMPT, "--print-prompt", NULL, CHAT,
         "with --messages: print the formatted prompt (ending with the\n"
         "assistant's opening) and exit; -m is read for its template\n"
         "only, and not needed with --chat-template"),
    // -- tern tokenize
    FLAG(O_PIECES, "--pieces", NULL, TOK, "each id with its piece, one a line"),
    FLAG(O_NO_BOS, "--no-bos", NULL, TOK, "do not add the BOS/EOS tokens the model asks for"),
    FLAG(O_PARSE_SPECIAL, "--parse-special", NULL, TOK,
         "turn the text of special tokens (<s>, <|im_end|>) into their ids"),
    // -- tern info
    FLAG(O_BLOB, "--blob", NULL, INFO, "read the file into memory and load it as a caller's blob"),
    FLAG(O_VOCAB_ONLY, "--vocab-only", NULL, INFO, "metadata and vocabulary only (any architecture, no weights)"),
    FLAG(O_META, "--meta", NULL, INFO, "also print every metadata key and value"),
    // -- tern-bench: llama-bench's flags
    OPT(B_N_PROMPT, "-p", "--n-prompt", NULL, "N", BENCH, K_INT, 0, I32, NULL, NULL, true, false, NULL,
        "llama-bench's -p is a prompt length, llama-cli's the prompt text",
        "prompt tokens of a pp test, a list (default 512; 0: no pp test)"),
    ILIST(B_N_GEN, "-n", "--n-gen", "N", 0, I32, "generated tokens of a tg test, a list (default 128; 0: no tg test)"),
    OPT(B_PG, "-pg", NULL, NULL, "PP,TG", BENCH, K_CHECK, 0, 0, NULL, check_pg, false, false, "8,4", NULL,
        "a pp+tg test: PP prompt tokens, then TG generated\n(no default; repeat the flag for more)"),
    ILIST(B_DEPTH, "-d", "--n-depth", "N", 0, I32,
          "tokens already in the KV cache before each test, decoded\nfirst and not timed, a list (default 0)"),
    ILIST(B_THREADS, "-t", "--threads", "N", 1, TERN_MAX_THREADS,
          "threads, a list (default: the CPUs online, at most TERN_MAX_THREADS)"),
    ILIST(B_BATCH, "-b", "--batch-size", "N", 1, I32,
          "most prompt tokens per decode call, a list (default 2048,\nclamped to what the test needs)"),
    ILIST(B_UBATCH, "-ub", "--ubatch-size", "N", 1, I32,
          "most tokens one graph evaluates (the context's n_batch), a\nlist (default 512, as llama-bench; at most -b)"),
    OPT(B_REPS, "-r", "--repetitions", NULL, "N", BENCH, K_INT, 1, I32, NULL, NULL, false, false, NULL,
        "llama-bench's -r is a repetition count, llama-cli's a stop string",
        "timed runs per test, after one warmup (default 5)"),
    OPT(B_OUTPUT, "-o", "--output", NULL, "md|csv|json", BENCH, K_CHOICE, 0, 0, "md,csv,json", NULL, false, false, NULL,
        NULL, "output format (default md)"),
    OPT(B_NGL, "-ngl", "--n-gpu-layers", NULL, "N", BENCH, K_INT, -1, I32, NULL, NULL, true, false, NULL, NULL,
        "layers on the devices, a list (default 0; -1: all; the model\nis loaded once per value)"),
    OPT(B_NKVO, "-nkvo", "--no-kv-offload", NULL, "0|1", BENCH, K_CHOICE, 0, 0, "0,1", NULL, true, false, NULL,
        "llama-bench's -nkvo takes 0|1 (a list), llama-cli's is a flag",
        "KV caches on the CPU, a list (default 0)"),
    OPT(B_CACHE_TYPE_K, "-ctk", "--cache-type-k", NULL, "T", BENCH, K_CHOICE, 0, 0, KV_TYPES, NULL, true, false,
        NULL, NULL, "KV cache key type, a list: f16 (default), f32, q8_0, q4_0"),
    OPT(B_CACHE_TYPE_V, "-ctv", "--cache-type-v", NULL, "T", BENCH, K_CHOICE, 0, 0, KV_TYPES, NULL, true, false,
        NULL, NULL, "KV cache value type, a list: the same choices"),
    OPT(B_FLASH_ATTN, "-fa", "--flash-attn", NULL, "0|1", BENCH, K_CHECK, 0, 0, NULL, check_fa, true, false, "0",
        NULL, "flash attention, a list: 0 only (Tern's attention is llama.cpp's\nnon-flash path; 1 is refused)"),
    ILIST(B_GRAPH_CACHE, "--graph-cache", NULL, "N", 0, 1 << 16,
          "captured device graphs kept, a list (default 12; 0: capture\noff, every op launched one by one)"),
    // -- generation and context (tern run, tern chat)
    OPT(O_N_PREDICT, "-n", "--n-predict", NULL, "N", GEN, K_INT, -1, I32, NULL, NULL, false, false, NULL, NULL,
        "tokens to generate (tern run: default 128; tern chat: per reply,\n"
        "default -1). -1: until end of generation: in tern run\n"
        "with context shift on, that may be never; with\n"
        "--no-context-shift, at the latest a full context"),
    INT(O_CTX, "-c", "--ctx-size", "N", GEN, 0, I32,
        "context size in tokens (default 4096, at most the\nmodel's training context; 0: the training context)"),
    INT(O_BATCH, "-b", "--batch-size", "N", GEN, 1, I32, "tokens per graph evaluation (default 512)"),
    INT(O_UBATCH, "-ub", "--ubatch-size", "N", GEN, 1, I32,
        "the same limit, as llama.cpp's physical batch (the smaller wins)"),
    INT(O_THREADS, "-t", "--threads", "N", GEN, 1, TERN_MAX_THREADS, "threads (default: the online CPUs, at most 4)"),
    // -- devices
    OPT(O_NGL, "-ngl", "--n-gpu-layers", "--gpu-layers", "N", GEN | INFO, K_INT, -1, I32, NULL, NULL, false, false,
        NULL, NULL,
        "the last N layers run on the devices (-1 or >= the layer\n"
        "count: all; the output layer follows the last one; default 0)"),
    STR(O_DEVICE, "-dev", "--device", "LIST", GEN | INFO | BENCH,
        "devices to use, comma-separated NAME[:PARAMS] (sim0, vulkan0, none);\n"
        "default: every accelerator present (never the sim device)"),
    OPT(O_OVERRIDE_TENSOR, "-ot", "--override-tensor", NULL, "P=DEV", GEN | INFO | BENCH, K_CHECK, 0, 0, NULL,
        check_override, false, false, "blk\\.0\\.=CPU", NULL,
        "weights whose name matches the regex P go to DEV (a device\n"
        "or CPU); comma-separated or repeated, the first match wins"),
    OPT(O_TENSOR_SPLIT, "-ts", "--tensor-split", NULL, "A,B", GEN | INFO | BENCH, K_CHECK, 0, 0, NULL, check_split,
        false, false, "3,1", NULL, "proportions of the offloaded layers per device (default: even)"),
    FLAG(O_NKVO, "-nkvo", "--no-kv-offload", GEN, "keep every layer's KV cache on the CPU"),
    FLAG(O_NO_OP_OFFLOAD, "--no-op-offload", NULL, GEN | BENCH,
         "never move large matmuls of CPU weights to a device for prompts"),
    INT(O_GRAPH_CACHE, "--graph-cache", NULL, "N", GEN, 0, 1 << 16,
        "captured device graphs kept (default 12; 0: capture off)"),
    FLAG(O_LIST_DEVICES, "--list-devices", NULL, GEN | BENCH, "print the devices this build sees and exit"),
    // -- structured output (the last of the four wins, as in llama-cli)
    STR(O_GRAMMAR, "--grammar", NULL, "GRAMMAR", GEN,
        "constrain the output to a GBNF grammar (llama.cpp's syntax, start\n"
        "symbol root), e.g. 'root ::= \"yes\" | \"no\"'"),
    STR(O_GRAMMAR_FILE, "--grammar-file", NULL, "FILE", GEN, "read the grammar from a file"),
    STR(O_JSON_SCHEMA, "-j", "--json-schema", "SCHEMA", GEN,
        "constrain the output to JSON the schema accepts ('{}': any object);\n"
        "keywords a grammar cannot enforce are refused, naming the keyword"),
    STR(O_JSON_SCHEMA_FILE, "-jf", "--json-schema-file", "FILE", GEN,
        "read the schema from a file\n(with -n N the output is completed within N tokens)"),
    // -- sampling
    FLT(O_TEMP, "--temp", NULL, "T", GEN, "temperature (default 0.8; 0: greedy)"),
    INT(O_TOP_K, "--top-k", NULL, "K", GEN, -I32 - 1, I32, "top-k (default 40; 0 or negative: off)"),
    FLT(O_TOP_P, "--top-p", NULL, "P", GEN, "top-p (default 0.95; 1: off)"),
    FLT(O_MIN_P, "--min-p", NULL, "P", GEN, "min-p (default 0.05; 0: off)"),
    FLT(O_REPEAT_PENALTY, "--repeat-penalty", NULL, "R", GEN, "repetition penalty (default 1.0: off)"),
    FLT(O_PRESENCE_PENALTY, "--presence-penalty", NULL, "P", GEN, "presence penalty (default 0: off)"),
    FLT(O_FREQUENCY_PENALTY, "--frequency-penalty", NULL, "F", GEN, "frequency penalty (default 0: off)"),
    INT(O_REPEAT_LAST_N, "--repeat-last-n", NULL, "N", GEN, -1, I32,
        "tokens the penalties look back over, prompt (chat: conversation)\n"
        "included (default 64; 0: off; -1: the context size)"),
    INT(O_SEED, "-s", "--seed", "S", GEN, -1, 4294967295LL,
        "sampler seed (default and -1: random; printed with -v and --json)"),
    OPT(O_REVERSE_PROMPT, "-r", "--reverse-prompt", NULL, "S", GEN, K_STRING, 0, 0, NULL, NULL, false, true, NULL, NULL,
        "stop when the generated text ends with S, or S and at most\n"
        "2 more characters, as llama-cli without -i (repeatable;\n"
        "tern chat: ends the reply)"),
    FLAG(O_IGNORE_EOS, "--ignore-eos", NULL, RUN, "never end at an end-of-generation token"),
    OPT(O_LOGIT_BIAS, "-l", "--logit-bias", NULL, "T(+|-)B", GEN, K_CHECK, 0, 0, NULL, check_bias, false, false,
        "15+1", NULL, "add B to token T's logit before sampling (repeatable;\ne.g. 15043+1, 15043-inf)"),
    // -- long generations (tern run)
    INT(O_KEEP, "--keep", NULL, "N", RUN, -1, I32,
        "tokens of the prompt kept when the context is full (default 0;\n"
        "-1: all); the rest is halved and shifted, as llama-cli does"),
    FLAG(O_NO_CONTEXT_SHIFT, "--no-context-shift", NULL, RUN, "stop at a full context instead (a note on stderr, exit 0)"),
    INT(O_GRP_ATTN_N, "-gan", "--grp-attn-n", "N", RUN, 1, 1 << 20, "Self-Extend group factor (default 1: off)"),
    INT(O_GRP_ATTN_W, "-gaw", "--grp-attn-w", "W", RUN, 1, I32, "Self-Extend window (default 512)"),
    // -- KV cache and model loading
    OPT(O_CACHE_TYPE_K, "-ctk", "--cache-type-k", NULL, "T", GEN, K_CHOICE, 0, 0, KV_TYPES, NULL, false, false, NULL,
        NULL, "KV cache key type: f16 (default), f32, q8_0, q4_0"),
    OPT(O_CACHE_TYPE_V, "-ctv", "--cache-type-v", NULL, "T", GEN, K_CHOICE, 0, 0, KV_TYPES, NULL, false, false, NULL,
        NULL, "KV cache value type: the same choices"),
    STR(O_PROMPT_CACHE, "--prompt-cache", NULL, "FILE", RUN,
        "reuse the KV state saved after the same prompt prefix;\n"
        "save it there after the prompt (replaced whole; a FILE that\n"
        "exists and is not a Tern state is refused, never overwritten)"),
    FLAG(O_NO_MMAP, "--no-mmap", NULL, GEN | INFO, "read() the model instead of mapping it"),
    FLAG(O_MLOCK, "--mlock", NULL, GEN, "lock the mapped model in memory"),
    FLAG(O_CHECK_TENSORS, "--check-tensors", NULL, GEN | INFO, "refuse a model whose weights or block scales hold NaN/Inf"),
    FLAG(O_NO_REPACK, "--no-repack", NULL, GEN,
         "keep the weights in the file's layout (default: rewritten at load\n"
         "into the CPU kernels' interleaved layout where they have one)"),
    // -- output
    FLAG(O_NO_PERF, "--no-perf", NULL, GEN,
         "no timings on stderr (tern run: at the end: load, prompt eval,\n"
         "eval, total, as llama_perf_context_print; tern chat: after each reply)"),
    FLAG(O_VERBOSE, "-v", "--verbose", GEN,
         "the seed and settings on stderr, and how each graph runs (splits\n"
         "and copies, with devices); tern chat: per turn the cache bookkeeping"),
    FLAG(O_JSON, "--json", NULL, RUN,
         "stream nothing; print one JSON object at the end:\n"
         "prompt_tokens, tokens, text, stop (length, eog, stop_string,\n"
         "grammar, context_full), seed, timings (sample_ms: sampling with\n"
         "any grammar; gen_wall_ms: the whole generation loop)"),
    STR(O_LOGITS_OUT, "--logits-out", NULL, "FILE", RUN,
        "write float32 logits [n_prompt][n_vocab] of every\nprompt position (the prompt decoded in one batch)"),
    FLAG(O_VERSION, "--version", NULL, GEN, "version, kernel set and the devices present with their features"),
};

const size_t cli_n_options = sizeof(cli_options) / sizeof(cli_options[0]);
