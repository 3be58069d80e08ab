// GBNF parser (see gbnf.h). One loop over the text: open groups are frames
// of an explicit stack, and the elements of every open group sit on a
// scratch stack until the group closes and becomes a rule. The same code
// measures (counts, no symbol table) and builds.
#include "sample/gbnf.h"

#include <stdio.h>
#include <string.h>

#include "core/status.h"

namespace tern {

namespace {

const uint32_t UNDEF = 0xffffffffu;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || is_digit(c); }

uint32_t hash_bytes(const char * s, size_t n) {
    uint32_t h = 2166136261u;   // FNV-1a
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t) s[i]) * 16777619u;
    return h;
}

struct frame {
    uint32_t rule_id;     // the group's rule
    uint32_t begin;       // its first element on the scratch stack
    uint32_t last_sym;    // where the last item of the current sequence starts
};

struct parser {
    const char * text;
    const char * p;
    const char * end;
    bool         build;
    bool         failed;
    char *       err;
    size_t       err_size;

    // Counts (both modes).
    uint64_t n_out;         // elements written as rules
    uint64_t top;           // scratch stack height
    uint64_t scratch_peak;
    uint32_t n_ids;         // build: symbols so far; measure: a bound
    uint64_t name_bytes;    // measure: bytes of every name seen or generated

    // Build.
    gbnf_elem * out;
    uint32_t    out_cap;
    uint32_t *  rule_start;
    uint32_t *  name_off;
    uint32_t *  name_len;
    char *      names;
    size_t      names_used;
    uint32_t    ids_cap;
    uint32_t *  slots;      // hash: id + 1, 0 empty
    uint32_t    slots_mask;
    gbnf_elem * scratch;

    bool fail(const char * what) {
        if (failed) return false;
        failed = true;
        if (err && err_size) {
            size_t line = 1, col = 1;
            for (const char * q = text; q < p && q < end; q++) {
                if (*q == '\n') { line++; col = 1; }
                else if (((unsigned char) *q & 0xc0) != 0x80) col++;
            }
            snprintf(err, err_size, "line %zu, column %zu: %s", line, col, what);
        }
        return false;
    }

    char at(size_t k) const { return p + k < end ? p[k] : 0; }

    void skip_space(bool newline_ok) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '#' || (newline_ok && (*p == '\r' || *p == '\n')))) {
            if (*p == '#') {
                while (p < end && *p != '\r' && *p != '\n') p++;
            } else {
                p++;
            }
        }
    }

    // ---- symbols ----

    uint32_t * slot_for(const char * s, size_t n) {
        uint32_t i = hash_bytes(s, n) & slots_mask;
        for (;;) {
            uint32_t v = slots[i];
            if (v == 0) return &slots[i];
            uint32_t id = v - 1;
            if (name_len[id] == n && memcmp(names + name_off[id], s, n) == 0) return &slots[i];
            i = (i + 1) & slots_mask;
        }
    }

    uint32_t new_id(const char * s, size_t n) {
        uint32_t id = n_ids++;
        name_off[id] = (uint32_t) names_used;
        name_len[id] = (uint32_t) n;
        memcpy(names + names_used, s, n);
        names_used += n;
        rule_start[id] = UNDEF;
        return id;
    }

    // The id of a name; a new one (the next free id) for a name not seen yet.
    uint32_t symbol(const char * s, size_t n) {
        if (!build) {
            n_ids++;
            name_bytes += n;
            return 0;
        }
        uint32_t * slot = slot_for(s, n);
        if (*slot) return *slot - 1;
        uint32_t id = new_id(s, n);
        *slot = id + 1;
        return id;
    }

    // A new symbol named <base>_<id> (it takes that name over if the text used it).
    uint32_t generate(const char * base, size_t base_len) {
        if (!build) {
            n_ids++;
            name_bytes += base_len + 11;
            return 0;
        }
        char name[16];
        int k = snprintf(name, sizeof(name), "_%u", (unsigned) n_ids);
        uint32_t id = n_ids;
        // The name: base then the suffix, assembled in the names buffer.
        new_id(base, base_len);
        memcpy(names + names_used, name, (size_t) k);
        names_used += (size_t) k;
        name_len[id] += (uint32_t) k;
        uint32_t * slot = slot_for(names + name_off[id], name_len[id]);
        *slot = id + 1;
        return id;
    }

    // ---- elements ----

    bool grow(uint64_t * counter, uint64_t n) {
        *counter += n;
        if (*counter > GBNF_MAX_ELEMENTS) return fail("grammar too large (repetitions expand past 4M elements)");
        return true;
    }

    bool push(uint32_t type, uint32_t value) {
        if (build) scratch[top] = gbnf_elem{type, value};
        if (!grow(&top, 1)) return false;
        if (top > scratch_peak) scratch_peak = top;
        return true;
    }

    // A finished rule: n elements from src (scratch) plus up to two more, then END.
    bool add_rule(uint32_t id, const gbnf_elem * src, uint64_t n, const gbnf_elem * extra, uint32_t n_extra) {
        uint64_t total = n + n_extra + 1;
        uint64_t at = n_out;
        if (!grow(&n_out, total)) return false;
        if (build) {
            gbnf_elem * dst = out + at;
            if (n) memcpy(dst, src, (size_t) n * sizeof(gbnf_elem));
            for (uint32_t k = 0; k < n_extra; k++) dst[n + k] = extra[k];
            dst[n + n_extra] = gbnf_elem{GBNF_END, 0};
            rule_start[id] = (uint32_t) at;
        }
        return true;
    }

    // S{min,max} on the scratch elements [f.last_sym, top); max < 0: unbounded.
    bool repeat(frame & f, const char * rule_name, size_t rule_name_len, long min_times, long max_times) {
        if (f.last_sym == top) return fail("expecting an item before */+/?/{");
        const uint64_t len = top - f.last_sym;
        const gbnf_elem * prev = build ? scratch + f.last_sym : NULL;
        // The optional tail S'(k) rules first (they copy S from the scratch).
        long n_opt = max_times < 0 ? 1 : max_times - min_times;
        uint32_t last_rec = 0;
        for (long i = 0; i < n_opt; i++) {
            uint32_t rec = generate(rule_name, rule_name_len);
            gbnf_elem extra[2];
            uint32_t n_extra = 0;
            if (i > 0 || max_times < 0) extra[n_extra++] = gbnf_elem{GBNF_RULE_REF, max_times < 0 ? rec : last_rec};
            extra[n_extra++] = gbnf_elem{GBNF_ALT, 0};
            if (!add_rule(rec, prev, len, extra, n_extra)) return false;
            last_rec = rec;
        }
        if (min_times == 0) {
            top = f.last_sym;
        } else {
            for (long i = 1; i < min_times; i++) {
                uint64_t at = top;
                if (!grow(&top, len)) return false;
                if (top > scratch_peak) scratch_peak = top;
                if (build) memmove(scratch + at, scratch + f.last_sym, (size_t) len * sizeof(gbnf_elem));
            }
        }
        if (n_opt > 0 && !push(GBNF_RULE_REF, last_rec)) return false;
        return true;
    }

    bool hex(int digits, uint32_t * out_cp) {
        uint32_t v = 0;
        for (int k = 0; k < digits; k++) {
            char c = at((size_t) k);
            int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (h < 0) {
                char msg[48];
                snprintf(msg, sizeof(msg), "expecting %d hex digits", digits);
                return fail(msg);
            }
            v = (v << 4) | (uint32_t) h;
        }
        p += digits;
        *out_cp = v;
        return true;
    }

    // One character of a literal or class: an escape or a UTF-8 sequence (read
    // as llama.cpp does: the lead byte's length, continuation bits taken as they are).
    bool character(uint32_t * cp) {
        if (p >= end) return fail("unexpected end of input");
        if (*p == '\\') {
            char e = at(1);
            p += 2;
            switch (e) {
                case 'x': return hex(2, cp);
                case 'u': return hex(4, cp);
                case 'U': return hex(8, cp);
                case 't': *cp = '\t'; return true;
                case 'r': *cp = '\r'; return true;
                case 'n': *cp = '\n'; return true;
                case '\\': case '"': case '[': case ']': *cp = (uint32_t) e; return true;
                default: p -= 2; return fail("unknown escape");
            }
        }
        static const int lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
        uint8_t first = (uint8_t) *p;
        int n = lookup[first >> 4];
        uint32_t v = first & ((1u << (8 - n)) - 1);
        p++;
        for (int k = 1; k < n && p < end && *p; k++, p++) v = (v << 6) + ((uint8_t) *p & 0x3f);
        *cp = v;
        return true;
    }

    bool integer(long * out_v) {
        if (!is_digit(at(0))) return fail("expecting an integer");
        long v = 0;
        while (p < end && is_digit(*p)) {
            v = v * 10 + (*p - '0');
            if ((unsigned long) v > GBNF_MAX_REPEAT) return fail("repetition count too large (at most 100000)");
            p++;
        }
        *out_v = v;
        return true;
    }

    // A rule: name ::= alternatives, then a newline or the end.
    bool rule() {
        const char * name = p;
        while (p < end && is_word(*p)) p++;
        size_t name_len_ = (size_t) (p - name);
        if (name_len_ == 0) return fail("expecting a rule name");
        skip_space(false);
        uint32_t rule_id = symbol(name, name_len_);
        if (!(at(0) == ':' && at(1) == ':' && at(2) == '=')) return fail("expecting ::=");
        p += 3;
        skip_space(true);

        frame frames[GBNF_MAX_DEPTH + 1];
        int depth = 0;
        frames[0] = frame{rule_id, (uint32_t) top, (uint32_t) top};
        for (;;) {
            frame & f = frames[depth];
            const bool nested = depth > 0;
            char c = at(0);
            if (c == '"') {
                p++;
                f.last_sym = (uint32_t) top;
                while (at(0) != '"') {
                    if (p >= end) return fail("unexpected end of input in a literal");
                    uint32_t cp;
                    if (!character(&cp) || !push(GBNF_CHAR, cp)) return false;
                }
                p++;
                skip_space(nested);
            } else if (c == '[') {
                p++;
                uint32_t start_type = GBNF_CHAR;
                if (at(0) == '^') { p++; start_type = GBNF_CHAR_NOT; }
                f.last_sym = (uint32_t) top;
                while (at(0) != ']') {
                    if (p >= end) return fail("unexpected end of input in a character class");
                    uint32_t cp;
                    if (!character(&cp)) return false;
                    if (!push(f.last_sym < top ? (uint32_t) GBNF_CHAR_ALT : start_type, cp)) return false;
                    if (at(0) == '-' && at(1) != ']') {
                        if (p + 1 >= end) return fail("unexpected end of input in a character class");
                        p++;
                        if (!character(&cp) || !push(GBNF_CHAR_RNG_UPPER, cp)) return false;
                    }
                }
                p++;
                skip_space(nested);
            } else if (is_word(c)) {
                const char * ref = p;
                while (p < end && is_word(*p)) p++;
                uint32_t id = symbol(ref, (size_t) (p - ref));
                skip_space(nested);
                f.last_sym = (uint32_t) top;
                if (!push(GBNF_RULE_REF, id)) return false;
            } else if (c == '(') {
                if (depth == GBNF_MAX_DEPTH) return fail("groups nested too deep (at most 256)");
                p++;
                skip_space(true);
                uint32_t sub = generate(name, name_len_);
                depth++;
                frames[depth] = frame{sub, (uint32_t) top, (uint32_t) top};
            } else if (c == '.') {
                f.last_sym = (uint32_t) top;
                if (!push(GBNF_CHAR_ANY, 0)) return false;
                p++;
                skip_space(nested);
            } else if (c == '*' || c == '+' || c == '?') {
                p++;
                skip_space(nested);
                if (!repeat(f, name, name_len_, c == '+' ? 1 : 0, c == '?' ? 1 : -1)) return false;
            } else if (c == '{') {
                p++;
                skip_space(nested);
                long min_times, max_times = -1;
                if (!integer(&min_times)) return false;
                skip_space(nested);
                if (at(0) == '}') {
                    max_times = min_times;
                    p++;
                    skip_space(nested);
                } else if (at(0) == ',') {
                    p++;
                    skip_space(nested);
                    if (is_digit(at(0))) {
                        if (!integer(&max_times)) return false;
                        skip_space(nested);
                    }
                    if (at(0) != '}') return fail("expecting '}'");
                    p++;
                    skip_space(nested);
                } else {
                    return fail("expecting ',' or '}'");
                }
                if (max_times >= 0 && max_times < min_times) return fail("repetition {m,n} with n < m");
                if (!repeat(f, name, name_len_, min_times, max_times)) return false;
            } else if (c == '|') {
                if (!push(GBNF_ALT, 0)) return false;
                p++;
                skip_space(true);
                f.last_sym = (uint32_t) top;
            } else if (depth > 0) {
                // The end of a group's alternatives: it must close here.
                if (c != ')') return fail("expecting ')'");
                uint32_t sub = f.rule_id;
                uint64_t begin = f.begin;
                if (!add_rule(sub, build ? scratch + begin : NULL, top - begin, NULL, 0)) return false;
                top = begin;
                depth--;
                frame & parent = frames[depth];
                parent.last_sym = (uint32_t) top;
                if (!push(GBNF_RULE_REF, sub)) return false;
                p++;
                skip_space(depth > 0);
            } else {
                // The end of the rule's alternatives.
                uint64_t begin = f.begin;
                if (!add_rule(rule_id, build ? scratch + begin : NULL, top - begin, NULL, 0)) return false;
                top = begin;
                if (at(0) == '\r') p += at(1) == '\n' ? 2 : 1;
                else if (at(0) == '\n') p++;
                else if (p < end) return fail("expecting a newline or the end");
                skip_space(true);
                return true;
            }
        }
    }

    bool run() {
        skip_space(true);
        while (p < end) {
            if (!rule()) return false;
        }
        return true;
    }
};

void parser_init(parser * s, const char * text, size_t len, char * err, size_t err_size) {
    memset(s, 0, sizeof(*s));
    s->text = s->p = text;
    s->end = text + len;
    s->err = err;
    s->err_size = err_size;
}

struct sizes {
    size_t rules;      // persistent: elements, rule tables, names
    size_t scratch;    // temporary: hash slots, scratch stack
    uint64_t n_out, peak, n_ids, name_bytes;
    uint32_t slots;
};

bool measure(const char * text, size_t len, char * err, size_t err_size, sizes * z) {
    parser s;
    parser_init(&s, text, len, err, err_size);
    if (!text || !s.run()) {
        if (!text && err && err_size) snprintf(err, err_size, "no grammar text");
        return false;
    }
    if (s.n_ids == 0) {
        if (err && err_size) snprintf(err, err_size, "the grammar has no rules");
        return false;
    }
    z->n_out = s.n_out;
    z->peak = s.scratch_peak;
    z->n_ids = s.n_ids;
    z->name_bytes = s.name_bytes;
    uint32_t slots = 16;
    while (slots < 2 * s.n_ids + 1) slots *= 2;
    z->slots = slots;
    z->rules = arena_padded((size_t) s.n_out * sizeof(gbnf_elem)) + 3 * arena_padded((size_t) s.n_ids * sizeof(uint32_t)) +
               arena_padded((size_t) s.name_bytes + 1);
    z->scratch = arena_padded((size_t) slots * sizeof(uint32_t)) + arena_padded((size_t) (s.scratch_peak + 1) * sizeof(gbnf_elem));
    return true;
}

}  // namespace

size_t gbnf_measure(const char * text, size_t len, char * err, size_t err_size, gbnf_counts * counts) {
    sizes z;
    if (!measure(text, len, err, err_size, &z)) return 0;
    if (counts) {
        counts->n_elems = (uint32_t) z.n_out;
        counts->n_rules = (uint32_t) z.n_ids;
    }
    return z.rules + z.scratch;
}

tern_status gbnf_parse(const char * text, size_t len, tern_arena * arena, gbnf_grammar * out, char * err,
                       size_t err_size) {
    memset(out, 0, sizeof(*out));
    sizes z;
    if (!measure(text, len, err, err_size, &z)) return TERN_ERR_INVALID_ARG;
    parser s;
    parser_init(&s, text, len, err, err_size);
    s.build = true;
    s.out = (gbnf_elem *) arena_alloc(arena, (size_t) z.n_out * sizeof(gbnf_elem), TERN_MEM_SAMPLER);
    s.rule_start = (uint32_t *) arena_alloc(arena, (size_t) z.n_ids * sizeof(uint32_t), TERN_MEM_SAMPLER);
    s.name_off = (uint32_t *) arena_alloc(arena, (size_t) z.n_ids * sizeof(uint32_t), TERN_MEM_SAMPLER);
    s.name_len = (uint32_t *) arena_alloc(arena, (size_t) z.n_ids * sizeof(uint32_t), TERN_MEM_SAMPLER);
    s.names = (char *) arena_alloc(arena, (size_t) z.name_bytes + 1, TERN_MEM_SAMPLER);
    size_t mark = arena_temp_mark(arena);
    s.slots = (uint32_t *) arena_alloc_temp(arena, (size_t) z.slots * sizeof(uint32_t));
    s.scratch = (gbnf_elem *) arena_alloc_temp(arena, (size_t) (z.peak + 1) * sizeof(gbnf_elem));
    if (!s.out || !s.rule_start || !s.name_off || !s.name_len || !s.names || !s.slots || !s.scratch) {
        arena_temp_release(arena, mark);
        if (err && err_size) snprintf(err, err_size, "out of memory for the grammar (%zu bytes needed)", z.rules + z.scratch);
        return TERN_ERR_NO_MEMORY;
    }
    memset(s.slots, 0, (size_t) z.slots * sizeof(uint32_t));
    s.slots_mask = z.slots - 1;
    bool ok = s.run();
    arena_temp_release(arena, mark);
    if (!ok) return TERN_ERR_INVALID_ARG;   // cannot happen after measure; kept for safety
    // Every symbol must be defined.
    for (uint32_t id = 0; id < s.n_ids; id++) {
        if (s.rule_start[id] == UNDEF) {
            if (err && err_size) {
                snprintf(err, err_size, "undefined rule '%.*s'", (int) s.name_len[id], s.names + s.name_off[id]);
            }
            return TERN_ERR_INVALID_ARG;
        }
    }
    out->elems = s.out;
    out->n_elems = (uint32_t) s.n_out;
    out->n_rules = s.n_ids;
    out->rule_start = s.rule_start;
    out->name_off = s.name_off;
    out->name_len = s.name_len;
    out->names = s.names;
    return TERN_OK;
}

int32_t gbnf_find(const gbnf_grammar * g, const char * name) {
    size_t n = strlen(name);
    for (uint32_t id = 0; id < g->n_rules; id++) {
        if (g->name_len[id] == n && memcmp(g->names + g->name_off[id], name, n) == 0) return (int32_t) id;
    }
    return -1;
}

}  // namespace tern
