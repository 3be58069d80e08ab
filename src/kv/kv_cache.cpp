#include "kv/kv_cache.h"
#include "core/fp16.h"
#include "core/status.h"
#include "tensor/types.h"

#include <math.h>
#include <string.h>

namespace tern {

size_t kv_cache_mem_size(uint32_t n_cells, uint32_t n_layer) {
    return arena_padded(sizeof(kv_cell) * n_cells) + 2 * arena_padded(sizeof(tern_storage) * n_layer);
}

size_t kv_cache_k_layer_bytes(const kv_cache * kv) { return arena_padded((size_t) kv->n_cells * kv_cache_k_row_bytes(kv)); }
size_t kv_cache_v_layer_bytes(const kv_cache * kv) { return arena_padded((size_t) kv->n_cells * kv_cache_v_row_bytes(kv)); }

tern_status kv_cache_init(kv_cache * kv, tern_arena * arena, uint32_t n_cells, uint32_t n_layer,
                          uint32_t n_embd_k, uint32_t n_embd_v, tern_type type_k, tern_type type_v) {
    memset(kv, 0, sizeof(*kv));
    kv->n_cells = n_cells;
    kv->n_layer = n_layer;
    kv->n_embd_k = n_embd_k;
    kv->n_embd_v = n_embd_v;
    kv->type_k = type_k;
    kv->type_v = type_v;
    kv->cells = (kv_cell *) arena_alloc(arena, sizeof(kv_cell) * n_cells, TERN_MEM_KV);
    kv->k = (tern_storage *) arena_calloc(arena, sizeof(tern_storage) * n_layer, TERN_MEM_KV);
    kv->v = (tern_storage *) arena_calloc(arena, sizeof(tern_storage) * n_layer, TERN_MEM_KV);
    if (!kv->cells || !kv->k || !kv->v) return TERN_ERR_NO_MEMORY;
    kv_cache_clear(kv);
    return TERN_OK;
}

void kv_cache_clear(kv_cache * kv) {
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        kv->cells[i].pos = -1;
        kv->cells[i].delta = 0;
        kv->cells[i].seq_mask = 0;
    }
    kv->used = 0;
    kv->head = 0;
    kv->has_shift = false;
    for (uint32_t s = 0; s < TERN_MAX_SEQ; s++) kv->swa_lost[s] = -1;
}

static void free_cell(kv_cache * kv, kv_cell * c) {
    c->pos = -1;
    c->delta = 0;
    c->seq_mask = 0;
    kv->used--;
}

static void clamp_range(tern_pos * p0, tern_pos * p1) {
    if (*p0 < 0) *p0 = 0;
    if (*p1 < 0) *p1 = INT32_MAX;
}

// A free run of n cells starting in [from, to); -1 when none.
static int64_t free_run(const kv_cache * kv, uint32_t n, uint32_t from, uint32_t to) {
    uint32_t run = 0;
    for (uint32_t i = from; i < to; i++) {
        run = kv->cells[i].seq_mask == 0 ? run + 1 : 0;
        if (run == n) return (int64_t) (i + 1 - n);
    }
    return -1;
}

bool kv_cache_find_slots(const kv_cache * kv, uint32_t n, int32_t * out_cells) {
    if (n == 0 || n > kv->n_cells - kv->used) return false;
    const uint32_t head = kv->head < kv->n_cells ? kv->head : 0;
    int64_t start = free_run(kv, n, head, kv->n_cells);
    if (start < 0) start = free_run(kv, n, 0, kv->n_cells);
    if (start >= 0) {
        for (uint32_t i = 0; i < n; i++) out_cells[i] = (int32_t) (start + i);
        return true;
    }
    // Scattered: the first free cells from head on, then from the start.
    uint32_t found = 0;
    for (uint32_t k = 0; k < kv->n_cells && found < n; k++) {
        const uint32_t i = (head + k) % kv->n_cells;
        if (kv->cells[i].seq_mask == 0) out_cells[found++] = (int32_t) i;
    }
    return found == n;
}

void kv_cache_placed(kv_cache * kv, const int32_t * cells, uint32_t n) {
    if (n > 0) kv->head = (uint32_t) cells[n - 1] + 1;
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

// The window's lost bound of one sequence after positions [p0, p1) moved to
// f(position) (f grows with its argument): the bound is the highest lost
// position, so lost positions may lie anywhere below it. In the range it
// moves; positions below p0 stay (bound at least p0 - 1 when f lowers it);
// the range below the bound may hold lost positions that moved up.
template <typename F>
static tern_pos lost_moved(tern_pos lost, tern_pos p0, tern_pos p1, F f) {
    if (lost < 0 || lost < p0) return lost;
    int64_t moved;
    if (lost < p1) {
        moved = f((int64_t) lost);
        if (p0 > 0 && moved < (int64_t) p0 - 1) moved = (int64_t) p0 - 1;
    } else {
        moved = f((int64_t) p1 - 1);
        if (moved < lost) moved = lost;
    }
    if (moved < 0) return -1;  // pushed below 0: removed
    return moved > INT32_MAX - 1 ? INT32_MAX - 1 : (tern_pos) moved;
}

// Every sequence whose bound the move touches: seq itself exactly, a sequence
// sharing moved cells (its lost ones may have been shared too) the larger.
template <typename F>
static void lost_move_all(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1, F f) {
    for (uint32_t s = 0; s < TERN_MAX_SEQ; s++) {
        const tern_pos moved = lost_moved(kv->swa_lost[s], p0, p1, f);
        if ((tern_seq_id) s == seq) kv->swa_lost[s] = moved;
        else if (moved > kv->swa_lost[s]) kv->swa_lost[s] = moved;
    }
}

void kv_cache_seq_rm(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1) {
    clamp_range(&p0, &p1);
    for (uint32_t s = 0; s < TERN_MAX_SEQ; s++) {  // lost positions in the range are removed too
        if ((seq < 0 || (tern_seq_id) s == seq) && kv->swa_lost[s] >= p0 && kv->swa_lost[s] < p1) kv->swa_lost[s] = p0 - 1;
    }
    const uint64_t drop = seq < 0 ? ~(uint64_t) 0 : (uint64_t) 1 << seq;
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        kv_cell * c = &kv->cells[i];
        if (c->seq_mask == 0 || c->pos < p0 || c->pos >= p1) continue;
        c->seq_mask &= ~drop;
        if (c->seq_mask == 0) free_cell(kv, c);
    }
}

void kv_cache_seq_cp(kv_cache * kv, tern_seq_id src, tern_seq_id dst, tern_pos p0, tern_pos p1) {
    if (src == dst) return;
    clamp_range(&p0, &p1);
    const uint64_t from = (uint64_t) 1 << src, to = (uint64_t) 1 << dst;
    if (kv->swa_lost[src] >= p0) {  // dst now needs what src lost in the range
        const tern_pos lost = kv->swa_lost[src] < p1 ? kv->swa_lost[src] : p1 - 1;
        if (lost > kv->swa_lost[dst]) kv->swa_lost[dst] = lost;
    }
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        kv_cell * c = &kv->cells[i];
        if ((c->seq_mask & from) && c->pos >= p0 && c->pos < p1) c->seq_mask |= to;
    }
}

void kv_cache_seq_keep(kv_cache * kv, tern_seq_id seq) {
    const uint64_t keep = (uint64_t) 1 << seq;
    for (uint32_t s = 0; s < TERN_MAX_SEQ; s++) {
        if ((tern_seq_id) s != seq) kv->swa_lost[s] = -1;
    }
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        kv_cell * c = &kv->cells[i];
        if (c->seq_mask == 0) continue;
        if (c->seq_mask & keep) c->seq_mask = keep;
        else free_cell(kv, c);
    }
}

// Positions move for every sequence sharing a cell (the cell has one position), as in llama.cpp.
void kv_cache_seq_add(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1, tern_pos delta) {
    if (delta == 0) return;
    clamp_range(&p0, &p1);
    lost_move_all(kv, seq, p0, p1, [delta](int64_t p) { return p + delta; });
    const uint64_t bit = (uint64_t) 1 << seq;
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        kv_cell * c = &kv->cells[i];
        if (!(c->seq_mask & bit) || c->pos < p0 || c->pos >= p1) continue;
        const int64_t pos = (int64_t) c->pos + delta;
        if (pos < 0) {
            free_cell(kv, c);
            continue;
        }
        c->pos = pos > INT32_MAX - 1 ? INT32_MAX - 1 : (tern_pos) pos;
        c->delta += c->pos - (tern_pos) (pos - delta);
        kv->has_shift = true;
    }
}

void kv_cache_seq_div(kv_cache * kv, tern_seq_id seq, tern_pos p0, tern_pos p1, int d) {
    if (d <= 1) return;
    clamp_range(&p0, &p1);
    lost_move_all(kv, seq, p0, p1, [d](int64_t p) { return p / d; });
    const uint64_t bit = (uint64_t) 1 << seq;
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        kv_cell * c = &kv->cells[i];
        if (!(c->seq_mask & bit) || c->pos < p0 || c->pos >= p1) continue;
        const tern_pos old = c->pos;
        c->pos = old / d;
        c->delta += c->pos - old;
        kv->has_shift = true;
    }
}

tern_pos kv_cache_seq_pos_min(const kv_cache * kv, tern_seq_id seq) {
    tern_pos best = -1;
    const uint64_t bit = (uint64_t) 1 << seq;
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        if ((kv->cells[i].seq_mask & bit) && (best < 0 || kv->cells[i].pos < best)) best = kv->cells[i].pos;
    }
    return best;
}

size_t kv_cache_k_row_bytes(const kv_cache * kv) { return tern_row_size(kv->type_k, kv->n_embd_k); }
size_t kv_cache_v_row_bytes(const kv_cache * kv) { return tern_row_size(kv->type_v, kv->n_embd_v); }

uint32_t kv_cache_defrag_plan(const kv_cache * kv, int32_t * src, int32_t * dst) {
    uint32_t to = 0, n = 0;
    for (uint32_t from = 0; from < kv->n_cells; from++) {
        if (kv->cells[from].seq_mask == 0) continue;
        if (from != to) {
            src[n] = (int32_t) from;
            dst[n] = (int32_t) to;
            n++;
        }
        to++;
    }
    return n;
}

void kv_cache_defrag_apply(kv_cache * kv, const int32_t * src, const int32_t * dst, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {  // ascending, dst < src: a cell is read before it is overwritten
        kv->cells[dst[i]] = kv->cells[src[i]];
        kv->cells[src[i]].pos = -1;
        kv->cells[src[i]].delta = 0;
        kv->cells[src[i]].seq_mask = 0;
    }
    kv->head = kv->used;  // the next batch goes right after the packed cells
}

float kv_cache_fragmentation(const kv_cache * kv) {
    uint32_t top = 0;  // one past the highest used cell (before padding)
    for (uint32_t i = kv->n_cells; i > 0; i--) {
        if (kv->cells[i - 1].seq_mask != 0) { top = i; break; }
    }
    return top ? 1.0f - (float) kv->used / (float) top : 0.0f;
}

tern_pos kv_cache_seq_pos_max(const kv_cache * kv, tern_seq_id seq) {
    tern_pos best = -1;
    const uint64_t bit = (uint64_t) 1 << seq;
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        if ((kv->cells[i].seq_mask & bit) && kv->cells[i].pos > best) best = kv->cells[i].pos;
    }
    return best;
}

void kv_cache_pos_max_all(const kv_cache * kv, tern_pos * last) {
    for (uint32_t s = 0; s < TERN_MAX_SEQ; s++) last[s] = -1;
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        const kv_cell & c = kv->cells[i];
        for (uint64_t m = c.seq_mask; m; m &= m - 1) {
            const int s = __builtin_ctzll(m);
            if (c.pos > last[s]) last[s] = c.pos;
        }
    }
}

void kv_cache_fill_mask(const kv_cache * kv, uint32_t n_kv, uint32_t row_len, uint32_t n_tokens, const tern_pos * pos,
                        const uint64_t * seq_masks, uint32_t n_swa, float * mask, int32_t * bounds) {
    for (uint32_t t = 0; t < n_tokens; t++) {
        float * row = mask + (size_t) t * row_len;
        int32_t bound = 0;
        for (uint32_t j = 0; j < n_kv; j++) {
            const kv_cell * c = &kv->cells[j];
            bool visible = (c->seq_mask & seq_masks[t]) != 0 && c->pos <= pos[t];
            if (n_swa > 0 && (int64_t) pos[t] - c->pos >= (int64_t) n_swa) visible = false;  // left the window
            row[j] = visible ? 0.0f : -INFINITY;
            if (visible) bound = (int32_t) j + 1;
        }
        if (bounds) bounds[t] = bound;
    }
}

uint32_t kv_cache_free_outside_window(kv_cache * kv, uint32_t n_swa, uint32_t n, const tern_pos * next_pos) {
    uint32_t freed = 0;
    for (uint32_t i = 0; i < kv->n_cells && freed < n; i++) {
        kv_cell * c = &kv->cells[i];
        if (c->seq_mask == 0) continue;
        bool dead = true;
        for (uint64_t m = c->seq_mask; m && dead; m &= m - 1) {
            const int s = __builtin_ctzll(m);
            dead = (int64_t) next_pos[s] - c->pos >= (int64_t) n_swa;
        }
        if (!dead) continue;
        for (uint64_t m = c->seq_mask; m; m &= m - 1) {
            const int s = __builtin_ctzll(m);
            if (c->pos > kv->swa_lost[s]) kv->swa_lost[s] = c->pos;
        }
        free_cell(kv, c);
        freed++;
    }
    return freed;
}

}  // namespace tern
