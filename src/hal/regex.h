// A small regular-expression search for tensor overrides (-ot "REGEX=DEVICE"),
// with the syntax llama.cpp users write there (ECMAScript's core, as
// std::regex_search reads it): literals, '.', classes [a-z0-9_] and [^...],
// escapes (\. \d \w \s \\ ...), anchors ^ $, groups ( ) with alternation |,
// and the quantifiers * + ? {m} {m,} {m,n}, all greedy. Search semantics: the
// pattern may match anywhere in the name.
//
// How: the pattern compiles into a fixed table of nodes (a sequence of atoms,
// each with its repeat bounds; a group holds its alternatives), and a
// backtracking matcher walks it with continuations on the stack. Memory is
// the caller's re_prog (no heap); a pattern past its limits (256 bytes, 96
// nodes, 32 classes, nesting 16) is refused at compile time, and a match
// that takes more than 200000 steps (catastrophic backtracking) returns -1.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tern {
namespace hal {

#define RE_MAX_NODES 96
#define RE_MAX_SETS 32

struct re_node {
    uint8_t kind;        // RE_SET, RE_GROUP, RE_BOL, RE_EOL
    uint8_t set;         // RE_SET: index in sets
    int16_t min, max;    // repeats (max -1: unbounded)
    int16_t next;        // next atom of the sequence, -1: end
    int16_t child;       // RE_GROUP: first alternative's first atom (-1: empty)
    int16_t alt;         // the first atom of an alternative: the next alternative's, -1: none
};

struct re_prog {
    re_node  nodes[RE_MAX_NODES];
    uint32_t sets[RE_MAX_SETS][8];   // 256-bit byte sets
    int16_t  n_nodes, n_sets;
    int16_t  start;                  // the root group
};

// 0, or -1 with err (err_size bytes) saying what and where.
int re_compile(const char * pattern, size_t len, re_prog * out, char * err, size_t err_size);
// 1: it matches somewhere in text, 0: it does not, -1: too many steps.
int re_search(const re_prog * p, const char * text);

}  // namespace hal
}  // namespace tern
