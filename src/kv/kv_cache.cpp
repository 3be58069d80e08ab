#include "kv/kv_cache.h"
#include "core/fp16.h"
#include "core/status.h"

#include <math.h>
#include <string.h>

static size_t kv_layer_bytes(uint32_t n_cells, uint32_t n_embd) {
    return arena_padded((size_t) n_cells * n_embd * sizeof(tern_fp16));
}

size_t kv_cache_mem_size(uint32_t n_cells, uint32_t n_layer, uint32_t n_embd_k, uint32_t n_embd_v) {
    return arena_padded(sizeof(kv_cell) * n_cells) + 2 * arena_padded(sizeof(void *) * n_layer) +
           n_layer * (kv_layer_bytes(n_cells, n_embd_k) + kv_layer_bytes(n_cells, n_embd_v));
}

tern_status kv_cache_init(kv_cache * kv, tern_arena * arena, uint32_t n_cells, uint32_t n_layer,
                          uint32_t n_embd_k, uint32_t n_embd_v) {
    memset(kv, 0, sizeof(*kv));
    kv->n_cells = n_cells;
    kv->n_layer = n_layer;
    kv->n_embd_k = n_embd_k;
    kv->n_embd_v = n_embd_v;
    kv->cells = (kv_cell *) arena_alloc(arena, sizeof(kv_cell) * n_cells, TERN_MEM_KV);
    kv->k = (void **) arena_alloc(arena, sizeof(void *) * n_layer, TERN_MEM_KV);
    kv->v = (void **) arena_alloc(arena, sizeof(void *) * n_layer, TERN_MEM_KV);
    if (!kv->cells || !kv->k || !kv->v) return TERN_ERR_NO_MEMORY;
    for (uint32_t il = 0; il < n_layer; il++) {
        // Zeroed so that cells never written hold finite values (they are masked, but 0 * NaN is NaN).
        kv->k[il] = arena_calloc(arena, (size_t) n_cells * n_embd_k * sizeof(tern_fp16), TERN_MEM_KV);
        kv->v[il] = arena_calloc(arena, (size_t) n_cells * n_embd_v * sizeof(tern_fp16), TERN_MEM_KV);
        if (!kv->k[il] || !kv->v[il]) return TERN_ERR_NO_MEMORY;
    }
    kv_cache_clear(kv);
    return TERN_OK;
}

void kv_cache_clear(kv_cache * kv) {
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        kv->cells[i].pos = -1;
        kv->cells[i].seq_mask = 0;
    }
    kv->used = 0;
}

bool kv_cache_find_slots(const kv_cache * kv, uint32_t n, int32_t * out_cells) {
    if (n > kv->n_cells - kv->used) return false;
    uint32_t found = 0;
    for (uint32_t i = 0; i < kv->n_cells && found < n; i++) {
        if (kv->cells[i].seq_mask == 0) out_cells[found++] = (int32_t) i;
    }
    return found == n;
}

uint32_t kv_cache_n_kv(const kv_cache * kv) {
    uint32_t top = 0;
    for (uint32_t i = kv->n_cells; i > 0; i--) {
        if (kv->cells[i - 1].seq_mask != 0) { top = i; break; }
    }
    uint32_t padded = (top + KV_CACHE_PAD - 1) / KV_CACHE_PAD * KV_CACHE_PAD;
    if (padded < KV_CACHE_PAD) padded = KV_CACHE_PAD;
    return padded < kv->n_cells ? padded : kv->n_cells;
}

void kv_cache_seq_rm(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1) {
    if (p0 < 0) p0 = 0;
    if (p1 < 0) p1 = INT32_MAX;
    const uint64_t drop = seq < 0 ? ~(uint64_t) 0 : (uint64_t) 1 << seq;
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        kv_cell * c = &kv->cells[i];
        if (c->seq_mask == 0 || c->pos < p0 || c->pos >= p1) continue;
        c->seq_mask &= ~drop;
        if (c->seq_mask == 0) {
            c->pos = -1;
            kv->used--;
        }
    }
}

tern_pos kv_cache_seq_pos_max(const kv_cache * kv, tern_seq_id seq) {
    tern_pos best = -1;
    const uint64_t bit = (uint64_t) 1 << seq;
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        if ((kv->cells[i].seq_mask & bit) && kv->cells[i].pos > best) best = kv->cells[i].pos;
    }
    return best;
}

void kv_cache_fill_mask(const kv_cache * kv, uint32_t n_kv, uint32_t n_tokens, const tern_pos * pos,
                        const uint64_t * seq_masks, float * mask) {
    for (uint32_t t = 0; t < n_tokens; t++) {
        float * row = mask + (size_t) t * n_kv;
        for (uint32_t j = 0; j < n_kv; j++) {
            const kv_cell * c = &kv->cells[j];
            const bool visible = (c->seq_mask & seq_masks[t]) != 0 && c->pos <= pos[t];
            row[j] = visible ? 0.0f : -INFINITY;
        }
    }
}
