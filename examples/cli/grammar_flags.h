// The structured-output flags of `tern run` and `tern chat`, as llama-cli
// spells them: --grammar, --grammar-file, -j/--json-schema,
// -jf/--json-schema-file. One parser and one help text for both commands.
#pragma once
#include <string>
#include "tern.h"

struct cli_grammar {
    std::string text;    // GBNF ("" : none); a schema is converted when read
    std::string source;  // for messages: "--grammar", "schema.json", ...
};

// Is argv[i] one of the flags? Then it is consumed (with its value) and *ok
// tells whether its value was good (one error line on stderr otherwise). The
// last such flag wins, as in llama-cli.
bool cli_grammar_flag(const char * cmd, int argc, char ** argv, int & i, cli_grammar & g, bool * ok);
// Add the grammar to the sampler (nothing when none was given); false after
// one error line. budget: the tokens the sampler will be asked for (-1: unknown).
bool cli_grammar_attach(const char * cmd, const cli_grammar & g, tern_sampler * smpl, const tern_model * m,
                        long long budget);
// Lines for --help.
extern const char * const cli_grammar_help;
