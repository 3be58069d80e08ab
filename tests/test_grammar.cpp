// GBNF parser and grammar engine against llama.cpp's own test facts (commit
// c392e509): tests/test-grammar-parser.cpp's grammars with their exact
// compiled rules and symbol ids, and test-grammar-integration.cpp's grammars
// and JSON schemas with strings each must accept and reject (data in
// tests/data/grammar/, transcribed). Also: errors with line and column, left
// recursion and empty languages refused, limits, the byte-level walk against
// code point acceptance, and a vocabulary filter against per-token checks.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "check.h"
#include "core/arena.h"
#include "sample/gbnf.h"
#include "sample/grammar.h"
#include "sample/json_schema.h"

using namespace tern;

struct parse_case {
    const char * grammar;
    std::vector<std::pair<const char *, uint32_t>> symbols;
    std::vector<gbnf_elem> elems;
};

struct match_case {
    bool is_schema;
    const char * desc;
    const char * text;
    std::vector<const char *> pass;
    std::vector<const char *> fail;
};

struct schema_case {
    bool ok;
    const char * name;
    const char * schema;
    const char * grammar;
};

#include "data/grammar/parser_cases.inc"
#include "data/grammar/match_cases.inc"
#include "data/grammar/schema_cases.inc"

// An arena over a vector, sized by the measure functions.
struct buffer_arena {
    std::vector<uint8_t> mem;
    tern_arena a;
    explicit buffer_arena(size_t n) : mem(n + TERN_ARENA_ALIGN) { arena_init(&a, mem.data(), mem.size()); }
};

static std::vector<uint32_t> utf8_cps(const char * s) {
    std::vector<uint32_t> out;
    const uint8_t * p = (const uint8_t *) s;
    while (*p) {
        uint32_t c = *p;
        int n = c < 0x80 ? 0 : c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
        uint32_t v = n == 0 ? c : n == 1 ? (c & 0x1f) : n == 2 ? (c & 0x0f) : (c & 0x07);
        p++;
        for (int k = 0; k < n && *p; k++, p++) v = (v << 6) | (*p & 0x3f);
        out.push_back(v);
    }
    return out;
}

static void test_parser_cases(void) {
    int n_ok = 0;
    for (const parse_case & c : k_parse_cases) {
        char err[256];
        size_t need = gbnf_measure(c.grammar, strlen(c.grammar), err, sizeof(err));
        CHECK_MSG(need > 0, "%s: %s", c.grammar, err);
        buffer_arena b(need);
        gbnf_grammar g;
        tern_status st = gbnf_parse(c.grammar, strlen(c.grammar), &b.a, &g, err, sizeof(err));
        CHECK_MSG(st == TERN_OK, "%s: %s", c.grammar, err);
        if (st != TERN_OK) continue;
        bool same = g.n_rules == c.symbols.size();
        for (auto & s : c.symbols) {
            int32_t id = gbnf_find(&g, s.first);
            same = same && id == (int32_t) s.second;
        }
        std::vector<gbnf_elem> got;
        for (uint32_t id = 0; id < g.n_rules; id++) {
            for (uint32_t e = g.rule_start[id];; e++) {
                got.push_back(g.elems[e]);
                if (g.elems[e].type == GBNF_END) break;
            }
        }
        same = same && got.size() == c.elems.size();
        for (size_t i = 0; same && i < got.size(); i++) {
            same = got[i].type == c.elems[i].type && got[i].value == c.elems[i].value;
        }
        CHECK_MSG(same, "parsed rules differ for:%s", c.grammar);
        n_ok += same;
    }
    for (const char * f : k_parse_failures) {
        char err[256];
        bool failed = gbnf_measure(f, strlen(f), err, sizeof(err)) == 0;
        CHECK_MSG(failed, "should fail:%s", f);
        n_ok += failed;
    }
    printf("peer parser cases: %d of %zu\n", n_ok,
           sizeof(k_parse_cases) / sizeof(k_parse_cases[0]) + sizeof(k_parse_failures) / sizeof(k_parse_failures[0]));
}

// A grammar in its own arena, or an error string.
struct built_grammar {
    std::vector<uint8_t> mem;
    tern_arena a;
    grammar g;
    tern_status st;
    char err[256];
    built_grammar(const std::string & text, const char * root = "root", const grammar_limits * lim = NULL) {
        err[0] = 0;
        size_t need = grammar_mem_size(text.data(), text.size(), lim, err, sizeof(err));
        if (need == 0) { st = TERN_ERR_INVALID_ARG; return; }
        mem.resize(need + TERN_ARENA_ALIGN);
        arena_init(&a, mem.data(), mem.size());
        st = grammar_init(&g, &a, text.data(), text.size(), root, lim, err, sizeof(err));
    }
};

// llama.cpp's match_string: every code point must keep a stack alive, and the
// end must be a complete sentence.
static bool match_cps(grammar * g, const char * s) {
    grammar_reset(g);
    for (uint32_t cp : utf8_cps(s)) {
        if (!grammar_accept_cp(g, cp)) return false;
    }
    return grammar_can_end(g);
}

// The same through bytes (grammar_accept), the sampler's path.
static bool match_bytes(grammar * g, const char * s, bool one_at_a_time) {
    grammar_reset(g);
    const uint8_t * p = (const uint8_t *) s;
    size_t n = strlen(s);
    if (one_at_a_time) {
        for (size_t i = 0; i < n; i++) {
            if (grammar_accept(g, p + i, 1) != TERN_OK) return false;
        }
    } else if (n > 0 && grammar_accept(g, p, n) != TERN_OK) {
        return false;
    }
    return grammar_can_end(g);
}

static std::string schema_grammar(const char * schema, bool lenient, std::string * error) {
    char err[512];
    uint32_t flags = lenient ? JSON_SCHEMA_LENIENT : 0;
    size_t need = json_schema_mem_size(schema, strlen(schema));
    std::vector<uint8_t> mem(need + TERN_ARENA_ALIGN);
    tern_arena a;
    arena_init(&a, mem.data(), mem.size());
    const char * out = NULL;
    size_t out_len = 0;
    tern_status st = json_schema_to_gbnf(schema, strlen(schema), flags, &a, &out, &out_len, err, sizeof(err));
    if (st != TERN_OK) {
        if (error) *error = err;
        return std::string();
    }
    return std::string(out, out_len);
}

static void test_match_cases(void) {
    int n_strings = 0, n_ok = 0, n_cases = 0;
    for (const match_case & c : k_match_cases) {
        std::string text = c.text;
        if (c.is_schema) {
            std::string error, lenient_error;
            // llama.cpp's converter ignores keywords it cannot enforce (uniqueItems,
            // exclusiveMinimum on a number); Tern refuses them unless asked to be lenient.
            text = schema_grammar(c.text, false, &error);
            if (text.empty()) {
                text = schema_grammar(c.text, true, &lenient_error);
                if (!text.empty()) printf("  '%s': strict mode refuses it (%s); tested in lenient mode\n", c.desc, error.c_str());
            }
            CHECK_MSG(!text.empty(), "%s: schema conversion failed: %s", c.desc, lenient_error.c_str());
            if (text.empty()) continue;
        }
        built_grammar b(text);
        CHECK_MSG(b.st == TERN_OK, "%s: %s", c.desc, b.err);
        if (b.st != TERN_OK) continue;
        n_cases++;
        for (const char * s : c.pass) {
            bool cp = match_cps(&b.g, s), bytes = match_bytes(&b.g, s, true), whole = match_bytes(&b.g, s, false);
            CHECK_MSG(cp && bytes && whole, "%s: should accept '%s' (code points %d, bytes %d, whole %d)", c.desc, s, cp,
                      bytes, whole);
            n_strings++;
            n_ok += cp && bytes && whole;
        }
        for (const char * s : c.fail) {
            bool cp = match_cps(&b.g, s), bytes = match_bytes(&b.g, s, true), whole = match_bytes(&b.g, s, false);
            CHECK_MSG(!cp && !bytes && !whole, "%s: should reject '%s' (code points %d, bytes %d, whole %d)", c.desc, s,
                      cp, bytes, whole);
            n_strings++;
            n_ok += !cp && !bytes && !whole;
        }
    }
    printf("peer match cases: %d grammars and schemas, %d of %d strings\n", n_cases, n_ok, n_strings);
}

// llama.cpp's trim() of the test: outer whitespace and each line's indent removed.
static std::string trim_lines(const std::string & s) {
    size_t a = s.find_first_not_of(" \n\r\t"), b = s.find_last_not_of(" \n\r\t");
    std::string t = a == std::string::npos ? std::string() : s.substr(a, b - a + 1), out;
    bool line_start = true;
    for (char c : t) {
        if (line_start && (c == ' ' || c == '\t')) continue;
        line_start = c == '\n';
        out += c;
    }
    return out;
}

static void test_schema_cases(void) {
    int n_ok = 0, n_lenient = 0;
    for (const schema_case & c : k_schema_cases) {
        std::string error, lenient_error;
        std::string strict = schema_grammar(c.schema, false, &error);
        std::string got = strict;
        if (got.empty() && c.ok) {
            got = schema_grammar(c.schema, true, &lenient_error);
            if (!got.empty()) {
                n_lenient++;
                printf("  '%s': strict mode refuses it (%s); the lenient grammar is compared\n", c.name, error.c_str());
            }
        }
        bool pass = c.ok ? trim_lines(got) == trim_lines(c.grammar) : got.empty();
        CHECK_MSG(pass, "schema case '%s': %s\n--- expected\n%s\n--- got\n%s", c.name, error.c_str(), c.grammar, got.c_str());
        // The expected grammar itself must build (llama.cpp's "expectations validity" check).
        if (c.ok) {
            built_grammar b(c.grammar);
            CHECK_MSG(b.st == TERN_OK, "expected grammar of '%s' does not build: %s", c.name, b.err);
        }
        n_ok += pass;
    }
    printf("peer schema conversion cases: %d of %zu (%d through lenient mode)\n", n_ok,
           sizeof(k_schema_cases) / sizeof(k_schema_cases[0]), n_lenient);
}

static void test_errors(void) {
    // llama.cpp's failure cases: missing root, missing reference, left recursion.
    {
        built_grammar b("rot ::= expr\nexpr ::= term (\"+\" term)*\nterm ::= number\nnumber ::= [0-9]+");
        CHECK(b.st == TERN_ERR_INVALID_ARG && strstr(b.err, "'root'"));
    }
    {
        built_grammar b("root ::= expr\n        expr ::= term (\"+\" term)*\n        term ::= numero\n        number ::= [0-9]+");
        CHECK_MSG(b.st == TERN_ERR_INVALID_ARG && strstr(b.err, "undefined rule 'numero'"), "%s", b.err);
    }
    const char * left[] = {
        "root ::= \"a\" | root \"a\"",
        "root ::= asdf\nasdf ::= \"a\" | asdf \"a\"\n",
        "root ::= asdf\nasdf ::= \"a\" | foo \"b\"\nfoo ::= \"c\" | asdf \"d\" | \"e\"",
        "root ::= asdf\nasdf ::= \"a\" | foo \"b\"\nfoo ::= \"c\" | empty asdf \"d\" | \"e\"\nempty ::= \"blah\" | ",
        // nullable through a rule that is not itself written empty
        "root ::= b root \"x\" | \"y\"\nb ::= c\nc ::= ",
    };
    for (const char * l : left) {
        built_grammar b(l);
        CHECK_MSG(b.st == TERN_ERR_INVALID_ARG && strstr(b.err, "left recursion"), "%s: %s", l, b.err);
    }
    // Errors name the line and column.
    {
        built_grammar b("root ::= \"a\"\nx ::= \"a\" ^\n");
        CHECK_MSG(b.st == TERN_ERR_INVALID_ARG && strstr(b.err, "line 2, column 11: expecting a newline"), "%s", b.err);
        built_grammar c("root ::= \"a\" )");
        CHECK_MSG(c.st == TERN_ERR_INVALID_ARG && strstr(c.err, "line 1, column 14"), "%s", c.err);
        built_grammar d("root ::= \"\\q\"");
        CHECK_MSG(d.st == TERN_ERR_INVALID_ARG && strstr(d.err, "unknown escape"), "%s", d.err);
        built_grammar e("root = \"a\"");
        CHECK_MSG(e.st == TERN_ERR_INVALID_ARG && strstr(e.err, "expecting ::="), "%s", e.err);
        built_grammar f("");
        CHECK(f.st == TERN_ERR_INVALID_ARG);
    }
    // A grammar that admits nothing finite, or only an empty class.
    {
        built_grammar b("root ::= \"a\" root");
        CHECK_MSG(b.st == TERN_ERR_INVALID_ARG && strstr(b.err, "admits no finite text"), "%s", b.err);
        built_grammar c("root ::= [^\\x00-\\U0010FFFF]");
        CHECK_MSG(c.st == TERN_ERR_INVALID_ARG && strstr(c.err, "admits no"), "%s", c.err);
    }
    // Expansion limits: repetition counts, nested repetitions past the element limit.
    {
        built_grammar b("root ::= \"a\"{1000000}");
        CHECK_MSG(b.st == TERN_ERR_INVALID_ARG && strstr(b.err, "too large"), "%s", b.err);
        built_grammar c("root ::= \"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\"{100000}");
        CHECK_MSG(c.st == TERN_ERR_INVALID_ARG && strstr(c.err, "too large"), "%s", c.err);
        std::string deep = "root ::= ";
        for (int i = 0; i < 300; i++) deep += "(";
        deep += "\"a\"";
        for (int i = 0; i < 300; i++) deep += ")";
        built_grammar d(deep);
        CHECK_MSG(d.st == TERN_ERR_INVALID_ARG && strstr(d.err, "nested"), "%s", d.err);
    }
    // A non-root start symbol.
    {
        built_grammar b("root ::= \"x\"\nyes ::= \"yes\"", "yes");
        CHECK(b.st == TERN_OK && match_cps(&b.g, "yes") && !match_cps(&b.g, "x"));
        built_grammar c("root ::= \"x\"", "nope");
        CHECK(c.st == TERN_ERR_INVALID_ARG && strstr(c.err, "'nope'"));
    }
}

// Partial UTF-8: pieces that split a code point, and budgets.
static void test_bytes(void) {
    built_grammar b("root ::= \"é\" [\\u4e00-\\u9fff]+ \"!\"");
    CHECK(b.st == TERN_OK);
    grammar * g = &b.g;
    const char * text = "\xc3\xa9\xe4\xb8\xad\xe6\x96\x87!";   // é中文!
    grammar_reset(g);
    // Every split of the text into two pieces is accepted piece by piece.
    for (size_t cut = 0; cut <= strlen(text); cut++) {
        grammar_reset(g);
        bool ok = (cut == 0 || grammar_accept(g, (const uint8_t *) text, cut) == TERN_OK) &&
                  grammar_accept(g, (const uint8_t *) text + cut, strlen(text) - cut) == TERN_OK;
        CHECK_MSG(ok && grammar_can_end(g), "split at %zu", cut);
    }
    grammar_reset(g);
    CHECK(grammar_try(g, (const uint8_t *) "\xc3", 1, GRAMMAR_INF) == 1);       // é's first byte
    CHECK(grammar_try(g, (const uint8_t *) "\xc4", 1, GRAMMAR_INF) == 0);       // Ā..ſ cannot be é
    CHECK(grammar_try(g, (const uint8_t *) "\x80", 1, GRAMMAR_INF) == 0);       // a stray continuation byte
    CHECK(grammar_try(g, (const uint8_t *) "\xc3\xa9\xe4", 3, GRAMMAR_INF) == 1);
    CHECK(grammar_try(g, (const uint8_t *) "\xc3\xa9\xf0", 3, GRAMMAR_INF) == 0); // a 4-byte lead: outside the class
    // Budgets: the cheapest completion of "é中" is "!" (1 byte).
    CHECK(grammar_try(g, (const uint8_t *) "\xc3\xa9\xe4\xb8\xad", 5, 1) == 1);
    CHECK(grammar_try(g, (const uint8_t *) "\xc3\xa9\xe4\xb8\xad", 5, 0) == 0);
    // After "é" at least one CJK character (3 bytes) and "!" are needed.
    CHECK(grammar_try(g, (const uint8_t *) "\xc3\xa9", 2, 4) == 1);
    CHECK(grammar_try(g, (const uint8_t *) "\xc3\xa9", 2, 3) == 0);
    // In the middle of a CJK character: its 2 remaining bytes, then "!".
    CHECK(grammar_try(g, (const uint8_t *) "\xc3\xa9\xe4", 3, 3) == 1);
    CHECK(grammar_try(g, (const uint8_t *) "\xc3\xa9\xe4", 3, 2) == 0);
    CHECK(!grammar_can_end(g));
    CHECK(grammar_accept(g, (const uint8_t *) text, strlen(text)) == TERN_OK && grammar_can_end(g) && grammar_must_end(g));
    // A rejected piece leaves the state as it was.
    grammar_reset(g);
    CHECK(grammar_accept(g, (const uint8_t *) "x", 1) == TERN_ERR_INVALID_ARG);
    CHECK(grammar_accept(g, (const uint8_t *) "\xc3\xa9", 2) == TERN_OK);
}

// The vocabulary walk gives exactly the tokens grammar_try accepts.
static void test_filter(void) {
    const char * pieces[] = {"{", "{\"", "\"", "\"a", "a", "ab", "abc", "b", "}", "\",", ",", " ", "  ", "\"}", "x\"",
                             "\xc3", "\xc3\xa9", "\xa9", "\xe4\xb8", "\xad", ":", "\":", "1", "12", "true", "null", "\n",
                             "{\"a\":", "a\"", "é\"", "\\", "\\n", "\\u00", "\t"};
    const uint32_t n = sizeof(pieces) / sizeof(pieces[0]);
    // The index: pieces in one buffer, sorted order and common prefixes.
    std::vector<uint8_t> bytes;
    std::vector<uint32_t> off(n);
    std::vector<uint16_t> len(n);
    for (uint32_t t = 0; t < n; t++) {
        off[t] = (uint32_t) bytes.size();
        len[t] = (uint16_t) strlen(pieces[t]);
        bytes.insert(bytes.end(), pieces[t], pieces[t] + strlen(pieces[t]));
    }
    std::vector<uint32_t> order(n);
    for (uint32_t t = 0; t < n; t++) order[t] = t;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        int c = memcmp(&bytes[off[a]], &bytes[off[b]], std::min(len[a], len[b]));
        return c != 0 ? c < 0 : len[a] < len[b];
    });
    std::vector<uint16_t> lcp(n, 0);
    for (uint32_t i = 1; i < n; i++) {
        uint32_t a = order[i - 1], b = order[i], k = 0;
        while (k < len[a] && k < len[b] && bytes[off[a] + k] == bytes[off[b] + k]) k++;
        lcp[i] = (uint16_t) k;
    }
    grammar_vocab v = {n, n, order.data(), lcp.data(), off.data(), len.data(), bytes.data(), 0};
    for (uint32_t t = 0; t < n; t++) v.max_len = std::max<uint32_t>(v.max_len, len[t]);

    std::string error;
    std::string text = schema_grammar("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"a\"]}",
                                      false, &error);
    CHECK_MSG(!text.empty(), "%s", error.c_str());
    built_grammar b(text);
    CHECK_MSG(b.st == TERN_OK, "%s", b.err);
    if (b.st != TERN_OK) return;
    grammar * g = &b.g;
    // Walk a valid object prefix byte by byte; at every point compare the filter with grammar_try.
    const char * doc = "{ \"a\": \"x\\u00e9é\\n\" }";
    std::vector<uint8_t> allowed(n);
    int compared = 0, mismatches = 0;
    grammar_reset(g);
    for (size_t i = 0; i <= strlen(doc); i++) {
        for (uint32_t budget : {GRAMMAR_INF, 40u, 8u, 3u, 1u, 0u}) {
            CHECK(grammar_filter(g, &v, budget, allowed.data()) == TERN_OK);
            for (uint32_t t = 0; t < n; t++) {
                int want = grammar_try(g, (const uint8_t *) pieces[t], strlen(pieces[t]), budget);
                mismatches += want != allowed[t];
                compared++;
            }
        }
        if (i < strlen(doc)) CHECK(grammar_accept(g, (const uint8_t *) doc + i, 1) == TERN_OK);
    }
    CHECK_MSG(mismatches == 0, "%d of %d filter decisions differ from grammar_try", mismatches, compared);
    CHECK(grammar_can_end(g));
    printf("vocabulary walk: %d decisions equal to per-token checks\n", compared);
}

int main(void) {
    test_parser_cases();
    test_match_cases();
    test_schema_cases();
    test_errors();
    test_bytes();
    test_filter();
    return tern_test_summary();
}
