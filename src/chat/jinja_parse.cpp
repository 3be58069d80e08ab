// Jinja parser (see jinja.h): the source becomes a list of tokens (text,
// {{ expression }}, {% block %}, {# comment #}, each expression parsed where
// it stands), text is trimmed as minja does (- markers, trim_blocks,
// lstrip_blocks, the last newline), then the tokens nest into nodes.
// Expressions follow Jinja2's precedence:
//   cond-expr > or > and > not > compare (== != < <= > >= in, not in)
//   > + - > ~ > * / // % > ** > unary - + > postfix (. [] () | filter, is test)
// Recursion is bounded by lim.max_depth (nesting of parentheses, brackets,
// blocks).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/jinja_ast.h"
#include "core/json.h"
#include "vocab/unicode.h"

namespace tern {

namespace {

enum tok_type : uint8_t { T_TEXT, T_EXPR, T_COMMENT, T_BLOCK };

enum kw : uint8_t {
    K_NONE, K_IF, K_ELIF, K_ELSE, K_ENDIF, K_FOR, K_ENDFOR, K_SET, K_ENDSET, K_MACRO, K_ENDMACRO, K_FILTER,
    K_ENDFILTER, K_GENERATION, K_ENDGENERATION, K_BREAK, K_CONTINUE, K_CALL, K_ENDCALL, K_WITH, K_ENDWITH,
};

struct token {
    uint8_t      type;
    uint8_t      kw;
    bool         pre_strip, post_strip;
    bool         pre_keep, post_keep;  // {%+ and +%}: no lstrip_blocks before, no trim_blocks after
    bool         recursive;
    uint32_t     pos;
    const char * text;       // T_TEXT
    uint32_t     text_len;
    jexpr *      expr;
    jexpr *      cond;
    jname *      names;
    uint32_t     n_names;
    jname        ns;
    jarg *       params;
    uint32_t     n_params;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct parser {
    const char * src;
    const char * p;
    const char * end;
    jmem *       m;
    uint32_t     depth, max_depth;
    bool         failed;
    bool         oom;
    uint32_t     err_pos;
    char         msg[160];

    bool fail(const char * fmt, ...) {
        if (failed) return false;
        failed = true;
        err_pos = (uint32_t) (p - src);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return false;
    }

    void * alloc(size_t n) {
        void * q = jmem_alloc(m, n);
        if (!q) {
            oom = !failed;
            fail("out of memory (%zu bytes for the template)", m->cap);
        }
        else memset(q, 0, n);
        return q;
    }

    uint32_t pos() const { return (uint32_t) (p - src); }

    void ws() { while (p < end && is_space(*p)) p++; }

    bool starts(const char * s) const {
        size_t n = strlen(s);
        return (size_t) (end - p) >= n && memcmp(p, s, n) == 0;
    }

    // A keyword or operator word at p (after spaces), not followed by an identifier character.
    bool peek_word(const char * w) {
        ws();
        size_t n = strlen(w);
        return (size_t) (end - p) >= n && memcmp(p, w, n) == 0 && (p + n == end || !is_ident(p[n]));
    }
    bool word(const char * w) {
        if (!peek_word(w)) return false;
        p += strlen(w);
        return true;
    }
    bool sym(const char * s) {
        ws();
        if (!starts(s)) return false;
        p += strlen(s);
        return true;
    }
    // The closing of a tag ahead: "}}", "%}", "-}}", "-%}", "+%}".
    bool at_close() const {
        const char * q = p;
        if (q < end && (*q == '-' || *q == '~' || *q == '+')) q++;
        return (end - q) >= 2 && ((q[0] == '}' && q[1] == '}') || (q[0] == '%' && q[1] == '}'));
    }

    // Append a to the growing array *v of *n items (*cap of room; it doubles, from 4).
    bool push_arg(jarg ** v, uint32_t * n, uint32_t * cap, const jarg & a) {
        if (*n == *cap) {
            const uint32_t ncap = *cap ? *cap * 2 : 4;
            jarg * nv = (jarg *) alloc(sizeof(jarg) * ncap);
            if (!nv) return false;
            if (*n) memcpy(nv, *v, sizeof(jarg) * *n);
            *v = nv;
            *cap = ncap;
        }
        (*v)[(*n)++] = a;
        return true;
    }

    bool push_value(jexpr * l, uint32_t * cap, jexpr * value) {
        jarg a;
        memset(&a, 0, sizeof(a));
        a.value = value;
        return push_arg(&l->args, &l->n_args, cap, a);
    }

    jexpr * node(uint8_t kind, uint32_t at) {
        jexpr * e = (jexpr *) alloc(sizeof(jexpr));
        if (e) {
            e->kind = kind;
            e->pos = at;
        }
        return e;
    }

    bool enter() {
        if (++depth > max_depth) return fail("nested deeper than %u levels", max_depth);
        return true;
    }

    // ---- literals ----

    // A string literal with Python's escapes (Jinja2 reads them so): \n \r \t
    // \b \f \v \a \\ \' \" , octal \ooo, \xHH, \uXXXX (a surrogate pair
    // makes one character), \UXXXXXXXX, a backslash before a newline joins the
    // lines; any other escape keeps its backslash, as Python does. No decoded
    // form is longer than its source, so the source length bounds the bytes.
    bool string_lit(jv * out) {
        char q = *p;
        const char * s = ++p;
        const char * k = s;
        while (k < end && *k != q) {
            if (*k == '\\' && k + 1 < end) k++;
            k++;
        }
        if (k >= end) return fail("unterminated string");
        char * d = (char *) jmem_alloc(m, (size_t) (k - s) + 1);
        if (!d) return fail("out of memory (%zu bytes for the template)", m->cap);
        size_t w = 0;
        while (p < end && *p != q) {
            char c = *p++;
            if (c != '\\' || p >= end) {
                d[w++] = c;
                continue;
            }
            const char * esc = p - 1;
            char e = *p++;
            switch (e) {
                case 'n': d[w++] = '\n'; break;
                case 'r': d[w++] = '\r'; break;
                case 't': d[w++] = '\t'; break;
                case 'b': d[w++] = '\b'; break;
                case 'f': d[w++] = '\f'; break;
                case 'v': d[w++] = '\v'; break;
                case 'a': d[w++] = '\a'; break;
                case '\\': case '\'': case '"': d[w++] = e; break;
                case '\n': break;
                case 'x': case 'u': case 'U': {
                    uint32_t cp = 0;
                    if (!hex_digits(e == 'x' ? 2 : e == 'u' ? 4 : 8, &cp)) { p = esc; return fail("truncated \\%c escape", e); }
                    if (cp >= 0xD800 && cp < 0xDC00 && p + 6 <= end && p[0] == '\\' && p[1] == 'u') {
                        const char * back = p;
                        uint32_t lo = 0;
                        p += 2;
                        if (hex_digits(4, &lo) && lo >= 0xDC00 && lo < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        else p = back;
                    }
                    if ((cp >= 0xD800 && cp < 0xE000) || cp > 0x10FFFF) { p = esc; return fail("\\%c escape is not a character", e); }
                    w += (size_t) unicode_encode(cp, d + w);
                    break;
                }
                default:
                    if (e >= '0' && e <= '7') {
                        uint32_t cp = (uint32_t) (e - '0');
                        for (int i = 0; i < 2 && p < end && *p >= '0' && *p <= '7'; i++) cp = cp * 8 + (uint32_t) (*p++ - '0');
                        w += (size_t) unicode_encode(cp, d + w);
                    } else {
                        d[w++] = '\\';   // Python keeps an unknown escape as it is
                        d[w++] = e;
                    }
                    break;
            }
        }
        p++;
        d[w] = 0;
        *out = jv_str(d, (uint32_t) w);
        return true;
    }

    // n hex digits at p into *v (advancing p); false when fewer are there.
    bool hex_digits(int n, uint32_t * v) {
        uint32_t x = 0;
        for (int i = 0; i < n; i++) {
            if (p >= end) return false;
            char h = *p;
            uint32_t dgt;
            if (h >= '0' && h <= '9') dgt = (uint32_t) (h - '0');
            else if (h >= 'a' && h <= 'f') dgt = (uint32_t) (h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') dgt = (uint32_t) (h - 'A' + 10);
            else return false;
            x = x * 16 + dgt;
            p++;
        }
        *v = x;
        return true;
    }

    bool number_lit(jv * out) {
        const char * s = p;
        bool is_float = false;
        while (p < end && (is_digit(*p) || *p == '_')) p++;
        if (p + 1 < end && *p == '.' && is_digit(p[1])) {
            is_float = true;
            p++;
            while (p < end && is_digit(*p)) p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            const char * q = p + 1;
            if (q < end && (*q == '+' || *q == '-')) q++;
            if (q < end && is_digit(*q)) {
                is_float = true;
                p = q;
                while (p < end && is_digit(*p)) p++;
            }
        }
        char buf[64];
        size_t n = 0;
        for (const char * k = s; k < p && n + 1 < sizeof(buf); k++) {
            if (*k != '_') buf[n++] = *k;
        }
        buf[n] = 0;
        if (is_float) *out = jv_float(strtod(buf, NULL));
        else *out = jv_int(strtoll(buf, NULL, 10));
        return true;
    }

    // ---- expressions ----

    jexpr * expression(bool allow_if = true) {
        if (!enter()) return NULL;
        uint32_t at = pos();
        jexpr * e = or_expr();
        if (e && allow_if && word("if")) {
            jexpr * c = node(JX_COND, at);
            if (!c) return NULL;
            c->b = e;
            c->a = or_expr();
            if (!c->a) return NULL;
            if (word("else")) {
                c->c = expression();
                if (!c->c) return NULL;
            }
            e = c;
        }
        depth--;
        return failed ? NULL : e;
    }

    jexpr * or_expr() {
        jexpr * l = and_expr();
        while (l && word("or")) {
            jexpr * e = node(JX_OR, l->pos);
            if (!e) return NULL;
            e->a = l;
            e->b = and_expr();
            if (!e->b) return NULL;
            l = e;
        }
        return l;
    }

    jexpr * and_expr() {
        jexpr * l = not_expr();
        while (l && word("and")) {
            jexpr * e = node(JX_AND, l->pos);
            if (!e) return NULL;
            e->a = l;
            e->b = not_expr();
            if (!e->b) return NULL;
            l = e;
        }
        return l;
    }

    jexpr * not_expr() {
        uint32_t at = pos();
        if (word("not")) {
            if (!enter()) return NULL;
            jexpr * e = node(JX_NOT, at);
            if (!e) return NULL;
            e->a = not_expr();
            depth--;
            return e->a ? e : NULL;
        }
        return compare();
    }

    // a < b <= c is a chain, as in Python: (a < b) and (b <= c) with b evaluated
    // once; the first comparison holds a, the links after it in ->c.
    jexpr * compare() {
        jexpr * l = math1();
        jexpr * head = NULL;
        jexpr * tail = NULL;
        while (l) {
            ws();
            uint8_t op;
            if (sym("==")) op = JOP_EQ;
            else if (sym("!=")) op = JOP_NE;
            else if (sym("<=")) op = JOP_LE;
            else if (sym(">=")) op = JOP_GE;
            else if (sym("<")) op = JOP_LT;
            else if (sym(">")) op = JOP_GT;
            else if (word("in")) op = JOP_IN;
            else if (peek_word("not")) {
                const char * save = p;
                p += 3;
                if (!word("in")) { p = save; break; }
                op = JOP_NOT_IN;
            } else {
                break;
            }
            jexpr * e = node(JX_BINARY, l->pos);
            if (!e) return NULL;
            e->op = op;
            e->b = math1();
            if (!e->b) return NULL;
            if (!head) {
                e->a = l;
                head = e;
            } else {
                tail->c = e;   // a link: its left operand is the previous comparison's right one
            }
            tail = e;
        }
        return head && l ? head : l;
    }

    jexpr * math1() {
        jexpr * l = concat();
        for (;;) {
            ws();
            if (!l || p >= end) return l;
            uint8_t op;
            if (*p == '+' && !at_close()) op = JOP_ADD;
            else if (*p == '-' && !at_close()) op = JOP_SUB;
            else return l;
            p++;
            jexpr * e = node(JX_BINARY, l->pos);
            if (!e) return NULL;
            e->op = op;
            e->a = l;
            e->b = concat();
            if (!e->b) return NULL;
            l = e;
        }
    }

    jexpr * concat() {
        jexpr * l = math2();
        while (l) {
            ws();
            if (p < end && *p == '~' && !(p + 1 < end && p[1] == '}')) {
                p++;
                jexpr * e = node(JX_CONCAT, l->pos);
                if (!e) return NULL;
                e->a = l;
                e->b = math2();
                if (!e->b) return NULL;
                l = e;
            } else {
                break;
            }
        }
        return l;
    }

    jexpr * math2() {
        jexpr * l = power();
        for (;;) {
            ws();
            if (!l || p >= end) return l;
            uint8_t op;
            if (starts("**")) return l;
            if (starts("//")) { op = JOP_FLOORDIV; p += 2; }
            else if (*p == '*') { op = JOP_MUL; p++; }
            else if (*p == '/') { op = JOP_DIV; p++; }
            else if (*p == '%' && !(p + 1 < end && p[1] == '}')) { op = JOP_MOD; p++; }
            else return l;
            jexpr * e = node(JX_BINARY, l->pos);
            if (!e) return NULL;
            e->op = op;
            e->a = l;
            e->b = power();
            if (!e->b) return NULL;
            l = e;
        }
    }

    jexpr * power() {
        jexpr * l = unary();
        while (l && sym("**")) {
            jexpr * e = node(JX_BINARY, l->pos);
            if (!e) return NULL;
            e->op = JOP_POW;
            e->a = l;
            e->b = unary();
            if (!e->b) return NULL;
            l = e;
        }
        return l;
    }

    // A sign binds tighter than the filters and tests after it (Jinja2 and
    // minja: -3 | abs is 3): only the outermost sign takes them.
    jexpr * unary(bool with_filters = true) {
        ws();
        uint32_t at = pos();
        if (p < end && (*p == '-' || *p == '+') && !at_close()) {
            char c = *p++;
            if (!enter()) return NULL;
            jexpr * e = node(c == '-' ? JX_NEG : JX_POS, at);
            if (!e) return NULL;
            e->a = unary(false);
            depth--;
            if (!e->a) return NULL;
            return with_filters ? filtered(e) : e;
        }
        return with_filters ? filtered(postfix()) : postfix();
    }

    // Arguments of a call: ( a, b, name=c ). p is at '('.
    bool call_args(jarg ** out, uint32_t * n_out) {
        p++;
        if (!enter()) return false;
        // Count by parsing into a small growing array.
        uint32_t cap = 4, n = 0;
        jarg * args = (jarg *) alloc(sizeof(jarg) * cap);
        if (!args) return false;
        for (;;) {
            ws();
            if (sym(")")) break;
            if (n > 0 && !sym(",")) return fail("expected ',' or ')' in call arguments");
            ws();
            if (sym(")")) break;   // a trailing comma
            jarg a;
            memset(&a, 0, sizeof(a));
            // name=value?
            const char * save = p;
            if (p < end && is_ident_start(*p)) {
                const char * s = p;
                while (p < end && is_ident(*p)) p++;
                const char * e = p;
                ws();
                if (p < end && *p == '=' && !(p + 1 < end && p[1] == '=')) {
                    p++;
                    a.name = s;
                    a.name_len = (uint32_t) (e - s);
                } else {
                    p = save;
                }
            }
            if (p < end && *p == '*') {   // *list / **dict: expanded into the arguments (as minja: in calls only)
                if (a.name) return fail("expected an expression after '%.*s='", (int) a.name_len, a.name);
                a.expand = (p + 1 < end && p[1] == '*') ? 2 : 1;
                p += a.expand;
            }
            a.value = expression();
            if (!a.value || !push_arg(&args, &n, &cap, a)) return false;
        }
        depth--;
        *out = args;
        *n_out = n;
        return true;
    }

    bool ident(jname * out) {
        ws();
        if (p >= end || !is_ident_start(*p)) return false;
        const char * s = p;
        while (p < end && is_ident(*p)) p++;
        out->s = s;
        out->n = (uint32_t) (p - s);
        return true;
    }

    jv name_value(const jname & n) {
        char * d = (char *) jmem_alloc(m, n.n + 1);
        if (!d) { fail("out of memory (%zu bytes for the template)", m->cap); return jv_str("", 0); }
        memcpy(d, n.s, n.n);
        d[n.n] = 0;
        return jv_str(d, n.n);
    }

    // postfix, then | filters and is-tests (Jinja2's filter expression).
    // e followed by its filters and tests (| f, is t).
    jexpr * filtered(jexpr * e) {
        for (;;) {
            if (!e) return NULL;
            ws();
            uint32_t at = pos();
            if (p < end && *p == '|' && !(p + 1 < end && p[1] == '|')) {
                p++;
                jname fname;
                if (!ident(&fname)) { fail("expected a filter name after '|'"); return NULL; }
                // An unknown name fails when it runs, not here: minja looks filters
                // up at render time, so a template using one in a branch it never
                // takes renders there (DeepSeek V3.2's from_json).
                const int id = jinja_filter_id(fname.s, fname.n);
                jexpr * f = node(JX_FILTER, at);
                if (!f) return NULL;
                f->a = e;
                f->id = id < 0 ? k_jinja_unknown_id : (uint16_t) id;
                if (id < 0) f->lit = name_value(fname);
                ws();
                if (p < end && *p == '(' && !call_args(&f->args, &f->n_args)) return NULL;
                e = f;
            } else if (word("is")) {
                jexpr * t = node(JX_TEST, at);
                if (!t) return NULL;
                t->a = e;
                t->negate = word("not");
                jname tname;
                if (!ident(&tname)) { fail("expected a test name after 'is'"); return NULL; }
                const int id = jinja_test_id(tname.s, tname.n);  // unknown: fails when it runs, as filters
                t->id = id < 0 ? k_jinja_unknown_id : (uint16_t) id;
                if (id < 0) t->lit = name_value(tname);
                ws();
                if (p < end && *p == '(') {
                    if (!call_args(&t->args, &t->n_args)) return NULL;
                } else if (p < end && (*p == '\'' || *p == '"' || is_digit(*p) || *p == '[' || *p == '{' ||
                                       (is_ident_start(*p) && !peek_word("and") && !peek_word("or") &&
                                        !peek_word("else") && !peek_word("if") && !peek_word("in") && !peek_word("not") &&
                                        !peek_word("is")))) {
                    // A single argument without parentheses: x is divisibleby 3, x is sameas none,
                    // x is in [1, 2]
                    t->args = (jarg *) alloc(sizeof(jarg));
                    if (!t->args) return NULL;
                    t->args[0].value = postfix();
                    if (!t->args[0].value) return NULL;
                    t->n_args = 1;
                }
                e = t;
            } else {
                return e;
            }
        }
    }

    jexpr * postfix() {
        jexpr * e = primary();
        for (;;) {
            if (!e) return NULL;
            ws();
            uint32_t at = pos();
            if (p >= end) return e;
            if (*p == '.' && !(p + 1 < end && is_digit(p[1]))) {
                p++;
                jname n = {NULL, 0};
                if (!ident(&n)) { fail("expected a name after '.'"); return NULL; }
                ws();
                jexpr * a;
                if (p < end && *p == '(') {
                    a = node(JX_METHOD, at);
                    if (!a) return NULL;
                    if (!call_args(&a->args, &a->n_args)) return NULL;
                } else {
                    a = node(JX_ATTR, at);
                    if (!a) return NULL;
                }
                a->a = e;
                a->lit = name_value(n);
                e = a;
            } else if (*p == '.') {
                // x.0 is x[0] (Jinja2: an integer after the dot is a subscript,
                // m.content.0.type); the digits stop at the next '.'.
                p++;
                int64_t i = 0;
                while (p < end && is_digit(*p)) {
                    if (i > (INT64_MAX - 9) / 10) { fail("index after '.' too large"); return NULL; }
                    i = i * 10 + (*p++ - '0');
                }
                jexpr * k = node(JX_LIT, at);
                jexpr * s = k ? node(JX_INDEX, at) : NULL;
                if (!s) return NULL;
                k->lit = jv_int(i);
                s->a = e;
                s->b = k;
                e = s;
            } else if (*p == '[') {
                p++;
                if (!enter()) return NULL;
                jexpr * parts[3] = {NULL, NULL, NULL};
                int n_colons = 0;
                for (;;) {
                    ws();
                    if (p < end && *p == ']') break;
                    if (p < end && *p == ':') {
                        if (++n_colons > 2) { fail("too many ':' in a slice"); return NULL; }
                        p++;
                        continue;
                    }
                    if (parts[n_colons]) { fail("expected ']'"); return NULL; }
                    parts[n_colons] = expression();
                    if (!parts[n_colons]) return NULL;
                }
                p++;
                depth--;
                jexpr * s;
                if (n_colons == 0) {
                    if (!parts[0]) { fail("empty subscript"); return NULL; }
                    s = node(JX_INDEX, at);
                    if (!s) return NULL;
                    s->b = parts[0];
                } else {
                    s = node(JX_SLICE, at);
                    if (!s) return NULL;
                    s->b = parts[0];
                    s->c = parts[1];
                    s->d = parts[2];
                }
                s->a = e;
                e = s;
            } else if (*p == '(') {
                jexpr * c = node(JX_CALL, at);
                if (!c) return NULL;
                c->a = e;
                if (!call_args(&c->args, &c->n_args)) return NULL;
                e = c;
            } else {
                return e;
            }
        }
    }

    jexpr * primary() {
        ws();
        uint32_t at = pos();
        if (p >= end) { fail("unexpected end of the template in an expression"); return NULL; }
        char c = *p;
        if (c == '\'' || c == '"') {
            jexpr * e = node(JX_LIT, at);
            if (!e || !string_lit(&e->lit)) return NULL;
            // Adjacent literals join: "a" "b"
            for (;;) {
                ws();
                if (p >= end || (*p != '\'' && *p != '"')) break;
                jv more = jv_str("", 0);
                if (!string_lit(&more)) return NULL;
                char * d = (char *) jmem_alloc(m, (size_t) e->lit.n + more.n + 1);
                if (!d) { fail("out of memory (%zu bytes for the template)", m->cap); return NULL; }
                memcpy(d, e->lit.s, e->lit.n);
                memcpy(d + e->lit.n, more.s, more.n);
                d[e->lit.n + more.n] = 0;
                e->lit = jv_str(d, e->lit.n + more.n);
            }
            return e;
        }
        if (is_digit(c) || (c == '.' && p + 1 < end && is_digit(p[1]))) {
            jexpr * e = node(JX_LIT, at);
            if (!e || !number_lit(&e->lit)) return NULL;
            return e;
        }
        if (is_ident_start(c)) {
            jname n = {NULL, 0};
            ident(&n);
            jexpr * e = node(JX_LIT, at);
            if (!e) return NULL;
            auto is = [&](const char * w) { return n.n == strlen(w) && memcmp(n.s, w, n.n) == 0; };
            if (is("true") || is("True")) { e->lit = jv_bool(true); return e; }
            if (is("false") || is("False")) { e->lit = jv_bool(false); return e; }
            if (is("none") || is("None") || is("null")) { e->lit = jv_none(); return e; }
            if (is("not") || is("and") || is("or") || is("is") || is("in") || is("if") || is("else")) {
                p = n.s;
                fail("unexpected '%.*s'", (int) n.n, n.s);
                return NULL;
            }
            e->kind = JX_VAR;
            e->lit = name_value(n);
            return e;
        }
        if (c == '(') {
            p++;
            if (!enter()) return NULL;
            ws();
            if (p < end && *p == ')') {   // the empty tuple
                p++;
                depth--;
                return node(JX_LIST, at);
            }
            jexpr * first = expression();
            if (!first) return NULL;
            ws();
            if (sym(")")) {
                depth--;
                return first;
            }
            jexpr * t = node(JX_LIST, at);
            if (!t) return NULL;
            if (!list_items(t, first, ')')) return NULL;
            depth--;
            return t;
        }
        if (c == '[') {
            p++;
            if (!enter()) return NULL;
            jexpr * l = node(JX_LIST, at);
            if (!l) return NULL;
            ws();
            if (sym("]")) { depth--; return l; }
            jexpr * first = expression();
            if (!first || !list_items(l, first, ']')) return NULL;
            depth--;
            return l;
        }
        if (c == '{') {
            p++;
            if (!enter()) return NULL;
            jexpr * d = node(JX_DICT, at);
            if (!d) return NULL;
            uint32_t cap = 0;
            for (;;) {
                ws();
                if (sym("}")) break;
                if (d->n_args > 0) {
                    if (!sym(",")) { fail("expected ',' or '}' in a dict"); return NULL; }
                    ws();
                    if (sym("}")) break;
                }
                jarg a;
                memset(&a, 0, sizeof(a));
                a.key = expression();
                if (!a.key) return NULL;
                if (!sym(":")) { fail("expected ':' in a dict"); return NULL; }
                a.value = expression();
                if (!a.value || !push_arg(&d->args, &d->n_args, &cap, a)) return NULL;
            }
            depth--;
            return d;
        }
        fail("expected a value");
        return NULL;
    }

    // An expression, or a tuple without brackets (Jinja2's parse_tuple: the
    // value of a set, the sequence of a for): a, b, ... up to the tag's end,
    // a trailing comma allowed.
    jexpr * tuple_expression(bool allow_if) {
        const uint32_t at = pos();
        jexpr * first = expression(allow_if);
        if (!first) return NULL;
        ws();
        if (p >= end || *p != ',') return first;
        jexpr * t = node(JX_LIST, at);
        uint32_t cap = 0;
        if (!t || !push_value(t, &cap, first)) return NULL;
        while (sym(",")) {
            ws();
            if (at_close() || peek_word("if") || peek_word("recursive")) break;
            jexpr * e = expression(allow_if);
            if (!e || !push_value(t, &cap, e)) return NULL;
            ws();
        }
        return t;
    }

    // The rest of a list or tuple after its first item, up to `close`.
    bool list_items(jexpr * l, jexpr * first, char close) {
        uint32_t cap = 0;
        if (!push_value(l, &cap, first)) return false;
        for (;;) {
            ws();
            if (p < end && *p == close) { p++; return true; }
            if (!sym(",")) return fail("expected ',' or '%c'", close);
            ws();
            if (p < end && *p == close) { p++; return true; }
            jexpr * e = expression();
            if (!e || !push_value(l, &cap, e)) return false;
        }
    }

    // ---- tags ----

    // name, name, ... (for and set targets)
    bool names(jname ** out, uint32_t * n_out) {
        uint32_t cap = 4, n = 0;
        jname * v = (jname *) alloc(sizeof(jname) * cap);
        if (!v) return false;
        bool parens = sym("(");
        for (;;) {
            jname nm;
            if (!ident(&nm)) return fail("expected a variable name");
            if (n == cap) {
                jname * nv = (jname *) alloc(sizeof(jname) * cap * 2);
                if (!nv) return false;
                memcpy(nv, v, sizeof(jname) * n);
                v = nv;
                cap *= 2;
            }
            v[n++] = nm;
            if (!sym(",")) break;
        }
        if (parens && !sym(")")) return fail("expected ')'");
        *out = v;
        *n_out = n;
        return true;
    }

    // Whitespace and the closing %} of a tag; its '-' marker into *strip, its
    // '+' (keep the newline after) into *keep.
    bool block_close(bool * strip, bool * keep = NULL) {
        ws();
        *strip = false;
        if (keep) *keep = false;
        if (p < end && (*p == '-' || *p == '~' || *p == '+')) {
            *strip = *p == '-';
            if (keep) *keep = *p == '+';
            p++;
        }
        if (!starts("%}")) return fail("expected '%%}' to close the tag");
        p += 2;
        return true;
    }

    bool macro_params(jarg ** out, uint32_t * n_out) {
        if (!sym("(")) return fail("expected '(' after the macro name");
        uint32_t cap = 4, n = 0;
        jarg * v = (jarg *) alloc(sizeof(jarg) * cap);
        if (!v) return false;
        for (;;) {
            ws();
            if (sym(")")) break;
            if (n > 0 && !sym(",")) return fail("expected ',' or ')' in the macro's parameters");
            ws();
            if (sym(")")) break;
            jname nm;
            if (!ident(&nm)) return fail("expected a parameter name");
            jarg a;
            memset(&a, 0, sizeof(a));
            a.name = nm.s;
            a.name_len = nm.n;
            if (sym("=")) {
                a.value = expression();
                if (!a.value) return false;
            }
            if (!push_arg(&v, &n, &cap, a)) return false;
        }
        *out = v;
        *n_out = n;
        return true;
    }
};

struct kw_name {
    const char * s;
    uint8_t      kw;
};

const kw_name KEYWORDS[] = {
    {"if", K_IF}, {"elif", K_ELIF}, {"else", K_ELSE}, {"endif", K_ENDIF}, {"for", K_FOR}, {"endfor", K_ENDFOR},
    {"set", K_SET}, {"endset", K_ENDSET}, {"macro", K_MACRO}, {"endmacro", K_ENDMACRO}, {"filter", K_FILTER},
    {"endfilter", K_ENDFILTER}, {"generation", K_GENERATION}, {"endgeneration", K_ENDGENERATION},
    {"break", K_BREAK}, {"continue", K_CONTINUE}, {"call", K_CALL}, {"endcall", K_ENDCALL},
    {"with", K_WITH}, {"endwith", K_ENDWITH},
};

// The whole source as tokens (two passes: count, then fill).
struct tokenizer {
    parser & ps;
    token *  toks;
    uint32_t n, cap;

    bool push(const token & t) {
        if (n == cap) {
            uint32_t ncap = cap ? cap * 2 : 64;
            token * nt = (token *) ps.alloc(sizeof(token) * ncap);
            if (!nt) return false;
            if (n) memcpy(nt, toks, sizeof(token) * n);
            toks = nt;
            cap = ncap;
        }
        toks[n++] = t;
        return true;
    }

    bool text_until_tag(token & t) {
        const char * s = ps.p;
        const char * q = s;
        while (q + 1 < ps.end && !(q[0] == '{' && (q[1] == '{' || q[1] == '%' || q[1] == '#'))) q++;
        if (q + 1 >= ps.end) q = ps.end;
        t.type = T_TEXT;
        t.text = s;
        t.text_len = (uint32_t) (q - s);
        ps.p = q;
        return true;
    }

    bool run() {
        while (ps.p < ps.end && !ps.failed) {
            token t;
            memset(&t, 0, sizeof(t));
            t.pos = ps.pos();
            if (ps.starts("{#")) {
                const char * s = ps.p + 2;
                const char * close = NULL;
                for (const char * q = s; q + 1 < ps.end; q++) {
                    if (q[0] == '#' && q[1] == '}') { close = q; break; }
                }
                if (!close) return ps.fail("a comment without its closing #}");
                t.type = T_COMMENT;
                t.pre_strip = s < close && *s == '-';
                t.post_strip = close > s && close[-1] == '-';
                ps.p = close + 2;
            } else if (ps.starts("{{")) {
                ps.p += 2;
                t.pre_strip = ps.p < ps.end && *ps.p == '-';
                if (ps.p < ps.end && (*ps.p == '-' || *ps.p == '~')) ps.p++;
                t.type = T_EXPR;
                t.expr = ps.expression();
                if (!t.expr) return false;
                ps.ws();
                if (ps.p < ps.end && (*ps.p == '-' || *ps.p == '~')) {
                    t.post_strip = *ps.p == '-';
                    ps.p++;
                }
                if (!ps.starts("}}")) return ps.fail("expected '}}' to close the expression");
                ps.p += 2;
            } else if (ps.starts("{%")) {
                ps.p += 2;
                t.pre_strip = ps.p < ps.end && *ps.p == '-';
                t.pre_keep = ps.p < ps.end && *ps.p == '+';
                if (ps.p < ps.end && (*ps.p == '-' || *ps.p == '~' || *ps.p == '+')) ps.p++;
                ps.ws();
                t.type = T_BLOCK;
                jname k;
                if (!ps.ident(&k)) return ps.fail("expected a tag name after {%%");
                for (const kw_name & w : KEYWORDS) {
                    if (k.n == strlen(w.s) && memcmp(k.s, w.s, k.n) == 0) t.kw = w.kw;
                }
                if (k.n == 3 && memcmp(k.s, "raw", 3) == 0) {
                    if (!raw(t)) return false;
                    continue;
                }
                if (t.kw == K_NONE) {
                    ps.p = k.s;
                    return ps.fail("unsupported tag '%.*s'", (int) k.n, k.s);
                }
                if (!tag_body(t)) return false;
            } else {
                text_until_tag(t);
            }
            if (!push(t)) return false;
        }
        return !ps.failed;
    }

    // {% raw %} ... {% endraw %}: the text between, as it is.
    bool raw(token & t) {
        bool strip, keep;
        if (!ps.block_close(&strip, &keep)) return false;
        t.post_strip = strip;
        t.post_keep = keep;
        const char * s = ps.p;
        for (const char * q = s; q + 1 < ps.end; q++) {
            if (q[0] != '{' || q[1] != '%') continue;
            const char * r = q + 2;
            bool pre = r < ps.end && *r == '-';
            bool pre_keep = r < ps.end && *r == '+';
            if (r < ps.end && (*r == '-' || *r == '~' || *r == '+')) r++;
            while (r < ps.end && is_space(*r)) r++;
            if ((size_t) (ps.end - r) < 6 || memcmp(r, "endraw", 6) != 0) continue;
            ps.p = r + 6;
            bool post, post_keep;
            if (!ps.block_close(&post, &post_keep)) return false;
            // The raw tag itself and its end act as a comment around a text token.
            token open = t;
            open.type = T_COMMENT;
            if (!push(open)) return false;
            token body;
            memset(&body, 0, sizeof(body));
            body.type = T_TEXT;
            body.pos = (uint32_t) (s - ps.src);
            body.text = s;
            body.text_len = (uint32_t) (q - s);
            if (!push(body)) return false;
            token close;
            memset(&close, 0, sizeof(close));
            close.type = T_COMMENT;
            close.pos = (uint32_t) (q - ps.src);
            close.pre_strip = pre;
            close.post_strip = post;
            close.pre_keep = pre_keep;
            close.post_keep = post_keep;
            return push(close);
        }
        return ps.fail("{%% raw %%} without {%% endraw %%}");
    }

    bool tag_body(token & t) {
        bool strip = false, keep = false;
        switch (t.kw) {
            case K_IF:
            case K_ELIF:
                t.expr = ps.expression();
                if (!t.expr) return false;
                break;
            case K_FOR:
                if (!ps.names(&t.names, &t.n_names)) return false;
                if (!ps.word("in")) return ps.fail("expected 'in' in the for tag");
                t.expr = ps.tuple_expression(false);
                if (!t.expr) return false;
                if (ps.word("if")) {
                    t.cond = ps.expression(false);
                    if (!t.cond) return false;
                }
                t.recursive = ps.word("recursive");
                break;
            case K_SET: {
                // ns.attr = value | a, b = value | name (block form)
                const char * save = ps.p;
                jname first;
                if (!ps.ident(&first)) return ps.fail("expected a variable name after set");
                ps.ws();
                if (ps.p < ps.end && *ps.p == '.') {
                    ps.p++;
                    jname attr;
                    if (!ps.ident(&attr)) return ps.fail("expected a name after '.'");
                    t.ns = first;
                    t.names = (jname *) ps.alloc(sizeof(jname));
                    if (!t.names) return false;
                    t.names[0] = attr;
                    t.n_names = 1;
                } else {
                    ps.p = save;
                    if (!ps.names(&t.names, &t.n_names)) return false;
                }
                if (ps.sym("=")) {
                    t.expr = ps.tuple_expression(true);
                    if (!t.expr) return false;
                } else if (t.ns.s || t.n_names != 1) {
                    return ps.fail("expected '=' in the set tag");
                }
                break;
            }
            case K_MACRO: {
                jname n;
                if (!ps.ident(&n)) return ps.fail("expected the macro's name");
                t.ns = n;   // the macro's name travels in ns
                if (!ps.macro_params(&t.params, &t.n_params)) return false;
                break;
            }
            case K_CALL:
                // {% call [(params)] macro(args) %}: the caller's parameters, then the call.
                ps.ws();
                if (ps.p < ps.end && *ps.p == '(' && !ps.macro_params(&t.params, &t.n_params)) return false;
                t.expr = ps.expression();
                if (!t.expr) return false;
                if (t.expr->kind != JX_CALL) return ps.fail("{%% call %%} needs a macro call");
                break;
            case K_WITH: {
                // name = value, ... (none: a scope alone)
                uint32_t cap = 0;
                for (ps.ws(); !ps.at_close(); ps.ws()) {
                    if (t.n_params > 0 && !ps.sym(",")) return ps.fail("expected ',' in the with tag");
                    jname nm;
                    if (!ps.ident(&nm)) return ps.fail("expected a name in the with tag");
                    if (!ps.sym("=")) return ps.fail("expected '=' after '%.*s' in the with tag", (int) nm.n, nm.s);
                    jarg a;
                    memset(&a, 0, sizeof(a));
                    a.name = nm.s;
                    a.name_len = nm.n;
                    a.value = ps.expression();
                    if (!a.value || !ps.push_arg(&t.params, &t.n_params, &cap, a)) return false;
                }
                break;
            }
            case K_FILTER: {
                // A filter expression without its operand: name(args) | name2 ...
                jexpr * chain = NULL;
                do {
                    jname fname;
                    uint32_t at = ps.pos();
                    if (!ps.ident(&fname)) return ps.fail("expected a filter name");
                    const int id = jinja_filter_id(fname.s, fname.n);  // unknown: fails when it runs
                    jexpr * f = ps.node(JX_FILTER, at);
                    if (!f) return false;
                    f->id = id < 0 ? k_jinja_unknown_id : (uint16_t) id;
                    if (id < 0) f->lit = ps.name_value(fname);
                    f->a = chain;
                    ps.ws();
                    if (ps.p < ps.end && *ps.p == '(' && !ps.call_args(&f->args, &f->n_args)) return false;
                    chain = f;
                } while (ps.sym("|"));
                t.expr = chain;
                break;
            }
            default:
                break;
        }
        if (!ps.block_close(&strip, &keep)) return false;
        t.post_strip = strip;
        t.post_keep = keep;
        return true;
    }
};

bool is_text_space(char c) { return is_space(c); }

// minja's trimming of text tokens (trim_blocks, lstrip_blocks, "-" markers, the last newline).
void trim_texts(token * toks, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        token & t = toks[i];
        if (t.type != T_TEXT) continue;
        const bool pre_strip = i > 0 && toks[i - 1].post_strip;
        const bool post_strip = i + 1 < n && toks[i + 1].pre_strip;
        const char * s = t.text;
        uint32_t len = t.text_len;
        if (post_strip) {
            while (len > 0 && is_text_space(s[len - 1])) len--;
        } else if (i + 1 < n && !toks[i + 1].pre_keep) {   // lstrip_blocks
            uint32_t k = len;
            while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t')) k--;
            if ((k == 0 && i == 0) || (k > 0 && s[k - 1] == '\n')) len = k;
        }
        if (pre_strip) {
            while (len > 0 && is_text_space(*s)) { s++; len--; }
        } else if (i > 0 && toks[i - 1].type != T_EXPR && !toks[i - 1].post_keep) {   // trim_blocks
            if (len > 0 && *s == '\n') { s++; len--; }
        }
        if (i + 1 == n && len > 0 && s[len - 1] == '\n') {   // keep_trailing_newline off
            len--;
            if (len > 0 && s[len - 1] == '\r') len--;
        }
        t.text = s;
        t.text_len = len;
    }
}

// Tokens -> nodes. Stops at a token that ends the caller's body.
struct builder {
    parser & ps;
    token *  toks;
    uint32_t n;
    uint32_t i;

    bool ends_body(const token & t) const {
        return t.type == T_BLOCK && (t.kw == K_ELIF || t.kw == K_ELSE || t.kw == K_ENDIF || t.kw == K_ENDFOR ||
                                     t.kw == K_ENDSET || t.kw == K_ENDMACRO || t.kw == K_ENDFILTER ||
                                     t.kw == K_ENDGENERATION || t.kw == K_ENDCALL || t.kw == K_ENDWITH);
    }

    jnode * make(uint8_t kind, const token & t) {
        jnode * nd = (jnode *) ps.alloc(sizeof(jnode));
        if (nd) {
            nd->kind = kind;
            nd->pos = t.pos;
        }
        return nd;
    }

    bool expect_end(uint8_t kw, const token & opener, const char * what) {
        if (i >= n || toks[i].type != T_BLOCK || toks[i].kw != kw) {
            ps.p = ps.src + opener.pos;
            return ps.fail("%s without its end tag", what);
        }
        i++;
        return true;
    }

    // A block tag's node: its body up to the end tag, with the tag's
    // expression and parameters (NULL / none where the tag has them not).
    jnode * block(uint8_t kind, const token & t, uint8_t end_kw, const char * what) {
        jnode * nd = make(kind, t);
        if (!nd || !body(&nd->body)) return NULL;
        nd->expr = t.expr;
        nd->params = t.params;
        nd->n_params = t.n_params;
        return expect_end(end_kw, t, what) ? nd : NULL;
    }

    // A body: nodes up to a token ending it (not consumed) or the end.
    bool body(jnode ** out) {
        if (!ps.enter()) return false;
        jnode * head = NULL, ** tail = &head;
        while (i < n && !ps.failed) {
            const token & t = toks[i];
            if (ends_body(t)) break;
            i++;
            jnode * nd = NULL;
            switch (t.type) {
                case T_COMMENT: continue;
                case T_TEXT:
                    if (t.text_len == 0) continue;
                    nd = make(JN_TEXT, t);
                    if (!nd) return false;
                    nd->text = t.text;
                    nd->text_len = t.text_len;
                    break;
                case T_EXPR:
                    nd = make(JN_EXPR, t);
                    if (!nd) return false;
                    nd->expr = t.expr;
                    break;
                default:
                    nd = block(t);
                    if (!nd) return false;
                    break;
            }
            *tail = nd;
            tail = &nd->next;
        }
        ps.depth--;
        *out = head;
        return !ps.failed;
    }

    jnode * block(const token & t) {
        jnode * nd = NULL;
        switch (t.kw) {
            case K_IF: {
                nd = make(JN_IF, t);
                if (!nd || !body(&nd->body)) return NULL;
                nd->expr = t.expr;
                jnode * cur = nd;
                while (i < n && toks[i].kw == K_ELIF && toks[i].type == T_BLOCK) {
                    const token & e = toks[i++];
                    jnode * el = make(JN_IF, e);
                    if (!el || !body(&el->body)) return NULL;
                    el->expr = e.expr;
                    cur->else_body = el;
                    cur = el;
                }
                if (i < n && toks[i].type == T_BLOCK && toks[i].kw == K_ELSE) {
                    i++;
                    if (!body(&cur->else_body)) return NULL;
                }
                if (!expect_end(K_ENDIF, t, "{% if %}")) return NULL;
                return nd;
            }
            case K_FOR:
                nd = make(JN_FOR, t);
                if (!nd || !body(&nd->body)) return NULL;
                nd->expr = t.expr;
                nd->cond = t.cond;
                nd->names = t.names;
                nd->n_names = t.n_names;
                nd->recursive = t.recursive;
                if (i < n && toks[i].type == T_BLOCK && toks[i].kw == K_ELSE) {
                    i++;
                    if (!body(&nd->else_body)) return NULL;
                }
                if (!expect_end(K_ENDFOR, t, "{% for %}")) return NULL;
                return nd;
            case K_SET:
                if (t.expr) {
                    nd = make(JN_SET, t);
                    if (!nd) return NULL;
                    nd->expr = t.expr;
                    nd->names = t.names;
                    nd->n_names = t.n_names;
                    nd->ns = t.ns;
                    return nd;
                }
                nd = block(JN_SET_BLOCK, t, K_ENDSET, "{% set %}");
                if (nd) nd->name = t.names[0];
                return nd;
            case K_MACRO:
                nd = block(JN_MACRO, t, K_ENDMACRO, "{% macro %}");
                if (nd) nd->name = t.ns;
                return nd;
            case K_FILTER: return block(JN_FILTER, t, K_ENDFILTER, "{% filter %}");
            case K_CALL:
                // The body is the macro "caller" the called macro may call.
                nd = block(JN_CALL, t, K_ENDCALL, "{% call %}");
                if (nd) nd->name = jname{"caller", 6};
                return nd;
            case K_WITH: return block(JN_WITH, t, K_ENDWITH, "{% with %}");
            case K_GENERATION: return block(JN_BLOCK, t, K_ENDGENERATION, "{% generation %}");
            case K_BREAK: return make(JN_BREAK, t);
            case K_CONTINUE: return make(JN_CONTINUE, t);
            default:
                ps.p = ps.src + t.pos;
                ps.fail("unexpected tag");
                return NULL;
        }
    }
};

}  // namespace

tern_status jinja_parse(const char * src, size_t len, jmem * m, const jinja_limits * lim, jtemplate * out, char * err,
                        size_t err_size) {
    parser ps;
    memset(&ps, 0, sizeof(ps));
    ps.src = ps.p = src;
    ps.end = src + len;
    ps.m = m;
    ps.max_depth = lim->max_depth;
    tokenizer tz = {ps, NULL, 0, 0};
    bool ok = tz.run();
    jnode * root = NULL;
    if (ok) {
        trim_texts(tz.toks, tz.n);
        builder b = {ps, tz.toks, tz.n, 0};
        ok = b.body(&root);
        if (ok && b.i < b.n) {
            ps.p = src + tz.toks[b.i].pos;
            ps.fail("unexpected end tag (nothing open to end)");
            ok = false;
        }
    }
    if (!ok) {
        if (err && err_size) {
            size_t line = 1, col = 1;
            for (size_t k = 0; k < ps.err_pos && k < len; k++) {
                if (src[k] == '\n') { line++; col = 1; }
                else if (((unsigned char) src[k] & 0xc0) != 0x80) col++;
            }
            snprintf(err, err_size, "line %zu, column %zu: %s", line, col, ps.msg);
        }
        return ps.oom || strstr(ps.msg, "out of memory") ? TERN_ERR_NO_MEMORY : TERN_ERR_INVALID_ARG;
    }
    out->src = src;
    out->len = len;
    out->root = root;
    return TERN_OK;
}

}  // namespace tern
