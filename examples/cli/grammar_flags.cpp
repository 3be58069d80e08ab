// Structured-output flags shared by tern run and tern chat (see grammar_flags.h).
#include "grammar_flags.h"

#include <stdio.h>
#include <string.h>

#include <vector>

#include "cli.h"

const char * const cli_grammar_help =
    "  --grammar GRAMMAR        constrain the output to a GBNF grammar (llama.cpp's syntax, start\n"
    "                           symbol root), e.g. 'root ::= \"yes\" | \"no\"'\n"
    "  --grammar-file FILE      read the grammar from a file\n"
    "  -j, --json-schema SCHEMA constrain the output to JSON the schema accepts ('{}': any object);\n"
    "                           keywords a grammar cannot enforce are refused, naming the keyword\n"
    "  -jf, --json-schema-file FILE  read the schema from a file\n"
    "                           (with -n N the output is completed within N tokens)\n";

static bool schema_to_grammar(const char * cmd, const std::string & schema, std::string & out) {
    const int32_t n = tern_json_schema_to_grammar(schema.c_str(), 0, NULL, 0);
    if (n < 0) {
        fprintf(stderr, "%s: %s\n", cmd, tern_last_error());
        return false;
    }
    std::vector<char> buf((size_t) n + 1);
    if (tern_json_schema_to_grammar(schema.c_str(), 0, buf.data(), (int32_t) buf.size()) != n) {
        fprintf(stderr, "%s: %s\n", cmd, tern_last_error());
        return false;
    }
    out.assign(buf.data(), (size_t) n);
    return true;
}

bool cli_grammar_flag(const char * cmd, int argc, char ** argv, int & i, cli_grammar & g, bool * ok) {
    const char * a = argv[i];
    const bool grammar = !strcmp(a, "--grammar"), grammar_file = !strcmp(a, "--grammar-file");
    const bool schema = !strcmp(a, "-j") || !strcmp(a, "--json-schema");
    const bool schema_file = !strcmp(a, "-jf") || !strcmp(a, "--json-schema-file");
    if (!grammar && !grammar_file && !schema && !schema_file) return false;
    const char * v;
    *ok = cli_value(argc, argv, i, v);
    if (!*ok) return true;
    std::string text;
    if (grammar_file || schema_file) {
        *ok = cli_read_file(v, text, CLI_MAX_TEXT_BYTES);
        if (!*ok) return true;
    } else {
        text = v;
    }
    if (schema || schema_file) {
        std::string converted;
        *ok = schema_to_grammar(cmd, text, converted);
        if (!*ok) return true;
        text = converted;
    }
    g.text = text;
    g.source = grammar_file || schema_file ? v : a;
    return true;
}

bool cli_grammar_attach(const char * cmd, const cli_grammar & g, tern_sampler * smpl, const tern_model * m,
                        long long budget) {
    if (g.text.empty()) return true;
    tern_status st = tern_sampler_init_grammar(smpl, m, g.text.c_str(), NULL, NULL, 0);
    if (st == TERN_OK) st = tern_sampler_grammar_reset(smpl, budget < 0 || budget > INT32_MAX ? -1 : (int32_t) budget);
    if (st != TERN_OK) {
        fprintf(stderr, "%s: %s: %s\n", cmd, g.source.c_str(), tern_last_error());
        return false;
    }
    return true;
}
