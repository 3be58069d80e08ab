// KV cache: n_cells cells, each holding one token's K and V rows for every
// layer, its position and the set of sequences it belongs to.
//
//   k[il]: type_k [n_embd_k_gqa, n_cells]   (row c = cell c's keys, all kv heads)
//   v[il]: type_v [n_embd_v_gqa, n_cells]   (row-major too: V is not transposed)
//
// Each layer's rows are a storage (graph/buffer.h: buffer + offset) the
// context gives the cache: host memory in its arena, or the KV buffer of the
// device the layer runs on (hal/). This file keeps the cells' metadata and
// never touches the rows: graphs write and move them (SET_ROWS, the K-shift,
// the defrag graph), the state code reads them through the execution door.
//
// Types: F16 (default), F32, Q8_0, Q4_0 (tern_context_params type_k /
// type_v). A row is written by SET_ROWS (F32 -> the type: F16 rounding, or
// the reference quantizer per 32 values, so n_embd_gqa must be a multiple of
// 32) and read by the attention, which dequantizes a head's slice of a
// quantized row (attn.cpp). Every size and stride comes from the type
// (kv_cache_k_row_bytes), nowhere else.
//
// Sliding-window attention (phi3: model_hparams.n_swa > 0): the mask also
// hides cells n_swa or more positions behind the token, and when a batch
// finds too few free cells the cells every holder has left behind are freed
// for reuse (kv_cache_free_outside_window). Those positions are gone, and a
// token that would attend one of them cannot be computed exactly: each
// sequence keeps swa_lost, the highest position the window freed for it
// (-1: none), and a token at position p of sequence s needs
// p >= swa_lost[s] + n_swa (decode.cpp refuses it otherwise: a rollback
// past the window). Sequence operations carry swa_lost along: seq_rm of a
// range holding it lowers it below the range (those positions are removed
// anyway), seq_add / seq_div move it with the range (for a sequence that
// only shares the moved cells, the larger of old and moved), seq_cp gives
// dst src's, seq_keep and clear forget the others'. It is a bound by
// position, never by cell: the same whether or not the cache was
// defragmented, and saved with the state (context/state.cpp).
//
// Cells are not kept in position order: a batch takes the free cells
// kv_cache_find_slots() finds (below), and the graph writes
// its rows there with SET_ROWS at those indices, so graph addresses never
// change. Attention then runs over cells [0, n_kv) where n_kv covers the
// highest used cell (padded to KV_CACHE_PAD); the mask hides cells that are
// empty, belong to another sequence, or hold a later position (causality).
// The forward graph itself spans every cell (its shape does not change as
// the cache fills: one graph, one capture, for the whole context), and the
// attention reads each token's bound (one past its last visible cell).
//
// Sequence operations change cell metadata only:
//   seq_rm   frees a sequence's cells in [p0, p1) (a cell is free when no
//            sequence holds it);
//   seq_cp   adds dst to the cells of src in [p0, p1): the cells are shared,
//            no K/V data is copied (a shared prompt prefix);
//   seq_keep frees every cell not in seq and drops other sequences from it;
//   seq_add  moves positions in [p0, p1) by delta, seq_div divides them by d.
// Moved positions leave the keys stale: RoPE rotated them for the old
// position. Each cell keeps its pending `delta`; before the next decode the
// context runs the K-shift graph (model/forward_shift.h), which rotates the
// keys by delta (RoPE's additivity: R(p + d) = R(d) R(p)) and clears it. A
// cell pushed below position 0 is freed, as in llama.cpp.
//
// Defragmentation compacts the used cells to the front in their order: the
// attention sums over the non-zero terms of the cells in index order
// (kernels/vec.h exp_sum, mad_f16_rows skip masked cells), so the same cells
// in the same order give the same bits wherever they sit. kv_cache_defrag_plan
// lists the moves, a graph of row moves (model/forward_defrag.h) moves the
// rows of every layer, kv_cache_defrag_apply moves the metadata.
#pragma once
#include <stdint.h>
#include "tern.h"
#include "core/arena.h"
#include "graph/buffer.h"

namespace tern {

#define KV_CACHE_PAD 32

static_assert(TERN_MAX_SEQ <= 64, "sequence sets are 64-bit masks");

struct kv_cell {
    tern_pos pos;        // -1 when empty
    tern_pos delta;      // position change not yet applied to the cell's keys (K-shift)
    uint64_t seq_mask;   // bit s set: the cell belongs to sequence s
};

struct kv_cache {
    uint32_t   n_cells;
    uint32_t   n_layer;
    uint32_t   n_embd_k;   // n_embd_k_gqa
    uint32_t   n_embd_v;   // n_embd_v_gqa
    uint32_t   n_seq_max;  // sequences sharing the cells (the context's; 0 read as 1): n_cells /
                           // n_seq_max is a sequence's context, which picks LongRoPE's factors
    tern_type  type_k;
    tern_type  type_v;
    uint32_t   used;       // non-empty cells
    uint32_t   head;       // where the next slot search starts
    bool       has_shift;  // some cell has a pending delta
    kv_cell *  cells;      // [n_cells]
    tern_pos   swa_lost[TERN_MAX_SEQ];  // highest position the window freed per sequence, -1: none
    tern_storage * k;      // [n_layer] each layer's K rows (set by the context)
    tern_storage * v;      // [n_layer] each layer's V rows
};

// Bytes of the cells and the per-layer storage tables (not the rows).
size_t kv_cache_mem_size(uint32_t n_cells, uint32_t n_layer);
tern_status kv_cache_init(kv_cache * kv, tern_arena * arena, uint32_t n_cells, uint32_t n_layer,
                          uint32_t n_embd_k, uint32_t n_embd_v, tern_type type_k, tern_type type_v);
// Bytes of one layer's K (V) rows: n_cells rows, padded to the arena's alignment.
size_t kv_cache_k_layer_bytes(const kv_cache * kv);
size_t kv_cache_v_layer_bytes(const kv_cache * kv);

void kv_cache_clear(kv_cache * kv);
// Pick n free cells for a ubatch: a contiguous run at or after `head` (one
// past the previous ubatch), else a contiguous run from cell 0, else the
// first free cells from head on, wrapping. New tokens thus follow the ones
// before them in cell order while there is room, so a sequence's cells keep
// their order (what makes defragmentation exact); removals leave holes that
// the wrap-around or kv_cache_defrag reclaims. Returns false, changing
// nothing, when fewer than n cells are free.
bool kv_cache_find_slots(const kv_cache * kv, uint32_t n, int32_t * out_cells);
// Record a placement (moves head past the last cell taken).
void kv_cache_placed(kv_cache * kv, const int32_t * cells, uint32_t n);
// Cells [0, n_kv) the attention must cover: one past the highest used cell, padded.
uint32_t kv_cache_n_kv(const kv_cache * kv);
// Remove positions [p0, p1) of seq (seq < 0: all sequences; p1 < 0: to the end).
void kv_cache_seq_rm(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1);
tern_pos kv_cache_seq_pos_max(const kv_cache * kv, tern_seq_id seq);
// last[s] = kv_cache_seq_pos_max(kv, s) for every s < TERN_MAX_SEQ, in one pass over the cells.
void kv_cache_pos_max_all(const kv_cache * kv, tern_pos * last);
tern_pos kv_cache_seq_pos_min(const kv_cache * kv, tern_seq_id seq);  // -1 when empty
void kv_cache_seq_cp(kv_cache * kv, tern_seq_id src, tern_seq_id dst, tern_pos p0, tern_pos p1);
void kv_cache_seq_keep(kv_cache * kv, tern_seq_id seq);
void kv_cache_seq_add(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1, tern_pos delta);
void kv_cache_seq_div(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1, int d);
// Bytes of one cell's K (V) row in a layer.
size_t kv_cache_k_row_bytes(const kv_cache * kv);
size_t kv_cache_v_row_bytes(const kv_cache * kv);
// Compaction: the moves that bring the used cells to the front in their
// order, cell src[i] -> dst[i] (dst < src, both ascending; arrays of n_cells).
// Returns the number of moves; nothing changes.
uint32_t kv_cache_defrag_plan(const kv_cache * kv, int32_t * src, int32_t * dst);
// The same moves on the metadata, after the rows were moved (kv_cache_defrag_plan's lists).
void kv_cache_defrag_apply(kv_cache * kv, const int32_t * src, const int32_t * dst, uint32_t n);
// 1 - used / (highest used cell + 1): the share of cells below the top that hold nothing.
float kv_cache_fragmentation(const kv_cache * kv);
// Fill columns [0, n_kv) of the attention mask [row_len >= n_kv, n_tokens]
// (row t for token t): 0 where cell j is visible to token t (shares a
// sequence, pos <= token pos and, with a sliding window n_swa > 0, token pos
// - pos < n_swa), -INFINITY elsewhere; and bounds[t] (bounds may be NULL):
// one past token t's last visible cell (0: none).
void kv_cache_fill_mask(const kv_cache * kv, uint32_t n_kv, uint32_t row_len, uint32_t n_tokens, const tern_pos * pos,
                        const uint64_t * seq_masks, uint32_t n_swa, float * mask, int32_t * bounds);
// Sliding window: free up to n cells (lowest index first) that no token can
// attend any more: for every sequence s holding the cell, next_pos[s] - pos >=
// n_swa, where next_pos[s] (TERN_MAX_SEQ entries) is the lowest position s
// may still decode. Returns the number freed. The context calls it only when
// a batch finds too few free cells, so a cache with room keeps every cell
// (seq_rm and re-decode stay exact) and one without room reuses the cells
// the window has left behind instead of failing.
uint32_t kv_cache_free_outside_window(kv_cache * kv, uint32_t n_swa, uint32_t n, const tern_pos * next_pos);

}  // namespace tern
