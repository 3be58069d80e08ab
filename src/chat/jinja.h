// A bounded Jinja interpreter for chat templates: the subset real models'
// tokenizer.chat_template use, with llama.cpp's minja (its --jinja path) as
// the reference for the output and Python's Jinja2 for semantics minja lacks.
//
//   source --jinja_parse--> template (nodes and expressions in the arena)
//          --jinja_render(globals)--> text
//
// Supported: {{ }}, {% %}, {# #} with - and + whitespace control, trim_blocks and
// lstrip_blocks as minja applies them (transformers' settings); if / elif /
// else, for (one or more names, an "if" filter, else, loop.index / index0 /
// revindex / revindex0 / first / last / length / previtem / nextitem / depth /
// depth0 / cycle() / changed(), loop(...) with recursive), with, set (names, ns.attr, block form),
// macro (defaults, keyword arguments), call blocks (caller(), with
// parameters), filter blocks, generation (no-op), break / continue; literals
// (strings with Python's escapes, numbers, true / false / none, lists, dicts,
// tuples, with or without brackets where Jinja2 takes them: set a, b = 1, 2),
// x.0 as x[0], arithmetic, comparisons (chained: a < b < c), and / or / not, in / not in,
// "is [not] test", ~, a if b else c, subscripts, slices with steps,
// attributes, calls (keyword arguments, *list and **dict expanded into the
// arguments); filters, tests, globals and methods of jinja_builtins.cpp, with
// Python's text formatting in jinja_text.cpp.
//
// Values (jinja_value.cpp): undefined, none, bool, int, float, string (UTF-8,
// lengths and slices in code points), list and dict (mutable, shared by
// reference as in Python: ns.x = ..., list.append), callables. Printing follows
// minja: strings as they are, True / False, nothing for none, other values as
// Python repr ['a', 1] / {'k': 'v'}, floats in the shortest form; tojson uses
// ", " and ": " separators and writes non-ASCII as it is.
//
// Bounds (a template inside a model file is hostile input): every allocation
// comes from one block given at the start (no heap); the output is capped;
// evaluation counts steps against a budget (loops, calls, expressions, and
// builtins, strings copied and searched in proportion to their size), so no
// template loops for ever; nesting of the source, of expressions, of macro
// calls and recursive loops is capped, so recursion here is bounded. An error
// stops the render with the template line and column and what went wrong.
// The parser and evaluator recurse (bounded): the engine is compiled in
// hosted builds only (TERN_JINJA), outside the freestanding stack bound.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tern.h"

namespace tern {

// ---------------------------------------------------------------------------
// Memory: a bump block with marks (8-byte alignment).
// ---------------------------------------------------------------------------
struct jmem {
    uint8_t * base;
    size_t    cap;
    size_t    used;
    size_t    peak;
    uint64_t  spent;   // steps the renders on this block have taken: one budget for
                       // all the renders of one call (capability probes included)
};

void * jmem_alloc(jmem * m, size_t n);   // NULL when full

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------
enum jtype : uint8_t { J_UNDEF, J_NONE, J_BOOL, J_INT, J_FLOAT, J_STR, J_LIST, J_DICT, J_FUNC };

struct jlist;
struct jdict;
struct jfunc;

struct jv {
    jtype    t;
    uint32_t n;              // J_STR: bytes
    union {
        bool          b;
        int64_t       i;
        double        d;
        const char *  s;
        jlist *       l;
        jdict *       o;
        jfunc *       f;
    };
};

struct jlist {
    jv *                 v;
    uint32_t             n, cap;
    const char * const * fields;   // a named tuple's field names (n of them; groupby's (grouper, list)), else NULL
};

struct jdict {
    jv *     k;
    jv *     v;
    uint32_t n, cap;
};

struct jrender;
struct jnode;
struct jexpr;

// A callable: a builtin (filter or global function), a macro, a bound loop()
// of a recursive for, loop.cycle, a joiner, or a cycler's next() / reset(),
// with its state.
struct jfunc {
    uint8_t        kind;     // JF_*
    uint16_t       id;       // builtin id
    const jnode *  macro;    // JF_MACRO
    void *         scope;    // JF_MACRO: the scope it was defined in
    void *         state;    // JF_LOOP, JF_LOOP_CYCLE, JF_LOOP_CHANGED, JF_JOINER, JF_CYCLER_*
};

enum { JF_BUILTIN = 0, JF_MACRO, JF_LOOP, JF_LOOP_CYCLE, JF_LOOP_CHANGED, JF_JOINER, JF_CYCLER_NEXT, JF_CYCLER_RESET };

// loop.changed(*values)'s state: the values of its last call.
struct jloop_changed {
    jv   last;   // J_LIST
    bool seen;
};

static inline jv jv_undef(void) { jv v; v.t = J_UNDEF; v.n = 0; v.i = 0; return v; }
static inline jv jv_none(void) { jv v; v.t = J_NONE; v.n = 0; v.i = 0; return v; }
static inline jv jv_bool(bool b) { jv v; v.t = J_BOOL; v.n = 0; v.i = 0; v.b = b; return v; }
static inline jv jv_int(int64_t i) { jv v; v.t = J_INT; v.n = 0; v.i = i; return v; }
static inline jv jv_float(double d) { jv v; v.t = J_FLOAT; v.n = 0; v.d = d; return v; }
static inline jv jv_str(const char * s, uint32_t n) { jv v; v.t = J_STR; v.n = n; v.s = s; return v; }
static inline bool jv_null(const jv & v) { return v.t == J_UNDEF || v.t == J_NONE; }

// Every value operation reports failures through the render state (r->failed).
jv    jv_str_dup(jrender * r, const char * s, size_t n);
jv    jv_cstr(jrender * r, const char * z);
jv    jv_new_list(jrender * r, uint32_t cap);
jv    jv_new_dict(jrender * r, uint32_t cap);
// A callable of kind JF_* with state; its other fields zero (undefined, with the
// error, when the block is full).
jv    jv_new_func(jrender * r, uint8_t kind, void * state);
bool  jlist_push(jrender * r, jlist * l, jv v);
bool  jdict_set(jrender * r, jdict * d, jv key, jv v);
jv *  jdict_find(jdict * d, const char * key, size_t n);
jv *  jdict_find_v(jdict * d, jv key);
// A named tuple's item by field name (NULL for other lists and other names).
jv *  jlist_field(jlist * l, const char * name, size_t n);
bool  jv_truthy(const jv & v);
bool  jv_equal(const jv & a, const jv & b);
// Python's <: numbers, strings (bytes), lists element-wise; false with an error otherwise.
bool  jv_less(jrender * r, const jv & a, const jv & b, bool * ok);
// The positions 0..n-1 in the order a stable sort of keys puts them (Python's
// sorted, reverse keeping equal keys in order); NULL with the error when keys
// do not compare or n * n exceeds the step budget. Charged to the budget.
uint32_t * jv_sort_order(jrender * r, const jv * keys, uint32_t n, bool reverse);
uint32_t utf8_cp_count(const char * s, size_t n);

// Text forms. str: minja's to_str (floats "%f", True / False, None, repr of
// containers); repr: Python-style (quotes on strings); json: tojson.
struct jbuf;
void jv_write_str(jrender * r, jbuf * b, const jv & v);
void jv_write_repr(jrender * r, jbuf * b, const jv & v, bool json, int indent, int level);
// tojson with json.dumps' arguments: indent (< 0: one line), sort_keys, and the
// item and key separators (J_STR, or undefined for "," / ", " and ": ").
struct jjson_style {
    int  indent;
    bool sort_keys;
    jv   item_sep;
    jv   key_sep;
};
void jv_write_json(jrender * r, jbuf * b, const jv & v, const jjson_style & style);
jv   jv_to_str(jrender * r, const jv & v);

// Growing text in the arena (extended in place while it is the last allocation).
struct jbuf {
    jmem *   m;
    char *   p;
    size_t   n, cap;
    size_t   limit;      // most bytes it may hold
    jrender * r;
};
void jbuf_init(jbuf * b, jrender * r, size_t limit);
void jbuf_put(jbuf * b, const char * s, size_t n);
static inline void jbuf_puts(jbuf * b, const char * z);
jv   jbuf_value(jbuf * b);

// ---------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------
struct jinja_limits {
    size_t   max_output;     // bytes of the rendered text (and of any captured block)
    uint64_t max_steps;      // evaluation steps
    uint32_t max_depth;      // nesting of blocks / expressions in the source, and of calls at run time
};

jinja_limits jinja_default_limits(void);

struct jtemplate {
    const char *  src;
    size_t        len;
    const jnode * root;
};

// Parse src into m. TERN_ERR_INVALID_ARG for bad syntax, TERN_ERR_NO_MEMORY
// for a block too small, with err set ("line 3, column 12: ...").
tern_status jinja_parse(const char * src, size_t len, jmem * m, const jinja_limits * lim, jtemplate * out, char * err,
                        size_t err_size);

// A variable of the render's global scope.
struct jglobal {
    const char * name;
    jv           value;
};

// The clock strftime_now() reads: seconds since the epoch (UTC) and the local
// offset in seconds.
struct jclock {
    int64_t now;
    int32_t utc_offset;
};

// The render's clock as text, strftime's conversions (%Y %m %d %b %B %a %A %H
// %M %S %p %j %F %T %D %e %y %I %u %w %%): strftime_now() and the date
// variables of a chat render (chat_jinja.cpp). In r's memory.
jv jinja_strftime(jrender * r, const char * fmt, size_t fmt_len);

// Render with the given globals (looked up after the builtins' names). The
// text is in *out (NUL-terminated, in m). false with err set.
bool jinja_render(const jtemplate * t, jmem * m, const jinja_limits * lim, const jglobal * globals, size_t n_globals,
                  const jclock * clock, const char ** out, size_t * out_len, char * err, size_t err_size);

// The state of one render (jinja_eval.cpp); the builtins see it.
struct jrender {
    jmem *              m;
    const jtemplate *   t;
    jinja_limits        lim;
    jclock              clock;
    uint64_t            steps;
    uint32_t            depth;
    bool                failed;
    uint32_t            err_pos;
    char *              err;
    size_t              err_size;
    void *              scope;         // the current scope
    void *              globals;       // the outermost scope
    uint32_t            cur_pos;       // source position of what is being evaluated
    int                 loop_ctl;      // 1 break, 2 continue (pending)
    jv                  pending_caller;  // {% call %}: the caller for the macro call it makes (J_FUNC), else undefined
};

// Work in proportion to a value's size (a scan, a comparison, a copy) costs
// steps too, so no loop of cheap-looking calls on a large value runs long:
// false (with the error) past the budget.
bool jcharge(jrender * r, uint64_t units);
// A builtin's charge for walking v: a step per 64 bytes of a string, per 8
// items of a list or dict.
bool jcharge_size(jrender * r, const jv & v);

// Record the first error (at r->cur_pos) and return false.
bool jfail(jrender * r, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static inline void jbuf_puts(jbuf * b, const char * z) {
    size_t n = 0;
    while (z[n]) n++;
    jbuf_put(b, z, n);
}

}  // namespace tern
