// The sampler's grammar stage (see sampler_grammar.h): setup of the block
// (grammar, sorted pieces, masks) and the per-token operations.
#include "sample/sampler_grammar.h"

#include <string.h>

#include "core/arena.h"
#include "core/sort.h"
#include "core/status.h"
#include "port.h"

namespace tern {

namespace {

// The longest piece indexed; longer ones (none in real vocabularies) are never taken.
const uint32_t MAX_PIECE = 1024;

// Piece of token t into buf (cap bytes; special tokens' text included, as
// llama.cpp's grammar sees them); 0 for an end-of-generation token or a piece
// longer than MAX_PIECE or cap.
int32_t piece_of(const tern_model * m, tern_token t, char * buf, size_t cap) {
    if (tern_token_is_eog(m, t)) return 0;
    int32_t n = tern_token_to_piece(m, t, buf, (int32_t) (cap < MAX_PIECE ? cap : MAX_PIECE), 1);
    return n > 0 ? n : 0;
}

struct index_sizes {
    uint32_t n_vocab, n_sorted;
    size_t   bytes;
};

bool measure_vocab(const tern_model * m, index_sizes * z) {
    char buf[MAX_PIECE];
    z->n_vocab = (uint32_t) tern_model_n_vocab(m);
    z->n_sorted = 0;
    z->bytes = 0;
    for (uint32_t t = 0; t < z->n_vocab; t++) {
        int32_t n = piece_of(m, (tern_token) t, buf, sizeof(buf));
        if (n > 0) {
            z->n_sorted++;
            z->bytes += (size_t) n;
        }
    }
    return z->n_vocab > 0;
}

size_t index_bytes(const index_sizes & z) {
    return arena_padded((size_t) z.n_sorted * sizeof(uint32_t)) + arena_padded((size_t) z.n_sorted * sizeof(uint16_t)) +
           arena_padded((size_t) z.n_vocab * sizeof(uint32_t)) + arena_padded((size_t) z.n_vocab * sizeof(uint16_t)) +
           arena_padded(z.bytes + 1) + 2 * arena_padded(z.n_vocab);
}

}  // namespace

size_t sampler_grammar_mem_size(const tern_model * model, const char * text, const char * root) {
    (void) root;
    if (!model || !text) {
        tern_fail(TERN_ERR_INVALID_ARG, "grammar: %s is NULL", model ? "the grammar text" : "model");
        return 0;
    }
    char err[256];
    grammar_limits lim = grammar_default_limits();
    size_t g = grammar_mem_size(text, strlen(text), &lim, err, sizeof(err));
    if (g == 0) {
        tern_fail(TERN_ERR_INVALID_ARG, "grammar: %s", err);
        return 0;
    }
    index_sizes z;
    if (!measure_vocab(model, &z)) {
        tern_fail(TERN_ERR_INVALID_ARG, "grammar: the model has no vocabulary");
        return 0;
    }
    return arena_buffer_size(arena_padded(sizeof(sampler_grammar)) + g + index_bytes(z));
}

tern_status sampler_grammar_init(const tern_model * model, const char * text, const char * root, void * mem,
                                 size_t mem_size, sampler_grammar ** out) {
    if (!out) return tern_fail(TERN_ERR_INVALID_ARG, "grammar: out is NULL");
    *out = NULL;
    const size_t need = sampler_grammar_mem_size(model, text, root);
    if (need == 0) return TERN_ERR_INVALID_ARG;
    void * owned = NULL;
    if (!mem) {
        mem_size = need;
        owned = mem = port_alloc(need);
        if (!mem) return tern_fail(TERN_ERR_NO_MEMORY, "grammar: cannot obtain %zu bytes", need);
    } else if (mem_size < need) {
        return tern_fail(TERN_ERR_NO_MEMORY, "grammar: %zu bytes given, %zu needed", mem_size, need);
    }
    tern_arena a;
    arena_init(&a, mem, mem_size);
    sampler_grammar * sg = (sampler_grammar *) arena_calloc(&a, sizeof(sampler_grammar), TERN_MEM_SAMPLER);
    char err[256];
    grammar_limits lim = grammar_default_limits();
    tern_status st = sg ? grammar_init(&sg->g, &a, text, strlen(text), root, &lim, err, sizeof(err)) : TERN_ERR_NO_MEMORY;
    if (st != TERN_OK) {
        port_free(owned);
        return tern_fail(st, "grammar: %s", sg ? err : "out of memory");
    }
    index_sizes z;
    measure_vocab(model, &z);
    uint32_t * order = (uint32_t *) arena_alloc(&a, (size_t) z.n_sorted * sizeof(uint32_t), TERN_MEM_SAMPLER);
    uint16_t * lcp = (uint16_t *) arena_alloc(&a, (size_t) z.n_sorted * sizeof(uint16_t), TERN_MEM_SAMPLER);
    uint32_t * off = (uint32_t *) arena_alloc(&a, (size_t) z.n_vocab * sizeof(uint32_t), TERN_MEM_SAMPLER);
    uint16_t * len = (uint16_t *) arena_alloc(&a, (size_t) z.n_vocab * sizeof(uint16_t), TERN_MEM_SAMPLER);
    uint8_t * bytes = (uint8_t *) arena_alloc(&a, z.bytes + 1, TERN_MEM_SAMPLER);
    sg->allowed = (uint8_t *) arena_alloc(&a, z.n_vocab, TERN_MEM_SAMPLER);
    sg->eog = (uint8_t *) arena_alloc(&a, z.n_vocab, TERN_MEM_SAMPLER);
    if (!order || !lcp || !off || !len || !bytes || !sg->allowed || !sg->eog) {
        port_free(owned);
        return tern_fail(TERN_ERR_NO_MEMORY, "grammar: %zu bytes given, %zu needed", mem_size, need);
    }
    // Pieces in token order, then the token ids sorted by piece bytes.
    size_t at = 0;
    uint32_t k = 0, max_len = 0;
    for (uint32_t t = 0; t < z.n_vocab; t++) {
        int32_t n = piece_of(model, (tern_token) t, (char *) bytes + at, z.bytes + 1 - at);
        sg->eog[t] = tern_token_is_eog(model, (tern_token) t) ? 1 : 0;
        off[t] = (uint32_t) at;
        len[t] = (uint16_t) n;
        if (n > 0) {
            order[k++] = t;
            at += (size_t) n;
            if ((uint32_t) n > max_len) max_len = (uint32_t) n;
        }
    }
    auto before = [&](uint32_t x, uint32_t y) {
        uint32_t m = len[x] < len[y] ? len[x] : len[y];
        int c = memcmp(bytes + off[x], bytes + off[y], m);
        if (c != 0) return c < 0;
        return len[x] != len[y] ? len[x] < len[y] : x < y;
    };
    tern_heap_sort(order, k, before);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t c = 0;
        if (i > 0) {
            uint32_t x = order[i - 1], y = order[i];
            uint32_t m = len[x] < len[y] ? len[x] : len[y];
            while (c < m && bytes[off[x] + c] == bytes[off[y] + c]) c++;
        }
        lcp[i] = (uint16_t) c;
    }
    sg->v = grammar_vocab{z.n_vocab, k, order, lcp, off, len, bytes, max_len};
    sg->budget = sg->budget_set = -1;
    sg->owned = owned;
    *out = sg;
    return TERN_OK;
}

static uint32_t budget_after(const sampler_grammar * sg) {
    return sg->budget < 0 ? GRAMMAR_INF : (uint32_t) (sg->budget > 0 ? sg->budget - 1 : 0);
}

int sampler_grammar_check(sampler_grammar * sg, tern_token t) {
    sg->n_checked++;
    if (t < 0 || (uint32_t) t >= sg->v.n_vocab) return 0;
    if (sg->eog[t]) return grammar_can_end(&sg->g) ? 1 : 0;
    if (sg->v.len[t] == 0) return 0;
    if (sg->budget == 0) return 0;
    int r = grammar_try(&sg->g, sg->v.bytes + sg->v.off[t], sg->v.len[t], budget_after(sg));
    if (r < 0) {
        tern_status st = sg->g.error;
        sg->g.error = TERN_OK;
        (void) st;   // tern_last_error already holds the limit
    }
    return r;
}

tern_status sampler_grammar_mask(sampler_grammar * sg, int32_t * n_allowed) {
    sg->n_walks++;
    *n_allowed = 0;
    const bool can_end = grammar_can_end(&sg->g);
    int32_t n = 0;
    if (sg->budget == 0) {
        memset(sg->allowed, 0, sg->v.n_vocab);
    } else {
        uint32_t min_cost = GRAMMAR_INF;
        TERN_TRY(grammar_filter(&sg->g, &sg->v, budget_after(sg), sg->allowed, sg->budget >= 0 ? &min_cost : NULL));
        for (uint32_t t = 0; t < sg->v.n_vocab; t++) n += sg->allowed[t] && !sg->eog[t];
        // The byte count is only a bound (tokens carry several bytes): when no token
        // fits it, the ones that bring the text closest to complete still may.
        if (n == 0 && !can_end && min_cost != GRAMMAR_INF) {
            TERN_TRY(grammar_filter(&sg->g, &sg->v, min_cost, sg->allowed));
        }
    }
    n = 0;
    for (uint32_t t = 0; t < sg->v.n_vocab; t++) {
        if (sg->eog[t]) sg->allowed[t] = can_end;
        n += sg->allowed[t];
    }
    *n_allowed = n;
    return TERN_OK;
}

tern_status sampler_grammar_accept(sampler_grammar * sg, tern_token t) {
    if (t < 0 || (uint32_t) t >= sg->v.n_vocab) {
        return tern_fail(TERN_ERR_INVALID_ARG, "grammar: token %d is outside the vocabulary", (int) t);
    }
    if (sg->budget > 0) sg->budget--;
    if (sg->eog[t]) {
        if (!grammar_can_end(&sg->g)) {
            return tern_fail(TERN_ERR_INVALID_ARG, "grammar: end of generation before the text is complete");
        }
        return TERN_OK;
    }
    if (sg->v.len[t] == 0) return tern_fail(TERN_ERR_INVALID_ARG, "grammar: token %d has no text", (int) t);
    return grammar_accept(&sg->g, sg->v.bytes + sg->v.off[t], sg->v.len[t]);
}

tern_status sampler_grammar_reset(sampler_grammar * sg) {
    sg->budget = sg->budget_set;
    return grammar_reset(&sg->g);
}

}  // namespace tern
