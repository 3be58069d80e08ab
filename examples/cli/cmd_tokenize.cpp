// tern tokenize: token ids of a text, on one line (or with their pieces).
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <string>
#include <vector>
#include "cli.h"
#include "options.h"

static const cli_command tokenize_command = {
    CLI_TOKENIZE, "tern tokenize",
    "usage: tern tokenize -m FILE (-p TEXT | -f FILE) [options]\n"
    "\n"
    "Prints the token ids of the text on one line, separated by single spaces;\n"
    "with --pieces one token a line as llama-tokenize does: `ID -> 'PIECE'`\n"
    "(control bytes of a piece escaped). Only the model's vocabulary is loaded.\n"
    "\n"
    "options:\n",
    NULL,
};

int cmd_tokenize(int argc, char ** argv) {
    cli_args args;
    const cli_result pr = cli_parse(tokenize_command, argc, argv, &args);
    if (pr != CLI_GO) return pr == CLI_EXIT_OK ? 0 : 1;
    const char * path = args.str(O_MODEL), * prompt = args.str(O_PROMPT), * file = args.str(O_FILE);
    const bool add_special = !args.has(O_NO_BOS), parse_special = args.has(O_PARSE_SPECIAL), pieces = args.has(O_PIECES);
    if (!path) { fprintf(stderr, "tern tokenize: -m FILE is required\n"); return 1; }
    if (!prompt == !file) { fprintf(stderr, "tern tokenize: give exactly one of -p TEXT and -f FILE\n"); return 1; }
    std::string text;
    if (file && !strcmp(file, "-")) {
        if (!cli_read_stdin("tern tokenize", text)) return 1;
    } else if (file) {
        if (!cli_read_file(file, text, CLI_MAX_TEXT_BYTES)) return 1;
    } else {
        text = prompt;
    }
    if (text.size() > INT32_MAX) { fprintf(stderr, "tern tokenize: text too long\n"); return 1; }

    tern_model_params p = tern_model_default_params();
    p.vocab_only = 1;
    tern_model * m = cli_load_model(path, p);
    if (!m) return 1;
    std::vector<tern_token> tokens(text.size() + 8);
    int32_t n = tern_tokenize(m, text.data(), (int32_t) text.size(), tokens.data(), (int32_t) tokens.size(),
                              add_special, parse_special);
    if (n < 0 && n != INT32_MIN) {
        tokens.resize(-n);
        n = tern_tokenize(m, text.data(), (int32_t) text.size(), tokens.data(), (int32_t) tokens.size(),
                          add_special, parse_special);
    }
    if (n < 0) {
        fprintf(stderr, "tern tokenize: %s\n", tern_last_error());
        tern_model_free(m);
        return 1;
    }
    if (pieces) {
        std::vector<char> piece(256);
        for (int32_t i = 0; i < n; i++) {
            int32_t len = tern_token_to_piece(m, tokens[i], piece.data(), (int32_t) piece.size(), 1);
            if (len < 0) {
                piece.resize((size_t) -len);
                len = tern_token_to_piece(m, tokens[i], piece.data(), (int32_t) piece.size(), 1);
            }
            printf("%6d -> '%s'\n", tokens[i], len > 0 ? cli_printable(piece.data(), (size_t) len).c_str() : "");
        }
    } else {
        for (int32_t i = 0; i < n; i++) printf(i ? " %d" : "%d", tokens[i]);
        printf("\n");
    }
    tern_model_free(m);
    return 0;
}
