// The grammar stage of the sampler chain: a grammar (grammar.h) plus the
// model's vocabulary as sorted pieces, in one block sized at setup.
//
// In the chain (sampler.cpp), as llama.cpp's common sampler does it: the
// chain picks a token from the unconstrained logits; if the grammar takes it
// (its piece extends the accepted text, or it ends generation where the text
// is complete), that is the token. Otherwise the chain runs again with every
// token the grammar refuses at -inf: found, when the chain only looks at the
// best few (greedy, top-k, min-p alone), by checking candidates in descending
// logit order, else by the walk over the sorted pieces, which marks every
// token the grammar takes. The chosen token then advances the grammar.
//
// Budget (optional): with n tokens left, a token is taken only if the text
// can still be completed within the tokens after it, counting one byte per
// token (every byte is a token in byte-level BPE and in SPM with byte
// fallback), so a run cut at -n N still ends in a complete sentence.
//
// Block layout (every part padded to 64 bytes, the arena's rule):
//   sampler_grammar | grammar (rules, tables, stack pool, walk states) |
//   order[n_sorted] u32 | lcp[n_sorted] u16 | off[n_vocab] u32 | len[n_vocab] u16 |
//   piece bytes | allowed[n_vocab] u8 | eog[n_vocab] u8
// For Qwen2's 151936 tokens that is about 3.3 MB besides the grammar's
// ~1.6 MB of default limits (grammar.h).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "sample/grammar.h"
#include "tern.h"

namespace tern {

struct sampler_grammar {
    grammar       g;
    grammar_vocab v;
    uint8_t *     allowed;      // [n_vocab] the last walk's result
    uint8_t *     eog;          // [n_vocab] end-of-generation tokens
    int32_t       budget;       // tokens left, -1: no budget
    int32_t       budget_set;   // what tern_sampler_reset restores
    void *        owned;        // port_alloc block, or NULL (caller memory)
    uint64_t      n_checked;    // statistics: tokens checked alone,
    uint64_t      n_chosen;     // samples where the chain's choice fitted,
    uint64_t      n_top;        // settled by checking the best candidates (sampler.cpp),
    uint64_t      n_walks;      // full walks
};

// Bytes sampler_grammar_init needs; 0 with tern_last_error set for a bad grammar.
size_t sampler_grammar_mem_size(const tern_model * model, const char * text, const char * root);

tern_status sampler_grammar_init(const tern_model * model, const char * text, const char * root, void * mem,
                                 size_t mem_size, sampler_grammar ** out);

// Does the grammar take token t now? 1 / 0, -1 on a limit (error set).
int sampler_grammar_check(sampler_grammar * sg, tern_token t);

// allowed[] for every token; TERN_OK and *n_allowed, or the limit hit.
tern_status sampler_grammar_mask(sampler_grammar * sg, int32_t * n_allowed);

// Advance by the chosen token (and count it against the budget).
tern_status sampler_grammar_accept(sampler_grammar * sg, tern_token t);

tern_status sampler_grammar_reset(sampler_grammar * sg);

}  // namespace tern
