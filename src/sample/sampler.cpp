// Sampler lifecycle (sizing, creation in one block, accept/reset/free) and the
// chain itself; see sampler.h for the order and the semantics of each step.
#include "sample/sampler.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <algorithm>

#include "core/arena.h"
#include "core/status.h"
#include "port.h"
#include "sample/sampler_grammar.h"

namespace tern {

// ---------------------------------------------------------------------------
// PCG32 (XSH-RR): 64-bit LCG state, 32-bit output by xorshift + random rotate.
// ---------------------------------------------------------------------------
static const uint64_t PCG_MULT = 6364136223846793005ULL;
static const uint64_t PCG_STREAM = 1442695040888963407ULL;   // any odd increment

static uint32_t rng_next(tern_sampler * s) {
    uint64_t old = s->rng_state;
    s->rng_state = old * PCG_MULT + s->rng_inc;
    uint32_t xorshifted = (uint32_t) (((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t) (old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
}

static void rng_seed(tern_sampler * s, uint32_t seed) {
    s->rng_state = 0;
    s->rng_inc = PCG_STREAM;
    rng_next(s);
    s->rng_state += seed;
    rng_next(s);
}

// Uniform in [0, 1).
static double rng_uniform(tern_sampler * s) { return rng_next(s) * (1.0 / 4294967296.0); }

// ---------------------------------------------------------------------------
// Parameters and sizing
// ---------------------------------------------------------------------------
extern "C" tern_sampler_params tern_sampler_default_params(void) {
    // llama.cpp's common defaults; seed is always honoured (no "random seed" value).
    tern_sampler_params p;
    p.temp = 0.8f;
    p.top_k = 40;
    p.top_p = 0.95f;
    p.min_p = 0.05f;
    p.repeat_penalty = 1.0f;
    p.frequency_penalty = 0.0f;
    p.presence_penalty = 0.0f;
    p.penalty_last_n = 64;
    p.seed = 0;
    return p;
}

static tern_status check_params(int32_t n_vocab, const tern_sampler_params * p) {
    if (n_vocab <= 0) return tern_fail(TERN_ERR_INVALID_ARG, "sampler: n_vocab %d must be > 0", (int) n_vocab);
    if (!isfinite(p->temp) || isnan(p->top_p) || isnan(p->min_p) ||
        !isfinite(p->frequency_penalty) || !isfinite(p->presence_penalty)) {
        return tern_fail(TERN_ERR_INVALID_ARG, "sampler: temp and penalties must be finite, top_p/min_p not NaN");
    }
    if (!(p->repeat_penalty > 0.0f) || isinf(p->repeat_penalty)) {
        return tern_fail(TERN_ERR_INVALID_ARG, "sampler: repeat_penalty %g must be finite and > 0",
                         (double) p->repeat_penalty);
    }
    if (p->penalty_last_n < 0) {
        return tern_fail(TERN_ERR_INVALID_ARG, "sampler: penalty_last_n %d must be >= 0",
                         (int) p->penalty_last_n);
    }
    return TERN_OK;
}

// Padded bytes of the block's parts, in allocation order.
static size_t sampler_payload(int32_t n_vocab, const tern_sampler_params * p) {
    return arena_padded(sizeof(tern_sampler)) +
           arena_padded((size_t) n_vocab * sizeof(sampler_candidate)) +
           2 * arena_padded((size_t) p->penalty_last_n * sizeof(tern_token));
}

size_t sampler_mem_size(int32_t n_vocab, const tern_sampler_params * params) {
    tern_sampler_params defaults = tern_sampler_default_params();
    const tern_sampler_params * p = params ? params : &defaults;
    if (check_params(n_vocab, p) != TERN_OK) return 0;
    return arena_buffer_size(sampler_payload(n_vocab, p));
}

tern_status sampler_init(int32_t n_vocab, const tern_sampler_params * params,
                         void * mem, size_t mem_size, tern_sampler ** out_sampler) {
    if (!out_sampler) return tern_fail(TERN_ERR_INVALID_ARG, "sampler: out_sampler is NULL");
    *out_sampler = NULL;
    tern_sampler_params defaults = tern_sampler_default_params();
    const tern_sampler_params * p = params ? params : &defaults;
    TERN_TRY(check_params(n_vocab, p));

    void * owned = NULL;
    if (!mem) {
        mem_size = sampler_mem_size(n_vocab, p);
        owned = mem = port_alloc(mem_size);
        if (!mem) return tern_fail(TERN_ERR_NO_MEMORY, "sampler: cannot obtain %zu bytes", mem_size);
    }
    tern_arena arena;
    tern_sampler * s = NULL;
    sampler_candidate * cand = NULL;
    tern_token * recent = NULL;
    tern_token * recent_sorted = NULL;
    size_t ring_bytes = (size_t) p->penalty_last_n * sizeof(tern_token);
    if (arena_init(&arena, mem, mem_size)) {
        s = (tern_sampler *) arena_calloc(&arena, sizeof(tern_sampler), TERN_MEM_SAMPLER);
        cand = (sampler_candidate *) arena_alloc(&arena, (size_t) n_vocab * sizeof(sampler_candidate),
                                                 TERN_MEM_SAMPLER);
        recent = (tern_token *) arena_alloc(&arena, ring_bytes, TERN_MEM_SAMPLER);
        recent_sorted = (tern_token *) arena_alloc(&arena, ring_bytes, TERN_MEM_SAMPLER);
    }
    if (!s || !cand || !recent || !recent_sorted) {
        port_free(owned);
        return tern_fail(TERN_ERR_NO_MEMORY, "sampler: %zu bytes given, %zu needed for n_vocab %d",
                         mem_size, sampler_mem_size(n_vocab, p), (int) n_vocab);
    }
    s->params = *p;
    s->n_vocab = n_vocab;
    s->cand = cand;
    s->recent = recent;
    s->recent_sorted = recent_sorted;
    s->owned = owned;
    tern_sampler_reset(s);
    *out_sampler = s;
    return TERN_OK;
}

extern "C" void tern_sampler_free(tern_sampler * sampler) {
    if (!sampler) return;
    if (sampler->grammar) port_free(sampler->grammar->owned);
    port_free(sampler->owned);   // caller memory: nothing to release
}

extern "C" void tern_sampler_reset(tern_sampler * sampler) {
    if (!sampler) return;
    sampler->n_recent = 0;
    sampler->recent_next = 0;
    rng_seed(sampler, sampler->params.seed);
    if (sampler->grammar) sampler_grammar_reset(sampler->grammar);
}

extern "C" void tern_sampler_accept(tern_sampler * sampler, tern_token token) {
    if (!sampler || sampler->params.penalty_last_n == 0) return;
    if (token < 0 || token >= sampler->n_vocab) return;   // no logit to penalize
    sampler->recent[sampler->recent_next] = token;
    sampler->recent_next = (sampler->recent_next + 1) % sampler->params.penalty_last_n;
    if (sampler->n_recent < sampler->params.penalty_last_n) sampler->n_recent++;
}

// ---------------------------------------------------------------------------
// The chain. cand[0, n) are the live candidates; `sorted` says whether they are
// in descending logit order.
// ---------------------------------------------------------------------------

// Descending logit, ties by ascending id: a total order, so results do not
// depend on the sort algorithm.
static bool cand_before(const sampler_candidate & a, const sampler_candidate & b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// NaN would break the sort's ordering: it ranks below every number. +inf
// becomes FLT_MAX so that logit - max stays a number in softmax.
static float ordered_logit(float logit) { return isnan(logit) ? -INFINITY : std::min(logit, FLT_MAX); }

static void load_candidates(tern_sampler * s, const float * logits) {
    for (int32_t i = 0; i < s->n_vocab; i++) {
        s->cand[i].id = i;
        s->cand[i].logit = ordered_logit(logits[i]);
        s->cand[i].p = 0.0f;
    }
}

// Candidates are still indexed by token id here.
static void apply_penalties(tern_sampler * s) {
    const tern_sampler_params & p = s->params;
    if (s->n_recent == 0 ||
        (p.repeat_penalty == 1.0f && p.frequency_penalty == 0.0f && p.presence_penalty == 0.0f)) {
        return;
    }
    // Count repeats by sorting a copy of the ring: equal tokens become runs.
    memcpy(s->recent_sorted, s->recent, (size_t) s->n_recent * sizeof(tern_token));
    std::sort(s->recent_sorted, s->recent_sorted + s->n_recent);
    for (int32_t i = 0; i < s->n_recent;) {
        tern_token token = s->recent_sorted[i];
        int32_t count = 0;
        while (i < s->n_recent && s->recent_sorted[i] == token) { count++; i++; }
        float & logit = s->cand[token].logit;
        logit = logit > 0.0f ? logit / p.repeat_penalty : logit * p.repeat_penalty;
        logit = ordered_logit(logit - ((float) count * p.frequency_penalty + p.presence_penalty));
    }
}

// The heap's order: the best candidate (cand_before) on top.
static bool cand_before_rev(const sampler_candidate & a, const sampler_candidate & b) { return cand_before(b, a); }

static int32_t argmax(const sampler_candidate * cand, int32_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++) {
        if (cand[i].logit > cand[best].logit) best = i;
    }
    return best;
}

static void sort_candidates(sampler_candidate * cand, int32_t n, bool * sorted) {
    if (!*sorted) std::sort(cand, cand + n, cand_before);
    *sorted = true;
}

// p = softmax(logit / temp) over cand[0, n), computed as exp((logit - max) / temp)
// so that a tiny temp cannot overflow.
static void softmax(sampler_candidate * cand, int32_t n, float temp) {
    float max = cand[argmax(cand, n)].logit;
    if (max == -INFINITY) {   // nothing is more likely than anything else
        for (int32_t i = 0; i < n; i++) cand[i].p = 1.0f / (float) n;
        return;
    }
    double sum = 0.0;
    for (int32_t i = 0; i < n; i++) {
        cand[i].p = expf((cand[i].logit - max) / temp);
        sum += cand[i].p;
    }
    for (int32_t i = 0; i < n; i++) cand[i].p = (float) (cand[i].p / sum);
}

static int32_t keep_top_k(sampler_candidate * cand, int32_t n, int32_t k, bool * sorted) {
    if (k <= 0 || k >= n) return n;
    std::partial_sort(cand, cand + k, cand + n, cand_before);
    *sorted = true;
    return k;
}

static int32_t keep_top_p(sampler_candidate * cand, int32_t n, float p, bool * sorted) {
    if (p >= 1.0f) return n;
    sort_candidates(cand, n, sorted);
    softmax(cand, n, 1.0f);
    double cum = 0.0;
    for (int32_t i = 0; i < n; i++) {
        cum += cand[i].p;
        if (cum >= p) return i + 1;
    }
    return n;
}

// Keep logit >= max + log(min_p), i.e. p >= min_p * p_max; order is kept.
static int32_t keep_min_p(sampler_candidate * cand, int32_t n, float min_p) {
    if (min_p <= 0.0f) return n;
    int32_t best = argmax(cand, n);
    float threshold = cand[best].logit + logf(min_p);
    if (!(cand[best].logit >= threshold)) {   // min_p > 1: only the best survives
        cand[0] = cand[best];
        return 1;
    }
    int32_t kept = 0;
    for (int32_t i = 0; i < n; i++) {
        if (cand[i].logit >= threshold) cand[kept++] = cand[i];
    }
    return kept;
}

static int32_t draw(tern_sampler * s, const sampler_candidate * cand, int32_t n) {
    double u = rng_uniform(s);
    double cum = 0.0;
    for (int32_t i = 0; i < n; i++) {
        cum += cand[i].p;
        if (u < cum) return i;
    }
    return n - 1;   // rounding left u just above the sum
}

// Steps 1-6 on the logits; with `allowed`, every other token gets -inf after the penalties.
static tern_token run_chain(tern_sampler * s, const float * logits, const uint8_t * allowed) {
    const tern_sampler_params & p = s->params;
    sampler_candidate * cand = s->cand;
    load_candidates(s, logits);
    apply_penalties(s);
    if (allowed) {
        for (int32_t i = 0; i < s->n_vocab; i++) {
            if (!allowed[i]) cand[i].logit = -INFINITY;
        }
    }
    int32_t n = s->n_vocab;
    if (p.temp <= 0.0f) return cand[argmax(cand, n)].id;
    bool sorted = false;
    n = keep_top_k(cand, n, p.top_k, &sorted);
    n = keep_top_p(cand, n, p.top_p, &sorted);
    n = keep_min_p(cand, n, p.min_p);
    softmax(cand, n, p.temp);
    return cand[draw(s, cand, n)].id;
}

// The grammar refused the chain's choice. When the chain's choice under the
// grammar depends only on the best few tokens the grammar takes (greedy: the
// first; top-k: the first k; min-p alone: those above the threshold), find
// them by checking candidates in descending logit order (a heap) instead of
// walking the whole vocabulary: that costs a few checks where the grammar
// takes most tokens (inside a string). The result is the same token the full
// mask gives. -1: not settled within TOP_FIRST_CHECKS checks (the caller
// walks the vocabulary), -2: an error.
#define TOP_FIRST_CHECKS 512
static tern_token top_first(tern_sampler * s, const float * logits) {
    const tern_sampler_params & p = s->params;
    sampler_grammar * g = s->grammar;
    const int32_t need = p.temp <= 0.0f ? 1 : p.top_k > 0 ? p.top_k : 0;
    const bool min_p_rule = need == 0 && p.min_p > 0.0f && p.top_p >= 1.0f;
    if (need == 0 && !min_p_rule) return -1;
    sampler_candidate * cand = s->cand;
    load_candidates(s, logits);
    apply_penalties(s);
    int32_t n = s->n_vocab;
    std::make_heap(cand, cand + n, cand_before_rev);
    memset(g->allowed, 0, (size_t) s->n_vocab);
    int32_t found = 0;
    float best = -INFINITY;
    for (int32_t k = 0; k < TOP_FIRST_CHECKS && n > 0; k++) {
        std::pop_heap(cand, cand + n, cand_before_rev);
        const sampler_candidate c = cand[--n];
        if (c.logit == -INFINITY) break;
        if (min_p_rule && found > 0 && c.logit < best + logf(p.min_p)) return run_chain(s, logits, g->allowed);
        const int fits = sampler_grammar_check(g, c.id);
        if (fits < 0) return -2;
        if (!fits) continue;
        g->allowed[c.id] = 1;
        if (found++ == 0) best = c.logit;
        if (need > 0 && found == need) return run_chain(s, logits, g->allowed);
    }
    return -1;
}

tern_token sampler_sample_logits(tern_sampler * s, const float * logits, int32_t n_vocab) {
    if (!s || !logits) {
        tern_fail(TERN_ERR_INVALID_ARG, "sampler: %s is NULL", s ? "logits" : "sampler");
        return -1;
    }
    if (n_vocab != s->n_vocab) {
        tern_fail(TERN_ERR_SHAPE, "sampler: logits have %d entries, the sampler was made for %d",
                  (int) n_vocab, (int) s->n_vocab);
        return -1;
    }
    tern_token token = run_chain(s, logits, NULL);
    if (sampler_grammar * g = s->grammar) {
        // As llama.cpp's common sampler: keep the chain's choice when the grammar
        // takes it, else constrain every token and choose again.
        int fits = sampler_grammar_check(g, token);
        if (fits < 0) return -1;
        if (fits) g->n_chosen++;
        else token = top_first(s, logits);
        if (token == -2) return -1;
        if (!fits && token >= 0) g->n_top++;
        if (!fits && token < 0) {
            int32_t n_allowed = 0;
            if (sampler_grammar_mask(g, &n_allowed) != TERN_OK) return -1;
            if (n_allowed == 0) {
                if (g->budget >= 0) {
                    tern_fail(TERN_ERR_INVALID_ARG, "grammar: no token completes the text within the %d tokens left",
                              (int) g->budget);
                } else {
                    tern_fail(TERN_ERR_INVALID_ARG, "grammar: no token of the vocabulary continues the text");
                }
                return -1;
            }
            token = run_chain(s, logits, g->allowed);
            if (!g->allowed[token]) {   // every allowed token had a -inf logit
                tern_fail(TERN_ERR_NUMERIC, "grammar: every token the grammar allows has a -inf logit");
                return -1;
            }
        }
        if (sampler_grammar_accept(g, token) != TERN_OK) return -1;
    }
    tern_sampler_accept(s, token);
    return token;
}

}  // namespace tern
