// KV cache: n_cells cells, each holding one token's K and V rows for every
// layer, its position and the set of sequences it belongs to.
//
//   k[il]: F16 [n_embd_k_gqa, n_cells]   (row c = cell c's keys, all kv heads)
//   v[il]: F16 [n_embd_v_gqa, n_cells]
//
// Cells are not kept in position order: a batch takes whatever free cells
// kv_cache_find_slots() finds (first fit from the start), and the graph writes
// its rows there with SET_ROWS at those indices, so graph addresses never
// change. Attention then runs over cells [0, n_kv) where n_kv covers the
// highest used cell (padded to KV_CACHE_PAD so graphs are reused across
// decode steps); the mask hides cells that are empty, belong to another
// sequence, or hold a later position (causality).
#pragma once
#include <stdint.h>
#include "tern.h"
#include "core/arena.h"

#define KV_CACHE_PAD 32

static_assert(TERN_MAX_SEQ <= 64, "sequence sets are 64-bit masks");

struct kv_cell {
    tern_pos pos;        // -1 when empty
    uint64_t seq_mask;   // bit s set: the cell belongs to sequence s
};

struct kv_cache {
    uint32_t   n_cells;
    uint32_t   n_layer;
    uint32_t   n_embd_k;   // n_embd_k_gqa
    uint32_t   n_embd_v;   // n_embd_v_gqa
    uint32_t   used;       // non-empty cells
    kv_cell *  cells;      // [n_cells]
    void **    k;          // [n_layer] F16 buffers
    void **    v;
};

size_t kv_cache_mem_size(uint32_t n_cells, uint32_t n_layer, uint32_t n_embd_k, uint32_t n_embd_v);
tern_status kv_cache_init(kv_cache * kv, tern_arena * arena, uint32_t n_cells, uint32_t n_layer,
                          uint32_t n_embd_k, uint32_t n_embd_v);

void kv_cache_clear(kv_cache * kv);
// Pick n free cells (first fit). Returns false, changing nothing, when fewer are free.
bool kv_cache_find_slots(const kv_cache * kv, uint32_t n, int32_t * out_cells);
// Cells [0, n_kv) the attention must cover: one past the highest used cell, padded.
uint32_t kv_cache_n_kv(const kv_cache * kv);
// Remove positions [p0, p1) of seq (seq < 0: all sequences; p1 < 0: to the end).
void kv_cache_seq_rm(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1);
tern_pos kv_cache_seq_pos_max(const kv_cache * kv, tern_seq_id seq);
// Fill the attention mask [n_kv, n_tokens] (row t for token t): 0 where cell j
// is visible to token t (shares a sequence, pos <= token pos), -INFINITY elsewhere.
void kv_cache_fill_mask(const kv_cache * kv, uint32_t n_kv, uint32_t n_tokens, const tern_pos * pos,
                        const uint64_t * seq_masks, float * mask);
