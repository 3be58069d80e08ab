// Grammar engine: which byte strings can extend the text accepted so far, for
// a GBNF grammar (gbnf.h), in fixed memory.
//
// The parse state is llama.cpp's: a set of pushdown stacks, each a list of
// positions in the rules (the top is a character class to match next; an
// empty stack means the text so far is a complete sentence), plus a pending
// partial UTF-8 sequence. Accepting a code point keeps the stacks whose top
// class matches it, moves each past its class and expands rule references at
// the top until a class (or the empty stack) is on top; equal stacks are kept
// once. The semantics (which strings are accepted) are llama_grammar_accept's.
//
// Representation: stacks share their tails. Every stack frame is a node
// {element, parent, cost, hash} in one pool, so pushing a frame is one node
// and a stack is the index of its top node (NIL: the empty stack):
//
//     state tops:  [ 7, 9, NIL ]          nodes: 7 -> 3 -> 0 -> NIL
//                                                9 -> 3
// cost: the fewest bytes that complete the stack (from each element's
// precomputed "rest of its alternative"), summed down the stack, so the
// cheapest completion of a state is a min over its tops (used for the token
// budget); hash: of the stack's contents, to find equal stacks fast.
//
// Memory: the pool (max_nodes nodes), the tops (max_tops entries), a work list
// and the per-byte states of one token (max_token_bytes deep) are all sized at
// grammar_init. A step that needs more is an error (TERN_ERR_NO_MEMORY, with
// the limit named), never growth. Between tokens the live nodes are compacted
// to the bottom of the pool (mark, then slide: a node's parent always has a
// lower index, so one ascending pass renumbers them).
//
// Vocabulary walk (grammar_filter): the tokens' pieces sorted by bytes form a
// trie without storing one: token i shares lcp[i] bytes with token i-1, so a
// depth-first walk keeps the state after each byte of the current piece and
// only steps the bytes past the common prefix. A prefix that dies kills every
// following token that shares it at no further cost. One walk per sampling
// step visits each live trie node once instead of checking every token from
// the root as llama.cpp does.
//
// Setup checks: every referenced rule defined (gbnf.h), the start symbol
// exists, no left recursion (a rule that can reach itself as the leftmost
// item through nullable items: that would expand forever), and the start
// symbol admits at least one finite string. Nothing here recurses.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "sample/gbnf.h"
#include "tern.h"

namespace tern {

#define GRAMMAR_NIL 0xffffffffu
#define GRAMMAR_INF 0xffffffffu
// Work one code point may cost (rule expansions), against hostile grammars.
#define GRAMMAR_MAX_STEPS (1u << 22)

struct grammar_node {
    uint32_t elem;     // index into rules.elems: a class's first element or a RULE_REF
    uint32_t parent;   // node below, GRAMMAR_NIL at the bottom
    uint32_t cost;     // fewest bytes to empty this stack
    uint32_t hash;     // of (elem, parent's hash)
};

// A set of stacks: tops[tb, te), plus a partial UTF-8 sequence (pr bytes to come).
struct grammar_state {
    uint32_t tb, te;
    uint32_t pv;       // bits of the partial code point so far
    int32_t  pr;       // continuation bytes still expected (0: none)
};

struct grammar_limits {
    uint32_t max_nodes;        // stack nodes: the live parse plus one token's walk
    uint32_t max_tops;         // stack tops alive at once (all states on the walk's path)
    uint32_t max_token_bytes;  // the longest piece walked byte by byte
};

// Sorted pieces of a vocabulary (built by grammar_vocab.h).
struct grammar_vocab {
    uint32_t        n_vocab;
    uint32_t        n_sorted;  // tokens with a non-empty piece
    const uint32_t * order;    // [n_sorted] token ids in byte order of their pieces
    const uint16_t * lcp;      // [n_sorted] bytes shared with the previous piece
    const uint32_t * off;      // [n_vocab] piece offset in bytes
    const uint16_t * len;      // [n_vocab] piece length (0: empty)
    const uint8_t *  bytes;
    uint32_t         max_len;
};

struct grammar {
    gbnf_grammar   rules;
    uint32_t       root;
    uint32_t *     rest;       // [n_elems] fewest bytes to finish the alternative from here
    uint8_t *      cmin;       // [n_elems] a class's shortest member in UTF-8 bytes
    grammar_limits lim;
    grammar_node * nodes;      // [max_nodes]
    uint32_t       n_nodes;
    uint32_t *     tops;       // [max_tops]
    uint32_t       n_tops;
    uint32_t *     work;       // [max_nodes] advance's work list, and the compaction's map
    grammar_state  cur;        // the accepted text's state (tb = 0)
    grammar_state * path;      // [max_token_bytes + 1] states along one piece
    uint32_t *     path_nodes; // [max_token_bytes + 1] pool height after each
    uint32_t *     path_tops;  // [max_token_bytes + 1] tops in use after each
    uint64_t       steps;
    tern_status    error;      // first failure of a step (TERN_OK while none)
};

// Default limits (documented in tern.h): 65536 nodes (1 MiB), 16384 tops, pieces of 1024 bytes.
grammar_limits grammar_default_limits(void);

// Arena bytes grammar_init takes for this grammar; 0 with err set when it does not parse.
size_t grammar_mem_size(const char * text, size_t len, const grammar_limits * lim, char * err, size_t err_size);

// Compile text, check it (start symbol root, left recursion, non-empty
// language) and set the start state. TERN_ERR_INVALID_ARG with err set for a
// bad grammar.
tern_status grammar_init(grammar * g, tern_arena * arena, const char * text, size_t len, const char * root,
                         const grammar_limits * lim, char * err, size_t err_size);

// Back to the start state.
tern_status grammar_reset(grammar * g);

// Advance the accepted text by n bytes. TERN_ERR_INVALID_ARG when the bytes
// do not fit (the state is then unchanged), NO_MEMORY past a limit.
tern_status grammar_accept(grammar * g, const uint8_t * bytes, size_t n);

// Would these bytes extend the accepted text, leaving a state that can be
// completed within budget more bytes (GRAMMAR_INF: no budget)? 1 yes, 0 no,
// -1 on a limit (g->error says which). The state is unchanged.
int grammar_try(grammar * g, const uint8_t * bytes, size_t n, uint32_t budget);

// allowed[t] = 1 for every token of v whose piece passes grammar_try (0 for
// the others; EOG is the caller's). *min_cost (may be NULL): the fewest bytes
// left to complete the text after any token the grammar takes, budget or not.
// TERN_OK, or the limit that was hit.
tern_status grammar_filter(grammar * g, const grammar_vocab * v, uint32_t budget, uint8_t * allowed,
                           uint32_t * min_cost = NULL);

// The accepted text is a complete sentence (end of generation may come).
bool grammar_can_end(const grammar * g);
// ... and nothing can follow it.
bool grammar_must_end(const grammar * g);

// Tests: advance by one code point (false when it does not fit; the state is
// then empty), and the number of stacks alive.
bool grammar_accept_cp(grammar * g, uint32_t cp);
uint32_t grammar_n_stacks(const grammar * g);

}  // namespace tern
