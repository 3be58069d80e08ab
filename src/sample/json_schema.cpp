// JSON schema -> GBNF (see json_schema.h). The visit order, rule names and
// rule texts follow llama.cpp's SchemaConverter (common/json-schema-to-
// grammar.cpp at c392e509), so the grammar is the one llama.cpp writes; the
// code is Tern's: strings in one bump block of the arena, a hash of rules
// sorted by name at the end, the first error returned (naming the keyword).
#include "sample/json_schema.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/status.h"

namespace tern {

namespace {

// A byte range; the ones this file makes are NUL-terminated.
struct sv {
    const char * p;
    uint32_t     n;
};

sv S(const char * z) { return sv{z, (uint32_t) strlen(z)}; }
bool eq(sv a, sv b) { return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0); }
bool eqz(sv a, const char * z) { return eq(a, S(z)); }

uint32_t hash_sv(sv s) {
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < s.n; i++) h = (h ^ (uint8_t) s.p[i]) * 16777619u;
    return h;
}

// llama.cpp's built-in rules (name, body, dependencies).
struct builtin {
    const char * name;
    const char * body;
    const char * deps[6];
};

const char * const SPACE_RULE = "| \" \" | \"\\n\" [ \\t]{0,20}";

const builtin PRIMITIVES[] = {
    {"boolean", "(\"true\" | \"false\") space", {NULL}},
    {"decimal-part", "[0-9]{1,16}", {NULL}},
    {"integral-part", "[0] | [1-9] [0-9]{0,15}", {NULL}},
    {"number", "(\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space",
     {"integral-part", "decimal-part", NULL}},
    {"integer", "(\"-\"? integral-part) space", {"integral-part", NULL}},
    {"value", "object | array | string | number | boolean | null",
     {"object", "array", "string", "number", "boolean", "null"}},
    {"object", "\"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space",
     {"string", "value", NULL}},
    {"array", "\"[\" space ( value (\",\" space value)* )? \"]\" space", {"value", NULL}},
    {"uuid", "\"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12} \"\\\"\" space",
     {NULL}},
    {"char", "[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})", {NULL}},
    {"string", "\"\\\"\" char* \"\\\"\" space", {"char", NULL}},
    {"null", "\"null\" space", {NULL}},
};

const builtin FORMATS[] = {
    {"date", "[0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [1-2] [0-9] | \"3\" [0-1] )", {NULL}},
    {"time", "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{3} )? ( \"Z\" | ( \"+\" | \"-\" ) ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )",
     {NULL}},
    {"date-time", "date \"T\" time", {"date", "time", NULL}},
    {"date-string", "\"\\\"\" date \"\\\"\" space", {"date", NULL}},
    {"time-string", "\"\\\"\" time \"\\\"\" space", {"time", NULL}},
    {"date-time-string", "\"\\\"\" date-time \"\\\"\" space", {"date-time", NULL}},
};

const builtin * find_builtin(const builtin * list, size_t n, sv name) {
    for (size_t i = 0; i < n; i++) {
        if (eqz(name, list[i].name)) return &list[i];
    }
    return NULL;
}
const builtin * primitive(sv name) { return find_builtin(PRIMITIVES, sizeof(PRIMITIVES) / sizeof(PRIMITIVES[0]), name); }
const builtin * format_rule(sv name) { return find_builtin(FORMATS, sizeof(FORMATS) / sizeof(FORMATS[0]), name); }

bool is_reserved(sv name) { return eqz(name, "root") || primitive(name) || format_rule(name); }

// Keywords that only annotate: no effect on what validates.
bool is_annotation(sv k) {
    static const char * const names[] = {"title", "description", "$schema", "$id", "$comment", "default", "examples",
                                         "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "$anchor",
                                         "contentEncoding", "contentMediaType", "format"};
    for (const char * n : names) {
        if (eqz(k, n)) return true;
    }
    return false;
}

struct conv;

// A growing string in the converter's bump block (extended in place while it
// is the last thing allocated).
struct sb {
    conv *   c;
    char *   p;
    uint32_t n, cap;
    explicit sb(conv * c_) : c(c_), p(NULL), n(0), cap(0) {}
    sb & add(const char * s, size_t len);
    sb & add(sv s) { return add(s.p, s.n); }
    sb & add(const char * z) { return add(z, strlen(z)); }
    sb & ch(char x) { return add(&x, 1); }
    sb & num(long long v) {
        char b[24];
        int k = snprintf(b, sizeof(b), "%lld", v);
        return add(b, (size_t) k);
    }
    sv str();
};

struct rule_ent {
    sv name;
    sv body;
};

struct ref_ent {
    sv               ref;
    const json_node * target;
};

// Which members of a schema object a branch used (strict mode's check).
struct keys {
    const json_node * obj;
    uint8_t *         used;   // [obj->n]
};

struct conv {
    char *   mem;
    size_t   cap, used;
    uint32_t flags;
    tern_status st;
    char *   err;
    size_t   err_size;
    const json_node * root;
    rule_ent * rules;
    uint32_t   n_rules, max_rules;
    uint32_t * slots;
    uint32_t   mask;
    ref_ent *  refs;
    uint32_t   n_refs, max_refs;
    sv         resolving[JSON_SCHEMA_MAX_DEPTH];
    uint32_t   n_resolving;
    int        depth;

    bool ok() const { return st == TERN_OK; }

    bool fail(tern_status s, const char * fmt, ...) {
        if (st != TERN_OK) return false;
        st = s;
        if (err && err_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err, err_size, fmt, ap);
            va_end(ap);
        }
        return false;
    }

    // Bump allocation from the scratch; align: a power of two (8 for tables of
    // pointers, sv and uint32_t; 1 for text).
    char * alloc(size_t n, size_t align = 1) {
        const size_t pad = (size_t) (0 - (uintptr_t) (mem + used)) & (align - 1);
        if (n > cap - used || pad > cap - used - n) {
            fail(TERN_ERR_NO_MEMORY, "json schema: out of memory (%zu bytes of scratch)", cap);
            return NULL;
        }
        char * r = mem + used + pad;
        used += pad + n;
        return r;
    }

    sv dup(sv s) {
        char * p = alloc((size_t) s.n + 1);
        if (!p) return sv{"", 0};
        memcpy(p, s.p, s.n);
        p[s.n] = 0;
        return sv{p, s.n};
    }

    // ---- rules ----

    rule_ent * find(sv name) {
        uint32_t i = hash_sv(name) & mask;
        for (;;) {
            uint32_t v = slots[i];
            if (v == 0) return NULL;
            if (eq(rules[v - 1].name, name)) return &rules[v - 1];
            i = (i + 1) & mask;
        }
    }

    void insert(sv name, sv body) {
        if (n_rules == max_rules) {
            fail(TERN_ERR_NO_MEMORY, "json schema: more than %u rules", max_rules);
            return;
        }
        rules[n_rules] = rule_ent{name, body};
        uint32_t i = hash_sv(name) & mask;
        while (slots[i] != 0) i = (i + 1) & mask;
        slots[i] = ++n_rules;
    }

    // llama.cpp's _add_rule: the name with runs of characters outside
    // [a-zA-Z0-9-] made '-', and a number appended when the name holds a different rule.
    sv add_rule(sv name, sv body) {
        if (!ok()) return sv{"", 0};
        sb e(this);
        bool in_run = false;
        for (uint32_t i = 0; i < name.n; i++) {
            char c = name.p[i];
            bool valid = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
            if (valid) { e.ch(c); in_run = false; }
            else if (!in_run) { e.ch('-'); in_run = true; }
        }
        sv esc = e.str();
        rule_ent * r = find(esc);
        if (!r) {
            insert(esc, body);
            return esc;
        }
        if (eq(r->body, body)) return esc;
        for (int i = 0;; i++) {
            sb k(this);
            k.add(esc).num(i);
            sv key = k.str();
            if (!ok()) return sv{"", 0};
            rule_ent * q = find(key);
            if (!q) {
                insert(key, body);
                return key;
            }
            if (eq(q->body, body)) return key;
        }
    }

    sv add_primitive(sv name, const builtin * b) {
        sv n = add_rule(name, S(b->body));
        for (int i = 0; i < 6 && b->deps[i]; i++) {
            sv dep = S(b->deps[i]);
            const builtin * d = primitive(dep);
            if (!d) d = format_rule(dep);
            if (!find(dep)) add_primitive(dep, d);
        }
        return n;
    }

    // ---- JSON helpers ----

    // A member by key (the last of duplicates), marking it used.
    const json_node * use(keys & k, const char * key) {
        if (!k.obj || k.obj->type != JSON_OBJECT) return NULL;
        const json_node * found = NULL;
        uint32_t i = 0, n = (uint32_t) strlen(key);
        for (const json_node * m = k.obj->first; m; m = m->next, i++) {
            if (m->key_len == n && memcmp(m->key, key, n) == 0) {
                found = m;
                if (k.used) k.used[i] = 1;
            }
        }
        return found;
    }

    sv dump(const json_node * v) {
        text_out probe = {NULL, 0, 0};
        json_write(&probe, v, -1);
        char * p = alloc((size_t) probe.len + 1);
        if (!p) return sv{"", 0};
        text_out o = {p, (size_t) probe.len, 0};
        json_write(&o, v, -1);
        p[probe.len] = 0;
        return sv{p, (uint32_t) probe.len};
    }

    // llama.cpp's format_literal: a GBNF literal of the text with \r \n " escaped
    // (and \ doubled, so escapes in dumped JSON stay escapes in the output).
    sv literal(sv s) {
        sb o(this);
        o.ch('"');
        for (uint32_t i = 0; i < s.n; i++) {
            char c = s.p[i];
            if (c == '\r') o.add("\\r");
            else if (c == '\n') o.add("\\n");
            else if (c == '"') o.add("\\\"");
            else if (c == '\\') o.add("\\\\");
            else o.ch(c);
        }
        o.ch('"');
        return o.str();
    }

    bool get_int(const json_node * v, const char * what, long long lo, long long hi, long long * out) {
        if (!json_is_number(v)) return fail(TERN_ERR_INVALID_ARG, "json schema: '%s' must be a number", what);
        double d = v->type == JSON_INT ? (double) v->i : v->d;
        if (v->type == JSON_FLOAT && d != (double) (long long) d && !(flags & JSON_SCHEMA_LENIENT)) {
            return fail(TERN_ERR_INVALID_ARG, "json schema: '%s' must be an integer", what);
        }
        if (d < (double) lo || d > (double) hi) {
            return fail(TERN_ERR_INVALID_ARG, "json schema: '%s' is out of range [%lld, %lld]", what, lo, hi);
        }
        *out = v->type == JSON_INT ? v->i : (long long) d;
        return true;
    }

    // ---- the converter ----

    sv visit(const json_node * schema, sv name, const json_node * type_override, keys * shared);
    sv union_rule(sv name, const json_node * alts, const json_node * schema_for_types, keys * shared);
    sv object_rule(const json_node ** prop_keys_nodes, const json_node ** prop_schemas, uint32_t n_props,
                   const bool * required, sv name, const json_node * additional);
    sv pattern_rule(sv pattern, sv name);
    sv not_strings(const sv * strings, uint32_t n);
    sv resolve_ref(sv ref);
    bool register_refs(const json_node * schema);
    void min_max_int(long long min_v, long long max_v, sb & out, int decimals_left, bool top_level);
    void uniform_range(sv from, sv to, sb & out, int depth);
};

sb & sb::add(const char * s, size_t len) {
    if (!c->ok() || len == 0) return *this;
    if (n + len > cap) {
        // Extend in place when this string is the last allocation.
        if (p && p + cap == c->mem + c->used && c->cap - c->used >= len + 1) {
            size_t more = len + 1 + cap;   // double
            if (more > c->cap - c->used) more = len + 1;
            c->used += more;
            cap += (uint32_t) more;
        } else {
            size_t ncap = (size_t) cap * 2 + len + 16;
            char * q = c->alloc(ncap);
            if (!q) return *this;
            if (n) memcpy(q, p, n);
            p = q;
            cap = (uint32_t) ncap;
        }
    }
    memcpy(p + n, s, len);
    n += (uint32_t) len;
    return *this;
}

sv sb::str() {
    if (!c->ok()) return sv{"", 0};
    if (n + 1 > cap) add("", 0), ch(0), n--;   // room for the NUL
    if (!p) return sv{"", 0};
    p[n] = 0;
    // Give back the unused tail when this string is the last allocation.
    if (p + cap == c->mem + c->used) {
        c->used -= cap - (n + 1);
        cap = n + 1;
    }
    return sv{p, n};
}

sv cat(conv * c, sv a, sv b, sv d = sv{"", 0}, sv e = sv{"", 0}, sv f = sv{"", 0}) {
    sb o(c);
    o.add(a).add(b).add(d).add(e).add(f);
    return o.str();
}

// name + "-" + part, or part when name is empty (the prefix rule of nested names).
sv join_name(conv * c, sv name, sv part) {
    sb o(c);
    o.add(name);
    if (name.n) o.ch('-');
    o.add(part);
    return o.str();
}

// llama.cpp's build_repetition.
sv repetition(conv * c, sv item, long long min_items, long long max_items, sv sep) {
    const bool has_max = max_items != INT_MAX;
    sb o(c);
    if (min_items == 0 && max_items == 1) return o.add(item).ch('?').str();
    if (sep.n == 0) {
        if (min_items == 1 && !has_max) return o.add(item).ch('+').str();
        if (min_items == 0 && !has_max) return o.add(item).ch('*').str();
        o.add(item).ch('{').num(min_items).ch(',');
        if (has_max) o.num(max_items);
        return o.ch('}').str();
    }
    sb inner(c);
    inner.ch('(').add(sep).ch(' ').add(item).ch(')');
    sv tail = repetition(c, inner.str(), min_items == 0 ? 0 : min_items - 1, has_max ? max_items - 1 : max_items, sv{"", 0});
    o.add(item).ch(' ').add(tail);
    if (min_items == 0) {
        sb w(c);
        return w.ch('(').add(o.str()).add(")?").str();
    }
    return o.str();
}

void digit_range(sb & out, char from, char to) {
    out.ch('[');
    if (from == to) out.ch(from);
    else out.ch(from).ch('-').ch(to);
    out.ch(']');
}

void more_digits(sb & out, long long min_d, long long max_d) {
    out.add("[0-9]");
    if (min_d == max_d && min_d == 1) return;
    out.ch('{').num(min_d);
    if (max_d != min_d) {
        out.ch(',');
        if (max_d != INT_MAX) out.num(max_d);
    }
    out.ch('}');
}

sv repeat_char(conv * c, char ch, uint32_t n) {
    sb o(c);
    for (uint32_t i = 0; i < n; i++) o.ch(ch);
    return o.str();
}

void conv::uniform_range(sv from, sv to, sb & out, int rdepth) {
    if (!ok() || rdepth > 40) return;
    uint32_t i = 0;
    while (i < from.n && i < to.n && from.p[i] == to.p[i]) i++;
    if (i > 0) out.ch('"').add(from.p, i).ch('"');
    if (i < from.n && i < to.n) {
        if (i > 0) out.ch(' ');
        uint32_t sub_len = from.n - i - 1;
        if (sub_len > 0) {
            sv from_sub = sv{from.p + i + 1, from.n - i - 1};
            sv to_sub = sv{to.p + i + 1, to.n - i - 1};
            sv zeros = repeat_char(this, '0', sub_len), nines = repeat_char(this, '9', sub_len);
            bool to_reached = false;
            out.ch('(');
            if (eq(from_sub, zeros)) {
                digit_range(out, from.p[i], (char) (to.p[i] - 1));
                out.ch(' ');
                more_digits(out, sub_len, sub_len);
            } else {
                out.ch('[').ch(from.p[i]).add("] (");
                uniform_range(from_sub, nines, out, rdepth + 1);
                out.ch(')');
                if (from.p[i] < to.p[i] - 1) {
                    out.add(" | ");
                    if (eq(to_sub, nines)) {
                        digit_range(out, (char) (from.p[i] + 1), to.p[i]);
                        to_reached = true;
                    } else {
                        digit_range(out, (char) (from.p[i] + 1), (char) (to.p[i] - 1));
                    }
                    out.ch(' ');
                    more_digits(out, sub_len, sub_len);
                }
            }
            if (!to_reached) {
                out.add(" | ");
                digit_range(out, to.p[i], to.p[i]);
                out.ch(' ');
                uniform_range(zeros, to_sub, out, rdepth + 1);
            }
            out.ch(')');
        } else {
            out.ch('[').ch(from.p[i]).ch('-').ch(to.p[i]).ch(']');
        }
    }
}

sv num_str(conv * c, long long v) {
    sb o(c);
    return o.num(v).str();
}

// llama.cpp's _build_min_max_int (INT_MIN / INT_MAX: no bound on that side).
void conv::min_max_int(long long min_v, long long max_v, sb & out, int decimals_left, bool top_level) {
    if (!ok()) return;
    const bool has_min = min_v != INT_MIN, has_max = max_v != INT_MAX;
    if (has_min && has_max) {
        if (min_v < 0 && max_v < 0) {
            out.add("\"-\" (");
            min_max_int(-max_v, -min_v, out, decimals_left, true);
            out.ch(')');
            return;
        }
        if (min_v < 0) {
            out.add("\"-\" (");
            min_max_int(0, -min_v, out, decimals_left, true);
            out.add(") | ");
            min_v = 0;
        }
        sv min_s = num_str(this, min_v), max_s = num_str(this, max_v);
        for (uint32_t digits = min_s.n; digits < max_s.n; digits++) {
            uniform_range(min_s, repeat_char(this, '9', digits), out, 0);
            sb m(this);
            m.ch('1').add(repeat_char(this, '0', digits));
            min_s = m.str();
            out.add(" | ");
        }
        uniform_range(min_s, max_s, out, 0);
        return;
    }
    const int less_decimals = decimals_left - 1 > 1 ? decimals_left - 1 : 1;
    if (has_min) {
        if (min_v < 0) {
            out.add("\"-\" (");
            min_max_int(INT_MIN, -min_v, out, decimals_left, false);
            out.add(") | [0] | [1-9] ");
            more_digits(out, 0, decimals_left - 1);
        } else if (min_v == 0) {
            if (top_level) {
                out.add("[0] | [1-9] ");
                more_digits(out, 0, less_decimals);
            } else {
                more_digits(out, 1, decimals_left);
            }
        } else if (min_v <= 9) {
            char c = (char) ('0' + min_v);
            char range_start = top_level ? '1' : '0';
            if (c > range_start) {
                digit_range(out, range_start, (char) (c - 1));
                out.ch(' ');
                more_digits(out, 1, less_decimals);
                out.add(" | ");
            }
            digit_range(out, c, '9');
            out.ch(' ');
            more_digits(out, 0, less_decimals);
        } else {
            sv min_s = num_str(this, min_v);
            uint32_t len = min_s.n;
            char c = min_s.p[0];
            if (c > '1') {
                digit_range(out, top_level ? '1' : '0', (char) (c - 1));
                out.ch(' ');
                more_digits(out, len, less_decimals);
                out.add(" | ");
            }
            digit_range(out, c, c);
            out.add(" (");
            min_max_int(strtoll(min_s.p + 1, NULL, 10), INT_MAX, out, less_decimals, false);
            out.ch(')');
            if (c < '9') {
                out.add(" | ");
                digit_range(out, (char) (c + 1), '9');
                out.ch(' ');
                more_digits(out, len - 1, less_decimals);
            }
        }
        return;
    }
    if (has_max) {
        if (max_v >= 0) {
            if (top_level) {
                out.add("\"-\" [1-9] ");
                more_digits(out, 0, less_decimals);
                out.add(" | ");
            }
            min_max_int(0, max_v, out, decimals_left, true);
        } else {
            out.add("\"-\" (");
            min_max_int(-max_v, INT_MAX, out, decimals_left, false);
            out.ch(')');
        }
        return;
    }
    fail(TERN_ERR_INVALID_ARG, "json schema: an integer range needs a minimum or a maximum");
}

// ---- patterns ----

bool non_literal(char c) { return strchr("|.()[]{}*+?", c) != NULL && c != 0; }
bool escaped_in_regex_only(char c) { return strchr("^$.[]()|{}*+?", c) != NULL && c != 0; }

// \d \w \s and their negations as a GBNF class (NULL for other letters).
const char * shorthand_class(char c) {
    switch (c) {
        case 'd': return "[0-9]";
        case 'w': return "[a-zA-Z0-9_]";
        case 's': return "[ \\t\\n\\r\\x0B\\x0C]";
        case 'D': return "[^0-9]";
        case 'W': return "[^a-zA-Z0-9_]";
        case 'S': return "[^ \\t\\n\\r\\x0B\\x0C]";
        default: return NULL;
    }
}

struct seq_item {
    sv   s;
    bool literal;
};

struct pattern_state {
    conv *     c;
    sv         pat;      // without ^ and $
    uint32_t   i;
    sv         name;
    sv *       sub_keys; // rules made for repeated groups, by their text
    sv *       sub_ids;
    uint32_t   n_sub, max_sub;
    int        depth;
};

sv item_rule(conv * c, seq_item it) { return it.literal ? cat(c, S("\""), it.s, S("\"")) : it.s; }

// Consecutive literals merged, items joined by spaces.
seq_item join_seq(conv * c, seq_item * seq, uint32_t n) {
    sb out(c);
    sb lit(c);
    bool first = true, have_lit = false;
    auto flush = [&]() {
        if (!have_lit) return;
        if (!first) out.ch(' ');
        first = false;
        out.ch('"').add(lit.str()).ch('"');
        lit = sb(c);
        have_lit = false;
    };
    for (uint32_t k = 0; k < n; k++) {
        if (seq[k].literal) {
            lit.add(seq[k].s);
            have_lit = true;
        } else {
            flush();
            if (!first) out.ch(' ');
            first = false;
            out.add(seq[k].s);
        }
    }
    flush();
    return seq_item{out.str(), false};
}

seq_item transform(pattern_state & ps) {
    conv * c = ps.c;
    const sv & p = ps.pat;
    const uint32_t length = p.n;
    const uint32_t start = ps.i;
    if (++ps.depth > JSON_SCHEMA_MAX_DEPTH) {
        c->fail(TERN_ERR_INVALID_ARG, "json schema: pattern groups nested too deep");
        return seq_item{sv{"", 0}, false};
    }
    seq_item * seq = (seq_item *) c->alloc(sizeof(seq_item) * (size_t) (length - start + 1), 8);
    uint32_t n = 0;
    while (c->ok() && seq && ps.i < length) {
        const uint32_t before = ps.i;
        char ch = p.p[ps.i];
        if (ch == '.') {
            seq[n++] = seq_item{c->add_rule(S("dot"), S("[^\\x0A\\x0D]")), false};
            ps.i++;
        } else if (ch == '(') {
            ps.i++;
            if (ps.i < length && p.p[ps.i] == '?') {
                c->fail(TERN_ERR_INVALID_ARG, "json schema: unsupported pattern syntax '(?' in pattern");
                break;
            }
            seq_item inner = transform(ps);
            seq[n++] = seq_item{cat(c, S("("), item_rule(c, inner), S(")")), false};
        } else if (ch == ')') {
            ps.i++;
            if (start == 0 || p.p[start - 1] != '(') {
                c->fail(TERN_ERR_INVALID_ARG, "json schema: unbalanced parentheses in pattern");
                break;
            }
            ps.depth--;
            return join_seq(c, seq, n);
        } else if (ch == '[') {
            sb sq(c);
            sq.ch('[');
            ps.i++;
            while (ps.i < length && p.p[ps.i] != ']') {
                if (p.p[ps.i] == '\\' && ps.i + 1 < length) {
                    char e = p.p[ps.i + 1];
                    if (e == 'd') sq.add("0-9");
                    else if (e == 'w') sq.add("a-zA-Z0-9_");
                    else if (e == 's') sq.add(" \\t\\n\\r\\x0B\\x0C");
                    else if (e == 'D' || e == 'W' || e == 'S') {
                        c->fail(TERN_ERR_INVALID_ARG, "json schema: '\\%c' inside [...] in a pattern is not supported", e);
                        break;
                    } else {
                        sq.add(p.p + ps.i, 2);
                    }
                    ps.i += 2;
                } else {
                    sq.ch(p.p[ps.i]);
                    ps.i++;
                }
            }
            if (ps.i >= length) {
                c->fail(TERN_ERR_INVALID_ARG, "json schema: unbalanced square brackets in pattern");
                break;
            }
            sq.ch(']');
            ps.i++;
            seq[n++] = seq_item{sq.str(), false};
        } else if (ch == '|') {
            seq[n++] = seq_item{S("|"), false};
            ps.i++;
        } else if (ch == '*' || ch == '+' || ch == '?') {
            if (n == 0) {
                c->fail(TERN_ERR_INVALID_ARG, "json schema: '%c' with nothing before it in pattern", ch);
                break;
            }
            char q[2] = {ch, 0};
            seq[n - 1] = seq_item{cat(c, item_rule(c, seq[n - 1]), S(q)), false};
            ps.i++;
        } else if (ch == '{') {
            uint32_t open = ps.i;
            ps.i++;
            while (ps.i < length && p.p[ps.i] != '}') ps.i++;
            if (ps.i >= length) {
                c->fail(TERN_ERR_INVALID_ARG, "json schema: unbalanced curly brackets in pattern");
                break;
            }
            sv inner = sv{p.p + open + 1, ps.i - open - 1};
            ps.i++;
            if (n == 0) {
                c->fail(TERN_ERR_INVALID_ARG, "json schema: '{' with nothing before it in pattern");
                break;
            }
            // "m", "m,", ",n" or "m,n" (llama.cpp reads the numbers with stoi).
            long long min_times = 0, max_times = INT_MAX;
            const char * comma = (const char *) memchr(inner.p, ',', inner.n);
            auto read_num = [&](const char * s, const char * e, long long * out) {
                char buf[24];
                size_t len = (size_t) (e - s);
                if (len == 0 || len >= sizeof(buf)) return false;
                memcpy(buf, s, len);
                buf[len] = 0;
                char * end;
                long v = strtol(buf, &end, 10);
                if (end == buf || v < 0 || v > 100000) return false;
                *out = v;
                return true;
            };
            bool good;
            if (!comma) {
                good = read_num(inner.p, inner.p + inner.n, &min_times);
                max_times = min_times;
            } else if (memchr(comma + 1, ',', (size_t) (inner.p + inner.n - comma - 1))) {
                good = false;
            } else {
                good = (comma == inner.p || read_num(inner.p, comma, &min_times)) &&
                       (comma + 1 == inner.p + inner.n || read_num(comma + 1, inner.p + inner.n, &max_times));
            }
            if (!good) {
                c->fail(TERN_ERR_INVALID_ARG, "json schema: bad repetition {%.*s} in pattern", (int) inner.n, inner.p);
                break;
            }
            seq_item & last = seq[n - 1];
            sv sub = last.s;
            if (!last.literal) {
                uint32_t k = 0;
                while (k < ps.n_sub && !eq(ps.sub_keys[k], sub)) k++;
                if (k == ps.n_sub) {
                    if (ps.n_sub == ps.max_sub) {
                        c->fail(TERN_ERR_NO_MEMORY, "json schema: too many repeated groups in pattern");
                        break;
                    }
                    ps.sub_keys[k] = sub;
                    ps.n_sub++;
                    sb nm(c);
                    nm.add(ps.name).ch('-').num(ps.n_sub);
                    ps.sub_ids[k] = c->add_rule(nm.str(), sub);
                }
                sub = ps.sub_ids[k];
            }
            last = seq_item{repetition(c, last.literal ? cat(c, S("\""), sub, S("\"")) : sub, min_times, max_times, sv{"", 0}),
                            false};
        } else {
            sb lit(c);
            bool have = false;
            bool stop = false;
            while (ps.i < length) {
                char x = p.p[ps.i];
                if (x == '\\' && ps.i < length - 1) {
                    char next = p.p[ps.i + 1];
                    if (escaped_in_regex_only(next)) {
                        lit.ch(next);
                        ps.i += 2;
                    } else if (shorthand_class(next)) {
                        if (have) break;   // the class is its own item
                        seq[n++] = seq_item{S(shorthand_class(next)), false};
                        ps.i += 2;
                        stop = true;
                        break;
                    } else if (strchr("\\nrtux", next) || (next >= '0' && next <= '9')) {
                        if (next >= '0' && next <= '9') {
                            c->fail(TERN_ERR_INVALID_ARG, "json schema: backreference '\\%c' in pattern", next);
                            break;
                        }
                        lit.add(p.p + ps.i, 2);   // a GBNF escape as well
                        ps.i += 2;
                    } else if ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z')) {
                        c->fail(TERN_ERR_INVALID_ARG, "json schema: '\\%c' in pattern is not supported", next);
                        break;
                    } else {
                        // An escaped punctuation character stands for itself.
                        if (next == '"') lit.add("\\\"");
                        else lit.ch(next);
                        ps.i += 2;
                    }
                    have = true;
                } else if (x == '"') {
                    lit.add("\\\"");
                    ps.i++;
                    have = true;
                } else if (!non_literal(x) &&
                           (ps.i == length - 1 || !have || p.p[ps.i + 1] == '.' || !non_literal(p.p[ps.i + 1]))) {
                    lit.ch(x);
                    ps.i++;
                    have = true;
                } else {
                    break;
                }
            }
            if (have) seq[n++] = seq_item{lit.str(), true};
            (void) stop;
        }
        if (c->ok() && ps.i == before) {
            c->fail(TERN_ERR_INVALID_ARG, "json schema: unexpected '%c' in pattern", ch);
            break;
        }
    }
    ps.depth--;
    if (!seq) return seq_item{sv{"", 0}, false};
    return join_seq(c, seq, n);
}

sv conv::pattern_rule(sv pattern, sv name) {
    if (!(pattern.n >= 2 && pattern.p[0] == '^' && pattern.p[pattern.n - 1] == '$')) {
        fail(TERN_ERR_INVALID_ARG, "json schema: pattern must start with '^' and end with '$'");
        return sv{"", 0};
    }
    pattern_state ps;
    ps.c = this;
    ps.pat = sv{pattern.p + 1, pattern.n - 2};
    ps.i = 0;
    ps.name = name;
    ps.max_sub = pattern.n + 1;
    ps.sub_keys = (sv *) alloc(sizeof(sv) * ps.max_sub, 8);
    ps.sub_ids = (sv *) alloc(sizeof(sv) * ps.max_sub, 8);
    ps.n_sub = 0;
    ps.depth = 0;
    if (!ok()) return sv{"", 0};
    seq_item t = transform(ps);
    if (ok() && ps.i < ps.pat.n) fail(TERN_ERR_INVALID_ARG, "json schema: unbalanced parentheses in pattern");
    sb body(this);
    body.add("\"\\\"\" (").add(item_rule(this, t)).add(") \"\\\"\" space");
    return add_rule(name, body.str());
}

// ---- strings other than the given ones (additionalProperties keys) ----

struct trie_node {
    char        c;
    bool        end;
    uint32_t    first;   // first child, 0: none (index into the node array; 0 is the root)
    uint32_t    next;    // next sibling in (signed) char order
};

sv conv::not_strings(const sv * strings, uint32_t n) {
    uint32_t total = 1;
    for (uint32_t k = 0; k < n; k++) total += strings[k].n;
    trie_node * t = (trie_node *) alloc(sizeof(trie_node) * total, 8);
    if (!t) return sv{"", 0};
    uint32_t used_nodes = 1;
    t[0] = trie_node{0, false, 0, 0};
    for (uint32_t k = 0; k < n; k++) {
        uint32_t cur = 0;
        for (uint32_t j = 0; j < strings[k].n; j++) {
            signed char ch = (signed char) strings[k].p[j];
            uint32_t * link = &t[cur].first;
            while (*link && (signed char) t[*link].c < ch) link = &t[*link].next;
            if (!*link || (signed char) t[*link].c != ch) {
                uint32_t nn = used_nodes++;
                t[nn] = trie_node{(char) ch, false, 0, *link};
                *link = nn;
            }
            cur = *link;
        }
        t[cur].end = true;
    }
    const builtin * cb = primitive(S("char"));
    sv char_rule = add_primitive(S("char"), cb);
    sb out(this);
    out.add("[\"] ( ");
    // Depth-first without recursion: frames of (node, child to print next).
    uint32_t * stack_node = (uint32_t *) alloc(sizeof(uint32_t) * 2 * (total + 1), 8);
    if (!stack_node) return sv{"", 0};
    uint32_t * stack_child = stack_node + total + 1;
    uint32_t depth = 0;
    stack_node[0] = 0;
    stack_child[0] = t[0].first;
    depth = 1;
    while (depth > 0 && ok()) {
        uint32_t node = stack_node[depth - 1];
        uint32_t child = stack_child[depth - 1];
        if (child) {
            stack_child[depth - 1] = t[child].next;
            if (child != t[node].first) out.add(" | ");
            out.ch('[').ch(t[child].c).ch(']');
            if (t[child].first) {
                out.add(" (");
                stack_node[depth] = child;
                stack_child[depth] = t[child].first;
                depth++;
            } else if (t[child].end) {
                out.ch(' ').add(char_rule).ch('+');
            }
            continue;
        }
        // All children printed: the branch for any other next character.
        if (t[node].first) {
            out.add(" | ");
            out.add("[^\"");
            for (uint32_t k = t[node].first; k; k = t[k].next) out.ch(t[k].c);
            out.add("] ").add(char_rule).ch('*');
        }
        depth--;
        if (depth > 0) out.ch(')');
    }
    out.add(" )");
    if (!t[0].end) out.ch('?');
    out.add(" [\"] space");
    return out.str();
}

// ---- $ref ----

bool conv::register_refs(const json_node * schema) {
    // Every object with a "$ref" (its other members are not searched), found
    // without recursion: a stack of containers still to scan.
    const json_node * stack[JSON_MAX_DEPTH + 2];
    int n = 0;
    stack[n++] = schema;
    while (n > 0 && ok()) {
        const json_node * v = stack[--n];
        if (v->type != JSON_OBJECT && v->type != JSON_ARRAY) continue;
        const json_node * ref = v->type == JSON_OBJECT ? json_get(v, "$ref") : NULL;
        if (!ref) {
            for (const json_node * ch = v->first; ch; ch = ch->next) {
                if (ch->type != JSON_OBJECT && ch->type != JSON_ARRAY) continue;
                if (n == JSON_MAX_DEPTH + 2) return fail(TERN_ERR_INVALID_ARG, "json schema: nested too deep");
                stack[n++] = ch;
            }
            continue;
        }
        if (ref->type != JSON_STRING) return fail(TERN_ERR_INVALID_ARG, "json schema: '$ref' must be a string");
        sv r = sv{ref->s, ref->n};
        bool known = false;
        for (uint32_t k = 0; k < n_refs; k++) known = known || eq(refs[k].ref, r);
        if (known) continue;
        if (r.n >= 8 && memcmp(r.p, "https://", 8) == 0) {
            return fail(TERN_ERR_INVALID_ARG, "json schema: remote $ref '%.*s' is not supported", (int) r.n, r.p);
        }
        if (!(r.n >= 2 && r.p[0] == '#' && r.p[1] == '/')) {
            return fail(TERN_ERR_INVALID_ARG, "json schema: unsupported $ref '%.*s' (only local '#/...' ones)", (int) r.n,
                        r.p);
        }
        // The JSON pointer's tokens, each an object key.
        const json_node * target = root;
        uint32_t pos = 2;
        while (pos <= r.n) {
            uint32_t e = pos;
            while (e < r.n && r.p[e] != '/') e++;
            sb tok(this);
            tok.add(r.p + pos, e - pos);
            sv key = tok.str();
            const json_node * next = target && target->type == JSON_OBJECT ? json_get(target, key.p) : NULL;
            if (!next) {
                return fail(TERN_ERR_INVALID_ARG, "json schema: cannot resolve $ref '%.*s': no '%s'", (int) r.n, r.p,
                            key.p);
            }
            target = next;
            pos = e + 1;
        }
        if (n_refs == max_refs) return fail(TERN_ERR_NO_MEMORY, "json schema: too many $refs");
        refs[n_refs++] = ref_ent{r, target};
    }
    return ok();
}

sv conv::resolve_ref(sv ref) {
    uint32_t slash = ref.n;
    while (slash > 0 && ref.p[slash - 1] != '/') slash--;
    sv ref_name = dup(sv{ref.p + slash, ref.n - slash});
    bool resolving_now = false;
    for (uint32_t k = 0; k < n_resolving; k++) resolving_now = resolving_now || eq(resolving[k], ref);
    if (!find(ref_name) && !resolving_now) {
        if (n_resolving == JSON_SCHEMA_MAX_DEPTH) {
            fail(TERN_ERR_INVALID_ARG, "json schema: $ref chain deeper than %d", JSON_SCHEMA_MAX_DEPTH);
            return sv{"", 0};
        }
        resolving[n_resolving++] = ref;
        const json_node * target = NULL;
        for (uint32_t k = 0; k < n_refs; k++) {
            if (eq(refs[k].ref, ref)) target = refs[k].target;
        }
        if (!target) {
            fail(TERN_ERR_INVALID_ARG, "json schema: unresolved $ref '%.*s'", (int) ref.n, ref.p);
            return sv{"", 0};
        }
        ref_name = visit(target, ref_name, NULL, NULL);
        n_resolving--;
    }
    return ref_name;
}

// ---- objects ----

sv conv::object_rule(const json_node ** prop_names, const json_node ** prop_schemas, uint32_t n_props,
                     const bool * required, sv name, const json_node * additional) {
    // kv rule names by property, then "*" for additional properties.
    sv * kv = (sv *) alloc(sizeof(sv) * (n_props + 1), 8);
    sv * names = (sv *) alloc(sizeof(sv) * (n_props + 1), 8);
    uint32_t * req = (uint32_t *) alloc(sizeof(uint32_t) * (n_props + 1), 8);
    uint32_t * opt = (uint32_t *) alloc(sizeof(uint32_t) * (n_props + 1), 8);
    if (!ok()) return sv{"", 0};
    uint32_t n_req = 0, n_opt = 0;
    for (uint32_t k = 0; k < n_props; k++) {
        sv pname = sv{prop_names[k]->key, prop_names[k]->key_len};
        names[k] = pname;
        sv rule_name = visit(prop_schemas[k], join_name(this, name, pname), NULL, NULL);
        // The key as JSON text, then as a GBNF literal.
        json_node key_node;
        memset(&key_node, 0, sizeof(key_node));
        key_node.type = JSON_STRING;
        key_node.s = pname.p;
        key_node.n = pname.n;
        sb body(this);
        body.add(literal(dump(&key_node))).add(" space \":\" space ").add(rule_name);
        kv[k] = add_rule(cat(this, join_name(this, name, pname), S("-kv")), body.str());
        if (required[k]) req[n_req++] = k;
        else opt[n_opt++] = k;
    }
    const bool add_more = additional && ((additional->type == JSON_BOOL && additional->b) || additional->type == JSON_OBJECT);
    if (add_more) {
        sv sub_name = join_name(this, name, S("additional"));
        sv value_rule = additional->type == JSON_OBJECT ? visit(additional, cat(this, sub_name, S("-value")), NULL, NULL)
                                                          : add_primitive(S("value"), primitive(S("value")));
        sv key_rule = n_props == 0 ? add_primitive(S("string"), primitive(S("string")))
                                   : add_rule(cat(this, sub_name, S("-k")), not_strings(names, n_props));
        kv[n_props] = add_rule(cat(this, sub_name, S("-kv")), cat(this, key_rule, S(" \":\" space "), value_rule));
        names[n_props] = S("*");
        opt[n_opt++] = n_props;
    }
    sb rule(this);
    rule.add("\"{\" space ");
    for (uint32_t k = 0; k < n_req; k++) {
        if (k > 0) rule.add(" \",\" space ");
        rule.add(kv[req[k]]);
    }
    if (n_opt > 0) {
        rule.add(" (");
        if (n_req > 0) rule.add(" \",\" space ( ");
        // For each optional property, the alternatives that start with it; the
        // rest are chained through "<name>-<key>-rest" rules, innermost first.
        auto head = [&](uint32_t k, bool first_is_optional) {
            sb h(this);
            const bool star = eqz(names[k], "*");
            sb comma(this);
            comma.add("( \",\" space ").add(kv[k]).add(" )");
            sv comma_ref = comma.str();
            if (first_is_optional) h.add(comma_ref).add(star ? "*" : "?");
            else {
                h.add(kv[k]);
                if (star) h.ch(' ').add(comma_ref).ch('*');
            }
            return h.str();
        };
        auto rest_name = [&](uint32_t k) { return cat(this, join_name(this, name, names[k]), S("-rest")); };
        for (uint32_t i = 0; i < n_opt; i++) {
            if (i > 0) rule.add(" | ");
            sv tail = head(opt[n_opt - 1], true);
            for (uint32_t j = n_opt - 1; j > i + 1; j--) {
                sv r = add_rule(rest_name(opt[j - 1]), tail);
                tail = cat(this, head(opt[j - 1], true), S(" "), r);
            }
            sv res = head(opt[i], false);
            if (i + 1 < n_opt) {
                sv r = add_rule(rest_name(opt[i]), tail);
                res = cat(this, res, S(" "), r);
            }
            rule.add(res);
        }
        if (n_req > 0) rule.add(" )");
        rule.add(" )?");
    }
    rule.add(" \"}\" space");
    return rule.str();
}

// ---- visit ----

sv conv::union_rule(sv name, const json_node * alts, const json_node * schema_for_types, keys * shared) {
    sb out(this);
    uint32_t i = 0;
    for (const json_node * a = alts->first; a && ok(); a = a->next, i++) {
        sb nm(this);
        nm.add(name).add(name.n == 0 ? "alternative-" : "-").num(i);
        sv r = schema_for_types ? visit(schema_for_types, nm.str(), a, shared) : visit(a, nm.str(), NULL, NULL);
        if (i > 0) out.add(" | ");
        out.add(r);
    }
    return out.str();
}

bool type_is(const json_node * t, const char * name) { return t && t->type == JSON_STRING && strcmp(t->s, name) == 0; }

const char * value_kind(const json_node * v) {
    switch (v->type) {
        case JSON_NULL: return "null";
        case JSON_BOOL: return "boolean";
        case JSON_INT: return "integer";
        case JSON_FLOAT: return "number";
        case JSON_STRING: return "string";
        case JSON_ARRAY: return "array";
        default: return "object";
    }
}

// The JSON type every text of a schema's grammar has ("object", "string", ...,
// with "integer" counted as a "number" too), following $refs; NULL when mixed
// or unknown. Lets a "type" beside anyOf / oneOf count as enforced.
bool kind_matches(conv * c, const json_node * s, const char * type) {
    for (int hops = 0; s && s->type == JSON_OBJECT && json_get(s, "$ref") && hops < JSON_SCHEMA_MAX_DEPTH; hops++) {
        const json_node * r = json_get(s, "$ref");
        const json_node * target = NULL;
        for (uint32_t j = 0; r->type == JSON_STRING && j < c->n_refs; j++) {
            if (eq(c->refs[j].ref, sv{r->s, r->n})) target = c->refs[j].target;
        }
        s = target;
    }
    if (!s || s->type != JSON_OBJECT) return false;
    auto is = [&](const char * k) { return strcmp(k, type) == 0 || (strcmp(k, "integer") == 0 && strcmp(type, "number") == 0); };
    const json_node * t = json_get(s, "type");
    if (json_get(s, "anyOf") || json_get(s, "oneOf")) {
        const json_node * alts = json_get(s, "oneOf") ? json_get(s, "oneOf") : json_get(s, "anyOf");
        if (alts->type != JSON_ARRAY || alts->n == 0) return false;
        for (const json_node * a = alts->first; a; a = a->next) {
            if (!kind_matches(c, a, type)) return false;
        }
        return true;
    }
    if (t && t->type == JSON_STRING) return is(t->s);
    if (t) return false;
    const json_node * values = json_get(s, "enum");
    if (json_get(s, "const")) return is(value_kind(json_get(s, "const")));
    if (values && values->type == JSON_ARRAY && values->n > 0) {
        for (const json_node * v = values->first; v; v = v->next) {
            if (!is(value_kind(v))) return false;
        }
        return true;
    }
    if (json_get(s, "properties") || json_get(s, "additionalProperties") || json_get(s, "allOf") || s->n == 0) return is("object");
    if (json_get(s, "items") || json_get(s, "prefixItems")) return is("array");
    if (json_get(s, "pattern") || json_get(s, "format")) return is("string");
    return false;
}

sv conv::visit(const json_node * schema, sv name, const json_node * type_override, keys * shared) {
    if (!ok()) return sv{"", 0};
    if (++depth > JSON_SCHEMA_MAX_DEPTH) {
        fail(TERN_ERR_INVALID_ARG, "json schema: nested deeper than %d schemas", JSON_SCHEMA_MAX_DEPTH);
        return sv{"", 0};
    }
    keys own = {schema, NULL};
    if (schema->type == JSON_OBJECT && schema->n > 0) {
        own.used = (uint8_t *) alloc(schema->n);
        if (!own.used) return sv{"", 0};
        memset(own.used, 0, schema->n);
    }
    keys & k = shared ? *shared : own;
    const bool is_obj = schema->type == JSON_OBJECT;
    auto has = [&](const char * key) { return is_obj && json_get(schema, key) != NULL; };
    const json_node * schema_type = type_override ? type_override : (is_obj ? json_get(schema, "type") : NULL);
    const json_node * fmt = is_obj ? json_get(schema, "format") : NULL;
    sv format = fmt && fmt->type == JSON_STRING ? sv{fmt->s, fmt->n} : sv{"", 0};
    if (fmt && fmt->type != JSON_STRING) fail(TERN_ERR_INVALID_ARG, "json schema: 'format' must be a string");
    sv rule_name = is_reserved(name) ? cat(this, name, S("-")) : name.n == 0 ? S("root") : name;
    const bool type_null = schema_type == NULL;
    sv result = sv{"", 0};

    if (!ok()) {
    } else if (has("$ref")) {
        const json_node * r = use(k, "$ref");
        if (r->type != JSON_STRING) fail(TERN_ERR_INVALID_ARG, "json schema: '$ref' must be a string");
        else result = add_rule(rule_name, resolve_ref(sv{r->s, r->n}));
    } else if (has("oneOf") || has("anyOf")) {
        const json_node * alts = use(k, has("oneOf") ? "oneOf" : "anyOf");
        if (alts->type != JSON_ARRAY) fail(TERN_ERR_INVALID_ARG, "json schema: 'anyOf' / 'oneOf' must be a list");
        else result = add_rule(rule_name, union_rule(name, alts, NULL, NULL));
        // A "type" beside them holds when every alternative has that type anyway.
        if (ok() && schema_type && schema_type->type == JSON_STRING && alts->type == JSON_ARRAY) {
            bool all = alts->n > 0;
            for (const json_node * a = alts->first; a && all; a = a->next) all = kind_matches(this, a, schema_type->s);
            if (all) use(k, "type");
        }
    } else if (schema_type && schema_type->type == JSON_ARRAY) {
        use(k, "type");
        result = add_rule(rule_name, union_rule(name, schema_type, schema, &k));
    } else if (has("const")) {
        use(k, "type");
        result = add_rule(rule_name, cat(this, literal(dump(use(k, "const"))), S(" space")));
    } else if (has("enum")) {
        use(k, "type");
        const json_node * values = use(k, "enum");
        if (values->type != JSON_ARRAY) {
            fail(TERN_ERR_INVALID_ARG, "json schema: 'enum' must be a list");
        } else {
            sb body(this);
            body.ch('(');
            for (const json_node * v = values->first; v; v = v->next) {
                if (v != values->first) body.add(" | ");
                body.add(literal(dump(v)));
            }
            body.add(") space");
            result = add_rule(rule_name, body.str());
        }
    } else if ((type_null || type_is(schema_type, "object")) &&
               (has("properties") || (has("additionalProperties") &&
                                      !(json_get(schema, "additionalProperties")->type == JSON_BOOL &&
                                        json_get(schema, "additionalProperties")->b)))) {
        use(k, "type");
        const json_node * props = use(k, "properties");
        const json_node * req = use(k, "required");
        const json_node * additional = use(k, "additionalProperties");
        uint32_t n_props = props && props->type == JSON_OBJECT ? props->n : 0;
        if (props && props->type != JSON_OBJECT) fail(TERN_ERR_INVALID_ARG, "json schema: 'properties' must be an object");
        const json_node ** pn = (const json_node **) alloc(sizeof(void *) * (n_props + 1), 8);
        bool * required = (bool *) alloc(n_props + 1, 8);
        if (ok()) {
            uint32_t i = 0;
            for (const json_node * p = n_props ? props->first : NULL; p; p = p->next) {
                for (const json_node * q = props->first; q != p; q = q->next) {
                    if (q->key_len == p->key_len && memcmp(q->key, p->key, p->key_len) == 0) {
                        fail(TERN_ERR_INVALID_ARG, "json schema: property '%s' given twice", p->key);
                    }
                }
                pn[i] = p;
                required[i] = false;
                i++;
            }
            if (req && req->type == JSON_ARRAY) {
                for (const json_node * r = req->first; r; r = r->next) {
                    if (r->type != JSON_STRING) continue;
                    bool found = false;
                    for (uint32_t j = 0; j < n_props; j++) {
                        if (pn[j]->key_len == r->n && memcmp(pn[j]->key, r->s, r->n) == 0) {
                            required[j] = true;
                            found = true;
                        }
                    }
                    if (!found && !(flags & JSON_SCHEMA_LENIENT)) {
                        fail(TERN_ERR_INVALID_ARG, "json schema: required property '%s' is not in 'properties'", r->s);
                    }
                }
            }
        }
        if (ok()) result = add_rule(rule_name, object_rule(pn, pn, n_props, required, name, additional));
    } else if ((type_null || type_is(schema_type, "object")) && has("allOf")) {
        use(k, "type");
        const json_node * all = use(k, "allOf");
        // Properties of every part; those of anyOf parts are optional.
        uint32_t cap_props = 0;
        for (const json_node * t = all->type == JSON_ARRAY ? all->first : NULL; t; t = t->next) cap_props += 64;
        const json_node ** pn = (const json_node **) alloc(sizeof(void *) * (cap_props + 1), 8);
        bool * required = (bool *) alloc(cap_props + 1, 8);
        uint32_t n_props = 0;
        auto add_component = [&](const json_node * comp, bool is_required) {
            for (int hops = 0; comp && comp->type == JSON_OBJECT && json_get(comp, "$ref") && hops < JSON_SCHEMA_MAX_DEPTH; hops++) {
                const json_node * r = json_get(comp, "$ref");
                const json_node * target = NULL;
                for (uint32_t j = 0; r->type == JSON_STRING && j < n_refs; j++) {
                    if (eq(refs[j].ref, sv{r->s, r->n})) target = refs[j].target;
                }
                comp = target;
            }
            const json_node * props = comp && comp->type == JSON_OBJECT ? json_get(comp, "properties") : NULL;
            if (!props || props->type != JSON_OBJECT) {
                if (!(flags & JSON_SCHEMA_LENIENT)) fail(TERN_ERR_INVALID_ARG, "json schema: an 'allOf' part without 'properties'");
                return;
            }
            for (const json_node * p = props->first; p; p = p->next) {
                if (n_props == cap_props) {
                    fail(TERN_ERR_INVALID_ARG, "json schema: more than 64 properties in an 'allOf' part");
                    return;
                }
                pn[n_props] = p;
                required[n_props] = is_required;
                n_props++;
            }
        };
        if (ok() && all->type == JSON_ARRAY) {
            for (const json_node * t = all->first; t && ok(); t = t->next) {
                const json_node * any = t->type == JSON_OBJECT ? json_get(t, "anyOf") : NULL;
                if (any && any->type == JSON_ARRAY) {
                    for (const json_node * tt = any->first; tt; tt = tt->next) add_component(tt, false);
                } else {
                    add_component(t, true);
                }
            }
        }
        if (ok()) result = add_rule(rule_name, object_rule(pn, pn, n_props, required, name, NULL));
    } else if ((type_null || type_is(schema_type, "array")) && (has("items") || has("prefixItems"))) {
        use(k, "type");
        const json_node * items = use(k, has("items") ? "items" : "prefixItems");
        if (items->type == JSON_ARRAY) {
            sb rule(this);
            rule.add("\"[\" space ");
            uint32_t i = 0;
            for (const json_node * it = items->first; it && ok(); it = it->next, i++) {
                if (i > 0) rule.add(" \",\" space ");
                sb nm(this);
                nm.add(name);
                if (name.n) nm.ch('-');
                nm.add("tuple-").num(i);
                rule.add(visit(it, nm.str(), NULL, NULL));
            }
            rule.add(" \"]\" space");
            result = add_rule(rule_name, rule.str());
        } else {
            sv item_rule_name = visit(items, join_name(this, name, S("item")), NULL, NULL);
            long long min_items = 0, max_items = INT_MAX;
            const json_node * mn = use(k, "minItems");
            const json_node * mx = use(k, "maxItems");
            if (mn) get_int(mn, "minItems", 0, 1000000, &min_items);
            if (mx && mx->type == JSON_INT) get_int(mx, "maxItems", 0, 1000000, &max_items);
            else if (mx && !(flags & JSON_SCHEMA_LENIENT)) fail(TERN_ERR_INVALID_ARG, "json schema: 'maxItems' must be an integer");
            if (ok() && max_items < min_items) fail(TERN_ERR_INVALID_ARG, "json schema: maxItems < minItems");
            sb body(this);
            body.add("\"[\" space ").add(repetition(this, item_rule_name, min_items, max_items, S("\",\" space"))).add(" \"]\" space");
            if (ok()) result = add_rule(rule_name, body.str());
        }
    } else if ((type_null || type_is(schema_type, "string")) && has("pattern")) {
        use(k, "type");
        const json_node * pat = use(k, "pattern");
        if (pat->type != JSON_STRING) fail(TERN_ERR_INVALID_ARG, "json schema: 'pattern' must be a string");
        else result = pattern_rule(sv{pat->s, pat->n}, rule_name);
    } else if ((type_null || type_is(schema_type, "string")) && format.n >= 4 && memcmp(format.p, "uuid", 4) == 0 &&
               (format.n == 4 || (format.n == 5 && format.p[4] >= '1' && format.p[4] <= '5'))) {
        use(k, "type");
        use(k, "format");
        result = add_primitive(eqz(rule_name, "root") ? S("root") : format, primitive(S("uuid")));
    } else if ((type_null || type_is(schema_type, "string")) && format.n > 0 &&
               format_rule(cat(this, format, S("-string")))) {
        use(k, "type");
        use(k, "format");
        sv prim = cat(this, format, S("-string"));
        result = add_rule(rule_name, add_primitive(prim, format_rule(prim)));
    } else if (type_is(schema_type, "string") && (has("minLength") || has("maxLength"))) {
        use(k, "type");
        sv char_rule = add_primitive(S("char"), primitive(S("char")));
        long long min_len = 0, max_len = INT_MAX;
        const json_node * mn = use(k, "minLength");
        const json_node * mx = use(k, "maxLength");
        if (mn) get_int(mn, "minLength", 0, 1000000, &min_len);
        if (mx) get_int(mx, "maxLength", 0, 1000000, &max_len);
        if (ok() && max_len < min_len) fail(TERN_ERR_INVALID_ARG, "json schema: maxLength < minLength");
        sb body(this);
        body.add("\"\\\"\" ").add(repetition(this, char_rule, min_len, max_len, sv{"", 0})).add(" \"\\\"\" space");
        if (ok()) result = add_rule(rule_name, body.str());
    } else if (type_is(schema_type, "integer") &&
               (has("minimum") || has("exclusiveMinimum") || has("maximum") || has("exclusiveMaximum"))) {
        use(k, "type");
        long long min_v = INT_MIN, max_v = INT_MAX, v;
        const long long lim = 1000000000000LL;
        const json_node * m;
        if ((m = use(k, "minimum")) != NULL) {
            if (get_int(m, "minimum", -lim, lim, &v)) min_v = v;
            if (has("exclusiveMinimum") && !(flags & JSON_SCHEMA_LENIENT)) {
                fail(TERN_ERR_INVALID_ARG, "json schema: both 'minimum' and 'exclusiveMinimum'");
            }
        } else if ((m = use(k, "exclusiveMinimum")) != NULL && get_int(m, "exclusiveMinimum", -lim, lim, &v)) {
            min_v = v + 1;
        }
        if ((m = use(k, "maximum")) != NULL) {
            if (get_int(m, "maximum", -lim, lim, &v)) max_v = v;
            if (has("exclusiveMaximum") && !(flags & JSON_SCHEMA_LENIENT)) {
                fail(TERN_ERR_INVALID_ARG, "json schema: both 'maximum' and 'exclusiveMaximum'");
            }
        } else if ((m = use(k, "exclusiveMaximum")) != NULL && get_int(m, "exclusiveMaximum", -lim, lim, &v)) {
            max_v = v - 1;
        }
        if (ok() && ((min_v != INT_MIN && (min_v < -(long long) INT_MAX + 1 || min_v > (long long) INT_MAX - 1)) ||
                     (max_v != INT_MAX && (max_v < -(long long) INT_MAX + 1 || max_v > (long long) INT_MAX - 1)))) {
            fail(TERN_ERR_INVALID_ARG, "json schema: integer bounds must lie within +-2147483646");
        }
        if (ok() && min_v != INT_MIN && max_v != INT_MAX && min_v > max_v) {
            fail(TERN_ERR_INVALID_ARG, "json schema: no integer lies between the minimum and the maximum");
        }
        sb body(this);
        body.ch('(');
        min_max_int(min_v, max_v, body, 16, true);
        body.add(") space");
        if (ok()) result = add_rule(rule_name, body.str());
    } else if ((is_obj && schema->n == 0) || type_is(schema_type, "object")) {
        use(k, "type");
        const json_node * ap = is_obj ? json_get(schema, "additionalProperties") : NULL;
        if (ap && ap->type == JSON_BOOL && ap->b) use(k, "additionalProperties");
        result = add_rule(rule_name, add_primitive(S("object"), primitive(S("object"))));
    } else {
        use(k, "type");
        const builtin * b = schema_type && schema_type->type == JSON_STRING ? primitive(sv{schema_type->s, schema_type->n}) : NULL;
        if (!b) {
            sv d = dump(schema);
            fail(TERN_ERR_INVALID_ARG, "json schema: unrecognized schema: %.200s", d.p);
        } else {
            result = add_primitive(eqz(rule_name, "root") ? S("root") : sv{schema_type->s, schema_type->n}, b);
        }
    }

    // Strict: every keyword must have been used by the branch, or annotate only.
    if (ok() && !shared && own.used && !(flags & JSON_SCHEMA_LENIENT)) {
        uint32_t i = 0;
        for (const json_node * m = schema->first; m; m = m->next, i++) {
            sv key = sv{m->key, m->key_len};
            if (own.used[i] || is_annotation(key)) continue;
            if (eqz(key, "uniqueItems") && m->type == JSON_BOOL && !m->b) continue;
            if (eqz(key, "additionalProperties") && m->type == JSON_BOOL && m->b && type_is(schema_type, "object")) continue;
            static const char * const elsewhere[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems",
                                                     "maxItems", "minLength", "maxLength", "required", "properties",
                                                     "additionalProperties", "items", "prefixItems", "pattern", "enum",
                                                     "const", "type", "anyOf", "oneOf", "allOf"};
            bool known = false;
            for (const char * e : elsewhere) known = known || eqz(key, e);
            if (known) {
                fail(TERN_ERR_INVALID_ARG, "json schema: keyword '%s' has no effect here and would not be enforced", m->key);
            } else {
                fail(TERN_ERR_INVALID_ARG, "json schema: unsupported keyword '%s'", m->key);
            }
            break;
        }
    }
    depth--;
    return result;
}

}  // namespace

static size_t rules_bound(size_t n_nodes, size_t len) { return 8 * n_nodes + len + 64; }

size_t json_schema_mem_size(const char * schema, size_t len) {
    size_t json = json_measure(schema, len, NULL, 0);
    if (json == 0) return 4096;   // enough to report the parse error
    size_t nodes = json / sizeof(json_node) + 1;
    size_t rules = rules_bound(nodes, len);
    size_t slots = 16;
    while (slots < 2 * rules) slots *= 2;
    return json + arena_padded(rules * sizeof(rule_ent)) + arena_padded(slots * sizeof(uint32_t)) +
           arena_padded(nodes * sizeof(ref_ent)) + arena_padded(((size_t) 1 << 20) + 64 * len);
}

tern_status json_schema_to_gbnf(const char * schema, size_t len, uint32_t flags, tern_arena * arena, const char ** out,
                                size_t * out_len, char * err, size_t err_size) {
    *out = NULL;
    *out_len = 0;
    if (err && err_size) err[0] = 0;
    char jerr[160];
    size_t json_bytes = json_measure(schema, len, jerr, sizeof(jerr));
    if (json_bytes == 0) {
        if (err && err_size) snprintf(err, err_size, "json schema: not JSON: %s", jerr);
        return TERN_ERR_INVALID_ARG;
    }
    json_node * root = json_parse(schema, len, arena, jerr, sizeof(jerr));
    if (!root) {
        if (err && err_size) snprintf(err, err_size, "json schema: %s", jerr);
        return TERN_ERR_NO_MEMORY;
    }
    size_t nodes = json_bytes / sizeof(json_node) + 1;
    conv c;
    memset(&c, 0, sizeof(c));
    c.flags = flags;
    c.err = err;
    c.err_size = err_size;
    c.root = root;
    c.max_rules = (uint32_t) rules_bound(nodes, len);
    uint32_t slots = 16;
    while (slots < 2 * c.max_rules) slots *= 2;
    c.rules = (rule_ent *) arena_alloc(arena, c.max_rules * sizeof(rule_ent), TERN_MEM_OTHER);
    c.slots = (uint32_t *) arena_calloc(arena, slots * sizeof(uint32_t), TERN_MEM_OTHER);
    c.mask = slots - 1;
    c.max_refs = (uint32_t) nodes;
    c.refs = (ref_ent *) arena_alloc(arena, nodes * sizeof(ref_ent), TERN_MEM_OTHER);
    c.cap = arena_free(arena);
    c.mem = c.cap > 0 ? (char *) arena_alloc(arena, c.cap, TERN_MEM_OTHER) : NULL;
    if (!c.rules || !c.slots || !c.refs || !c.mem) {
        if (err && err_size) snprintf(err, err_size, "json schema: out of memory");
        return TERN_ERR_NO_MEMORY;
    }
    c.insert(S("space"), S(SPACE_RULE));
    if (c.register_refs(root)) c.visit(root, sv{"", 0}, NULL, NULL);
    if (!c.ok()) return c.st;
    // The rules sorted by name (byte order), one "name ::= body" line each.
    uint32_t * order = (uint32_t *) c.alloc(sizeof(uint32_t) * c.n_rules, 8);
    if (!order) return c.st;
    for (uint32_t i = 0; i < c.n_rules; i++) order[i] = i;
    // Insertion sort: rule counts are small, and this keeps the file free of recursion.
    for (uint32_t i = 1; i < c.n_rules; i++) {
        uint32_t x = order[i], j = i;
        while (j > 0) {
            sv a = c.rules[order[j - 1]].name, b = c.rules[x].name;
            uint32_t m = a.n < b.n ? a.n : b.n;
            int cmp = memcmp(a.p, b.p, m);
            if (cmp < 0 || (cmp == 0 && a.n <= b.n)) break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    sb text(&c);
    for (uint32_t i = 0; i < c.n_rules; i++) {
        const rule_ent & r = c.rules[order[i]];
        text.add(r.name).add(" ::= ").add(r.body).ch('\n');
    }
    sv s = text.str();
    if (!c.ok()) return c.st;
    *out = s.p;
    *out_len = s.n;
    return TERN_OK;
}

}  // namespace tern
