// Jinja evaluator (see jinja.h): renders the nodes jinja_parse.cpp built.
// Scopes are a chain (a for loop and a macro call open one; a macro's parent
// is the scope it was defined in); the output goes to the current capture
// buffer (the result, or a macro's / set block's / filter block's text).
// Every node and expression costs a step of the budget; calls and recursive
// loops count against the depth limit, so the recursion here is bounded.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "chat/jinja_ast.h"
#include "chat/jinja_text.h"
#include "core/json.h"

namespace tern {

namespace {

struct jvar {
    const char * s;
    uint32_t     n;
    jv           v;
};

struct jscope {
    jscope * parent;
    jvar *   vars;
    uint32_t n, cap;
};

// A recursive loop's state: what loop(items) renders.
struct loop_state {
    const jnode * node;
    jscope *      scope;
    uint32_t      depth;   // loop.depth of the loop; loop(x) runs at depth + 1
};

struct state {
    jrender * r;
    jbuf *    out;
};

jscope * new_scope(jrender * r, jscope * parent) {
    jscope * s = (jscope *) jmem_alloc(r->m, sizeof(jscope));
    if (!s) {
        jfail(r, "out of memory (%zu bytes for the template)", r->m->cap);
        return NULL;
    }
    s->parent = parent;
    s->vars = NULL;
    s->n = s->cap = 0;
    return s;
}

bool scope_set(jrender * r, jscope * s, const char * name, uint32_t n, jv v) {
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->vars[i].n == n && memcmp(s->vars[i].s, name, n) == 0) {
            s->vars[i].v = v;
            return true;
        }
    }
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 8;
        jvar * nv = (jvar *) jmem_alloc(r->m, sizeof(jvar) * cap);
        if (!nv) return jfail(r, "out of memory (%zu bytes for the template)", r->m->cap);
        if (s->n) memcpy(nv, s->vars, sizeof(jvar) * s->n);
        s->vars = nv;
        s->cap = cap;
    }
    s->vars[s->n++] = jvar{name, n, v};
    return true;
}

jv * scope_find(jscope * s, const char * name, uint32_t n) {
    for (; s; s = s->parent) {
        for (uint32_t i = s->n; i-- > 0;) {
            if (s->vars[i].n == n && memcmp(s->vars[i].s, name, n) == 0) return &s->vars[i].v;
        }
    }
    return NULL;
}

bool step(jrender * r, uint32_t pos) {
    r->cur_pos = pos;
    if (++r->steps > r->lim.max_steps) {
        return jfail(r, "the template took more than %llu steps (a loop without end?)", (unsigned long long) r->lim.max_steps);
    }
    return !r->failed;
}

}  // namespace

bool jcharge(jrender * r, uint64_t units) {
    r->steps += units;
    if (r->steps > r->lim.max_steps && !r->failed) {
        return jfail(r, "the template took more than %llu steps (a loop without end?)", (unsigned long long) r->lim.max_steps);
    }
    return !r->failed;
}

bool jcharge_size(jrender * r, const jv & v) {
    switch (v.t) {
        case J_STR: return jcharge(r, v.n >> 6);
        case J_LIST: return jcharge(r, v.l->n >> 3);
        case J_DICT: return jcharge(r, v.o->n >> 3);
        default: return !r->failed;
    }
}

namespace {

jv eval(jrender * r, const jexpr * e);
bool render_body(jrender * r, jbuf * out, const jnode * n);

bool is_num(const jv & v) { return v.t == J_INT || v.t == J_FLOAT; }
double num(const jv & v) { return v.t == J_INT ? (double) v.i : v.d; }

// Arguments of a call, evaluated.
struct args_buf {
    jv *    pos;
    jname * kw;
    jv *    kwv;
    jcall   call;
};

bool eval_args(jrender * r, const jexpr * e, args_buf * a, const jv * first) {
    if (r->failed) return false;  // (a failed callee: vals below would stay unset)
    // Values first: an expanded argument's count is known once it is evaluated.
    jv * vals = (jv *) jmem_alloc(r->m, sizeof(jv) * (e->n_args + 1));
    if (!vals) return jfail(r, "out of memory (%zu bytes for the template)", r->m->cap);
    uint32_t n_pos = first ? 1 : 0, n_kw = 0;
    for (uint32_t i = 0; i < e->n_args; i++) {
        const jarg & g = e->args[i];
        vals[i] = eval(r, g.value);
        if (r->failed) return false;
        if (g.expand == 1) {
            if (vals[i].t != J_LIST) return jfail(r, "*argument: expansion needs a list");
            n_pos += vals[i].l->n;
        } else if (g.expand == 2) {
            if (vals[i].t != J_DICT) return jfail(r, "**argument: expansion needs a dict");
            n_kw += vals[i].o->n;
        } else {
            (g.name ? n_kw : n_pos)++;
        }
    }
    a->pos = (jv *) jmem_alloc(r->m, sizeof(jv) * (n_pos + 1));
    a->kw = (jname *) jmem_alloc(r->m, sizeof(jname) * (n_kw + 1));
    a->kwv = (jv *) jmem_alloc(r->m, sizeof(jv) * (n_kw + 1));
    if (!a->pos || !a->kw || !a->kwv) return jfail(r, "out of memory (%zu bytes for the template)", r->m->cap);
    uint32_t p = 0, k = 0;
    if (first) a->pos[p++] = *first;
    for (uint32_t i = 0; i < e->n_args; i++) {
        const jarg & g = e->args[i];
        const jv & v = vals[i];
        if (g.expand == 1) {
            for (uint32_t j = 0; j < v.l->n; j++) a->pos[p++] = v.l->v[j];
        } else if (g.expand == 2) {
            for (uint32_t j = 0; j < v.o->n; j++) {
                if (v.o->k[j].t != J_STR) return jfail(r, "**argument: keyword names must be strings");
                a->kw[k] = jname{v.o->k[j].s, v.o->k[j].n};
                a->kwv[k++] = v.o->v[j];
            }
        } else if (g.name) {
            a->kw[k] = jname{g.name, g.name_len};
            a->kwv[k++] = v;
        } else {
            a->pos[p++] = v;
        }
    }
    a->call = jcall{a->pos, p, a->kw, a->kwv, k};
    return !r->failed;
}

// The items a for loop (or a filter) walks: a list's items, a dict's keys, a string's characters.
bool iterate(jrender * r, const jv & v, jv * out_list) {
    if (v.t == J_LIST) {
        *out_list = v;
        return true;
    }
    jv l = jv_new_list(r, 0);
    if (r->failed) return false;
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
        return jfail(r, "cannot loop over this value (not a list, dict or string)");
    }
    *out_list = l;
    return !r->failed;
}

bool assign_names(jrender * r, jscope * s, const jname * names, uint32_t n, const jv & v) {
    if (n == 1) return scope_set(r, s, names[0].s, names[0].n, v);
    if (v.t != J_LIST || v.l->n != n) return jfail(r, "cannot unpack into %u names", n);
    for (uint32_t i = 0; i < n; i++) {
        if (!scope_set(r, s, names[i].s, names[i].n, v.l->v[i])) return false;
    }
    return true;
}

// Python's slice of n items with start / stop / step (each may be absent).
void slice_bounds(int64_t n, const jv * a, const jv * b, const jv * c, int64_t * start, int64_t * stop, int64_t * stepv) {
    int64_t st = c && !jv_null(*c) ? (c->t == J_INT ? c->i : (int64_t) num(*c)) : 1;
    if (st == 0) st = 1;
    int64_t lo, hi;
    auto norm = [&](const jv * v, int64_t dflt, bool is_start) {
        if (!v || jv_null(*v)) return dflt;
        int64_t x = v->t == J_INT ? v->i : (int64_t) num(*v);
        if (x < 0) x += n;
        if (st > 0) {
            if (x < 0) x = 0;
            if (x > n) x = n;
        } else {
            if (x < -1) x = -1;
            if (x > n - 1) x = n - 1;
        }
        (void) is_start;
        return x;
    };
    if (st > 0) {
        lo = norm(a, 0, true);
        hi = norm(b, n, false);
    } else {
        lo = norm(a, n - 1, true);
        hi = norm(b, -1, false);
    }
    *start = lo;
    *stop = hi;
    *stepv = st;
}

jv do_slice(jrender * r, const jv & v, const jv * a, const jv * b, const jv * c) {
    if (v.t == J_LIST) {
        int64_t s, e, st;
        slice_bounds(v.l->n, a, b, c, &s, &e, &st);
        jv out = jv_new_list(r, 0);
        for (int64_t i = s; st > 0 ? i < e : i > e; i += st) jlist_push(r, out.l, v.l->v[i]);
        return out;
    }
    if (v.t == J_STR) {
        // Code point offsets.
        uint32_t n_cp = utf8_cp_count(v.s, v.n);
        uint32_t * at = (uint32_t *) jmem_alloc(r->m, sizeof(uint32_t) * (n_cp + 1));
        if (!at) { jfail(r, "out of memory"); return jv_undef(); }
        uint32_t k = 0;
        for (uint32_t i = 0; i < v.n; i++) {
            if (((unsigned char) v.s[i] & 0xc0) != 0x80) at[k++] = i;
        }
        at[n_cp] = v.n;
        int64_t s, e, st;
        slice_bounds(n_cp, a, b, c, &s, &e, &st);
        if (st == 1) return e > s ? jv_str(v.s + at[s], at[e] - at[s]) : jv_str("", 0);
        jbuf out;
        jbuf_init(&out, r, r->lim.max_output);
        for (int64_t i = s; st > 0 ? i < e : i > e; i += st) jbuf_put(&out, v.s + at[i], at[i + 1] - at[i]);
        return jbuf_value(&out);
    }
    jfail(r, jv_null(v) ? "cannot slice an undefined value" : "cannot slice this value");
    return jv_undef();
}

jv index_value(jrender * r, const jv & v, const jv & k) {
    if (v.t == J_DICT) {
        jv * f = jdict_find_v(v.o, k);
        return f ? *f : jv_undef();
    }
    if (v.t == J_LIST && k.t == J_STR) {   // a named tuple's field (Jinja2's getitem falls back to getattr)
        jv * f = jlist_field(v.l, k.s, k.n);
        return f ? *f : jv_undef();
    }
    if (v.t == J_LIST || v.t == J_STR) {
        if (k.t != J_INT) return jv_undef();
        if (v.t == J_LIST) {
            int64_t i = k.i < 0 ? k.i + v.l->n : k.i;
            return i >= 0 && i < (int64_t) v.l->n ? v.l->v[i] : jv_undef();
        }
        jv one = jv_int(1);
        jv start = k, stop = jv_int(k.i + 1);
        if (k.i == -1) stop = jv_none();
        jv s = do_slice(r, v, &start, &stop, &one);
        return s.n ? s : jv_undef();
    }
    if (jv_null(v)) {
        jfail(r, "cannot read a member of an undefined value");
        return jv_undef();
    }
    return jv_undef();
}

jv arith(jrender * r, uint8_t op, const jv & a, const jv & b) {
    if (op == JOP_ADD) {
        if (a.t == J_STR || b.t == J_STR) {   // minja: anything joins a string as text
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            jv_write_str(r, &out, a);
            jv_write_str(r, &out, b);
            return jbuf_value(&out);
        }
        if (a.t == J_LIST && b.t == J_LIST) {
            jv l = jv_new_list(r, a.l->n + b.l->n);
            for (uint32_t i = 0; i < a.l->n; i++) jlist_push(r, l.l, a.l->v[i]);
            for (uint32_t i = 0; i < b.l->n; i++) jlist_push(r, l.l, b.l->v[i]);
            return l;
        }
    }
    if (op == JOP_MOD && a.t == J_STR) {
        // Python's "fmt" % value: a list is the arguments when it has one per
        // conversion (a tuple there; tuples are lists here), else one value.
        const bool spread = b.t == J_LIST && b.l->n == jinja_percent_count(a);
        jcall c = {spread ? b.l->v : &b, spread ? b.l->n : 1, NULL, NULL, 0};
        return jinja_percent_format(r, a, c);
    }
    if (op == JOP_MUL && a.t == J_INT && (b.t == J_STR || b.t == J_LIST)) return arith(r, op, b, a);
    if (op == JOP_MUL && (a.t == J_STR || a.t == J_LIST) && b.t == J_INT) {
        if (b.i > 0 && (uint64_t) b.i * (a.t == J_STR ? a.n : a.l->n) > r->lim.max_output) {
            jfail(r, "a repetition larger than the output limit");
            return jv_undef();
        }
        if (a.t == J_STR) {
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            for (int64_t i = 0; i < b.i && !r->failed; i++) jbuf_put(&out, a.s, a.n);
            return jbuf_value(&out);
        }
        jv l = jv_new_list(r, 0);
        for (int64_t i = 0; i < b.i && !r->failed; i++) {
            for (uint32_t k = 0; k < a.l->n; k++) jlist_push(r, l.l, a.l->v[k]);
        }
        return l;
    }
    const bool ab = a.t == J_BOOL || is_num(a), bb = b.t == J_BOOL || is_num(b);
    if (!ab || !bb) {
        jfail(r, "unsupported operand types for an arithmetic operator");
        return jv_undef();
    }
    const bool ints = (a.t == J_INT || a.t == J_BOOL) && (b.t == J_INT || b.t == J_BOOL);
    const int64_t ai = a.t == J_BOOL ? a.b : a.i, bi = b.t == J_BOOL ? b.b : b.i;
    const double ad = a.t == J_FLOAT ? a.d : (double) ai, bd = b.t == J_FLOAT ? b.d : (double) bi;
    switch (op) {
        case JOP_ADD: return ints ? jv_int((int64_t) ((uint64_t) ai + (uint64_t) bi)) : jv_float(ad + bd);
        case JOP_SUB: return ints ? jv_int((int64_t) ((uint64_t) ai - (uint64_t) bi)) : jv_float(ad - bd);
        case JOP_MUL: return ints ? jv_int((int64_t) ((uint64_t) ai * (uint64_t) bi)) : jv_float(ad * bd);
        case JOP_DIV:
            if (bd == 0) { jfail(r, "division by zero"); return jv_undef(); }
            return jv_float(ad / bd);
        case JOP_FLOORDIV:
            if (bd == 0) { jfail(r, "division by zero"); return jv_undef(); }
            if (ints) {
                if (ai == INT64_MIN && bi == -1) return jv_int(INT64_MIN);
                int64_t q = ai / bi;
                if ((ai % bi != 0) && ((ai < 0) != (bi < 0))) q--;
                return jv_int(q);
            }
            return jv_float(floor(ad / bd));
        case JOP_MOD:
            if (bd == 0) { jfail(r, "modulo by zero"); return jv_undef(); }
            if (ints) {
                if (bi == -1) return jv_int(0);
                int64_t m = ai % bi;
                if (m != 0 && ((m < 0) != (bi < 0))) m += bi;
                return jv_int(m);
            }
            return jv_float(ad - bd * floor(ad / bd));
        case JOP_POW:
            if (ints && bi >= 0) {
                int64_t res = 1;
                for (int64_t i = 0; i < bi && i < 64; i++) res = (int64_t) ((uint64_t) res * (uint64_t) ai);
                return jv_int(res);
            }
            return jv_float(pow(ad, bd));
        default: return jv_undef();
    }
}

bool contains(jrender * r, const jv & hay, const jv & needle) {
    // A scan: a step per 8 items, per 64 bytes times the needle's 64-byte blocks (memcmp at each offset).
    if (hay.t == J_STR && needle.t == J_STR) {
        if (!jcharge(r, ((uint64_t) hay.n * (1 + (needle.n >> 6))) >> 6)) return false;
    } else if (!jcharge_size(r, hay)) {
        return false;
    }
    if (hay.t == J_LIST) {
        for (uint32_t i = 0; i < hay.l->n; i++) {
            if (jv_equal(hay.l->v[i], needle)) return true;
        }
        return false;
    }
    if (hay.t == J_DICT) return jdict_find_v(hay.o, needle) != NULL;
    if (hay.t == J_STR) {
        if (needle.t != J_STR) {
            jfail(r, "'in <string>' needs a string on the left");
            return false;
        }
        if (needle.n == 0) return true;
        for (uint32_t i = 0; i + needle.n <= hay.n; i++) {
            if (memcmp(hay.s + i, needle.s, needle.n) == 0) return true;
        }
        return false;
    }
    return false;
}

jv compare(jrender * r, uint8_t op, const jv & a, const jv & b) {
    if (op != JOP_IN && op != JOP_NOT_IN && !jcharge_size(r, a)) return jv_undef();   // comparisons walk a
    bool ok = true;
    switch (op) {
        case JOP_EQ: return jv_bool(jv_equal(a, b));
        case JOP_NE: return jv_bool(!jv_equal(a, b));
        case JOP_LT: return jv_bool(jv_less(r, a, b, &ok));
        case JOP_GT: return jv_bool(jv_less(r, b, a, &ok));
        case JOP_LE: { bool lt = jv_less(r, b, a, &ok); return jv_bool(ok && !lt); }
        case JOP_GE: { bool lt = jv_less(r, a, b, &ok); return jv_bool(ok && !lt); }
        case JOP_IN: return jv_bool(contains(r, b, a));
        default: return jv_bool(!contains(r, b, a));   // JOP_NOT_IN
    }
}

jv call_value(jrender * r, const jv & f, const jcall & c) {
    if (f.t == J_FUNC) return jinja_call_func(r, f.f, c);
    if (f.t == J_DICT) {
        if (jv * l = jdict_find(f.o, "__loop_call__", 13)) {
            if (l->t == J_FUNC) return jinja_call_func(r, l->f, c);
        }
    }
    jfail(r, jv_null(f) ? "calling an undefined function" : "calling a value that is no function");
    return jv_undef();
}

jv eval(jrender * r, const jexpr * e) {
    if (!step(r, e->pos)) return jv_undef();
    switch (e->kind) {
        case JX_LIT: return e->lit;
        case JX_VAR: {
            if (jv * v = scope_find((jscope *) r->scope, e->lit.s, e->lit.n)) return *v;
            // the name, read back through the expression
            if (jinja_has_global(e->lit.s, e->lit.n)) return jv_new_func(r, JF_BUILTIN, (void *) e);
            return jv_undef();
        }
        case JX_LIST: {
            jv l = jv_new_list(r, e->n_args);
            for (uint32_t i = 0; i < e->n_args && !r->failed; i++) jlist_push(r, l.l, eval(r, e->args[i].value));
            return l;
        }
        case JX_DICT: {
            jv d = jv_new_dict(r, e->n_args);
            for (uint32_t i = 0; i < e->n_args && !r->failed; i++) {
                jv k = eval(r, e->args[i].key);
                jv v = eval(r, e->args[i].value);
                if (k.t == J_LIST || k.t == J_DICT) { jfail(r, "unhashable dict key"); break; }
                jdict_set(r, d.o, k, v);
            }
            return d;
        }
        case JX_ATTR: {
            jv v = eval(r, e->a);
            r->cur_pos = e->pos;
            if (v.t == J_DICT) {
                jv * f = jdict_find(v.o, e->lit.s, e->lit.n);
                return f ? *f : jv_undef();
            }
            if (v.t == J_LIST) {   // a named tuple's field
                jv * f = jlist_field(v.l, e->lit.s, e->lit.n);
                return f ? *f : jv_undef();
            }
            if (jv_null(v)) {
                jfail(r, "cannot read '%s' of an undefined value", e->lit.s);
                return jv_undef();
            }
            return jv_undef();
        }
        case JX_INDEX: {
            jv v = eval(r, e->a);
            jv k = eval(r, e->b);
            r->cur_pos = e->pos;
            return r->failed ? jv_undef() : index_value(r, v, k);
        }
        case JX_SLICE: {
            jv v = eval(r, e->a);
            jv a = e->b ? eval(r, e->b) : jv_none();
            jv b = e->c ? eval(r, e->c) : jv_none();
            jv c = e->d ? eval(r, e->d) : jv_none();
            r->cur_pos = e->pos;
            return r->failed ? jv_undef() : do_slice(r, v, &a, &b, &c);
        }
        case JX_CALL: {
            args_buf a;
            if (e->a->kind == JX_VAR && !scope_find((jscope *) r->scope, e->a->lit.s, e->a->lit.n)) {
                if (!eval_args(r, e, &a, NULL)) return jv_undef();
                r->cur_pos = e->pos;
                bool found = false;
                jv res = jinja_call_global(r, e->a->lit.s, e->a->lit.n, a.call, &found);
                if (!found) jfail(r, "unknown function '%s'", e->a->lit.s);
                return res;
            }
            jv f = eval(r, e->a);
            if (!eval_args(r, e, &a, NULL)) return jv_undef();
            r->cur_pos = e->pos;
            return call_value(r, f, a.call);
        }
        case JX_METHOD: {
            jv v = eval(r, e->a);
            args_buf a;
            if (!eval_args(r, e, &a, NULL)) return jv_undef();
            r->cur_pos = e->pos;
            return jinja_call_method(r, v, e->lit.s, e->lit.n, a.call);
        }
        case JX_FILTER: {
            if (e->id == k_jinja_unknown_id) {
                r->cur_pos = e->pos;
                jfail(r, "unknown filter '%s'", e->lit.s);
                return jv_undef();
            }
            jv v = e->a ? eval(r, e->a) : jv_undef();
            args_buf a;
            if (!eval_args(r, e, &a, NULL)) return jv_undef();
            r->cur_pos = e->pos;
            return jinja_apply_filter(r, e->id, v, a.call);
        }
        case JX_TEST: {
            if (e->id == k_jinja_unknown_id) {
                r->cur_pos = e->pos;
                jfail(r, "unknown test '%s'", e->lit.s);
                return jv_undef();
            }
            jv v = eval(r, e->a);
            args_buf a;
            if (!eval_args(r, e, &a, NULL)) return jv_undef();
            r->cur_pos = e->pos;
            bool t = jinja_apply_test(r, e->id, v, a.call);
            return jv_bool(e->negate ? !t : t);
        }
        case JX_NEG:
        case JX_POS: {
            jv v = eval(r, e->a);
            r->cur_pos = e->pos;
            if (v.t == J_INT) return jv_int(e->kind == JX_NEG ? (int64_t) (0 - (uint64_t) v.i) : v.i);
            if (v.t == J_FLOAT) return jv_float(e->kind == JX_NEG ? -v.d : v.d);
            if (v.t == J_BOOL) return jv_int(e->kind == JX_NEG ? -(int64_t) v.b : v.b);
            jfail(r, "unary %c needs a number", e->kind == JX_NEG ? '-' : '+');
            return jv_undef();
        }
        case JX_NOT: return jv_bool(!jv_truthy(eval(r, e->a)));
        case JX_AND: {
            jv a = eval(r, e->a);
            return jv_truthy(a) ? eval(r, e->b) : a;
        }
        case JX_OR: {
            jv a = eval(r, e->a);
            return jv_truthy(a) ? a : eval(r, e->b);
        }
        case JX_COND: {
            jv c = eval(r, e->a);
            if (jv_truthy(c)) return eval(r, e->b);
            return e->c ? eval(r, e->c) : jv_undef();
        }
        case JX_CONCAT: {
            jv a = eval(r, e->a);
            jv b = eval(r, e->b);
            jbuf out;
            jbuf_init(&out, r, r->lim.max_output);
            jv_write_str(r, &out, a);
            jv_write_str(r, &out, b);
            return jbuf_value(&out);
        }
        case JX_BINARY: {
            jv a = eval(r, e->a);
            jv b = eval(r, e->b);
            r->cur_pos = e->pos;
            if (r->failed) return jv_undef();
            if (e->op < JOP_EQ) return arith(r, e->op, a, b);
            // A comparison, or a chain of them: each link compares the previous right operand with its own.
            for (const jexpr * link = e;;) {
                jv res = compare(r, link->op, a, b);
                link = link->c;
                if (!link || r->failed || !res.b) return res;
                a = b;
                b = eval(r, link->b);
                r->cur_pos = link->pos;
                if (r->failed) return jv_undef();
            }
        }
    }
    return jv_undef();
}

// Print a value as {{ }} does (minja): strings as they are, True / False,
// nothing for none, numbers, containers as Python repr.
void print_value(jrender * r, jbuf * out, const jv & v) {
    switch (v.t) {
        case J_STR: jbuf_put(out, v.s, v.n); break;
        case J_BOOL: jbuf_puts(out, v.b ? "True" : "False"); break;
        case J_UNDEF:
        case J_NONE: break;
        default: jv_write_repr(r, out, v, false, -1, 0); break;
    }
}

bool enter(jrender * r) {
    if (++r->depth > r->lim.max_depth) return jfail(r, "calls or blocks nested deeper than %u", r->lim.max_depth);
    return true;
}

// depth: loop.depth (1, or one more per recursive loop() call).
bool render_for(jrender * r, jbuf * out, const jnode * n, const jv & iterable_value, uint32_t depth) {
    jscope * outer = (jscope *) r->scope;
    jv items = jv_undef();
    if (!iterate(r, iterable_value, &items)) return false;
    // The items the condition keeps (evaluated with the names assigned in a scratch scope).
    jv kept = items;
    if (n->cond) {
        kept = jv_new_list(r, 0);
        jscope * probe = new_scope(r, outer);
        if (!probe) return false;
        r->scope = probe;
        for (uint32_t i = 0; i < items.l->n && !r->failed; i++) {
            if (!assign_names(r, probe, n->names, n->n_names, items.l->v[i])) break;
            if (jv_truthy(eval(r, n->cond))) jlist_push(r, kept.l, items.l->v[i]);
        }
        r->scope = outer;
        if (r->failed) return false;
    }
    const uint32_t count = kept.l->n;
    if (count == 0) return n->else_body ? render_body(r, out, n->else_body) : true;
    jscope * ls = new_scope(r, outer);
    jv loop = jv_new_dict(r, 12);
    if (!ls || r->failed) return false;
    if (n->recursive) {
        loop_state * st = (loop_state *) jmem_alloc(r->m, sizeof(loop_state));
        if (!st) return jfail(r, "out of memory");
        st->node = n;
        st->scope = outer;
        st->depth = depth;
        jv fv = jv_new_func(r, JF_LOOP, st);
        if (r->failed) return false;
        jdict_set(r, loop.o, jv_str("__loop_call__", 13), fv);
    }
    jv cyc = jv_new_func(r, JF_LOOP_CYCLE, loop.o);   // cycle() reads loop.index0
    if (r->failed) return false;
    jdict_set(r, loop.o, jv_str("cycle", 5), cyc);
    jloop_changed * changed = (jloop_changed *) jmem_alloc(r->m, sizeof(jloop_changed));
    if (!changed) return jfail(r, "out of memory");
    changed->seen = false;
    changed->last = jv_undef();
    jdict_set(r, loop.o, jv_str("changed", 7), jv_new_func(r, JF_LOOP_CHANGED, changed));
    jdict_set(r, loop.o, jv_str("depth", 5), jv_int(depth));
    jdict_set(r, loop.o, jv_str("depth0", 6), jv_int((int64_t) depth - 1));
    scope_set(r, ls, "loop", 4, loop);
    r->scope = ls;
    for (uint32_t i = 0; i < count && !r->failed; i++) {
        if (!step(r, n->pos)) break;
        const jv & item = kept.l->v[i];
        assign_names(r, ls, n->names, n->n_names, item);
        jdict_set(r, loop.o, jv_str("index", 5), jv_int((int64_t) i + 1));
        jdict_set(r, loop.o, jv_str("index0", 6), jv_int((int64_t) i));
        jdict_set(r, loop.o, jv_str("revindex", 8), jv_int((int64_t) (count - i)));
        jdict_set(r, loop.o, jv_str("revindex0", 9), jv_int((int64_t) (count - i - 1)));
        jdict_set(r, loop.o, jv_str("length", 6), jv_int((int64_t) count));
        jdict_set(r, loop.o, jv_str("first", 5), jv_bool(i == 0));
        jdict_set(r, loop.o, jv_str("last", 4), jv_bool(i + 1 == count));
        jdict_set(r, loop.o, jv_str("previtem", 8), i > 0 ? kept.l->v[i - 1] : jv_undef());
        jdict_set(r, loop.o, jv_str("nextitem", 8), i + 1 < count ? kept.l->v[i + 1] : jv_undef());
        render_body(r, out, n->body);
        if (r->loop_ctl == 1) { r->loop_ctl = 0; break; }
        r->loop_ctl = 0;
    }
    r->scope = outer;
    return !r->failed;
}

// A macro (JN_MACRO) or a call block's caller (JN_CALL) as a value: the node
// and the scope it is defined in.
jv macro_value(jrender * r, const jnode * n) {
    jv v = jv_new_func(r, JF_MACRO, NULL);
    if (v.t == J_FUNC) {
        v.f->macro = n;
        v.f->scope = r->scope;
    }
    return v;
}

bool render_node(jrender * r, jbuf * out, const jnode * n) {
    if (!step(r, n->pos)) return false;
    switch (n->kind) {
        case JN_TEXT: jbuf_put(out, n->text, n->text_len); return !r->failed;
        case JN_EXPR: {
            jv v = eval(r, n->expr);
            r->cur_pos = n->pos;
            if (!r->failed) print_value(r, out, v);
            return !r->failed;
        }
        case JN_IF: {
            jv c = eval(r, n->expr);
            if (r->failed) return false;
            if (jv_truthy(c)) return render_body(r, out, n->body);
            return n->else_body ? render_body(r, out, n->else_body) : true;
        }
        case JN_FOR: {
            jv it = eval(r, n->expr);
            if (r->failed || !enter(r)) return false;
            bool ok = render_for(r, out, n, it, 1);
            r->depth--;
            return ok;
        }
        case JN_SET: {
            jv v = eval(r, n->expr);
            r->cur_pos = n->pos;
            if (r->failed) return false;
            if (n->ns.s) {
                jv * ns = scope_find((jscope *) r->scope, n->ns.s, n->ns.n);
                if (!ns || ns->t != J_DICT) return jfail(r, "'%.*s' is not a namespace", (int) n->ns.n, n->ns.s);
                return jdict_set(r, ns->o, jv_str(n->names[0].s, n->names[0].n), v);
            }
            return assign_names(r, (jscope *) r->scope, n->names, n->n_names, v);
        }
        case JN_SET_BLOCK: {
            jbuf cap;
            jbuf_init(&cap, r, r->lim.max_output);
            if (!enter(r)) return false;
            render_body(r, &cap, n->body);
            r->depth--;
            jv v = jbuf_value(&cap);
            return !r->failed && scope_set(r, (jscope *) r->scope, n->name.s, n->name.n, v);
        }
        case JN_MACRO: {
            jv v = macro_value(r, n);
            return !r->failed && scope_set(r, (jscope *) r->scope, n->name.s, n->name.n, v);
        }
        case JN_FILTER: {
            jbuf cap;
            jbuf_init(&cap, r, r->lim.max_output);
            if (!enter(r)) return false;
            render_body(r, &cap, n->body);
            r->depth--;
            if (r->failed) return false;
            // Apply the chain innermost first: the expression's leaf takes the text.
            const jexpr * chain[64];
            int k = 0;
            for (const jexpr * f = n->expr; f && k < 64; f = f->a) chain[k++] = f;
            jv v = jbuf_value(&cap);
            while (k-- > 0 && !r->failed) {
                if (chain[k]->id == k_jinja_unknown_id) {
                    r->cur_pos = chain[k]->pos;
                    return jfail(r, "unknown filter '%s'", chain[k]->lit.s);
                }
                args_buf a;
                if (!eval_args(r, chain[k], &a, NULL)) return false;
                v = jinja_apply_filter(r, chain[k]->id, v, a.call);
            }
            if (!r->failed) jv_write_str(r, out, v);
            return !r->failed;
        }
        case JN_CALL: {
            // The macro called with "caller" bound to this block's body (as a macro of
            // the call's parameters, closing over the current scope).
            const jexpr * e = n->expr;
            jv f = eval(r, e->a);
            args_buf a;
            if (!eval_args(r, e, &a, NULL)) return false;
            r->cur_pos = e->pos;
            if (f.t != J_FUNC || f.f->kind != JF_MACRO) return jfail(r, "{%% call %%} needs a macro");
            r->pending_caller = macro_value(r, n);
            if (r->failed) return false;
            jv v = jinja_call_macro(r, f.f, a.call);
            r->pending_caller = jv_undef();
            if (!r->failed) jv_write_str(r, out, v);
            return !r->failed;
        }
        case JN_WITH: {
            // The values first (in the scope outside), then the body in a scope of its own.
            jscope * outer = (jscope *) r->scope;
            jscope * inner = new_scope(r, outer);
            if (!inner) return false;
            for (uint32_t i = 0; i < n->n_params && !r->failed; i++) {
                jv v = eval(r, n->params[i].value);
                if (!r->failed) scope_set(r, inner, n->params[i].name, n->params[i].name_len, v);
            }
            if (r->failed || !enter(r)) return false;
            r->scope = inner;
            render_body(r, out, n->body);
            r->scope = outer;
            r->depth--;
            return !r->failed;
        }
        case JN_BREAK: r->loop_ctl = 1; return true;
        case JN_CONTINUE: r->loop_ctl = 2; return true;
        case JN_BLOCK: return render_body(r, out, n->body);
    }
    return true;
}

bool render_body(jrender * r, jbuf * out, const jnode * n) {
    for (; n && !r->failed && r->loop_ctl == 0; n = n->next) render_node(r, out, n);
    return !r->failed;
}

}  // namespace

bool jfail(jrender * r, const char * fmt, ...) {
    if (r->failed) return false;
    r->failed = true;
    r->err_pos = r->cur_pos;
    if (r->err && r->err_size) {
        size_t line = 1, col = 1;
        for (size_t k = 0; k < r->err_pos && r->t && k < r->t->len; k++) {
            if (r->t->src[k] == '\n') { line++; col = 1; }
            else if (((unsigned char) r->t->src[k] & 0xc0) != 0x80) col++;
        }
        int n = snprintf(r->err, r->err_size, "line %zu, column %zu: ", line, col);
        if (n > 0 && (size_t) n < r->err_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->err + n, r->err_size - (size_t) n, fmt, ap);
            va_end(ap);
        }
    }
    return false;
}

jv jinja_call_macro(jrender * r, jfunc * f, const jcall & c) {
    const jnode * m = f->macro;
    if (!enter(r)) return jv_undef();
    jscope * s = new_scope(r, (jscope *) f->scope);
    if (!s) return jv_undef();
    if (r->pending_caller.t == J_FUNC) {   // a {% call %} block's body, for this call only
        scope_set(r, s, "caller", 6, r->pending_caller);
        r->pending_caller = jv_undef();
    }
    if (c.n_pos > m->n_params) {
        jfail(r, "too many arguments for macro '%.*s'", (int) m->name.n, m->name.s);
        return jv_undef();
    }
    bool * given = (bool *) jmem_alloc(r->m, m->n_params + 1);
    if (!given) { jfail(r, "out of memory"); return jv_undef(); }
    memset(given, 0, m->n_params + 1);
    for (uint32_t i = 0; i < c.n_pos; i++) {
        scope_set(r, s, m->params[i].name, m->params[i].name_len, c.pos[i]);
        given[i] = true;
    }
    for (uint32_t k = 0; k < c.n_kw; k++) {
        uint32_t i = 0;
        while (i < m->n_params && !(m->params[i].name_len == c.kw[k].n && memcmp(m->params[i].name, c.kw[k].s, c.kw[k].n) == 0)) i++;
        if (i == m->n_params) {
            jfail(r, "macro '%.*s' has no parameter '%.*s'", (int) m->name.n, m->name.s, (int) c.kw[k].n, c.kw[k].s);
            return jv_undef();
        }
        scope_set(r, s, m->params[i].name, m->params[i].name_len, c.kwv[k]);
        given[i] = true;
    }
    void * caller_scope = r->scope;
    r->scope = s;
    for (uint32_t i = 0; i < m->n_params && !r->failed; i++) {
        if (given[i]) continue;
        jv d = m->params[i].value ? eval(r, m->params[i].value) : jv_undef();
        scope_set(r, s, m->params[i].name, m->params[i].name_len, d);
    }
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    const int saved_ctl = r->loop_ctl;
    r->loop_ctl = 0;
    render_body(r, &out, m->body);
    r->loop_ctl = saved_ctl;
    r->scope = caller_scope;
    r->depth--;
    return jbuf_value(&out);
}

jv jinja_call_loop(jrender * r, jfunc * f, const jcall & c) {
    loop_state * st = (loop_state *) f->state;
    if (c.n_pos != 1 || c.n_kw != 0) {
        jfail(r, "loop() takes one list");
        return jv_undef();
    }
    if (!enter(r)) return jv_undef();
    void * caller_scope = r->scope;
    r->scope = st->scope;
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    render_for(r, &out, st->node, c.pos[0], st->depth + 1);
    r->scope = caller_scope;
    r->depth--;
    return jbuf_value(&out);
}

jinja_limits jinja_default_limits(void) {
    jinja_limits l;
    l.max_output = (size_t) 8 << 20;
    l.max_steps = 20000000;
    l.max_depth = 64;
    return l;
}

bool jinja_render(const jtemplate * t, jmem * m, const jinja_limits * lim, const jglobal * globals, size_t n_globals,
                  const jclock * clock, const char ** out, size_t * out_len, char * err, size_t err_size) {
    jrender r;
    memset(&r, 0, sizeof(r));
    r.m = m;
    r.t = t;
    r.lim = *lim;
    r.clock = clock ? *clock : jclock{0, 0};
    r.steps = m->spent;   // the budget is shared with the renders before on this block
    r.err = err;
    r.err_size = err_size;
    jscope * g = new_scope(&r, NULL);
    if (!g) return false;
    for (size_t i = 0; i < n_globals; i++) {
        scope_set(&r, g, globals[i].name, (uint32_t) strlen(globals[i].name), globals[i].value);
    }
    r.globals = g;
    r.scope = g;
    jbuf b;
    jbuf_init(&b, &r, lim->max_output);
    render_body(&r, &b, t->root);
    if (!r.failed && r.loop_ctl) {
        r.cur_pos = 0;
        jfail(&r, "break or continue outside a loop");
    }
    jv v = jbuf_value(&b);
    m->spent = r.steps;
    if (r.failed) return false;
    *out = v.s;
    *out_len = v.n;
    return true;
}

}  // namespace tern
