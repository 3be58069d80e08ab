// The parsed form of a Jinja template (jinja_parse.cpp builds it, jinja_eval.cpp
// walks it). Everything lives in the template's jmem block.
//
//   {% for m in messages if m.role != 'system' %}{{ m.content | trim }}{% endfor %}
//   FOR(names [m], expr VAR messages, cond BINARY(!=, ATTR(VAR m, role), LIT 'system'))
//     body: EXPR(FILTER trim (ATTR(VAR m, content)))
#pragma once
#include <stdint.h>

#include "chat/jinja.h"

namespace tern {

enum jx_kind : uint8_t {
    JX_LIT,      // lit
    JX_VAR,      // name
    JX_LIST,     // args (values)
    JX_DICT,     // args (key, value)
    JX_ATTR,     // a . name
    JX_INDEX,    // a [ b ]
    JX_SLICE,    // a [ b : c : d ]  (each may be NULL)
    JX_CALL,     // a ( args )
    JX_METHOD,   // a . name ( args )
    JX_FILTER,   // a | id ( args )   (a NULL: a filter block's filter)
    JX_TEST,     // a is [not] id ( args )
    JX_NEG,      // - a
    JX_POS,      // + a
    JX_NOT,      // not a
    JX_AND,      // a and b
    JX_OR,       // a or b
    JX_BINARY,   // a op b; a comparison chain (a < b < c) goes on in c: links with op and b, their a NULL
    JX_COND,     // b if a else c
    JX_CONCAT,   // a ~ b
};

enum jx_op : uint8_t {
    JOP_ADD, JOP_SUB, JOP_MUL, JOP_DIV, JOP_FLOORDIV, JOP_MOD, JOP_POW,
    JOP_EQ, JOP_NE, JOP_LT, JOP_GT, JOP_LE, JOP_GE, JOP_IN, JOP_NOT_IN,
};

struct jexpr;

struct jarg {
    const char * name;      // keyword argument / macro parameter, else NULL
    uint32_t     name_len;
    uint8_t      expand;    // call arguments: 1 *list (its items positional), 2 **dict (its items keyword)
    jexpr *      key;       // JX_DICT: the key
    jexpr *      value;
};

struct jexpr {
    uint8_t      kind;
    uint8_t      op;
    bool         negate;    // JX_TEST: is not
    uint16_t     id;        // JX_FILTER / JX_TEST: builtin id
    uint32_t     pos;       // source offset
    jexpr *      a;
    jexpr *      b;
    jexpr *      c;
    jexpr *      d;
    jv           lit;       // JX_LIT; JX_VAR / JX_ATTR / JX_METHOD: the name (a string)
    jarg *       args;
    uint32_t     n_args;
};

enum jn_kind : uint8_t {
    JN_TEXT,        // text
    JN_EXPR,        // {{ expr }}
    JN_IF,          // expr, body, else_body (elif: an IF alone in else_body)
    JN_FOR,         // names, expr, cond, body, else_body, recursive
    JN_SET,         // names (or ns . name) = expr
    JN_SET_BLOCK,   // name, body
    JN_MACRO,       // name, params, body
    JN_CALL,        // expr (a JX_CALL of a macro), params and body of its caller (name "caller")
    JN_FILTER,      // expr (a JX_FILTER without an operand), body
    JN_BREAK,
    JN_CONTINUE,
    JN_BLOCK,       // body (generation: rendered as it is)
    JN_WITH,        // params (name = value, evaluated outside), body in a scope of its own
};

struct jname {
    const char * s;
    uint32_t     n;
};

struct jnode {
    uint8_t      kind;
    bool         recursive;
    uint32_t     pos;
    jnode *      next;        // the following node of the same body
    jnode *      body;
    jnode *      else_body;
    jexpr *      expr;
    jexpr *      cond;
    const char * text;
    uint32_t     text_len;
    jname *      names;
    uint32_t     n_names;
    jname        ns;          // JN_SET: ns . names[0]
    jname        name;        // JN_MACRO, JN_SET_BLOCK, JN_CALL
    jarg *       params;      // JN_MACRO, JN_CALL
    uint32_t     n_params;
};

// Builtins (jinja_builtins.cpp): filter and test ids by name, -1 when unknown.
// JX_FILTER / JX_TEST id of a name no builtin has (the name in lit): an error
// when evaluated, not when parsed, as minja.
constexpr uint16_t k_jinja_unknown_id = 0xffff;
int jinja_filter_id(const char * name, size_t n);
int jinja_test_id(const char * name, size_t n);
const char * jinja_filter_name(int id);

// Apply filter id to v with the call's arguments (already evaluated: pos[n_pos],
// kw names / values [n_kw]).
struct jcall {
    const jv *     pos;
    uint32_t       n_pos;
    const jname *  kw;
    const jv *     kwv;
    uint32_t       n_kw;
};
jv jinja_apply_filter(jrender * r, int id, const jv & v, const jcall & c);
bool jinja_apply_test(jrender * r, int id, const jv & v, const jcall & c);
// A method of a string, list or dict: v.name(args).
jv jinja_call_method(jrender * r, jv & v, const char * name, size_t n, const jcall & c);
// A global function by name (range, namespace, dict, raise_exception, joiner,
// cycler, strftime_now, and the filters called as functions); found: false when
// there is none of that name.
jv jinja_call_global(jrender * r, const char * name, size_t n, const jcall & c, bool * found);
// Is there a global function of this name (for "is defined" and lookups)?
bool jinja_has_global(const char * name, size_t n);
// Call a callable value (macros through the evaluator).
jv jinja_call_value(jrender * r, const jv & f, const jcall & c);
// Evaluate a test by name for select / reject (defined in builtins, uses the evaluator for macros).
jv jinja_call_func(jrender * r, jfunc * f, const jcall & c);

// The evaluator's entry for macros and recursive loops (jinja_eval.cpp).
jv jinja_call_macro(jrender * r, jfunc * f, const jcall & c);
jv jinja_call_loop(jrender * r, jfunc * f, const jcall & c);

}  // namespace tern
