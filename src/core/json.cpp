// JSON reader and writer (see json.h). The reader is one loop over the text
// with an explicit stack of open containers; the same loop measures (counts
// nodes and string bytes) and builds.
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace tern {

namespace {

struct reader {
    const char * start;
    const char * p;
    const char * end;
    bool         build;
    json_node *  nodes;       // build: [n_nodes]
    uint32_t     n_nodes;
    char *       strs;        // build: decoded strings
    size_t       n_str;       // decoded string bytes (NULs included)
    char *       err;
    size_t       err_size;
    bool         failed;

    bool fail(const char * what) {
        if (failed) return false;
        failed = true;
        if (err && err_size > 0) {
            size_t line = 1, col = 1;
            for (const char * q = start; q < p && q < end; q++) {
                if (*q == '\n') { line++; col = 1; }
                else if (((unsigned char) *q & 0xc0) != 0x80) col++;
            }
            snprintf(err, err_size, "line %zu, column %zu: %s", line, col, what);
        }
        return false;
    }

    void skip_ws() {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    }

    json_node * new_node(json_type t) {
        json_node * n = NULL;
        if (build) {
            n = &nodes[n_nodes];
            memset(n, 0, sizeof(*n));
            n->type = t;
        }
        n_nodes++;
        return n;
    }

    void emit(const char * s, size_t len) {
        if (build) memcpy(strs + n_str, s, len);
        n_str += len;
    }

    static int hexval(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    bool hex4(uint32_t * out) {
        if (end - p < 4) return fail("\\u needs four hex digits");
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            int h = hexval(p[k]);
            if (h < 0) return fail("\\u needs four hex digits");
            v = v * 16 + (uint32_t) h;
        }
        p += 4;
        *out = v;
        return true;
    }

    void emit_cp(uint32_t cp) {
        char b[4];
        size_t n;
        if (cp < 0x80) { b[0] = (char) cp; n = 1; }
        else if (cp < 0x800) { b[0] = (char) (0xc0 | (cp >> 6)); b[1] = (char) (0x80 | (cp & 0x3f)); n = 2; }
        else if (cp < 0x10000) {
            b[0] = (char) (0xe0 | (cp >> 12)); b[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
            b[2] = (char) (0x80 | (cp & 0x3f)); n = 3;
        } else {
            b[0] = (char) (0xf0 | (cp >> 18)); b[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
            b[2] = (char) (0x80 | ((cp >> 6) & 0x3f)); b[3] = (char) (0x80 | (cp & 0x3f)); n = 4;
        }
        emit(b, n);
    }

    // One UTF-8 sequence starting at p (first byte >= 0x80); its length, 0 if invalid.
    size_t utf8_len() const {
        const unsigned char * q = (const unsigned char *) p;
        size_t avail = (size_t) (end - p);
        unsigned char c = q[0];
        size_t n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0 || n > avail) return 0;
        uint32_t cp = c & (0x7f >> n);
        for (size_t k = 1; k < n; k++) {
            if ((q[k] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (q[k] & 0x3f);
        }
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        return n;
    }

    // A string at p (the opening quote); decoded bytes appended to strs with a NUL.
    bool string(const char ** out, uint32_t * out_len) {
        p++;
        size_t from = n_str;
        for (;;) {
            if (p >= end) return fail("unterminated string");
            unsigned char c = (unsigned char) *p;
            if (c == '"') { p++; break; }
            if (c < 0x20) return fail("control character in a string");
            if (c == '\\') {
                if (end - p < 2) return fail("unterminated string");
                char e = p[1];
                p += 2;
                switch (e) {
                    case '"': emit("\"", 1); break;
                    case '\\': emit("\\", 1); break;
                    case '/': emit("/", 1); break;
                    case 'b': emit("\b", 1); break;
                    case 'f': emit("\f", 1); break;
                    case 'n': emit("\n", 1); break;
                    case 'r': emit("\r", 1); break;
                    case 't': emit("\t", 1); break;
                    case 'u': {
                        uint32_t cp;
                        if (!hex4(&cp)) return false;
                        if (cp >= 0xd800 && cp <= 0xdbff) {
                            uint32_t lo;
                            if (end - p < 2 || p[0] != '\\' || p[1] != 'u') return fail("lone high surrogate");
                            p += 2;
                            if (!hex4(&lo)) return false;
                            if (lo < 0xdc00 || lo > 0xdfff) return fail("bad low surrogate");
                            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                            return fail("lone low surrogate");
                        }
                        emit_cp(cp);
                        break;
                    }
                    default: p -= 1; return fail("unknown escape");
                }
                continue;
            }
            if (c < 0x80) { emit(p, 1); p++; continue; }
            size_t n = utf8_len();
            if (n == 0) return fail("invalid UTF-8");
            emit(p, n);
            p += n;
        }
        size_t len = n_str - from;
        emit("", 1);
        if (len > UINT32_MAX - 1) return fail("string too long");
        *out = build ? strs + from : NULL;
        *out_len = (uint32_t) len;
        return true;
    }

    bool number(json_node * node) {
        const char * s = p;
        if (p < end && *p == '-') p++;
        if (p >= end || !(*p >= '0' && *p <= '9')) return fail("bad number");
        if (*p == '0') p++;
        else while (p < end && *p >= '0' && *p <= '9') p++;
        bool integral = true;
        if (p < end && *p == '.') {
            integral = false;
            p++;
            if (p >= end || !(*p >= '0' && *p <= '9')) return fail("bad number: a digit must follow '.'");
            while (p < end && *p >= '0' && *p <= '9') p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            integral = false;
            p++;
            if (p < end && (*p == '+' || *p == '-')) p++;
            if (p >= end || !(*p >= '0' && *p <= '9')) return fail("bad number: a digit must follow the exponent");
            while (p < end && *p >= '0' && *p <= '9') p++;
        }
        if (p < end && ((*p >= '0' && *p <= '9') || *p == '.')) return fail("bad number");
        size_t n = (size_t) (p - s);
        char buf[400];
        if (n >= sizeof(buf)) return fail("number too long");
        if (!node) return true;
        memcpy(buf, s, n);
        buf[n] = 0;
        node->d = strtod(buf, NULL);
        node->type = JSON_FLOAT;
        if (integral) {
            // int64 when it fits, as nlohmann keeps integers (larger ones become floats here).
            bool neg = buf[0] == '-';
            uint64_t v = 0;
            bool fits = true;
            for (const char * q = buf + (neg ? 1 : 0); *q; q++) {
                uint64_t digit = (uint64_t) (*q - '0');
                if (v > (UINT64_MAX - digit) / 10) { fits = false; break; }
                v = v * 10 + digit;
            }
            if (fits && (neg ? v <= (uint64_t) INT64_MAX + 1 : v <= (uint64_t) INT64_MAX)) {
                node->type = JSON_INT;
                node->i = neg ? (int64_t) (0 - v) : (int64_t) v;
            }
        }
        return true;
    }

    bool literal(const char * word, size_t n) {
        if ((size_t) (end - p) < n || memcmp(p, word, n) != 0) return fail("unexpected character");
        p += n;
        return true;
    }

    // The whole text: one value, then only whitespace.
    json_node * run() {
        json_node * stack[JSON_MAX_DEPTH];
        bool is_obj[JSON_MAX_DEPTH];
        int depth = 0;
        json_node * root = NULL;
        const char * key = NULL;
        uint32_t key_len = 0;
        enum { VALUE, AFTER_VALUE } state = VALUE;
        skip_ws();
        for (;;) {
            if (state == VALUE) {
                if (p >= end) { fail("unexpected end of input"); return NULL; }
                char c = *p;
                json_node * v = NULL;
                bool opened = false;
                if (c == '{' || c == '[') {
                    if (depth == JSON_MAX_DEPTH) { fail("nesting deeper than 128"); return NULL; }
                    v = new_node(c == '{' ? JSON_OBJECT : JSON_ARRAY);
                    opened = true;
                    p++;
                } else if (c == '"') {
                    v = new_node(JSON_STRING);
                    const char * s;
                    uint32_t n;
                    if (!string(&s, &n)) return NULL;
                    if (v) { v->s = s; v->n = n; }
                } else if (c == 't') {
                    v = new_node(JSON_BOOL);
                    if (!literal("true", 4)) return NULL;
                    if (v) v->b = true;
                } else if (c == 'f') {
                    v = new_node(JSON_BOOL);
                    if (!literal("false", 5)) return NULL;
                } else if (c == 'n') {
                    v = new_node(JSON_NULL);
                    if (!literal("null", 4)) return NULL;
                } else if (c == '-' || (c >= '0' && c <= '9')) {
                    v = new_node(JSON_FLOAT);
                    if (!number(v)) return NULL;
                } else {
                    fail("unexpected character");
                    return NULL;
                }
                // Attach to the open container (with the pending key).
                if (depth > 0) {
                    json_node * parent = stack[depth - 1];
                    if (parent) {
                        if (is_obj[depth - 1]) { v->key = key; v->key_len = key_len; }
                        if (parent->last) parent->last->next = v; else parent->first = v;
                        parent->last = v;
                        parent->n++;
                    }
                } else {
                    root = v;
                }
                if (opened) {
                    stack[depth] = v;
                    is_obj[depth] = c == '{';
                    depth++;
                    skip_ws();
                    char close = c == '{' ? '}' : ']';
                    if (p < end && *p == close) {
                        p++;
                        depth--;
                        state = AFTER_VALUE;
                        continue;
                    }
                    if (c == '{') {
                        if (!member_key(&key, &key_len)) return NULL;
                    }
                    continue;   // the first value
                }
                state = AFTER_VALUE;
                continue;
            }
            // AFTER_VALUE
            skip_ws();
            if (depth == 0) {
                if (p != end) { fail("unexpected text after the value"); return NULL; }
                return build ? root : (json_node *) 1;
            }
            if (p >= end) { fail("unexpected end of input"); return NULL; }
            char close = is_obj[depth - 1] ? '}' : ']';
            if (*p == ',') {
                p++;
                skip_ws();
                if (is_obj[depth - 1] && !member_key(&key, &key_len)) return NULL;
                state = VALUE;
            } else if (*p == close) {
                p++;
                depth--;
            } else {
                fail(is_obj[depth - 1] ? "expected ',' or '}'" : "expected ',' or ']'");
                return NULL;
            }
        }
    }

    bool member_key(const char ** key, uint32_t * key_len) {
        skip_ws();
        if (p >= end || *p != '"') return fail("expected a string key");
        if (!string(key, key_len)) return false;
        skip_ws();
        if (p >= end || *p != ':') return fail("expected ':'");
        p++;
        skip_ws();
        return true;
    }
};

}  // namespace

size_t json_measure(const char * text, size_t len, char * err, size_t err_size) {
    if (err && err_size) err[0] = 0;
    reader r;
    memset(&r, 0, sizeof(r));
    r.start = r.p = text;
    r.end = text + len;
    r.err = err;
    r.err_size = err_size;
    if (!text || !r.run()) {
        if (!text && err && err_size) snprintf(err, err_size, "no text");
        return 0;
    }
    return arena_padded((size_t) r.n_nodes * sizeof(json_node)) + arena_padded(r.n_str > 0 ? r.n_str : 1);
}

json_node * json_parse(const char * text, size_t len, tern_arena * arena, char * err, size_t err_size) {
    if (err && err_size) err[0] = 0;
    reader r;
    memset(&r, 0, sizeof(r));
    r.start = r.p = text;
    r.end = text + len;
    r.err = err;
    r.err_size = err_size;
    if (!text || !r.run()) return NULL;
    uint32_t n_nodes = r.n_nodes;
    size_t n_str = r.n_str;
    json_node * nodes = (json_node *) arena_alloc(arena, (size_t) n_nodes * sizeof(json_node), TERN_MEM_OTHER);
    char * strs = (char *) arena_alloc(arena, n_str > 0 ? n_str : 1, TERN_MEM_OTHER);
    if (!nodes || !strs) {
        if (err && err_size) snprintf(err, err_size, "out of memory (%zu nodes)", (size_t) n_nodes);
        return NULL;
    }
    memset(&r, 0, sizeof(r));
    r.start = r.p = text;
    r.end = text + len;
    r.build = true;
    r.nodes = nodes;
    r.strs = strs;
    r.err = err;
    r.err_size = err_size;
    return r.run();
}

json_node * json_get(const json_node * obj, const char * key) {
    if (!obj || obj->type != JSON_OBJECT) return NULL;
    size_t n = strlen(key);
    json_node * found = NULL;
    for (json_node * c = obj->first; c; c = c->next) {
        if (c->key_len == n && memcmp(c->key, key, n) == 0) found = c;   // the last one wins, as in nlohmann
    }
    return found;
}

json_node * json_at(const json_node * arr, uint32_t index) {
    if (!arr || (arr->type != JSON_ARRAY && arr->type != JSON_OBJECT)) return NULL;
    json_node * c = arr->first;
    for (uint32_t k = 0; c && k < index; k++) c = c->next;
    return c;
}

bool json_is_number(const json_node * v) { return v && (v->type == JSON_INT || v->type == JSON_FLOAT); }

bool json_str_eq(const json_node * v, const char * s) {
    return v && v->type == JSON_STRING && v->n == strlen(s) && memcmp(v->s, s, v->n) == 0;
}

// A scalar pair, or a container pair of the same type and size (compared deeper by the caller).
static bool json_shallow_equal(const json_node * x, const json_node * y) {
    bool xn = json_is_number(x), yn = json_is_number(y);
    if (xn || yn) {
        if (!(xn && yn)) return false;
        return x->type == JSON_INT && y->type == JSON_INT ? x->i == y->i : x->d == y->d;
    }
    if (x->type != y->type) return false;
    switch (x->type) {
        case JSON_BOOL: return x->b == y->b;
        case JSON_STRING: return x->n == y->n && memcmp(x->s, y->s, x->n) == 0;
        case JSON_ARRAY:
        case JSON_OBJECT: return x->n == y->n;
        default: return true;
    }
}

// An object's member by key (the last of equal keys, as nlohmann keeps).
static const json_node * json_member(const json_node * obj, const char * key, uint32_t n) {
    const json_node * found = NULL;
    for (const json_node * k = obj->first; k; k = k->next) {
        if (k->key_len == n && memcmp(k->key, key, n) == 0) found = k;
    }
    return found;
}

bool json_equal(const json_node * a, const json_node * b) {
    if (!a || !b) return a == b;
    if (!json_shallow_equal(a, b)) return false;
    // Open container pairs, each with its cursor into a's children; no recursion.
    struct frame { const json_node * y; const json_node * xc; const json_node * yc; };
    frame st[JSON_MAX_DEPTH + 1];
    int n = 0;
    if (a->type == JSON_ARRAY || a->type == JSON_OBJECT) st[n++] = frame{b, a->first, b->first};
    while (n > 0) {
        frame & f = st[n - 1];
        if (!f.xc) { n--; continue; }
        const json_node * x = f.xc;
        const json_node * y = f.y->type == JSON_ARRAY ? f.yc : json_member(f.y, x->key, x->key_len);
        f.xc = x->next;
        if (f.y->type == JSON_ARRAY) f.yc = f.yc ? f.yc->next : NULL;
        if (!y || !json_shallow_equal(x, y)) return false;
        if ((x->type == JSON_ARRAY || x->type == JSON_OBJECT) && x->n > 0) {
            if (n > JSON_MAX_DEPTH) return false;
            st[n++] = frame{y, x->first, y->first};
        }
    }
    return true;
}

void text_out::put(const char * s, size_t n) {
    if (len < cap) {
        size_t room = cap - (size_t) len;
        memcpy(buf + len, s, n < room ? n : room);
    }
    len += n;
}

void text_out::puts(const char * z) { put(z, strlen(z)); }

void json_write_string(text_out * out, const char * s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    out->putc('"');
    size_t run = 0;   // bytes copied as they are, flushed in one put
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) s[i];
        const char * esc = NULL;
        char u[7];
        switch (c) {
            case '"': esc = "\\\""; break;
            case '\\': esc = "\\\\"; break;
            case '\b': esc = "\\b"; break;
            case '\f': esc = "\\f"; break;
            case '\n': esc = "\\n"; break;
            case '\r': esc = "\\r"; break;
            case '\t': esc = "\\t"; break;
            default:
                if (c < 0x20) {
                    u[0] = '\\'; u[1] = 'u'; u[2] = '0'; u[3] = '0'; u[4] = hex[c >> 4]; u[5] = hex[c & 15]; u[6] = 0;
                    esc = u;
                }
        }
        if (!esc) { run++; continue; }
        out->put(s + i - run, run);
        run = 0;
        out->puts(esc);
    }
    out->put(s + n - run, run);
    out->putc('"');
}

int double_shortest_digits(double d, char * digits, int * exp10, bool * neg) {
    // The shortest %e text that reads back to d: its digits and exponent.
    char e[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d) break;
    }
    int k = 0;
    const char * q = e;
    *neg = *q == '-';
    if (*neg) q++;
    for (; *q && *q != 'e'; q++) {
        if (*q >= '0' && *q <= '9' && k < 20) digits[k++] = *q;
    }
    while (k > 1 && digits[k - 1] == '0') k--;
    *exp10 = (int) strtol(q + 1, NULL, 10);
    return k;
}

int json_format_double(double d, char * buf) {
    if (isnan(d) || isinf(d)) {   // nlohmann writes null for these
        memcpy(buf, "null", 5);
        return 4;
    }
    if (d == 0) {
        const char * z = signbit(d) ? "-0.0" : "0.0";
        strcpy(buf, z);
        return (int) strlen(z);
    }
    char digits[24];
    int exp10;
    bool neg;
    const int k = double_shortest_digits(d, digits, &exp10, &neg);
    int n = exp10 + 1;   // the decimal point's place after the first n digits
    int len = 0;
    if (neg) buf[len++] = '-';
    if (k <= n && n <= 15) {
        memcpy(buf + len, digits, (size_t) k);
        len += k;
        for (int z = k; z < n; z++) buf[len++] = '0';
        buf[len++] = '.';
        buf[len++] = '0';
    } else if (0 < n && n <= 15) {
        memcpy(buf + len, digits, (size_t) n);
        len += n;
        buf[len++] = '.';
        memcpy(buf + len, digits + n, (size_t) (k - n));
        len += k - n;
    } else if (-4 < n && n <= 0) {
        buf[len++] = '0';
        buf[len++] = '.';
        for (int z = n; z < 0; z++) buf[len++] = '0';
        memcpy(buf + len, digits, (size_t) k);
        len += k;
    } else {
        buf[len++] = digits[0];
        if (k > 1) {
            buf[len++] = '.';
            memcpy(buf + len, digits + 1, (size_t) (k - 1));
            len += k - 1;
        }
        int x = n - 1;
        buf[len++] = 'e';
        buf[len++] = x < 0 ? '-' : '+';
        if (x < 0) x = -x;
        len += snprintf(buf + len, 8, "%02d", x);
    }
    buf[len] = 0;
    return len;
}

void json_write(text_out * out, const json_node * v, int indent) {
    // Containers still open, with the child to write next.
    const json_node * open[JSON_MAX_DEPTH + 1];
    const json_node * next[JSON_MAX_DEPTH + 1];
    int depth = 0;
    auto newline = [&](int level) {
        if (indent < 0) return;
        out->putc('\n');
        for (int k = 0; k < level * indent; k++) out->putc(' ');
    };
    const json_node * cur = v;
    for (;;) {
        if (cur) {
            if (depth > 0 && open[depth - 1]->type == JSON_OBJECT) {
                json_write_string(out, cur->key, cur->key_len);
                out->puts(indent < 0 ? ":" : ": ");
            }
            char num[40];
            switch (cur->type) {
                case JSON_NULL: out->puts("null"); break;
                case JSON_BOOL: out->puts(cur->b ? "true" : "false"); break;
                case JSON_INT: snprintf(num, sizeof(num), "%lld", (long long) cur->i); out->puts(num); break;
                case JSON_FLOAT: json_format_double(cur->d, num); out->puts(num); break;
                case JSON_STRING: json_write_string(out, cur->s, cur->n); break;
                case JSON_ARRAY:
                case JSON_OBJECT:
                    out->putc(cur->type == JSON_ARRAY ? '[' : '{');
                    if (cur->n == 0 || depth == JSON_MAX_DEPTH) {
                        out->putc(cur->type == JSON_ARRAY ? ']' : '}');
                        break;
                    }
                    open[depth] = cur;
                    next[depth] = cur->first;
                    depth++;
                    newline(depth);
                    cur = next[depth - 1];
                    next[depth - 1] = cur->next;
                    continue;
            }
        }
        // Continue with the next child of the innermost open container.
        if (depth == 0) return;
        const json_node * n = next[depth - 1];
        if (n) {
            out->putc(',');
            newline(depth);
            cur = n;
            next[depth - 1] = n->next;
            continue;
        }
        depth--;
        newline(depth);
        out->putc(open[depth]->type == JSON_ARRAY ? ']' : '}');
        cur = NULL;
    }
}

}  // namespace tern
