// Jinja builtins (see jinja.h): filters, tests, global functions, the methods
// of strings, lists and dicts, and strftime. Semantics are Jinja2's / Python's
// unless minja (llama.cpp's --jinja, the reference for the output) differs on
// purpose: default() also replaces none, "is defined" / "is none" treat none
// and undefined alike, escape writes &#34; and &apos;.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/jinja_ast.h"
#include "chat/jinja_text.h"
#include "core/json.h"

namespace tern {

namespace {

enum filter_id {
    F_ABS, F_ATTR, F_BATCH, F_CAPITALIZE, F_CENTER, F_COUNT, F_D, F_DEFAULT, F_DICTSORT, F_E,
    F_ESCAPE, F_FILESIZEFORMAT, F_FIRST, F_FLOAT, F_FORCEESCAPE, F_FORMAT, F_GROUPBY, F_INDENT, F_INT, F_ITEMS,
    F_JOIN, F_LAST, F_LENGTH, F_LIST, F_LOWER, F_MAP, F_MAX, F_MIN, F_PPRINT, F_RANDOM,
    F_REJECT, F_REJECTATTR, F_REPLACE, F_REVERSE, F_ROUND, F_SAFE, F_SELECT, F_SELECTATTR, F_SLICE, F_SORT,
    F_STRING, F_STRIPTAGS, F_SUM, F_TITLE, F_TOJSON, F_TRIM, F_TRUNCATE, F_UNIQUE, F_UPPER, F_URLENCODE,
    F_WORDCOUNT, F_WORDWRAP, F_XMLATTR, F_COUNT_FILTERS
};

const char * const FILTERS[F_COUNT_FILTERS] = {
    "abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e", "escape",
    "filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent", "int", "items", "join", "last",
    "length", "list", "lower", "map", "max", "min", "pprint", "random", "reject", "rejectattr", "replace",
    "reverse", "round", "safe", "select", "selectattr", "slice", "sort", "string", "striptags", "sum", "title",
    "tojson", "trim", "truncate", "unique", "upper", "urlencode", "wordcount", "wordwrap", "xmlattr",
};

enum test_id {
    T_BOOLEAN, T_CALLABLE, T_DEFINED, T_DIVISIBLEBY, T_EQ, T_EQUALTO, T_EQ_SYM, T_ESCAPED, T_EVEN,
    T_FALSE, T_FILTER, T_FLOAT, T_GE, T_GE_SYM, T_GREATERTHAN, T_GT, T_GT_SYM, T_IN,
    T_INTEGER, T_ITERABLE, T_LE, T_LE_SYM, T_LESSTHAN, T_LOWER, T_LT, T_LT_SYM, T_MAPPING,
    T_NE, T_NE_SYM, T_NONE, T_NUMBER, T_ODD, T_SAMEAS, T_SEQUENCE, T_STRING, T_TEST,
    T_TRUE, T_UNDEFINED, T_UPPER, T_COUNT_TESTS
};

const char * const TESTS[T_COUNT_TESTS] = {
    "boolean", "callable", "defined", "divisibleby", "eq", "equalto", "==", "escaped", "even", "false", "filter", "float",
    "ge", ">=", "greaterthan", "gt", ">", "in", "integer", "iterable", "le", "<=", "lessthan", "lower",
    "lt", "<", "mapping", "ne", "!=", "none", "number", "odd", "sameas", "sequence", "string", "test",
    "true", "undefined", "upper",
};

const char * const GLOBALS[] = {"range", "namespace", "dict", "raise_exception", "joiner", "cycler", "strftime_now"};

bool name_is(const char * a, size_t n, const char * z) { return strlen(z) == n && memcmp(a, z, n) == 0; }

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// A keyword argument by name, else positional index i, else NULL.
const jv * arg(const jcall & c, uint32_t i, const char * name) {
    for (uint32_t k = 0; k < c.n_kw; k++) {
        if (name_is(c.kw[k].s, c.kw[k].n, name)) return &c.kwv[k];
    }
    return i < c.n_pos ? &c.pos[i] : NULL;
}

bool arg_int(jrender * r, const jv * a, int64_t dflt, int64_t * out) {
    if (!a || jv_null(*a)) { *out = dflt; return true; }
    if (a->t == J_INT) { *out = a->i; return true; }
    if (a->t == J_BOOL) { *out = a->b; return true; }
    if (a->t == J_FLOAT) { *out = (int64_t) a->d; return true; }
    return jfail(r, "expected an integer argument");
}

bool is_digit_in(char ch, int base) {
    const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'Z' ? ch - 'A' + 10 : 99;
    return d < base;
}

// Python's int(text, base): blanks around it, a sign, the base's prefix (0x
// 0o 0b; base 0 reads it, or decimal without leading zeros), digits with
// single underscores between them. 0 when the text is no such number, -1
// when it is one beyond 64 bits, else 1.
int py_int(const jv & s, int64_t base, int64_t * out) {
    if (base != 0 && (base < 2 || base > 36)) return 0;
    uint32_t i = 0, e = s.n;
    while (i < e && is_ws(s.s[i])) i++;
    while (e > i && is_ws(s.s[e - 1])) e--;
    bool neg = false;
    if (i < e && (s.s[i] == '+' || s.s[i] == '-')) neg = s.s[i++] == '-';
    bool prefixed = false;
    if (i + 1 < e && s.s[i] == '0') {
        const char p = (char) (s.s[i + 1] | 0x20);
        const int64_t pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
        if (pb && (base == 0 || base == pb)) {
            base = pb;
            i += 2;
            prefixed = true;
        }
    }
    if (base == 0) {   // decimal: "0", "00", or no leading zero
        base = 10;
        uint32_t k = i;
        while (k < e && (s.s[k] == '0' || s.s[k] == '_')) k++;
        if (k > i && k < e) return 0;
    }
    if (i < e && s.s[i] == '_' && prefixed) i++;   // "0x_ff"
    if (i >= e) return 0;
    uint64_t m = 0;
    bool big = false;
    for (uint32_t k = i; k < e; k++) {
        if (s.s[k] == '_') {
            if (k == i || k + 1 >= e || s.s[k - 1] == '_' || !is_digit_in(s.s[k + 1], (int) base)) return 0;
            continue;
        }
        if (!is_digit_in(s.s[k], (int) base)) return 0;
        const char ch = s.s[k];
        const uint64_t d = (uint64_t) (ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
        if (m > (UINT64_MAX - d) / (uint64_t) base) big = true;
        else m = m * (uint64_t) base + d;
    }
    if (big || m > (uint64_t) INT64_MAX + (neg ? 1 : 0)) return -1;
    *out = neg ? (int64_t) (0 - m) : (int64_t) m;
    return 1;
}

// Python's float(text): blanks around it, a decimal number (underscores
// between digits), inf, infinity or nan.
bool py_float(const jv & s, double * out) {
    char buf[128];
    uint32_t i = 0, e = s.n;
    while (i < e && is_ws(s.s[i])) i++;
    while (e > i && is_ws(s.s[e - 1])) e--;
    if (i == e || e - i >= sizeof(buf)) return false;
    size_t k = 0;
    for (uint32_t q = i; q < e; q++) {
        const char ch = s.s[q];
        if (ch == '_') {
            if (q == i || q + 1 >= e || !is_digit_in(s.s[q - 1], 10) || !is_digit_in(s.s[q + 1], 10)) return false;
            continue;
        }
        if (ch == 'x' || ch == 'X' || ch == '(' || ch == 'p' || ch == 'P' || ch == 0) return false;   // strtod's hex and nan(...) forms
        buf[k++] = ch;
    }
    buf[k] = 0;
    char * end;
    const double d = strtod(buf, &end);
    if (end != buf + k) return false;
    *out = d;
    return true;
}

bool arg_bool(const jv * a, bool dflt) { return a && !jv_null(*a) ? jv_truthy(*a) : dflt; }

jv need_str(jrender * r, const jv & v, const char * what) {
    if (v.t == J_STR) return v;
    if (jv_null(v)) {
        jfail(r, "%s of an undefined value", what);
        return jv_str("", 0);
    }
    return jv_to_str(r, v);
}

jv list_of(jrender * r, const jv & v) {
    if (v.t == J_LIST) return v;
    jv l = jv_new_list(r, 0);
    if (v.t == J_DICT) {
        for (uint32_t i = 0; i < v.o->n; i++) jlist_push(r, l.l, v.o->k[i]);
    } else if (v.t == J_STR) {
        for (uint32_t i = 0; i < v.n;) {
            uint32_t k = 1;
            while (i + k < v.n && ((unsigned char) v.s[i + k] & 0xc0) == 0x80) k++;
            jlist_push(r, l.l, jv_str(v.s + i, k));
            i += k;
        }
    } else if (!jv_null(v)) {
        jfail(r, "this value is not iterable");
    }
    return l;
}

jv strip_str(jrender * r, const jv & v, const jv * chars, bool left, bool right) {
    jv s = need_str(r, v, "strip");
    const char * p = s.s;
    size_t n = s.n;
    auto strip_it = [&](char c) {
        if (!chars || jv_null(*chars)) return is_ws(c);
        return memchr(chars->s, c, chars->n) != NULL;
    };
    if (chars && !jv_null(*chars) && chars->t != J_STR) {
        jfail(r, "strip() takes a string of characters");
        return s;
    }
    while (left && n > 0 && strip_it(*p)) { p++; n--; }
    while (right && n > 0 && strip_it(p[n - 1])) n--;
    return jv_str(p, (uint32_t) n);
}

// 0 lower, 1 upper, 2 str.title (a capital after every uncased character),
// 3 capitalize, 4 the title filter (a capital after - ( { [ < and blanks only).
jv case_map(jrender * r, const jv & v, int mode) {
    jv s = need_str(r, v, "changing the case");
    char * d = (char *) jmem_alloc(r->m, s.n + 1);
    if (!d) { jfail(r, "out of memory"); return s; }
    bool prev_cased = false;
    for (uint32_t i = 0; i < s.n; i++) {
        char c = s.s[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        bool up;
        if (mode == 0) up = false;
        else if (mode == 1) up = true;
        else if (mode == 2) up = !prev_cased;
        else if (mode == 4) up = i == 0 || (s.s[i - 1] && strchr("-({[<", s.s[i - 1])) || is_ws(s.s[i - 1]);
        else up = i == 0;
        if (alpha) c = up ? (char) (c & ~0x20) : (char) (c | 0x20);
        d[i] = c;
        prev_cased = alpha || (((unsigned char) c) >= 0x80 && prev_cased);
    }
    d[s.n] = 0;
    return jv_str(d, s.n);
}

jv replace_str(jrender * r, const jv & v, const jv * old_v, const jv * new_v, const jv * count_v) {
    jv s = need_str(r, v, "replace");
    if (!old_v || !new_v || old_v->t != J_STR || new_v->t != J_STR) {
        jfail(r, "replace() takes two strings");
        return s;
    }
    int64_t count = -1;
    if (!arg_int(r, count_v, -1, &count)) return s;
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    uint32_t i = 0;
    int64_t done = 0;
    while (i <= s.n && !r->failed) {
        if ((count < 0 || done < count) && old_v->n == 0) {
            jbuf_put(&out, new_v->s, new_v->n);
            done++;
            if (i < s.n) jbuf_put(&out, s.s + i, 1);
            i++;
            continue;
        }
        if ((count < 0 || done < count) && old_v->n > 0 && i + old_v->n <= s.n && memcmp(s.s + i, old_v->s, old_v->n) == 0) {
            jbuf_put(&out, new_v->s, new_v->n);
            i += old_v->n;
            done++;
        } else {
            if (i < s.n) jbuf_put(&out, s.s + i, 1);
            i++;
        }
    }
    return jbuf_value(&out);
}

jv split_str(jrender * r, const jv & v, const jv * sep, const jv * maxsplit_v) {
    jv s = need_str(r, v, "split");
    int64_t maxsplit = -1;
    if (!arg_int(r, maxsplit_v, -1, &maxsplit)) return jv_undef();
    jv l = jv_new_list(r, 0);
    if (!sep || jv_null(*sep)) {   // runs of whitespace, no empty parts
        uint32_t i = 0;
        int64_t n = 0;
        while (i < s.n) {
            while (i < s.n && is_ws(s.s[i])) i++;
            if (i >= s.n) break;
            if (maxsplit >= 0 && n >= maxsplit) {
                uint32_t e = s.n;
                while (e > i && is_ws(s.s[e - 1])) e--;
                jlist_push(r, l.l, jv_str(s.s + i, e - i));
                break;
            }
            uint32_t b = i;
            while (i < s.n && !is_ws(s.s[i])) i++;
            jlist_push(r, l.l, jv_str(s.s + b, i - b));
            n++;
        }
        return l;
    }
    if (sep->t != J_STR || sep->n == 0) {
        jfail(r, "split() needs a non-empty separator");
        return l;
    }
    uint32_t b = 0;
    int64_t n = 0;
    for (uint32_t i = 0; i + sep->n <= s.n;) {
        if ((maxsplit < 0 || n < maxsplit) && memcmp(s.s + i, sep->s, sep->n) == 0) {
            jlist_push(r, l.l, jv_str(s.s + b, i - b));
            i += sep->n;
            b = i;
            n++;
        } else {
            i++;
        }
    }
    jlist_push(r, l.l, jv_str(s.s + b, s.n - b));
    return l;
}

// Python's str.rsplit: split_str from the right end (the same parts when
// maxsplit is negative).
jv rsplit_str(jrender * r, const jv & v, const jv * sep, const jv * maxsplit_v) {
    int64_t maxsplit = -1;
    if (!arg_int(r, maxsplit_v, -1, &maxsplit)) return jv_undef();
    if (maxsplit < 0) return split_str(r, v, sep, maxsplit_v);
    jv s = need_str(r, v, "rsplit");
    jv l = jv_new_list(r, 0);
    if (sep && !jv_null(*sep) && (sep->t != J_STR || sep->n == 0)) {
        jfail(r, "rsplit() needs a non-empty separator");
        return l;
    }
    // Parts found from the right, pushed in that order, then reversed.
    uint32_t e = s.n;
    int64_t n = 0;
    if (!sep || jv_null(*sep)) {
        for (;;) {
            while (e > 0 && is_ws(s.s[e - 1])) e--;
            if (e == 0) break;
            if (n >= maxsplit) {
                uint32_t b = 0;
                while (b < e && is_ws(s.s[b])) b++;
                jlist_push(r, l.l, jv_str(s.s + b, e - b));
                break;
            }
            uint32_t b = e;
            while (b > 0 && !is_ws(s.s[b - 1])) b--;
            jlist_push(r, l.l, jv_str(s.s + b, e - b));
            e = b;
            n++;
        }
    } else {
        uint32_t i = s.n;
        while (i >= sep->n && n < maxsplit) {
            if (memcmp(s.s + i - sep->n, sep->s, sep->n) == 0) {
                jlist_push(r, l.l, jv_str(s.s + i, e - i));
                i -= sep->n;
                e = i;
                n++;
            } else {
                i--;
            }
        }
        jlist_push(r, l.l, jv_str(s.s, e));
    }
    for (uint32_t a = 0, b = l.l->n; a + 1 < b; a++, b--) {
        jv t = l.l->v[a];
        l.l->v[a] = l.l->v[b - 1];
        l.l->v[b - 1] = t;
    }
    return l;
}

bool affix(jrender * r, const jv & s, const jv * a, bool prefix) {
    if (!a) return jfail(r, "%s() needs an argument", prefix ? "startswith" : "endswith");
    if (a->t == J_LIST) {
        for (uint32_t i = 0; i < a->l->n; i++) {
            if (affix(r, s, &a->l->v[i], prefix)) return true;
        }
        return false;
    }
    if (a->t != J_STR) return jfail(r, "%s() takes a string", prefix ? "startswith" : "endswith");
    if (a->n > s.n) return false;
    return memcmp(prefix ? s.s : s.s + s.n - a->n, a->s, a->n) == 0;
}

int64_t find_str(const jv & s, const jv & sub, bool last) {
    if (sub.n > s.n) return -1;
    int64_t found = -1;
    for (uint32_t i = 0; i + sub.n <= s.n; i++) {
        if (memcmp(s.s + i, sub.s, sub.n) == 0) {
            found = i;
            if (!last) break;
        }
    }
    if (found < 0) return -1;
    return (int64_t) utf8_cp_count(s.s, (size_t) found);
}

// tojson: minja's JSON form (", " and ": "), with json.dumps' indent,
// sort_keys, separators and ensure_ascii (non-ASCII escaped).
jv to_json(jrender * r, const jv & v, const jcall & c) {
    jjson_style st = {-1, false, jv_undef(), jv_undef()};
    int64_t indent = -1;
    const jv * ind = arg(c, 1, "indent");
    if (ind && !jv_null(*ind) && !arg_int(r, ind, -1, &indent)) return jv_undef();
    if (indent > 256) { jfail(r, "tojson() indent too large"); return jv_undef(); }
    st.indent = (int) indent;
    st.sort_keys = arg_bool(arg(c, 99, "sort_keys"), false);
    if (const jv * sep = arg(c, 99, "separators"); sep && !jv_null(*sep)) {
        if (sep->t != J_LIST || sep->l->n != 2 || sep->l->v[0].t != J_STR || sep->l->v[1].t != J_STR) {
            jfail(r, "tojson() separators must be two strings");
            return jv_undef();
        }
        st.item_sep = sep->l->v[0];
        st.key_sep = sep->l->v[1];
    }
    jbuf b;
    jbuf_init(&b, r, r->lim.max_output);
    jv_write_json(r, &b, v, st);
    jv out = jbuf_value(&b);
    if (arg_bool(arg(c, 99, "ensure_ascii"), false) && !r->failed) {
        jbuf e;
        jbuf_init(&e, r, r->lim.max_output);
        for (uint32_t i = 0; i < out.n;) {
            unsigned char ch = (unsigned char) out.s[i];
            if (ch < 0x80) { jbuf_put(&e, out.s + i, 1); i++; continue; }
            uint32_t len = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2, cp = ch & (0x7f >> len);
            for (uint32_t k = 1; k < len && i + k < out.n; k++) cp = (cp << 6) | (out.s[i + k] & 0x3f);
            char u[16];
            if (cp >= 0x10000) {
                cp -= 0x10000;
                snprintf(u, sizeof(u), "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            } else {
                snprintf(u, sizeof(u), "\\u%04x", cp);
            }
            jbuf_puts(&e, u);
            i += len;
        }
        out = jbuf_value(&e);
    }
    return out;
}

// Jinja2's attribute getter (map, sort, groupby, ...): a dict's key, a list's
// index (an integer, or digits), a named tuple's field; "a.b.0" walks a path.
jv attr_step(const jv & cur, const char * name, size_t n) {
    if (cur.t == J_DICT) {
        jv * f = jdict_find(cur.o, name, n);
        return f ? *f : jv_undef();
    }
    if (cur.t == J_LIST) {
        if (jv * f = jlist_field(cur.l, name, n)) return *f;
        uint64_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (name[i] < '0' || name[i] > '9' || k > UINT32_MAX) return jv_undef();
            k = k * 10 + (uint64_t) (name[i] - '0');
        }
        return n > 0 && k < cur.l->n ? cur.l->v[k] : jv_undef();
    }
    return jv_undef();
}

jv attr_of(jrender * r, const jv & item, const jv & name) {
    (void) r;
    if (name.t == J_INT) {
        if (item.t == J_LIST) return name.i >= 0 && name.i < (int64_t) item.l->n ? item.l->v[name.i] : jv_undef();
        if (item.t == J_DICT) {
            jv * f = jdict_find_v(item.o, name);
            return f ? *f : jv_undef();
        }
        return jv_undef();
    }
    if (name.t != J_STR) return jv_undef();
    jv cur = item;
    uint32_t b = 0;
    for (uint32_t i = 0; i <= name.n; i++) {
        if (i == name.n || name.s[i] == '.') {
            cur = attr_step(cur, name.s + b, i - b);
            if (cur.t == J_UNDEF) return cur;
            b = i + 1;
        }
    }
    return cur;
}

// A test by name (select / reject / selectattr).
bool test_by_name(jrender * r, const jv & name, const jv & v, const jcall & rest) {
    if (name.t != J_STR) return jfail(r, "expected a test name");
    int id = jinja_test_id(name.s, name.n);
    if (id < 0) return jfail(r, "unknown test '%s'", name.s);
    return jinja_apply_test(r, id, v, rest);
}

jcall shift(const jcall & c, uint32_t k) {
    jcall s = c;
    s.pos = c.pos + (k < c.n_pos ? k : c.n_pos);
    s.n_pos = k < c.n_pos ? c.n_pos - k : 0;
    return s;
}

// Jinja2's sort key: the item or its attribute (several, comma-separated:
// a list of keys compared in order), strings lower-cased unless case_sensitive.
jv sort_key(jrender * r, const jv & x, const jv * attribute, bool case_sensitive) {
    auto fold = [&](const jv & k) { return !case_sensitive && k.t == J_STR ? case_map(r, k, 0) : k; };
    if (!attribute || jv_null(*attribute)) return fold(x);
    if (attribute->t != J_STR || !memchr(attribute->s, ',', attribute->n)) return fold(attr_of(r, x, *attribute));
    jv keys = jv_new_list(r, 0);
    for (uint32_t i = 0, b = 0; i <= attribute->n && !r->failed; i++) {
        if (i < attribute->n && attribute->s[i] != ',') continue;
        jlist_push(r, keys.l, fold(attr_of(r, x, jv_str(attribute->s + b, i - b))));
        b = i + 1;
    }
    return keys;
}

jv sorted(jrender * r, const jv & v, const jcall & c) {
    jv items = list_of(r, v);
    const bool reverse = arg_bool(arg(c, 0, "reverse"), false);
    const bool case_sensitive = arg_bool(arg(c, 1, "case_sensitive"), false);
    const jv * attribute = arg(c, 2, "attribute");
    const uint32_t n = items.l->n;
    jv out = jv_new_list(r, n);
    jv * key = (jv *) jmem_alloc(r->m, sizeof(jv) * (n ? n : 1));   // computed once
    if (!key) { jfail(r, "out of memory"); return out; }
    for (uint32_t i = 0; i < n && !r->failed; i++) key[i] = sort_key(r, items.l->v[i], attribute, case_sensitive);
    const uint32_t * order = r->failed ? NULL : jv_sort_order(r, key, n, reverse);
    for (uint32_t i = 0; order && i < n && !r->failed; i++) jlist_push(r, out.l, items.l->v[order[i]]);
    return out;
}

// str.ljust (0), rjust (1) and center (2), with Python's placement of an odd
// padding in center; fill is one character.
jv pad_str(jrender * r, const jv & s, const jv * width_v, const jv * fill_v, int mode) {
    int64_t width = 0;
    if (!width_v || !arg_int(r, width_v, 0, &width)) { jfail(r, "a width is needed"); return jv_undef(); }
    jv fill = fill_v && !jv_null(*fill_v) ? *fill_v : jv_str(" ", 1);
    if (fill.t != J_STR || utf8_cp_count(fill.s, fill.n) != 1) { jfail(r, "the fill character must be exactly one character long"); return jv_undef(); }
    const int64_t len = utf8_cp_count(s.s, s.n);
    if (width <= len) return s;
    if (width - len > (int64_t) r->lim.max_output) { jfail(r, "a width larger than the output limit"); return jv_undef(); }
    const int64_t marg = width - len;
    const int64_t left = mode == 0 ? 0 : mode == 1 ? marg : marg / 2 + (marg & width & 1);
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    for (int64_t i = 0; i < left && !r->failed; i++) jbuf_put(&out, fill.s, fill.n);
    jbuf_put(&out, s.s, s.n);
    for (int64_t i = left; i < marg && !r->failed; i++) jbuf_put(&out, fill.s, fill.n);
    return jbuf_value(&out);
}

// Percent-encoding (urlencode): every byte but letters, digits, _ . - ~ and
// `safe`; in a query string (for_qs) a space is "+".
void url_quote(jbuf * out, const jv & s, const char * safe, bool for_qs) {
    for (uint32_t i = 0; i < s.n; i++) {
        const unsigned char ch = (unsigned char) s.s[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || (ch && strchr("_.-~", ch)) ||
            (ch && strchr(safe, ch))) {
            jbuf_put(out, s.s + i, 1);
        } else if (ch == ' ' && for_qs) {
            jbuf_put(out, "+", 1);
        } else {
            char hex[4];
            snprintf(hex, sizeof(hex), "%%%02X", ch);
            jbuf_put(out, hex, 3);
        }
    }
}

// markupsafe's escape (xmlattr): & < > " ' as &amp; &lt; &gt; &#34; &#39;.
void html_escape(jbuf * out, const jv & s) {
    for (uint32_t i = 0; i < s.n; i++) {
        switch (s.s[i]) {
            case '&': jbuf_puts(out, "&amp;"); break;
            case '<': jbuf_puts(out, "&lt;"); break;
            case '>': jbuf_puts(out, "&gt;"); break;
            case '"': jbuf_puts(out, "&#34;"); break;
            case '\'': jbuf_puts(out, "&#39;"); break;
            default: jbuf_put(out, s.s + i, 1); break;
        }
    }
}

// ---- dates (strftime_now) ----

// Days since 1970-01-01 -> civil date (Howard Hinnant's algorithm).
void civil(int64_t days, int * y, int * m, int * d) {
    days += 719468;
    const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    const int64_t doe = days - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    *d = (int) (doy - (153 * mp + 2) / 5 + 1);
    *m = (int) (mp < 10 ? mp + 3 : mp - 9);
    *y = (int) (yoe + era * 400 + (*m <= 2));
}

}  // namespace

jv jinja_strftime(jrender * r, const char * fmt, size_t fmt_len) {
    static const char * const MON[12] = {"January", "February", "March", "April", "May", "June", "July", "August",
                                         "September", "October", "November", "December"};
    static const char * const DAY[7] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
    const int64_t t = r->clock.now + r->clock.utc_offset;
    int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
    int64_t secs = t - days * 86400;
    int y, mo, d;
    civil(days, &y, &mo, &d);
    const int wday = (int) (((days % 7) + 11) % 7);   // 1970-01-01 was a Thursday
    const int hh = (int) (secs / 3600), mm = (int) (secs / 60 % 60), ss = (int) (secs % 60);
    int64_t jan1 = 0;
    {
        // Day of the year: days since Jan 1 of year y.
        int64_t yy = y - 1;
        int64_t days_before = 365 * (yy - 1969) + (yy / 4 - 1969 / 4) - (yy / 100 - 1969 / 100) + (yy / 400 - 1969 / 400);
        jan1 = days - days_before;
    }
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    char b[64];
    for (size_t i = 0; i < fmt_len && !r->failed; i++) {
        char ch = fmt[i];
        if (ch != '%' || i + 1 >= fmt_len) { jbuf_put(&out, &ch, 1); continue; }
        char k = fmt[++i];
        b[0] = 0;
        switch (k) {
            case 'Y': snprintf(b, sizeof(b), "%d", y); break;
            case 'y': snprintf(b, sizeof(b), "%02d", y % 100); break;
            case 'm': snprintf(b, sizeof(b), "%02d", mo); break;
            case 'd': snprintf(b, sizeof(b), "%02d", d); break;
            case 'e': snprintf(b, sizeof(b), "%2d", d); break;
            case 'b': case 'h': snprintf(b, sizeof(b), "%.3s", MON[mo - 1]); break;
            case 'B': snprintf(b, sizeof(b), "%s", MON[mo - 1]); break;
            case 'a': snprintf(b, sizeof(b), "%.3s", DAY[wday]); break;
            case 'A': snprintf(b, sizeof(b), "%s", DAY[wday]); break;
            case 'H': snprintf(b, sizeof(b), "%02d", hh); break;
            case 'I': snprintf(b, sizeof(b), "%02d", hh % 12 == 0 ? 12 : hh % 12); break;
            case 'M': snprintf(b, sizeof(b), "%02d", mm); break;
            case 'S': snprintf(b, sizeof(b), "%02d", ss); break;
            case 'p': snprintf(b, sizeof(b), "%s", hh < 12 ? "AM" : "PM"); break;
            case 'j': snprintf(b, sizeof(b), "%03d", (int) jan1 + 1); break;
            case 'F': snprintf(b, sizeof(b), "%d-%02d-%02d", y, mo, d); break;
            case 'T': snprintf(b, sizeof(b), "%02d:%02d:%02d", hh, mm, ss); break;
            case 'D': snprintf(b, sizeof(b), "%02d/%02d/%02d", mo, d, y % 100); break;
            case 'u': snprintf(b, sizeof(b), "%d", wday == 0 ? 7 : wday); break;
            case 'w': snprintf(b, sizeof(b), "%d", wday); break;
            case '%': snprintf(b, sizeof(b), "%%"); break;
            default: snprintf(b, sizeof(b), "%%%c", k); break;
        }
        jbuf_puts(&out, b);
    }
    return jbuf_value(&out);
}

namespace {

jv strftime_now(jrender * r, const jcall & c) {
    const jv * f = arg(c, 0, "format");
    if (!f || f->t != J_STR) {
        jfail(r, "strftime_now() takes a format string");
        return jv_undef();
    }
    return jinja_strftime(r, f->s, f->n);
}

// Jinja2's groupby: items sorted (stably) by the attribute (lower-cased
// strings unless case_sensitive), runs of equal keys made (grouper, list)
// named tuples; the grouper is the first item's own value.
const char * const GROUP_FIELDS[2] = {"grouper", "list"};

jv group_by(jrender * r, const jv & v, const jcall & c) {
    const jv * attribute = arg(c, 0, "attribute");
    if (!attribute) { jfail(r, "groupby() needs an attribute"); return jv_undef(); }
    const jv * dflt = arg(c, 1, "default");
    const bool case_sensitive = arg_bool(arg(c, 2, "case_sensitive"), false);
    jv items = list_of(r, v);
    const uint32_t n = items.l->n;
    jv * key = (jv *) jmem_alloc(r->m, sizeof(jv) * (n ? n : 1));
    jv * folded = (jv *) jmem_alloc(r->m, sizeof(jv) * (n ? n : 1));
    if (!key || !folded) { jfail(r, "out of memory"); return jv_undef(); }
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        key[i] = attr_of(r, items.l->v[i], *attribute);
        if (jv_null(key[i]) && dflt) key[i] = *dflt;
        folded[i] = !case_sensitive && key[i].t == J_STR ? case_map(r, key[i], 0) : key[i];
    }
    const uint32_t * order = r->failed ? NULL : jv_sort_order(r, folded, n, false);
    if (!order) return jv_undef();
    jv out = jv_new_list(r, 0);
    for (uint32_t i = 0; i < n && !r->failed;) {
        const uint32_t first = order[i];
        jv members = jv_new_list(r, 0);
        while (i < n && jv_equal(folded[order[i]], folded[first]) && !r->failed) jlist_push(r, members.l, items.l->v[order[i++]]);
        jv group = jv_new_list(r, 2);
        jlist_push(r, group.l, key[first]);
        jlist_push(r, group.l, members);
        group.l->fields = GROUP_FIELDS;
        jlist_push(r, out.l, group);
    }
    return out;
}

// Jinja2's batch (rows of `count`, the last filled up with fill_with) and
// slice (`count` columns, the first len % count one longer, the others filled).
jv batch_or_slice(jrender * r, bool batch, const jv & v, const jcall & c) {
    const char * what = batch ? "batch" : "slice";
    const jv * count_v = arg(c, 0, batch ? "linecount" : "slices");
    int64_t count = 0;
    if (!count_v) { jfail(r, "%s() needs a count", what); return jv_undef(); }
    if (!arg_int(r, count_v, 0, &count)) return jv_undef();
    if (count <= 0) { jfail(r, "%s() needs a count above 0", what); return jv_undef(); }
    const jv * fill = arg(c, 1, "fill_with");
    const bool filled = fill && !jv_null(*fill);
    if (!jcharge(r, (uint64_t) count >> 3)) return jv_undef();   // up to `count` fills or columns
    jv items = list_of(r, v);
    const uint64_t n = items.l->n;
    jv out = jv_new_list(r, 0);
    if (batch) {
        for (uint64_t i = 0; i < n && !r->failed; i += (uint64_t) count) {
            jv row = jv_new_list(r, 0);
            for (uint64_t k = i; k < n && k < i + (uint64_t) count; k++) jlist_push(r, row.l, items.l->v[k]);
            while (filled && row.l->n < (uint64_t) count && !r->failed) jlist_push(r, row.l, *fill);
            jlist_push(r, out.l, row);
        }
        return out;
    }
    const uint64_t per = n / (uint64_t) count, extra = n % (uint64_t) count;
    uint64_t offset = 0;
    for (uint64_t s = 0; s < (uint64_t) count && !r->failed; s++) {
        const uint64_t start = offset + s * per;
        if (s < extra) offset++;
        const uint64_t end = offset + (s + 1) * per;
        jv col = jv_new_list(r, 0);
        for (uint64_t k = start; k < end; k++) jlist_push(r, col.l, items.l->v[k]);
        if (filled && s >= extra) jlist_push(r, col.l, *fill);
        jlist_push(r, out.l, col);
    }
    return out;
}

// A cycler(...): current, next() and reset() (Jinja2's Cycler).
struct cycler_state {
    jv       items;   // J_LIST
    uint32_t pos;
    jdict *  self;    // its "current" follows pos
};

struct joiner_state {
    jv   sep;
    bool used;
};

}  // namespace

int jinja_filter_id(const char * name, size_t n) {
    for (int i = 0; i < F_COUNT_FILTERS; i++) {
        if (name_is(name, n, FILTERS[i])) return i;
    }
    return -1;
}

const char * jinja_filter_name(int id) { return id >= 0 && id < F_COUNT_FILTERS ? FILTERS[id] : "?"; }

int jinja_test_id(const char * name, size_t n) {
    for (int i = 0; i < T_COUNT_TESTS; i++) {
        if (name_is(name, n, TESTS[i])) return i;
    }
    return -1;
}

bool jinja_has_global(const char * name, size_t n) {
    for (const char * g : GLOBALS) {
        if (name_is(name, n, g)) return true;
    }
    return jinja_filter_id(name, n) >= 0;
}

// A builtin walks its value and searches it for its string arguments (naive
// search: every offset times the needle): charged by those sizes (jcharge).
static bool charge_call(jrender * r, const jv & v, const jcall & c) {
    if (v.t != J_STR) {
        for (uint32_t i = 0; i < c.n_pos; i++) {
            if (!jcharge_size(r, c.pos[i])) return false;
        }
        return jcharge_size(r, v);
    }
    uint64_t blocks = 1;
    for (uint32_t i = 0; i < c.n_pos; i++) blocks += c.pos[i].t == J_STR ? c.pos[i].n >> 6 : 0;
    for (uint32_t i = 0; i < c.n_kw; i++) blocks += c.kwv[i].t == J_STR ? c.kwv[i].n >> 6 : 0;
    return jcharge(r, ((uint64_t) v.n * blocks) >> 6);
}

jv jinja_apply_filter(jrender * r, int id, const jv & v, const jcall & c) {
    if (r->failed || !charge_call(r, v, c)) return jv_undef();
    switch (id) {
        case F_ABS:
            if (v.t == J_INT) return jv_int(v.i < 0 ? -v.i : v.i);
            if (v.t == J_FLOAT) return jv_float(fabs(v.d));
            jfail(r, "abs of a value that is no number");
            return jv_undef();
        case F_ATTR: {
            const jv * name = arg(c, 0, "name");
            return name ? attr_of(r, v, *name) : jv_undef();
        }
        case F_CAPITALIZE: return case_map(r, case_map(r, v, 0), 3);
        case F_COUNT:
        case F_LENGTH:
            if (v.t == J_STR) return jv_int(utf8_cp_count(v.s, v.n));
            if (v.t == J_LIST) return jv_int(v.l->n);
            if (v.t == J_DICT) return jv_int(v.o->n);
            if (jv_null(v)) return jv_int(0);
            jfail(r, "length of a value that has none");
            return jv_undef();
        case F_D:
        case F_DEFAULT: {
            const jv * dflt = arg(c, 0, "default_value");
            const bool boolean = arg_bool(arg(c, 1, "boolean"), false);
            jv d = dflt ? *dflt : jv_str("", 0);
            if (boolean) return jv_truthy(v) ? v : d;
            return jv_null(v) ? d : v;
        }
        case F_DICTSORT: {   // (key, value) pairs sorted by key (or by="value"); case-sensitive unless told, as minja
            if (v.t != J_DICT) { jfail(r, "dictsort needs a dict"); return jv_undef(); }
            const jv * by = arg(c, 1, "by");
            bool by_value = false;
            if (by && !jv_null(*by)) {
                by_value = by->t == J_STR && by->n == 5 && !memcmp(by->s, "value", 5);
                if (!by_value && !(by->t == J_STR && by->n == 3 && !memcmp(by->s, "key", 3))) {
                    jfail(r, "dictsort: you can only sort by either \"key\" or \"value\"");
                    return jv_undef();
                }
            }
            jv pairs = jv_new_list(r, v.o->n);
            for (uint32_t i = 0; i < v.o->n && !r->failed; i++) {
                jv pair = jv_new_list(r, 2);
                jlist_push(r, pair.l, v.o->k[i]);
                jlist_push(r, pair.l, v.o->v[i]);
                jlist_push(r, pairs.l, pair);
            }
            jv opts[3] = {jv_bool(arg_bool(arg(c, 2, "reverse"), false)), jv_bool(arg_bool(arg(c, 0, "case_sensitive"), true)),
                          jv_int(by_value ? 1 : 0)};
            jcall sc = {opts, 3, NULL, NULL, 0};
            return sorted(r, pairs, sc);
        }
        case F_CENTER: {
            jv str = need_str(r, v, "center");
            const jv eighty = jv_int(80);
            const jv * w = arg(c, 0, "width");
            return r->failed ? jv_undef() : pad_str(r, str, w ? w : &eighty, NULL, 2);
        }
        case F_URLENCODE: {   // a string quoted; a dict or a list of pairs as a query string
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            if (v.t == J_DICT || v.t == J_LIST) {
                jv pairs = v.t == J_DICT ? jinja_apply_filter(r, F_ITEMS, v, c) : v;
                for (uint32_t i = 0; i < pairs.l->n && !r->failed; i++) {
                    const jv & p = pairs.l->v[i];
                    if (p.t != J_LIST || p.l->n != 2) { jfail(r, "urlencode: a list of (key, value) pairs is needed"); break; }
                    if (i) jbuf_put(&out, "&", 1);
                    url_quote(&out, jv_to_str(r, p.l->v[0]), "", true);
                    jbuf_put(&out, "=", 1);
                    url_quote(&out, jv_to_str(r, p.l->v[1]), "", true);
                }
            } else {
                url_quote(&out, jv_to_str(r, v), "/", false);
            }
            return jbuf_value(&out);
        }
        case F_XMLATTR: {   // key="value" for each value that is not none, escaped as markupsafe does
            if (v.t != J_DICT) { jfail(r, "xmlattr needs a dict"); return jv_undef(); }
            const bool autospace = arg_bool(arg(c, 0, "autospace"), true);
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            bool any = false;
            for (uint32_t i = 0; i < v.o->n && !r->failed; i++) {
                if (jv_null(v.o->v[i])) continue;
                jv k = jv_to_str(r, v.o->k[i]);
                for (uint32_t q = 0; q < k.n; q++) {
                    if (is_ws(k.s[q]) || (k.s[q] && strchr("/>=", k.s[q]))) { jfail(r, "xmlattr: invalid character in attribute name: '%.*s'", (int) k.n, k.s); return jv_undef(); }
                }
                if (any || autospace) jbuf_put(&out, " ", 1);
                any = true;
                html_escape(&out, k);
                jbuf_put(&out, "=\"", 2);
                html_escape(&out, jv_to_str(r, v.o->v[i]));
                jbuf_put(&out, "\"", 1);
            }
            return jbuf_value(&out);
        }
        case F_PPRINT: {
            jbuf b;
            jbuf_init(&b, r, r->lim.max_output);
            jv_write_repr(r, &b, v, false, -1, 0);
            return jbuf_value(&b);
        }
        case F_E:
        case F_ESCAPE:
        case F_FORCEESCAPE: {
            jv s = need_str(r, v, "escape");
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            for (uint32_t i = 0; i < s.n; i++) {
                switch (s.s[i]) {
                    case '&': jbuf_puts(&out, "&amp;"); break;
                    case '<': jbuf_puts(&out, "&lt;"); break;
                    case '>': jbuf_puts(&out, "&gt;"); break;
                    case '"': jbuf_puts(&out, "&#34;"); break;
                    case '\'': jbuf_puts(&out, "&apos;"); break;
                    default: jbuf_put(&out, s.s + i, 1); break;
                }
            }
            return jbuf_value(&out);
        }
        case F_FORMAT: {
            jv f = need_str(r, v, "format");
            return r->failed ? jv_undef() : jinja_percent_format(r, f, c);
        }
        case F_BATCH: return batch_or_slice(r, true, v, c);
        case F_SLICE: return batch_or_slice(r, false, v, c);
        case F_GROUPBY: return group_by(r, v, c);
        case F_FILESIZEFORMAT: {
            double bytes = 0;
            if (v.t == J_INT) bytes = (double) v.i;
            else if (v.t == J_FLOAT) bytes = v.d;
            else if (v.t == J_BOOL) bytes = v.b;
            else if (v.t != J_STR || !py_float(v, &bytes)) { jfail(r, "filesizeformat of a value that is no number"); return jv_undef(); }
            return jinja_filesizeformat(r, bytes, arg_bool(arg(c, 0, "binary"), false));
        }
        case F_RANDOM: {   // an item chosen by a generator seeded from the render's clock and steps
            jv l = list_of(r, v);
            if (r->failed) return jv_undef();
            if (l.l->n == 0) { jfail(r, "random of an empty sequence"); return jv_undef(); }
            uint64_t x = (uint64_t) r->clock.now * 0x9e3779b97f4a7c15ull + r->steps + 1;
            x ^= x >> 31;
            x *= 0xbf58476d1ce4e5b9ull;
            x ^= x >> 29;
            return l.l->v[x % l.l->n];
        }
        case F_STRIPTAGS: {
            jv str = need_str(r, v, "striptags");
            return r->failed ? jv_undef() : jinja_striptags(r, str);
        }
        case F_TRUNCATE: {
            jv str = need_str(r, v, "truncate");
            int64_t length = 255, leeway = 5;
            const jv * end = arg(c, 2, "end");
            if (end && end->t != J_STR) { jfail(r, "truncate() takes a string end"); return jv_undef(); }
            if (!arg_int(r, arg(c, 0, "length"), 255, &length) || !arg_int(r, arg(c, 3, "leeway"), 5, &leeway)) return jv_undef();
            if (r->failed) return jv_undef();
            return jinja_truncate(r, str, length, arg_bool(arg(c, 1, "killwords"), false), end ? *end : jv_str("...", 3), leeway);
        }
        case F_WORDWRAP: {
            jv str = need_str(r, v, "wordwrap");
            int64_t width = 79;
            const jv * wrap = arg(c, 2, "wrapstring");
            if (wrap && !jv_null(*wrap) && wrap->t != J_STR) { jfail(r, "wordwrap() takes a string wrapstring"); return jv_undef(); }
            if (!arg_int(r, arg(c, 0, "width"), 79, &width) || r->failed) return jv_undef();
            return jinja_wordwrap(r, str, width, arg_bool(arg(c, 1, "break_long_words"), true),
                                  wrap && !jv_null(*wrap) ? *wrap : jv_str("\n", 1), arg_bool(arg(c, 3, "break_on_hyphens"), true));
        }
        case F_FIRST:
        case F_LAST: {
            jv l = list_of(r, v);
            if (r->failed || l.l->n == 0) return jv_undef();
            return l.l->v[id == F_FIRST ? 0 : l.l->n - 1];
        }
        case F_FLOAT: {   // Jinja2's do_float: float(value), else the default
            double d;
            if (v.t == J_FLOAT) return v;
            if (v.t == J_INT) return jv_float((double) v.i);
            if (v.t == J_BOOL) return jv_float(v.b);
            if (v.t == J_STR && py_float(v, &d)) return jv_float(d);
            const jv * dflt = arg(c, 0, "default");
            return dflt ? *dflt : jv_float(0.0);
        }
        case F_INT: {   // Jinja2's do_int: int(value, base), else int(float(value)), else the default
            const jv * dflt = arg(c, 0, "default");
            int64_t base = 10, x = 0;
            if (!arg_int(r, arg(c, 1, "base"), 10, &base)) return jv_undef();
            double d = 0;
            bool have_d = false;
            if (v.t == J_INT) return v;
            if (v.t == J_BOOL) return jv_int(v.b);
            if (v.t == J_STR) {
                const int got = py_int(v, base, &x);
                if (got > 0) return jv_int(x);
                if (got < 0) { jfail(r, "int(): '%.*s' does not fit in 64 bits", (int) (v.n < 40 ? v.n : 40), v.s); return jv_undef(); }
                have_d = py_float(v, &d);
            } else if (v.t == J_FLOAT) {
                d = v.d;
                have_d = true;
            }
            if (have_d && !isnan(d)) {
                if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0)) {
                    jfail(r, "int(): %g does not fit in 64 bits", d);
                    return jv_undef();
                }
                return jv_int((int64_t) d);
            }
            return dflt ? *dflt : jv_int(0);
        }
        case F_INDENT: {   // Jinja2's do_indent: width (spaces, or a string), first, blank
            jv s = need_str(r, v, "indent");
            int64_t width = 4;
            const jv * w = arg(c, 0, "width");
            jv pad;
            if (w && w->t == J_STR) {
                pad = *w;
            } else {
                if (!arg_int(r, w, 4, &width)) return jv_undef();
                if (width < 0 || width > 1024) { jfail(r, "indent width out of range"); return jv_undef(); }
                char * sp = (char *) jmem_alloc(r->m, (size_t) width + 1);
                if (!sp) { jfail(r, "out of memory"); return jv_undef(); }
                memset(sp, ' ', (size_t) width);
                pad = jv_str(sp, (uint32_t) width);
            }
            const bool first = arg_bool(arg(c, 1, "first"), false), blank = arg_bool(arg(c, 2, "blank"), false);
            // Every piece of s split at '\n' (Jinja2 splits s + "\n" with splitlines: the same pieces).
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            if (first) jbuf_put(&out, pad.s, pad.n);
            uint32_t line = 0;
            for (uint32_t i = 0; i <= s.n && !r->failed; line++) {
                uint32_t e = i;
                while (e < s.n && s.s[e] != '\n') e++;
                if (line > 0) {
                    jbuf_put(&out, "\n", 1);
                    if (blank || e > i) jbuf_put(&out, pad.s, pad.n);
                }
                jbuf_put(&out, s.s + i, e - i);
                i = e + 1;
            }
            return jbuf_value(&out);
        }
        case F_ITEMS: {
            jv out = jv_new_list(r, 0);
            if (v.t == J_DICT) {
                for (uint32_t i = 0; i < v.o->n; i++) {
                    jv pair = jv_new_list(r, 2);
                    jlist_push(r, pair.l, v.o->k[i]);
                    jlist_push(r, pair.l, v.o->v[i]);
                    jlist_push(r, out.l, pair);
                }
            } else if (!jv_null(v)) {
                jfail(r, "items of a value that is no dict");
            }
            return out;
        }
        case F_JOIN: {
            const jv * sep = arg(c, 0, "d");
            const jv * attribute = arg(c, 1, "attribute");
            jv l = list_of(r, v);
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            for (uint32_t i = 0; i < l.l->n && !r->failed; i++) {
                if (i && sep) jv_write_str(r, &out, *sep);
                jv x = attribute && !jv_null(*attribute) ? attr_of(r, l.l->v[i], *attribute) : l.l->v[i];
                jv_write_str(r, &out, x);
            }
            return jbuf_value(&out);
        }
        case F_LIST: return list_of(r, v);
        case F_LOWER: return case_map(r, v, 0);
        case F_UPPER: return case_map(r, v, 1);
        case F_TITLE: return case_map(r, v, 4);
        case F_MAP: {
            jv l = list_of(r, v);
            jv out = jv_new_list(r, l.l->n);
            const jv * attribute = arg(c, 99, "attribute");
            const jv * dflt = arg(c, 99, "default");
            for (uint32_t i = 0; i < l.l->n && !r->failed; i++) {
                if (attribute) {
                    jv x = attr_of(r, l.l->v[i], *attribute);
                    jlist_push(r, out.l, jv_null(x) && dflt ? *dflt : x);
                } else {
                    if (c.n_pos < 1 || c.pos[0].t != J_STR) { jfail(r, "map() needs a filter name or attribute="); break; }
                    int fid = jinja_filter_id(c.pos[0].s, c.pos[0].n);
                    if (fid < 0) { jfail(r, "unknown filter '%s' in map()", c.pos[0].s); break; }
                    jlist_push(r, out.l, jinja_apply_filter(r, fid, l.l->v[i], shift(c, 1)));
                }
            }
            return out;
        }
        case F_MAX:
        case F_MIN: {   // the first item with the largest / smallest key (case-insensitive unless told)
            jv l = list_of(r, v);
            if (r->failed || l.l->n == 0) return jv_undef();
            const bool cs = arg_bool(arg(c, 0, "case_sensitive"), false);
            const jv * attribute = arg(c, 1, "attribute");
            uint32_t best = 0;
            jv kb = sort_key(r, l.l->v[0], attribute, cs);
            for (uint32_t i = 1; i < l.l->n && !r->failed; i++) {
                bool ok;
                jv ki = sort_key(r, l.l->v[i], attribute, cs);
                if (id == F_MAX ? jv_less(r, kb, ki, &ok) : jv_less(r, ki, kb, &ok)) { best = i; kb = ki; }
            }
            return l.l->v[best];
        }
        case F_SELECT:
        case F_REJECT:
        case F_SELECTATTR:
        case F_REJECTATTR: {
            const bool attr = id == F_SELECTATTR || id == F_REJECTATTR;
            const bool want = id == F_SELECT || id == F_SELECTATTR;
            jv l = list_of(r, v);
            jv out = jv_new_list(r, 0);
            const uint32_t first_test = attr ? 1 : 0;
            if (attr && c.n_pos < 1) { jfail(r, "selectattr() needs an attribute name"); return out; }
            for (uint32_t i = 0; i < l.l->n && !r->failed; i++) {
                jv x = attr ? attr_of(r, l.l->v[i], c.pos[0]) : l.l->v[i];
                bool t = c.n_pos > first_test ? test_by_name(r, c.pos[first_test], x, shift(c, first_test + 1))
                                              : jv_truthy(x);
                if (t == want) jlist_push(r, out.l, l.l->v[i]);
            }
            return out;
        }
        case F_REPLACE: return replace_str(r, v, arg(c, 0, "old"), arg(c, 1, "new"), arg(c, 2, "count"));
        case F_REVERSE: {
            if (v.t == J_STR) {
                jv l = list_of(r, v);
                jbuf out;
                jbuf_init(&out, r, r->lim.max_output);
                for (uint32_t i = l.l->n; i-- > 0;) jbuf_put(&out, l.l->v[i].s, l.l->v[i].n);
                return jbuf_value(&out);
            }
            jv l = list_of(r, v);
            jv out = jv_new_list(r, l.l->n);
            for (uint32_t i = l.l->n; i-- > 0;) jlist_push(r, out.l, l.l->v[i]);
            return out;
        }
        case F_ROUND: {
            int64_t prec = 0;
            if (!arg_int(r, arg(c, 0, "precision"), 0, &prec)) return jv_undef();
            const jv * method = arg(c, 1, "method");
            double x = v.t == J_INT ? (double) v.i : v.t == J_FLOAT ? v.d : 0;
            if (v.t != J_INT && v.t != J_FLOAT) { jfail(r, "round of a value that is no number"); return jv_undef(); }
            double scale = pow(10.0, (double) prec);
            double y = x * scale;
            if (method && method->t == J_STR && !strcmp(method->s, "floor")) y = floor(y);
            else if (method && method->t == J_STR && !strcmp(method->s, "ceil")) y = ceil(y);
            else y = round(y);
            return jv_float(y / scale);
        }
        case F_SAFE:
        case F_STRING: return jv_to_str(r, v);
        case F_SORT: return sorted(r, v, c);
        case F_SUM: {
            jv l = list_of(r, v);
            const jv * attribute = arg(c, 0, "attribute");
            const jv * start = arg(c, 1, "start");
            jv acc = start ? *start : jv_int(0);
            for (uint32_t i = 0; i < l.l->n && !r->failed; i++) {
                jv x = attribute && !jv_null(*attribute) ? attr_of(r, l.l->v[i], *attribute) : l.l->v[i];
                if (acc.t == J_INT && x.t == J_INT) acc = jv_int(acc.i + x.i);
                else if ((acc.t == J_INT || acc.t == J_FLOAT) && (x.t == J_INT || x.t == J_FLOAT))
                    acc = jv_float((acc.t == J_INT ? (double) acc.i : acc.d) + (x.t == J_INT ? (double) x.i : x.d));
                else { jfail(r, "sum of values that are no numbers"); break; }
            }
            return acc;
        }
        case F_TOJSON: return to_json(r, v, c);
        case F_TRIM: return jv_null(v) ? v : strip_str(r, v, arg(c, 0, "chars"), true, true);
        case F_UNIQUE: {
            jv l = list_of(r, v);
            jv out = jv_new_list(r, 0);
            for (uint32_t i = 0; i < l.l->n && !r->failed; i++) {
                bool seen = false;
                for (uint32_t k = 0; k < out.l->n && !seen; k++) seen = jv_equal(out.l->v[k], l.l->v[i]);
                r->steps += out.l->n;
                if (!seen) jlist_push(r, out.l, l.l->v[i]);
            }
            return out;
        }
        case F_WORDCOUNT: {
            jv parts = split_str(r, v, NULL, NULL);
            return jv_int(parts.t == J_LIST ? parts.l->n : 0);
        }
    }
    jfail(r, "filter %d is not implemented", id);
    return jv_undef();
}

bool jinja_apply_test(jrender * r, int id, const jv & v, const jcall & c) {
    if (!charge_call(r, v, c)) return false;
    const jv * a = c.n_pos > 0 ? &c.pos[0] : NULL;
    auto cmp_arg = [&]() -> bool {
        if (!a) return jfail(r, "test '%s' needs an argument", TESTS[id]);
        return true;
    };
    bool ok;
    switch (id) {
        case T_BOOLEAN: return v.t == J_BOOL;
        case T_CALLABLE: return v.t == J_FUNC;
        case T_DEFINED: return !jv_null(v);
        case T_UNDEFINED: return jv_null(v);
        case T_NONE: return jv_null(v);
        case T_DIVISIBLEBY: {
            int64_t n;
            if (!cmp_arg() || !arg_int(r, a, 1, &n)) return false;
            if (n == 0) return jfail(r, "divisibleby(0)");
            return v.t == J_INT && v.i % n == 0;
        }
        case T_EQ: case T_EQUALTO: case T_EQ_SYM: return cmp_arg() && jv_equal(v, *a);
        case T_NE: case T_NE_SYM: return cmp_arg() && !jv_equal(v, *a);
        case T_LT: case T_LT_SYM: case T_LESSTHAN: return cmp_arg() && jv_less(r, v, *a, &ok);
        case T_GT: case T_GT_SYM: case T_GREATERTHAN: return cmp_arg() && jv_less(r, *a, v, &ok);
        case T_ESCAPED: return false;   // no value here is markup
        case T_FILTER: return v.t == J_STR && jinja_filter_id(v.s, v.n) >= 0;
        case T_TEST: return v.t == J_STR && jinja_test_id(v.s, v.n) >= 0;
        case T_LE: case T_LE_SYM: return cmp_arg() && !jv_less(r, *a, v, &ok) && ok;
        case T_GE: case T_GE_SYM: return cmp_arg() && !jv_less(r, v, *a, &ok) && ok;
        case T_EVEN: return v.t == J_INT && v.i % 2 == 0;
        case T_ODD: return v.t == J_INT && v.i % 2 != 0;
        case T_FALSE: return v.t == J_BOOL && !v.b;
        case T_TRUE: return v.t == J_BOOL && v.b;
        case T_FLOAT: return v.t == J_FLOAT;
        case T_INTEGER: return v.t == J_INT;
        case T_NUMBER: return v.t == J_INT || v.t == J_FLOAT;
        case T_STRING: return v.t == J_STR;
        case T_MAPPING: return v.t == J_DICT;
        case T_ITERABLE: return v.t == J_LIST || v.t == J_DICT || v.t == J_STR;
        case T_SEQUENCE: return v.t == J_LIST;
        case T_IN: {
            if (!cmp_arg()) return false;
            if (a->t == J_LIST) {
                for (uint32_t i = 0; i < a->l->n; i++) {
                    if (jv_equal(a->l->v[i], v)) return true;
                }
                return false;
            }
            if (a->t == J_DICT) return jdict_find_v(a->o, v) != NULL;
            if (a->t == J_STR && v.t == J_STR) {
                for (uint32_t i = 0; i + v.n <= a->n; i++) {
                    if (memcmp(a->s + i, v.s, v.n) == 0) return true;
                }
            }
            return false;
        }
        case T_SAMEAS:
            if (!cmp_arg()) return false;
            if (v.t != a->t) return false;
            if (v.t == J_LIST) return v.l == a->l;
            if (v.t == J_DICT) return v.o == a->o;
            return jv_equal(v, *a);
        case T_LOWER:
        case T_UPPER: {
            if (v.t != J_STR) return false;
            for (uint32_t i = 0; i < v.n; i++) {
                char ch = v.s[i];
                if (id == T_LOWER && ch >= 'A' && ch <= 'Z') return false;
                if (id == T_UPPER && ch >= 'a' && ch <= 'z') return false;
            }
            return true;
        }
    }
    return jfail(r, "unknown test");
}

jv jinja_call_method(jrender * r, jv & v, const char * name, size_t n, const jcall & c) {
    if (!charge_call(r, v, c)) return jv_undef();
    auto is = [&](const char * z) { return name_is(name, n, z); };
    if (v.t == J_STR) {
        if (is("strip")) return strip_str(r, v, arg(c, 0, "chars"), true, true);
        if (is("lstrip")) return strip_str(r, v, arg(c, 0, "chars"), true, false);
        if (is("rstrip")) return strip_str(r, v, arg(c, 0, "chars"), false, true);
        if (is("split")) return split_str(r, v, arg(c, 0, "sep"), arg(c, 1, "maxsplit"));
        if (is("rsplit")) return rsplit_str(r, v, arg(c, 0, "sep"), arg(c, 1, "maxsplit"));
        if (is("startswith")) return jv_bool(affix(r, v, arg(c, 0, "prefix"), true));
        if (is("endswith")) return jv_bool(affix(r, v, arg(c, 0, "suffix"), false));
        if (is("replace")) return replace_str(r, v, arg(c, 0, "old"), arg(c, 1, "new"), arg(c, 2, "count"));
        if (is("lower")) return case_map(r, v, 0);
        if (is("upper")) return case_map(r, v, 1);
        if (is("ljust") || is("rjust") || is("center")) {
            return pad_str(r, v, arg(c, 0, "width"), arg(c, 1, "fillchar"), is("ljust") ? 0 : is("rjust") ? 1 : 2);
        }
        if (is("zfill")) {   // zeros after a leading sign, to width characters
            int64_t width = 0;
            if (!arg_int(r, arg(c, 0, "width"), 0, &width)) return jv_undef();
            const int64_t len = utf8_cp_count(v.s, v.n);
            if (width <= len) return v;
            if (width - len > (int64_t) r->lim.max_output) { jfail(r, "a width larger than the output limit"); return jv_undef(); }
            const uint32_t sign = v.n && (v.s[0] == '+' || v.s[0] == '-') ? 1 : 0;
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            jbuf_put(&out, v.s, sign);
            for (int64_t i = len; i < width && !r->failed; i++) jbuf_put(&out, "0", 1);
            jbuf_put(&out, v.s + sign, v.n - sign);
            return jbuf_value(&out);
        }
        if (is("partition") || is("rpartition")) {   // [before, sep, after]
            const jv * sep = arg(c, 0, "sep");
            if (!sep || sep->t != J_STR || sep->n == 0) { jfail(r, "%.*s() needs a non-empty separator", (int) n, name); return jv_undef(); }
            const bool last = is("rpartition");
            int64_t at = -1;
            for (uint32_t i = 0; i + sep->n <= v.n; i++) {
                if (memcmp(v.s + i, sep->s, sep->n) == 0) {
                    at = i;
                    if (!last) break;
                }
            }
            jv l = jv_new_list(r, 3);
            if (at < 0) {
                jlist_push(r, l.l, last ? jv_str("", 0) : v);
                jlist_push(r, l.l, jv_str("", 0));
                jlist_push(r, l.l, last ? v : jv_str("", 0));
            } else {
                jlist_push(r, l.l, jv_str(v.s, (uint32_t) at));
                jlist_push(r, l.l, *sep);
                jlist_push(r, l.l, jv_str(v.s + at + sep->n, v.n - (uint32_t) at - sep->n));
            }
            return l;
        }
        if (is("swapcase")) {
            char * d = (char *) jmem_alloc(r->m, v.n + 1);
            if (!d) { jfail(r, "out of memory"); return jv_undef(); }
            for (uint32_t i = 0; i < v.n; i++) {
                const char ch = v.s[i];
                d[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ? (char) (ch ^ 0x20) : ch;
            }
            d[v.n] = 0;
            return jv_str(d, v.n);
        }
        if (is("istitle")) {   // capitals only after uncased characters, small letters only after cased ones, one cased at least
            bool cased = false, prev_cased = false;
            for (uint32_t i = 0; i < v.n; i++) {
                const char ch = v.s[i];
                const bool up = ch >= 'A' && ch <= 'Z', lo = ch >= 'a' && ch <= 'z';
                if ((up && prev_cased) || (lo && !prev_cased)) return jv_bool(false);
                cased = cased || up || lo;
                prev_cased = up || lo;
            }
            return jv_bool(cased);
        }
        if (is("title")) return case_map(r, v, 2);
        if (is("capitalize")) return case_map(r, case_map(r, v, 0), 3);
        if (is("find") || is("rfind") || is("index") || is("count")) {
            const jv * sub = arg(c, 0, "sub");
            if (!sub || sub->t != J_STR) { jfail(r, "%.*s() takes a string", (int) n, name); return jv_undef(); }
            if (is("count")) {
                int64_t k = 0;
                for (uint32_t i = 0; sub->n && i + sub->n <= v.n;) {
                    if (memcmp(v.s + i, sub->s, sub->n) == 0) { k++; i += sub->n; } else i++;
                }
                return jv_int(k);
            }
            int64_t at = find_str(v, *sub, is("rfind"));
            if (at < 0 && is("index")) { jfail(r, "substring not found"); return jv_undef(); }
            return jv_int(at);
        }
        if (is("join")) {
            const jv * items = arg(c, 0, "iterable");
            if (!items) { jfail(r, "join() takes a list"); return jv_undef(); }
            jv l = list_of(r, *items);
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            for (uint32_t i = 0; i < l.l->n && !r->failed; i++) {
                if (i) jbuf_put(&out, v.s, v.n);
                jv_write_str(r, &out, l.l->v[i]);
            }
            return jbuf_value(&out);
        }
        if (is("removeprefix") || is("removesuffix")) {
            const jv * a = arg(c, 0, "x");
            if (!a || a->t != J_STR) { jfail(r, "%.*s() takes a string", (int) n, name); return jv_undef(); }
            const bool pre = is("removeprefix");
            if (affix(r, v, a, pre)) return pre ? jv_str(v.s + a->n, v.n - a->n) : jv_str(v.s, v.n - a->n);
            return v;
        }
        if (is("isdigit") || is("isalpha") || is("isalnum") || is("isspace") || is("islower") || is("isupper")) {
            bool any = false, ok = v.n > 0;
            for (uint32_t i = 0; i < v.n && ok; i++) {
                char ch = v.s[i];
                const bool lo = ch >= 'a' && ch <= 'z', up = ch >= 'A' && ch <= 'Z', dg = ch >= '0' && ch <= '9';
                if (is("isdigit")) ok = dg;
                else if (is("isalpha")) ok = lo || up;
                else if (is("isalnum")) ok = lo || up || dg;
                else if (is("isspace")) ok = is_ws(ch);
                else if (is("islower")) { ok = !up; any = any || lo; }
                else { ok = !lo; any = any || up; }
            }
            if (is("islower") || is("isupper")) ok = ok && any;
            return jv_bool(ok);
        }
        if (is("splitlines")) {
            jv l = jv_new_list(r, 0);
            uint32_t b = 0;
            for (uint32_t i = 0; i < v.n; i++) {
                if (v.s[i] == '\n' || v.s[i] == '\r') {
                    jlist_push(r, l.l, jv_str(v.s + b, i - b));
                    if (v.s[i] == '\r' && i + 1 < v.n && v.s[i + 1] == '\n') i++;
                    b = i + 1;
                }
            }
            if (b < v.n) jlist_push(r, l.l, jv_str(v.s + b, v.n - b));
            return l;
        }
        if (is("format")) return jinja_str_format(r, v, c);
    } else if (v.t == J_LIST) {
        if (is("append")) {
            if (c.n_pos != 1) { jfail(r, "append() takes one value"); return jv_undef(); }
            jlist_push(r, v.l, c.pos[0]);
            return jv_none();
        }
        if (is("extend")) {
            if (c.n_pos != 1) { jfail(r, "extend() takes one list"); return jv_undef(); }
            jv l = list_of(r, c.pos[0]);
            uint32_t k = l.l->n;
            for (uint32_t i = 0; i < k && !r->failed; i++) jlist_push(r, v.l, l.l->v[i]);
            return jv_none();
        }
        if (is("pop")) {
            if (v.l->n == 0) { jfail(r, "pop from an empty list"); return jv_undef(); }
            int64_t i = (int64_t) v.l->n - 1;
            if (c.n_pos > 0 && !arg_int(r, &c.pos[0], i, &i)) return jv_undef();
            if (i < 0) i += v.l->n;
            if (i < 0 || i >= (int64_t) v.l->n) { jfail(r, "pop index out of range"); return jv_undef(); }
            jv out = v.l->v[i];
            memmove(v.l->v + i, v.l->v + i + 1, sizeof(jv) * (v.l->n - (uint32_t) i - 1));
            v.l->n--;
            return out;
        }
        if (is("insert")) {
            int64_t i = 0;
            if (c.n_pos != 2 || !arg_int(r, &c.pos[0], 0, &i)) { jfail(r, "insert() takes an index and a value"); return jv_undef(); }
            if (i < 0) i += v.l->n;
            if (i < 0) i = 0;
            if (i > (int64_t) v.l->n) i = v.l->n;
            if (!jlist_push(r, v.l, c.pos[1])) return jv_undef();
            memmove(v.l->v + i + 1, v.l->v + i, sizeof(jv) * (v.l->n - 1 - (uint32_t) i));
            v.l->v[i] = c.pos[1];
            return jv_none();
        }
        if (is("index") || is("count")) {
            if (c.n_pos != 1) { jfail(r, "%.*s() takes one value", (int) n, name); return jv_undef(); }
            int64_t k = 0;
            for (uint32_t i = 0; i < v.l->n; i++) {
                if (jv_equal(v.l->v[i], c.pos[0])) {
                    if (is("index")) return jv_int(i);
                    k++;
                }
            }
            if (is("index")) { jfail(r, "value not in the list"); return jv_undef(); }
            return jv_int(k);
        }
        if (is("reverse")) {
            for (uint32_t i = 0, j = v.l->n; i + 1 < j; i++, j--) {
                jv t = v.l->v[i];
                v.l->v[i] = v.l->v[j - 1];
                v.l->v[j - 1] = t;
            }
            return jv_none();
        }
        if (is("copy")) {
            jv out = jv_new_list(r, v.l->n);
            for (uint32_t i = 0; i < v.l->n; i++) jlist_push(r, out.l, v.l->v[i]);
            return out;
        }
    } else if (v.t == J_DICT) {
        if (is("items") || is("keys") || is("values")) {
            jv out = jv_new_list(r, v.o->n);
            for (uint32_t i = 0; i < v.o->n && !r->failed; i++) {
                if (is("keys")) jlist_push(r, out.l, v.o->k[i]);
                else if (is("values")) jlist_push(r, out.l, v.o->v[i]);
                else {
                    jv pair = jv_new_list(r, 2);
                    jlist_push(r, pair.l, v.o->k[i]);
                    jlist_push(r, pair.l, v.o->v[i]);
                    jlist_push(r, out.l, pair);
                }
            }
            return out;
        }
        if (is("get")) {
            if (c.n_pos < 1) { jfail(r, "get() takes a key"); return jv_undef(); }
            jv * f = jdict_find_v(v.o, c.pos[0]);
            return f ? *f : c.n_pos > 1 ? c.pos[1] : jv_none();
        }
        if (is("pop")) {
            if (c.n_pos < 1) { jfail(r, "pop() takes a key"); return jv_undef(); }
            for (uint32_t i = 0; i < v.o->n; i++) {
                if (!jv_equal(v.o->k[i], c.pos[0])) continue;
                jv out = v.o->v[i];
                memmove(v.o->k + i, v.o->k + i + 1, sizeof(jv) * (v.o->n - i - 1));
                memmove(v.o->v + i, v.o->v + i + 1, sizeof(jv) * (v.o->n - i - 1));
                v.o->n--;
                return out;
            }
            if (c.n_pos > 1) return c.pos[1];
            jfail(r, "pop(): key not found");
            return jv_undef();
        }
        if (is("update")) {
            if (c.n_pos == 1 && c.pos[0].t == J_DICT) {
                for (uint32_t i = 0; i < c.pos[0].o->n; i++) jdict_set(r, v.o, c.pos[0].o->k[i], c.pos[0].o->v[i]);
            }
            for (uint32_t k = 0; k < c.n_kw; k++) jdict_set(r, v.o, jv_str(c.kw[k].s, c.kw[k].n), c.kwv[k]);
            return jv_none();
        }
        if (is("setdefault")) {
            if (c.n_pos < 1) { jfail(r, "setdefault() takes a key"); return jv_undef(); }
            if (jv * f = jdict_find_v(v.o, c.pos[0])) return *f;
            jv d = c.n_pos > 1 ? c.pos[1] : jv_none();
            jdict_set(r, v.o, c.pos[0], d);
            return d;
        }
        if (is("copy")) {
            jv out = jv_new_dict(r, v.o->n);
            for (uint32_t i = 0; i < v.o->n; i++) jdict_set(r, out.o, v.o->k[i], v.o->v[i]);
            return out;
        }
        // A callable member (loop.cycle, a namespace's function).
        if (jv * f = jdict_find(v.o, name, n)) {
            if (f->t == J_FUNC) return jinja_call_func(r, f->f, c);
        }
    } else if (jv_null(v)) {
        jfail(r, "calling %.*s() on an undefined value", (int) n, name);
        return jv_undef();
    }
    jfail(r, "unknown method '%.*s'", (int) n, name);
    return jv_undef();
}

jv jinja_call_global(jrender * r, const char * name, size_t n, const jcall & c, bool * found) {
    *found = true;
    auto is = [&](const char * z) { return name_is(name, n, z); };
    if (is("range")) {
        int64_t a = 0, b = 0, st = 1;
        if (c.n_pos == 1) { if (!arg_int(r, &c.pos[0], 0, &b)) return jv_undef(); }
        else if (c.n_pos >= 2) {
            if (!arg_int(r, &c.pos[0], 0, &a) || !arg_int(r, &c.pos[1], 0, &b)) return jv_undef();
            if (c.n_pos >= 3 && !arg_int(r, &c.pos[2], 1, &st)) return jv_undef();
        } else { jfail(r, "range() needs an end"); return jv_undef(); }
        if (st == 0) { jfail(r, "range() step of 0"); return jv_undef(); }
        int64_t count = st > 0 ? (b > a ? (b - a + st - 1) / st : 0) : (a > b ? (a - b - st - 1) / -st : 0);
        if ((uint64_t) count > r->lim.max_steps) { jfail(r, "range() of %lld items exceeds the step budget", (long long) count); return jv_undef(); }
        r->steps += (uint64_t) count;
        jv l = jv_new_list(r, (uint32_t) count);
        for (int64_t i = 0, x = a; i < count && !r->failed; i++, x += st) jlist_push(r, l.l, jv_int(x));
        return l;
    }
    if (is("namespace") || is("dict")) {
        jv d = jv_new_dict(r, c.n_kw);
        if (is("dict") && c.n_pos == 1 && c.pos[0].t == J_DICT) {
            for (uint32_t i = 0; i < c.pos[0].o->n; i++) jdict_set(r, d.o, c.pos[0].o->k[i], c.pos[0].o->v[i]);
        }
        for (uint32_t k = 0; k < c.n_kw; k++) jdict_set(r, d.o, jv_str(c.kw[k].s, c.kw[k].n), c.kwv[k]);
        return d;
    }
    if (is("raise_exception")) {
        const jv * m = arg(c, 0, "message");
        jfail(r, "the template raised: %.*s", m && m->t == J_STR ? (int) m->n : 7, m && m->t == J_STR ? m->s : "(error)");
        return jv_undef();
    }
    if (is("joiner")) {
        joiner_state * st = (joiner_state *) jmem_alloc(r->m, sizeof(joiner_state));
        if (!st) { jfail(r, "out of memory"); return jv_undef(); }
        const jv * sep = arg(c, 0, "sep");
        st->sep = sep ? *sep : jv_str(", ", 2);
        st->used = false;
        return jv_new_func(r, JF_JOINER, st);
    }
    if (is("cycler")) {
        if (c.n_pos == 0) { jfail(r, "cycler() needs at least one item"); return jv_undef(); }
        cycler_state * st = (cycler_state *) jmem_alloc(r->m, sizeof(cycler_state));
        if (!st) { jfail(r, "out of memory"); return jv_undef(); }
        st->items = jv_new_list(r, c.n_pos);
        for (uint32_t i = 0; i < c.n_pos; i++) jlist_push(r, st->items.l, c.pos[i]);
        st->pos = 0;
        jv self = jv_new_dict(r, 3);
        st->self = self.o;
        jdict_set(r, self.o, jv_str("current", 7), c.pos[0]);
        jdict_set(r, self.o, jv_str("next", 4), jv_new_func(r, JF_CYCLER_NEXT, st));
        jdict_set(r, self.o, jv_str("reset", 5), jv_new_func(r, JF_CYCLER_RESET, st));
        return r->failed ? jv_undef() : self;
    }
    if (is("strftime_now")) return strftime_now(r, c);
    int fid = jinja_filter_id(name, n);
    if (fid >= 0) {   // a filter called as a function: its first argument is the value
        if (c.n_pos < 1) { jfail(r, "%.*s() needs a value", (int) n, name); return jv_undef(); }
        return jinja_apply_filter(r, fid, c.pos[0], shift(c, 1));
    }
    *found = false;
    return jv_undef();
}

jv jinja_call_func(jrender * r, jfunc * f, const jcall & c) {
    switch (f->kind) {
        case JF_MACRO: return jinja_call_macro(r, f, c);
        case JF_LOOP: return jinja_call_loop(r, f, c);
        case JF_JOINER: {
            joiner_state * st = (joiner_state *) f->state;
            if (!st->used) {
                st->used = true;
                return jv_str("", 0);
            }
            return st->sep;
        }
        case JF_LOOP_CHANGED: {   // true on the first call and whenever the values differ from the last call's
            jloop_changed * st = (jloop_changed *) f->state;
            jv now = jv_new_list(r, c.n_pos);
            for (uint32_t i = 0; i < c.n_pos; i++) jlist_push(r, now.l, c.pos[i]);
            const bool changed = !st->seen || !jv_equal(st->last, now);
            st->seen = true;
            st->last = now;
            return jv_bool(changed);
        }
        case JF_CYCLER_NEXT:
        case JF_CYCLER_RESET: {
            cycler_state * st = (cycler_state *) f->state;
            jv item = st->items.l->v[st->pos];
            st->pos = f->kind == JF_CYCLER_RESET ? 0 : (st->pos + 1) % st->items.l->n;
            jdict_set(r, st->self, jv_str("current", 7), st->items.l->v[st->pos]);
            return f->kind == JF_CYCLER_RESET ? jv_none() : item;
        }
        case JF_LOOP_CYCLE: {
            jdict * loop = (jdict *) f->state;
            jv * i0 = jdict_find(loop, "index0", 6);
            if (c.n_pos == 0) { jfail(r, "cycle() needs values"); return jv_undef(); }
            int64_t k = i0 && i0->t == J_INT ? i0->i : 0;
            return c.pos[k % c.n_pos];
        }
        case JF_BUILTIN: {
            const jexpr * e = (const jexpr *) f->state;
            bool found = false;
            jv res = jinja_call_global(r, e->lit.s, e->lit.n, c, &found);
            if (!found) jfail(r, "unknown function '%s'", e->lit.s);
            return res;
        }
    }
    jfail(r, "not a function");
    return jv_undef();
}

jv jinja_call_value(jrender * r, const jv & f, const jcall & c) {
    if (f.t != J_FUNC) {
        jfail(r, "calling a value that is no function");
        return jv_undef();
    }
    return jinja_call_func(r, f.f, c);
}

}  // namespace tern
