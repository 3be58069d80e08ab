// Tensor-override regular expressions (see regex.h).
#include "hal/regex.h"

#include <stdio.h>
#include <string.h>

namespace tern {
namespace hal {

namespace {

enum { RE_SET = 1, RE_GROUP, RE_BOL, RE_EOL };

struct compiler {
    const char * p;
    size_t       n, i;
    re_prog *    out;
    char *       err;
    size_t       err_size;
    int          depth;

    int fail(const char * what) {
        snprintf(err, err_size, "%s at offset %zu of '%.*s'", what, i, (int) n, p);
        return -1;
    }
    int new_node(uint8_t kind) {
        if (out->n_nodes >= RE_MAX_NODES) return -1;
        re_node * nd = &out->nodes[out->n_nodes];
        memset(nd, 0, sizeof(*nd));
        nd->kind = kind;
        nd->min = nd->max = 1;
        nd->next = nd->child = nd->alt = -1;
        return out->n_nodes++;
    }
    int new_set() {
        if (out->n_sets >= RE_MAX_SETS) return -1;
        memset(out->sets[out->n_sets], 0, sizeof(out->sets[0]));
        return out->n_sets++;
    }
    static void add(uint32_t * s, unsigned c) { s[c >> 5] |= 1u << (c & 31); }
    static void add_range(uint32_t * s, unsigned a, unsigned b) { for (unsigned c = a; c <= b; c++) add(s, c); }
    // \d \w \s and their capitals; false for an escape of a plain character.
    static bool add_class_escape(uint32_t * s, char e) {
        uint32_t t[8] = {0};
        switch (e | 0x20) {
            case 'd': add_range(t, '0', '9'); break;
            case 'w': add_range(t, '0', '9'); add_range(t, 'a', 'z'); add_range(t, 'A', 'Z'); add(t, '_'); break;
            case 's': add(t, ' '); add_range(t, '\t', '\r'); break;
            default: return false;
        }
        const bool negate = e >= 'A' && e <= 'Z';
        for (int k = 0; k < 8; k++) s[k] |= negate ? ~t[k] : t[k];
        return true;
    }
    static unsigned escaped_char(char e) {
        switch (e) {
            case 'n': return '\n';
            case 't': return '\t';
            case 'r': return '\r';
            case 'f': return '\f';
            case 'v': return '\v';
            default: return (unsigned char) e;
        }
    }

    // [...] at p[i] == '['
    int parse_class(uint32_t * s) {
        i++;
        bool negate = false;
        if (i < n && p[i] == '^') { negate = true; i++; }
        bool first = true;
        while (i < n && (p[i] != ']' || first)) {
            first = false;
            unsigned lo;
            if (p[i] == '\\' && i + 1 < n) {
                if (add_class_escape(s, p[i + 1])) { i += 2; continue; }
                lo = escaped_char(p[i + 1]);
                i += 2;
            } else {
                lo = (unsigned char) p[i++];
            }
            if (i + 1 < n && p[i] == '-' && p[i + 1] != ']') {
                i++;
                unsigned hi;
                if (p[i] == '\\' && i + 1 < n) { hi = escaped_char(p[i + 1]); i += 2; }
                else hi = (unsigned char) p[i++];
                if (hi < lo) return fail("a class range out of order");
                add_range(s, lo, hi);
            } else {
                add(s, lo);
            }
        }
        if (i >= n) return fail("an unclosed [");
        i++;  // ]
        if (negate) for (int k = 0; k < 8; k++) s[k] = ~s[k];
        return 0;
    }

    int parse_number(int * v) {
        if (i >= n || p[i] < '0' || p[i] > '9') return -1;
        int x = 0;
        while (i < n && p[i] >= '0' && p[i] <= '9') {
            x = x * 10 + (p[i++] - '0');
            if (x > 1000) return -1;
        }
        *v = x;
        return 0;
    }

    // Quantifier after the atom just made.
    int parse_quantifier(int node) {
        if (i >= n) return 0;
        re_node * nd = &out->nodes[node];
        int lo = 1, hi = 1;
        if (p[i] == '*') { lo = 0; hi = -1; i++; }
        else if (p[i] == '+') { lo = 1; hi = -1; i++; }
        else if (p[i] == '?') { lo = 0; hi = 1; i++; }
        else if (p[i] == '{') {
            const size_t at = i++;
            if (parse_number(&lo) != 0) { i = at; return fail("a bad {m,n} repeat"); }
            hi = lo;
            if (i < n && p[i] == ',') {
                i++;
                hi = -1;
                if (i < n && p[i] != '}' && parse_number(&hi) != 0) return fail("a bad {m,n} repeat");
            }
            if (i >= n || p[i] != '}' || (hi >= 0 && hi < lo)) return fail("a bad {m,n} repeat");
            i++;
        } else {
            return 0;
        }
        if (nd->kind == RE_BOL || nd->kind == RE_EOL) return fail("a repeated anchor");
        if (i < n && p[i] == '?') i++;  // lazy marker: the first match found is all a search needs
        if (i < n && (p[i] == '*' || p[i] == '+' || p[i] == '{')) return fail("a repeat of a repeat");
        nd->min = (int16_t) lo;
        nd->max = (int16_t) hi;
        return 0;
    }

    // One alternative: atoms up to | or ) or the end. Returns its first atom (-1: empty), or -2 on error.
    int parse_seq() {
        int head = -1, tail = -1;
        while (i < n && p[i] != '|' && p[i] != ')') {
            int node;
            const char c = p[i];
            if (c == '(') {
                if (++depth > 16) return fail("groups nested too deep"), -2;
                i++;
                if (i + 1 < n && p[i] == '?' && p[i + 1] == ':') i += 2;  // (?:...) groups alike
                node = new_node(RE_GROUP);
                if (node < 0) return fail("a pattern too long"), -2;
                if (parse_alternatives(node) != 0) return -2;
                if (i >= n || p[i] != ')') return fail("an unclosed ("), -2;
                i++;
                depth--;
            } else if (c == '^' || c == '$') {
                node = new_node(c == '^' ? RE_BOL : RE_EOL);
                if (node < 0) return fail("a pattern too long"), -2;
                i++;
            } else if (c == '*' || c == '+' || c == '?' || c == '{') {
                return fail("a repeat of nothing"), -2;
            } else {
                node = new_node(RE_SET);
                const int set = node < 0 ? -1 : new_set();
                if (set < 0) return fail("a pattern too long"), -2;
                out->nodes[node].set = (uint8_t) set;
                uint32_t * s = out->sets[set];
                if (c == '.') {
                    for (int k = 0; k < 8; k++) s[k] = ~0u;
                    i++;
                } else if (c == '[') {
                    if (parse_class(s) != 0) return -2;
                } else if (c == '\\') {
                    if (i + 1 >= n) return fail("a trailing \\"), -2;
                    if (!add_class_escape(s, p[i + 1])) add(s, escaped_char(p[i + 1]));
                    i += 2;
                } else {
                    add(s, (unsigned char) c);
                    i++;
                }
            }
            if (parse_quantifier(node) != 0) return -2;
            if (tail >= 0) out->nodes[tail].next = (int16_t) node;
            else head = node;
            tail = node;
        }
        return head;
    }

    // Alternatives into group g, up to ) or the end.
    int parse_alternatives(int g) {
        int prev_head_holder = -1;  // the alternative whose `alt` links to the next
        bool first = true;
        for (;;) {
            const int head = parse_seq();
            if (head == -2) return -1;
            // An empty alternative becomes an empty set matched zero times.
            int h = head;
            if (h < 0) {
                h = new_node(RE_GROUP);
                if (h < 0) return fail("a pattern too long");
            }
            if (first) out->nodes[g].child = (int16_t) h;
            else out->nodes[prev_head_holder].alt = (int16_t) h;
            prev_head_holder = h;
            first = false;
            if (i < n && p[i] == '|') { i++; continue; }
            return 0;
        }
    }
};

struct cont {
    int16_t      node;    // continue with this atom list (-1: the end of the enclosing group)
    int16_t      group;   // RE_GROUP repeat continuation: the group, else -1
    int          count;   // repeats of `group` done
    size_t       start;   // where this repeat of `group` began (an empty repeat ends the loop)
    const cont * up;
};

struct matcher {
    const re_prog * p;
    const char *    text;
    size_t          len;
    long            steps;

    bool in_set(int set, size_t pos) const {
        const unsigned c = (unsigned char) text[pos];
        return (p->sets[set][c >> 5] >> (c & 31)) & 1;
    }

    bool match(int node, size_t pos, const cont * k) {
        if (++steps > 200000) return false;
        if (node < 0) {
            if (!k) return true;
            if (k->group >= 0) return repeat(k->group, k->count, k->start, pos, k->up);
            return match(k->node, pos, k->up);
        }
        const re_node & nd = p->nodes[node];
        switch (nd.kind) {
            case RE_BOL: return pos == 0 && match(nd.next, pos, k);
            case RE_EOL: return pos == len && match(nd.next, pos, k);
            case RE_SET: {
                size_t c = 0;
                const size_t most = nd.max < 0 ? len - pos : (size_t) nd.max;
                while (c < most && pos + c < len && in_set(nd.set, pos + c)) c++;
                for (size_t t = c + 1; t-- > (size_t) nd.min;) {
                    if (match(nd.next, pos + t, k)) return true;
                    if (steps > 200000) return false;
                }
                return false;
            }
            case RE_GROUP: {
                cont after = { nd.next, -1, 0, 0, k };
                return repeat(node, 0, pos, pos, &after);
            }
        }
        return false;
    }

    // `count` repeats of group g done (the last began at `start`), now at pos; then k.
    bool repeat(int g, int count, size_t start, size_t pos, const cont * k) {
        const re_node & nd = p->nodes[g];
        if (count > 0 && pos == start && count >= nd.min) return match(k->node, pos, k->up);  // an empty repeat: stop
        if (nd.max < 0 || count < nd.max) {
            if (nd.child < 0) {
                if (count >= nd.min) return match(k->node, pos, k->up);
            } else {
                for (int a = nd.child; a >= 0; a = p->nodes[a].alt) {
                    cont again = { -1, (int16_t) g, count + 1, pos, k };
                    // an alternative made of one empty group node: its body is empty
                    const int body = (p->nodes[a].kind == RE_GROUP && p->nodes[a].child < 0 && p->nodes[a].next < 0) ? -1 : a;
                    if (match(body, pos, &again)) return true;
                    if (steps > 200000) return false;
                }
            }
        }
        return count >= nd.min && match(k->node, pos, k->up);
    }
};

}  // namespace

int re_compile(const char * pattern, size_t len, re_prog * out, char * err, size_t err_size) {
    memset(out, 0, sizeof(*out));
    compiler c = { pattern, len, 0, out, err, err_size, 0 };
    if (len > 256) return c.fail("a pattern longer than 256 bytes");
    const int root = c.new_node(RE_GROUP);
    if (c.parse_alternatives(root) != 0) return -1;
    if (c.i < len) return c.fail("an unmatched )");
    out->start = (int16_t) root;
    return 0;
}

int re_search(const re_prog * p, const char * text) {
    matcher m = { p, text, strlen(text), 0 };
    for (size_t at = 0; at <= m.len; at++) {
        if (m.match(p->start, at, NULL)) return 1;
        if (m.steps > 200000) return -1;
    }
    return 0;
}

}  // namespace hal
}  // namespace tern
