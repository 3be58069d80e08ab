// Structured-output flags shared by tern run and tern chat (see grammar_flags.h).
#include "grammar_flags.h"

#include <stdio.h>
#include <string.h>

#include <vector>

#include "cli.h"

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

bool cli_grammar_from_args(const char * cmd, const cli_args & a, cli_grammar * g) {
    // The last of the four flags wins, as in llama-cli.
    cli_id which = CLI_N_IDS;
    for (cli_id id : {O_GRAMMAR, O_GRAMMAR_FILE, O_JSON_SCHEMA, O_JSON_SCHEMA_FILE})
        if (a.has(id) && (which == CLI_N_IDS || a.last[id] > a.last[which])) which = id;
    if (which == CLI_N_IDS) return true;
    const char * v = a.str(which);
    const bool from_file = which == O_GRAMMAR_FILE || which == O_JSON_SCHEMA_FILE;
    const bool schema = which == O_JSON_SCHEMA || which == O_JSON_SCHEMA_FILE;
    std::string text;
    if (from_file) {
        if (!cli_read_file(v, text, CLI_MAX_TEXT_BYTES)) return false;
    } else {
        text = v;
    }
    if (schema) {
        std::string converted;
        if (!schema_to_grammar(cmd, text, converted)) return false;
        text = converted;
    }
    g->text = text;
    g->source = from_file ? v : which == O_GRAMMAR ? "--grammar" : "--json-schema";
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
