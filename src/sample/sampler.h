// Sampler chain: turns one row of logits [n_vocab] into a token.
//
// Chain (the order of llama.cpp's common sampler):
//   1. penalties over the last penalty_last_n accepted tokens, on the raw logits:
//        repeat:    logit > 0 ? logit / repeat_penalty : logit * repeat_penalty
//        frequency: logit -= count * frequency_penalty
//        presence:  logit -= (count > 0) * presence_penalty
//   2. temp <= 0: greedy, the first token of largest logit. Otherwise:
//   3. top-k    keep the k largest logits (k <= 0: off)
//   4. top-p    softmax over what is left, keep the smallest prefix (by descending
//               p) whose cumulative p >= top_p (top_p >= 1: off)
//   5. min-p    keep p >= min_p * p_max (min_p <= 0: off)
//   6. temperature: logit /= temp, softmax, draw with the sampler's own PRNG.
// Every filter keeps at least one candidate. The chosen token is accepted
// (recorded for the penalties).
// With a grammar stage (tern_sampler_init_grammar, sampler_grammar.h): when
// the grammar does not take the chosen token, every token it does not take
// gets -inf after the penalties and steps 2-6 run again; the chosen token
// advances the grammar.
//
// Memory: one block holds everything (the tern_sampler itself, the candidates
// [n_vocab], the ring of recent tokens [penalty_last_n] and a scratch copy of it
// [penalty_last_n] used to count repeats by sorting). Nothing is allocated after
// creation. The block is the caller's or obtained once with port_alloc.
//
// sampler.cpp holds the chain and needs no model; sampler_api.cpp holds the
// tern.h entry points that read n_vocab from a model and logits from a context.
//
// The PRNG is PCG32 (O'Neill, "PCG: a family of simple fast space-efficient
// statistically good algorithms"), seeded from params.seed; tern_sampler_reset()
// re-seeds it, so a reset sampler repeats its draws.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"

namespace tern {

struct sampler_grammar;

struct sampler_candidate {
    tern_token id;
    float logit;
    float p;
};

}  // namespace tern

// The public type (tern.h) is global; its members are Tern's own types.
using namespace tern;
struct tern_sampler {
    tern_sampler_params params;
    int32_t n_vocab;
    sampler_candidate * cand;   // [n_vocab]
    tern_token * recent;        // ring [params.penalty_last_n] of accepted tokens
    tern_token * recent_sorted; // scratch [params.penalty_last_n]
    int32_t n_recent;           // tokens in the ring (<= penalty_last_n)
    int32_t recent_next;        // ring slot the next accepted token goes to
    uint64_t rng_state;         // PCG32 state
    uint64_t rng_inc;           // PCG32 stream (odd)
    void * owned;               // the port_alloc block to release, or NULL (caller memory)
    sampler_grammar * grammar;  // the grammar stage (sampler_grammar.h), or NULL
};

namespace tern {

// Bytes sampler_init needs for n_vocab tokens (any alignment of the block);
// 0 when the parameters are invalid.
size_t sampler_mem_size(int32_t n_vocab, const tern_sampler_params * params);

// Build a sampler in mem (mem_size bytes), or, with mem NULL, in one port_alloc
// block. params NULL: tern_sampler_default_params().
tern_status sampler_init(int32_t n_vocab, const tern_sampler_params * params,
                         void * mem, size_t mem_size, tern_sampler ** out_sampler);

// Run the chain on logits [n_vocab] (not modified), accept and return the
// token; -1 on bad arguments (tern_last_error says why).
tern_token sampler_sample_logits(tern_sampler * sampler, const float * logits, int32_t n_vocab);

}  // namespace tern
