// GBNF: llama.cpp's grammar syntax, parsed into its rule layout.
//
// Syntax (llama.cpp grammars/README.md):
//   rule   ::= name "::=" alternatives NEWLINE        name: [a-zA-Z0-9-]+
//   items: "literal"  [a-z0-9_]  [^"\\]  .  name  ( group )  with postfix * + ? {m} {m,} {m,n}
//   escapes in literals and classes: \xHH \uHHHH \UHHHHHHHH \t \r \n \\ \" \[ \]
//   # comments to the end of the line; inside ( ) newlines are spaces.
//
// Compiled form (llama_grammar_element's, so llama.cpp's parser tests apply
// element by element): each rule is a run of elements, alternatives separated
// by ALT, ended by END. A character class is CHAR (or CHAR_NOT) followed by
// CHAR_ALT / CHAR_RNG_UPPER elements; a group becomes a new rule named
// <rule>_<id>; repetition is rewritten into recursive rules:
//   S{m,n} -> S (m times) S'(n-m),  S'(k) ::= S S'(k-1) |,  S'(1) ::= S |
//   S{m,}  -> S (m times) S',       S' ::= S S' |
//   S* = S{0,}   S+ = S{1,}   S? = S{0,1}
// Symbol ids are given in order of first appearance (generated ones take the
// next id when created), exactly as llama_grammar_parser numbers them.
//
//   root ::= "a"+     ->  root (0): CHAR 'a', RULE_REF 1, END
//                         root_1 (1): CHAR 'a', RULE_REF 1, ALT, END
//
// Memory: gbnf_measure() parses once without a symbol table and returns the
// bytes gbnf_parse() takes from the arena (the rules, a bound on the symbols
// from the names the text holds, and the parser's scratch, released before it
// returns); nothing recurses. Errors give the line and column (1-based).
// Limits: GBNF_MAX_ELEMENTS elements in all (repetitions multiply), counts in
// {m,n} at most GBNF_MAX_REPEAT, groups nested at most GBNF_MAX_DEPTH.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "tern.h"

namespace tern {

#define GBNF_MAX_ELEMENTS (1u << 22)
#define GBNF_MAX_REPEAT   100000u
#define GBNF_MAX_DEPTH    256

enum gbnf_type : uint32_t {
    GBNF_END = 0,            // end of a rule
    GBNF_ALT = 1,            // start of another alternative
    GBNF_RULE_REF = 2,       // value: a rule id
    GBNF_CHAR = 3,           // value: a code point (starts a class)
    GBNF_CHAR_NOT = 4,       // starts a negated class
    GBNF_CHAR_RNG_UPPER = 5, // makes the preceding CHAR / CHAR_ALT the lower end of a range
    GBNF_CHAR_ALT = 6,       // another code point of the class
    GBNF_CHAR_ANY = 7,       // '.'
};

struct gbnf_elem {
    uint32_t type;    // gbnf_type
    uint32_t value;
};

struct gbnf_grammar {
    gbnf_elem *  elems;       // [n_elems] every rule's run, in the order rules completed
    uint32_t     n_elems;
    uint32_t     n_rules;     // symbol ids are [0, n_rules)
    uint32_t *   rule_start;  // [n_rules] index of the rule's first element
    uint32_t *   name_off;    // [n_rules] into names
    uint32_t *   name_len;    // [n_rules]
    char *       names;
};

// What a text parses into, counted without building it: bounds on the
// elements and symbols gbnf_parse will hold.
struct gbnf_counts {
    uint32_t n_elems;
    uint32_t n_rules;   // a bound: every name occurrence and every generated symbol
};

// Arena bytes gbnf_parse needs for this text; 0 with err set when the text
// cannot be parsed ("line 3, column 7: expecting ::="). counts may be NULL.
size_t gbnf_measure(const char * text, size_t len, char * err, size_t err_size, gbnf_counts * counts = NULL);

// Parse into the arena. Every referenced rule must be defined. TERN_OK, or a
// status with err set (TERN_ERR_INVALID_ARG for a bad grammar, NO_MEMORY).
tern_status gbnf_parse(const char * text, size_t len, tern_arena * arena, gbnf_grammar * out, char * err,
                       size_t err_size);

// The id of a symbol by name; -1 when there is none.
int32_t gbnf_find(const gbnf_grammar * g, const char * name);

// Is e one of the elements of a character class (CHAR .. CHAR_ANY)?
static inline bool gbnf_is_char(uint32_t t) { return t >= GBNF_CHAR; }
// END or ALT: the end of an alternative.
static inline bool gbnf_is_end(uint32_t t) { return t == GBNF_END || t == GBNF_ALT; }

}  // namespace tern
