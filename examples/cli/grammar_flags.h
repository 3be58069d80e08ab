// The structured-output flags of `tern run` and `tern chat`, as llama-cli
// spells them: --grammar, --grammar-file, -j/--json-schema,
// -jf/--json-schema-file (parsed by the option table, options.h): the text
// read and converted, then attached to a sampler.
#pragma once
#include <string>
#include "options.h"
#include "tern.h"

struct cli_grammar {
    std::string text;    // GBNF ("" : none); a schema is converted when read
    std::string source;  // for messages: "--grammar", "schema.json", ...
};

// The grammar the command line asks for (the last of the four flags wins, as
// in llama-cli): files read, a schema converted. false after one error line.
bool cli_grammar_from_args(const char * cmd, const cli_args & a, cli_grammar * g);
// Add the grammar to the sampler (nothing when none was given); false after
// one error line. budget: the tokens the sampler will be asked for (-1: unknown).
bool cli_grammar_attach(const char * cmd, const cli_grammar & g, tern_sampler * smpl, const tern_model * m,
                        long long budget);
