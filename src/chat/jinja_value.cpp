// Jinja values (see jinja.h): the bump block, containers, equality and
// order, and the text forms (str, repr, tojson) minja gives them.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "chat/jinja.h"
#include "core/json.h"

namespace tern {

void * jmem_alloc(jmem * m, size_t n) {
    // 8-byte aligned in memory, whatever the block's start (a caller's block, or past the JSON inputs).
    const size_t at = m->used + ((size_t) (0 - (uintptr_t) (m->base + m->used)) & 7);
    if (at > m->cap || n > m->cap - at) return NULL;
    m->used = at + n;
    if (m->used > m->peak) m->peak = m->used;
    return m->base + at;
}

static void * ralloc(jrender * r, size_t n) {
    void * p = jmem_alloc(r->m, n);
    if (!p) jfail(r, "out of memory (%zu bytes for the template)", r->m->cap);
    return p;
}

jv jv_str_dup(jrender * r, const char * s, size_t n) {
    char * p = (char *) ralloc(r, n + 1);
    if (!p) return jv_str("", 0);
    if (n) memcpy(p, s, n);
    p[n] = 0;
    return jv_str(p, (uint32_t) n);
}

jv jv_cstr(jrender * r, const char * z) { return jv_str_dup(r, z, strlen(z)); }

// What a failed allocation returns: an empty list or dict that stays empty
// (r->failed is set, so pushes are refused), so no caller reads through NULL.
static jlist g_no_list = {NULL, 0, 0, NULL};
static jdict g_no_dict = {NULL, NULL, 0, 0};

jv jv_new_list(jrender * r, uint32_t cap) {
    jv v;
    v.t = J_LIST;
    v.n = 0;
    v.l = (jlist *) ralloc(r, sizeof(jlist));
    if (!v.l) {
        v.l = &g_no_list;
        return v;
    }
    v.l->n = 0;
    v.l->cap = cap;
    v.l->fields = NULL;
    v.l->v = cap ? (jv *) ralloc(r, sizeof(jv) * cap) : NULL;
    if (cap && !v.l->v) v.l = &g_no_list;
    return v;
}

jv jv_new_dict(jrender * r, uint32_t cap) {
    jv v;
    v.t = J_DICT;
    v.n = 0;
    v.o = (jdict *) ralloc(r, sizeof(jdict));
    if (!v.o) {
        v.o = &g_no_dict;
        return v;
    }
    v.o->n = 0;
    v.o->cap = cap;
    v.o->k = cap ? (jv *) ralloc(r, sizeof(jv) * cap) : NULL;
    v.o->v = cap ? (jv *) ralloc(r, sizeof(jv) * cap) : NULL;
    if (cap && (!v.o->k || !v.o->v)) v.o = &g_no_dict;
    return v;
}

jv jv_new_func(jrender * r, uint8_t kind, void * state) {
    jfunc * f = (jfunc *) ralloc(r, sizeof(jfunc));
    if (!f) return jv_undef();
    memset(f, 0, sizeof(*f));
    f->kind = kind;
    f->state = state;
    jv v;
    v.t = J_FUNC;
    v.n = 0;
    v.f = f;
    return v;
}

bool jlist_push(jrender * r, jlist * l, jv v) {
    if (r->failed) return false;   // after a failed allocation, g_no_list stays empty
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 4;
        jv * nv = (jv *) ralloc(r, sizeof(jv) * cap);
        if (!nv) return false;
        if (l->n) memcpy(nv, l->v, sizeof(jv) * l->n);
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return true;
}

jv * jdict_find(jdict * d, const char * key, size_t n) {
    for (uint32_t i = 0; i < d->n; i++) {
        const jv & k = d->k[i];
        if (k.t == J_STR && k.n == n && memcmp(k.s, key, n) == 0) return &d->v[i];
    }
    return NULL;
}

jv * jdict_find_v(jdict * d, jv key) {
    if (key.t == J_STR) return jdict_find(d, key.s, key.n);
    for (uint32_t i = 0; i < d->n; i++) {
        if (jv_equal(d->k[i], key)) return &d->v[i];
    }
    return NULL;
}

jv * jlist_field(jlist * l, const char * name, size_t n) {
    if (!l->fields) return NULL;
    for (uint32_t i = 0; i < l->n; i++) {
        if (strlen(l->fields[i]) == n && memcmp(l->fields[i], name, n) == 0) return &l->v[i];
    }
    return NULL;
}

bool jdict_set(jrender * r, jdict * d, jv key, jv v) {
    if (r->failed) return false;
    if (jv * slot = jdict_find_v(d, key)) {
        *slot = v;
        return true;
    }
    if (d->n == d->cap) {
        uint32_t cap = d->cap ? d->cap * 2 : 4;
        jv * nk = (jv *) ralloc(r, sizeof(jv) * cap);
        jv * nv = (jv *) ralloc(r, sizeof(jv) * cap);
        if (!nk || !nv) return false;
        if (d->n) {
            memcpy(nk, d->k, sizeof(jv) * d->n);
            memcpy(nv, d->v, sizeof(jv) * d->n);
        }
        d->k = nk;
        d->v = nv;
        d->cap = cap;
    }
    d->k[d->n] = key;
    d->v[d->n] = v;
    d->n++;
    return true;
}

bool jv_truthy(const jv & v) {
    switch (v.t) {
        case J_UNDEF: case J_NONE: return false;
        case J_BOOL: return v.b;
        case J_INT: return v.i != 0;
        case J_FLOAT: return v.d != 0;
        case J_STR: return v.n > 0;
        case J_LIST: return v.l->n > 0;
        case J_DICT: return v.o->n > 0;
        default: return true;
    }
}

static bool is_num(const jv & v) { return v.t == J_INT || v.t == J_FLOAT; }
static double num(const jv & v) { return v.t == J_INT ? (double) v.i : v.d; }

// Deep equality; containers nest at most as deep as the render allows, so
// this recursion is bounded by what built them.
bool jv_equal(const jv & a, const jv & b) {
    if (jv_null(a) || jv_null(b)) return jv_null(a) && jv_null(b);
    if (is_num(a) && is_num(b)) {
        if (a.t == J_INT && b.t == J_INT) return a.i == b.i;
        return num(a) == num(b);
    }
    if (a.t != b.t) return false;
    switch (a.t) {
        case J_BOOL: return a.b == b.b;
        case J_STR: return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
        case J_LIST:
            if (a.l->n != b.l->n) return false;
            for (uint32_t i = 0; i < a.l->n; i++) {
                if (!jv_equal(a.l->v[i], b.l->v[i])) return false;
            }
            return true;
        case J_DICT:
            if (a.o->n != b.o->n) return false;
            for (uint32_t i = 0; i < a.o->n; i++) {
                jv * o = jdict_find_v(b.o, a.o->k[i]);
                if (!o || !jv_equal(a.o->v[i], *o)) return false;
            }
            return true;
        case J_FUNC: return a.f == b.f;
        default: return false;
    }
}

bool jv_less(jrender * r, const jv & a, const jv & b, bool * ok) {
    *ok = true;
    if (is_num(a) && is_num(b)) return num(a) < num(b);
    if (a.t == J_BOOL && b.t == J_BOOL) return !a.b && b.b;
    if (a.t == J_STR && b.t == J_STR) {
        size_t m = a.n < b.n ? a.n : b.n;
        int c = memcmp(a.s, b.s, m);
        return c != 0 ? c < 0 : a.n < b.n;
    }
    if (a.t == J_LIST && b.t == J_LIST) {
        for (uint32_t i = 0; i < a.l->n && i < b.l->n; i++) {
            if (jv_less(r, a.l->v[i], b.l->v[i], ok)) return true;
            if (!*ok) return false;
            if (jv_less(r, b.l->v[i], a.l->v[i], ok)) return false;
            if (!*ok) return false;
        }
        return a.l->n < b.l->n;
    }
    *ok = false;
    jfail(r, "cannot compare these values with < or >");
    return false;
}

uint32_t utf8_cp_count(const char * s, size_t n) {
    uint32_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char) s[i] & 0xc0) != 0x80;
    return c;
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

void jbuf_init(jbuf * b, jrender * r, size_t limit) {
    b->m = r->m;
    b->p = NULL;
    b->n = b->cap = 0;
    b->limit = limit;
    b->r = r;
}

// Room for n more bytes at b->p + b->n (the caller fills them and adds n); NULL after an error.
static char * jbuf_reserve(jbuf * b, size_t n) {
    if (b->r->failed || !jcharge(b->r, n >> 6)) return NULL;   // copying costs a step per 64 bytes
    if (n > b->limit - b->n) {
        jfail(b->r, "the output exceeds %zu bytes", b->limit);
        return NULL;
    }
    if (b->n + n > b->cap) {
        jmem * m = b->m;
        size_t want = (b->n + n) * 2 + 64;
        if (want > b->limit + 1) want = b->limit + 1;
        if (b->p && b->p + b->cap == (char *) m->base + m->used && m->cap - m->used >= want - b->cap) {
            m->used += want - b->cap;   // extend in place
            if (m->used > m->peak) m->peak = m->used;
            b->cap = want;
        } else {
            char * q = (char *) jmem_alloc(m, want);
            size_t got = want;
            if (!q) {
                q = (char *) jmem_alloc(m, b->n + n + 1);
                got = b->n + n + 1;
            }
            if (!q) {
                jfail(b->r, "out of memory (%zu bytes for the template)", m->cap);
                return NULL;
            }
            if (b->n) memcpy(q, b->p, b->n);
            b->p = q;
            b->cap = got;
        }
    }
    return b->p + b->n;
}

void jbuf_put(jbuf * b, const char * s, size_t n) {
    if (n == 0) return;
    char * dst = jbuf_reserve(b, n);
    if (!dst) return;
    memcpy(dst, s, n);
    b->n += n;
}

jv jbuf_value(jbuf * b) {
    if (b->r->failed || b->n == 0) return jv_str("", 0);
    if (b->n + 1 > b->cap) return jv_str_dup(b->r, b->p, b->n);
    b->p[b->n] = 0;
    // Give back the spare tail when this text is the last allocation.
    jmem * m = b->m;
    if (b->p + b->cap == (char *) m->base + m->used) {
        m->used = (size_t) (b->p + b->n + 1 - (char *) m->base);
        b->cap = b->n + 1;
    }
    return jv_str(b->p, (uint32_t) b->n);
}

static void put_json_string(jbuf * b, const char * s, size_t n) {
    text_out probe = {NULL, 0, 0};
    json_write_string(&probe, s, n);
    char * dst = jbuf_reserve(b, (size_t) probe.len);
    if (!dst) return;
    text_out o = {dst, (size_t) probe.len, 0};
    json_write_string(&o, s, n);
    b->n += (size_t) probe.len;
}

// minja's dump_string: the JSON form, then single quotes unless the text holds one.
static void put_py_string(jbuf * b, const char * s, size_t n, char quote) {
    if (quote == '"' || memchr(s, '\'', n)) {
        put_json_string(b, s, n);
        return;
    }
    jbuf b2;
    jbuf_init(&b2, b->r, b->limit);
    put_json_string(&b2, s, n);
    jbuf_put(b, "'", 1);
    for (size_t i = 1; i + 1 < b2.n; i++) {
        if (b2.p[i] == '\\' && b2.p[i + 1] == '"') {
            jbuf_put(b, "\"", 1);
            i++;
        } else {
            jbuf_put(b, b2.p + i, 1);
        }
    }
    jbuf_put(b, "'", 1);
}

static void put_indent(jbuf * b, int indent, int level) {
    if (indent < 0) return;   // indent 0: new lines without indentation, as json.dumps
    jbuf_put(b, "\n", 1);
    for (int i = 0; i < level * indent; i++) jbuf_put(b, " ", 1);
}

uint32_t * jv_sort_order(jrender * r, const jv * keys, uint32_t n, bool reverse) {
    if ((uint64_t) n * n > r->lim.max_steps) {
        jfail(r, "sorting %u items would exceed the step budget", n);
        return NULL;
    }
    uint32_t * ix = (uint32_t *) ralloc(r, sizeof(uint32_t) * (n ? n : 1));
    if (!ix) return NULL;
    for (uint32_t i = 0; i < n; i++) {   // insertion sort of the positions: stable, bounded above
        uint32_t j = i;
        bool ok = true;
        while (j > 0) {
            const jv & kj = keys[ix[j - 1]];
            const bool less = reverse ? jv_less(r, kj, keys[i], &ok) : jv_less(r, keys[i], kj, &ok);
            if (!ok || !less) break;
            ix[j] = ix[j - 1];
            j--;
        }
        if (!ok) return NULL;
        ix[j] = i;
        r->steps += i;
    }
    return ix;
}

static void write_value(jrender * r, jbuf * b, const jv & v, bool json, const jjson_style & st, int level) {
    if (level > 200) {
        jfail(r, "a value nested too deep to print");
        return;
    }
    char num_buf[40];
    const char quote = json ? '"' : '\'';
    auto sep = [&]() {
        if (st.item_sep.t == J_STR) jbuf_put(b, st.item_sep.s, st.item_sep.n);
        else jbuf_put(b, st.indent < 0 ? ", " : ",", st.indent < 0 ? 2 : 1);
        put_indent(b, st.indent, level + 1);
    };
    switch (v.t) {
        case J_UNDEF:
        case J_NONE: jbuf_puts(b, "null"); break;
        case J_BOOL: jbuf_puts(b, json ? (v.b ? "true" : "false") : (v.b ? "True" : "False")); break;
        case J_INT: snprintf(num_buf, sizeof(num_buf), "%lld", (long long) v.i); jbuf_puts(b, num_buf); break;
        case J_FLOAT: json_format_double(v.d, num_buf); jbuf_puts(b, num_buf); break;
        case J_STR:
            if (json) put_json_string(b, v.s, v.n);
            else put_py_string(b, v.s, v.n, quote);
            break;
        case J_LIST:
            if (v.l->n == 0) {   // as Python and nlohmann write it (minja adds a blank line with an indent)
                jbuf_put(b, "[]", 2);
                break;
            }
            jbuf_put(b, "[", 1);
            put_indent(b, st.indent, level + 1);
            for (uint32_t i = 0; i < v.l->n && !r->failed; i++) {
                if (i) sep();
                write_value(r, b, v.l->v[i], json, st, level + 1);
            }
            put_indent(b, st.indent, level);
            jbuf_put(b, "]", 1);
            break;
        case J_DICT: {
            if (v.o->n == 0) {
                jbuf_put(b, "{}", 2);
                break;
            }
            // json.dumps' sort_keys: keys of types that do not compare are an error, as in Python
            const uint32_t * order = st.sort_keys ? jv_sort_order(r, v.o->k, v.o->n, false) : NULL;
            if (r->failed) break;
            jbuf_put(b, "{", 1);
            put_indent(b, st.indent, level + 1);
            for (uint32_t i = 0; i < v.o->n && !r->failed; i++) {
                if (i) sep();
                const uint32_t at = order ? order[i] : i;
                const jv & k = v.o->k[at];
                if (k.t == J_STR) {
                    put_py_string(b, k.s, k.n, quote);
                } else {
                    jbuf_put(b, &quote, 1);
                    write_value(r, b, k, true, jjson_style{-1, false, jv_undef(), jv_undef()}, 0);
                    jbuf_put(b, &quote, 1);
                }
                if (st.key_sep.t == J_STR) jbuf_put(b, st.key_sep.s, st.key_sep.n);
                else jbuf_put(b, ": ", 2);
                write_value(r, b, v.o->v[at], json, st, level + 1);
            }
            put_indent(b, st.indent, level);
            jbuf_put(b, "}", 1);
            break;
        }
        case J_FUNC: jfail(r, "cannot print or serialise a function"); break;
    }
}

void jv_write_repr(jrender * r, jbuf * b, const jv & v, bool json, int indent, int level) {
    write_value(r, b, v, json, jjson_style{indent, false, jv_undef(), jv_undef()}, level);
}

void jv_write_json(jrender * r, jbuf * b, const jv & v, const jjson_style & style) {
    write_value(r, b, v, true, style, 0);
}

void jv_write_str(jrender * r, jbuf * b, const jv & v) {
    char num_buf[64];
    switch (v.t) {
        case J_STR: jbuf_put(b, v.s, v.n); break;
        case J_INT: snprintf(num_buf, sizeof(num_buf), "%lld", (long long) v.i); jbuf_puts(b, num_buf); break;
        case J_FLOAT:
            if (fabs(v.d) < 1e30) { snprintf(num_buf, sizeof(num_buf), "%f", v.d); jbuf_puts(b, num_buf); }
            else { json_format_double(v.d, num_buf); jbuf_puts(b, num_buf); }
            break;
        case J_BOOL: jbuf_puts(b, v.b ? "True" : "False"); break;
        case J_UNDEF:
        case J_NONE: jbuf_puts(b, "None"); break;
        default: jv_write_repr(r, b, v, false, -1, 0); break;
    }
}

jv jv_to_str(jrender * r, const jv & v) {
    if (v.t == J_STR) return v;
    jbuf b;
    jbuf_init(&b, r, r->lim.max_output);
    jv_write_str(r, &b, v);
    return jbuf_value(&b);
}

}  // namespace tern
