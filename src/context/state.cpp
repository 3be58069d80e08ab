// Context and sequence state: the KV cells a context holds (and, for a whole
// context, its last logits), to memory or a file and back. Format (little
// endian), version 2:
//
//   header, 72 bytes: u32 magic "TRNS", version, kind (1 context, 2 sequence),
//     type_k, type_v, n_layer, n_embd_k, n_embd_v, n_vocab, model fingerprint
//     (u64 as low, high: model/fingerprint.h), n_tokens, n_cells,
//     n_logit_rows, n_batch_last, n_window, payload checksum, header checksum
//     (of the 68 bytes before)
//   payload:
//     tokens        i32 [n_tokens]             (the prompt, files only)
//     cells         kind 1: {i32 pos, u64 seq_mask} [n_cells]; kind 2: i32 pos [n_cells]
//     window        {i32 seq, i32 lost} [n_window]: the highest position the
//                   sliding window freed per sequence (kv_cache.h swa_lost;
//                   kind 2: one entry at most, seq 0)
//     keys          per layer, the cells' K rows (cache type, row after row)
//     values        per layer, the cells' V rows
//     kind 1 only:  i32 output_row [n_batch_last], f32 logits [n_logit_rows][n_vocab]
//
// Only used cells are written, in cell order (positions in any order, equal
// ones too: what a context shift or seq_div leaves); pending K-shifts are
// applied first. Loading checks everything before it changes anything: the
// header (both checksums, the fingerprint against this context's model and
// cache types, counts against its sizes), every cell (positions in the
// batch's range [0, INT32_MAX - 1], sequences this context has), the
// window entries, that K/V rows (their block scales) and logits are finite
// (TERN_ERR_NUMERIC), the exact size, and the payload checksum; a file is
// read twice for that (verify, then apply), with
// the context's activation buffer as staging, so no memory is taken. The K/V
// rows are read and written through the execution door (exec_storage_*),
// runs of consecutive cells at a time: the cache may live in a device's
// memory. Whole
// contexts restore into cells 0..n-1 in order; a sequence replaces the
// destination sequence's cells. Attention does not depend on where cells sit
// (kv_cache.h), so a restored context continues with the same logits, bit
// for bit.
#include "context/context.h"
#include "core/status.h"
#include "model/fingerprint.h"
#include "port.h"
#include "tensor/finite.h"
#include "tensor/types.h"

#include <inttypes.h>
#include <string.h>

namespace tern {

namespace {

const uint32_t kMagic = 0x534E5254u;  // "TRNS"
const uint32_t kVersion = 2;
const uint32_t kHeaderBytes = 72;
enum { KIND_CONTEXT = 1, KIND_SEQ = 2 };

enum header_field {
    H_MAGIC, H_VERSION, H_KIND, H_TYPE_K, H_TYPE_V, H_N_LAYER, H_N_EMBD_K, H_N_EMBD_V, H_N_VOCAB, H_MODEL_LO, H_MODEL_HI,
    H_N_TOKENS, H_N_CELLS, H_N_ROWS, H_N_BATCH_LAST, H_N_WINDOW, H_PAYLOAD_SUM, H_HEADER_SUM, H_COUNT
};
static_assert(H_COUNT * 4 == kHeaderBytes, "the header is 18 u32");
const uint32_t kSummed = H_HEADER_SUM * 4;  // header bytes the header checksum covers
// Version 1 (64 bytes: an architecture hash where the fingerprint is, no
// window section) is still recognised as a state a save may replace.
const uint32_t kHeaderBytesV1 = 64;

// FNV-1a, 32 bits, over a stream of bytes.
struct fnv32 {
    uint32_t h = 2166136261u;
    void add(const void * data, size_t n) {
        const uint8_t * p = (const uint8_t *) data;
        uint32_t x = h;
        for (size_t i = 0; i < n; i++) x = (x ^ p[i]) * 16777619u;
        h = x;
    }
};

struct header {
    uint32_t v[H_COUNT];
};

// ---- what a context writes ---------------------------------------------------------

struct selection {
    int         kind;
    tern_seq_id seq;  // kind 2
    bool take(const kv_cell & c) const {
        return c.seq_mask != 0 && (kind == KIND_CONTEXT || (c.seq_mask >> seq) & 1);
    }
};

uint32_t count_cells(const tern_context * ctx, const selection & sel) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < ctx->kv.n_cells; i++) n += sel.take(ctx->kv.cells[i]);
    return n;
}

// Window entries: sequences whose window freed positions.
uint32_t count_window(const tern_context * ctx, const selection & sel) {
    if (sel.kind == KIND_SEQ) return ctx->kv.swa_lost[sel.seq] >= 0 ? 1 : 0;
    uint32_t n = 0;
    for (uint32_t s = 0; s < ctx->params.n_seq_max; s++) n += ctx->kv.swa_lost[s] >= 0;
    return n;
}

uint32_t logit_rows(const tern_context * ctx) {
    int32_t rows = 0;
    for (int32_t i = 0; i < ctx->n_batch_last; i++) {
        if (ctx->output_row[i] + 1 > rows) rows = ctx->output_row[i] + 1;
    }
    return (uint32_t) rows;
}

uint64_t payload_bytes(const tern_context * ctx, int kind, uint64_t n_tokens, uint64_t n_cells, uint64_t n_window,
                       uint64_t n_rows, uint64_t n_batch_last) {
    const kv_cache * kv = &ctx->kv;
    uint64_t b = n_tokens * 4 + n_cells * (kind == KIND_CONTEXT ? 12 : 4) + n_window * 8;
    b += (uint64_t) kv->n_layer * n_cells * (kv_cache_k_row_bytes(kv) + kv_cache_v_row_bytes(kv));
    if (kind == KIND_CONTEXT) b += n_batch_last * 4 + n_rows * ctx->model->hp.n_vocab * 4;
    return b;
}

// Output: memory (buf, or NULL to only count and hash) or a file.
struct sink {
    uint8_t *          buf;
    size_t             cap;
    size_t             n;
    port_file_writer * file;
    fnv32              sum;
    tern_status        st;
    void put(const void * p, size_t k) {
        if (st != TERN_OK) return;
        sum.add(p, k);
        if (file) st = port_file_write(file, p, k);
        else if (buf) {
            if (n + k > cap) { st = TERN_ERR_NO_MEMORY; return; }
            memcpy(buf + n, p, k);
        }
        n += k;
    }
};

// Rows [c0, c1) of one layer's K or V storage, to the sink: straight from
// host memory, or through the staging buffer in chunks.
void put_rows(tern_context * ctx, tern_storage st, size_t row_bytes, uint32_t c0, uint32_t c1, sink * s) {
    if (s->st != TERN_OK) return;
    const uint8_t * host = (const uint8_t *) tern_storage_host(st);
    if (host) {
        s->put(host + (size_t) c0 * row_bytes, (size_t) (c1 - c0) * row_bytes);
        return;
    }
    uint8_t * staging = (uint8_t *) ctx->activations;
    const uint32_t per_chunk = (uint32_t) (ctx->activation_bytes / row_bytes);
    for (uint32_t c = c0; c < c1 && s->st == TERN_OK; c += per_chunk) {
        const uint32_t n = c1 - c < per_chunk ? c1 - c : per_chunk;
        s->st = exec_storage_read(&ctx->exec, st, (size_t) c * row_bytes, staging, (size_t) n * row_bytes);
        if (s->st == TERN_OK) s->put(staging, (size_t) n * row_bytes);
    }
}

void write_payload(tern_context * ctx, const selection & sel, const tern_token * tokens, uint32_t n_tokens,
                   sink * s) {
    const kv_cache * kv = &ctx->kv;
    for (uint32_t i = 0; i < n_tokens; i++) s->put(&tokens[i], 4);
    for (uint32_t i = 0; i < kv->n_cells; i++) {
        const kv_cell & c = kv->cells[i];
        if (!sel.take(c)) continue;
        s->put(&c.pos, 4);
        if (sel.kind == KIND_CONTEXT) s->put(&c.seq_mask, 8);
    }
    for (uint32_t q = 0; q < ctx->params.n_seq_max; q++) {
        if (sel.kind == KIND_SEQ && (tern_seq_id) q != sel.seq) continue;
        if (kv->swa_lost[q] < 0) continue;
        const int32_t seq = sel.kind == KIND_SEQ ? 0 : (int32_t) q;
        s->put(&seq, 4);
        s->put(&kv->swa_lost[q], 4);
    }
    const size_t kb = kv_cache_k_row_bytes(kv), vb = kv_cache_v_row_bytes(kv);
    for (int part = 0; part < 2; part++) {
        for (uint32_t il = 0; il < kv->n_layer; il++) {
            const tern_storage st = part == 0 ? kv->k[il] : kv->v[il];
            const size_t rb = part == 0 ? kb : vb;
            for (uint32_t i = 0; i < kv->n_cells;) {  // runs of taken cells
                if (!sel.take(kv->cells[i])) { i++; continue; }
                uint32_t j = i + 1;
                while (j < kv->n_cells && sel.take(kv->cells[j])) j++;
                put_rows(ctx, st, rb, i, j, s);
                i = j;
            }
        }
    }
    if (sel.kind == KIND_CONTEXT) {
        for (int32_t i = 0; i < ctx->n_batch_last; i++) s->put(&ctx->output_row[i], 4);
        s->put(ctx->logits, (size_t) logit_rows(ctx) * ctx->model->hp.n_vocab * sizeof(float));
    }
}

header make_header(const tern_context * ctx, const selection & sel, uint32_t n_tokens, uint32_t payload_sum) {
    const kv_cache * kv = &ctx->kv;
    header h;
    memset(&h, 0, sizeof(h));
    h.v[H_MAGIC] = kMagic;
    h.v[H_VERSION] = kVersion;
    h.v[H_KIND] = (uint32_t) sel.kind;
    h.v[H_TYPE_K] = (uint32_t) kv->type_k;
    h.v[H_TYPE_V] = (uint32_t) kv->type_v;
    h.v[H_N_LAYER] = kv->n_layer;
    h.v[H_N_EMBD_K] = kv->n_embd_k;
    h.v[H_N_EMBD_V] = kv->n_embd_v;
    h.v[H_N_VOCAB] = ctx->model->hp.n_vocab;
    const uint64_t fp = model_fingerprint(ctx->model);
    h.v[H_MODEL_LO] = (uint32_t) fp;
    h.v[H_MODEL_HI] = (uint32_t) (fp >> 32);
    h.v[H_N_TOKENS] = n_tokens;
    h.v[H_N_CELLS] = count_cells(ctx, sel);
    h.v[H_N_ROWS] = sel.kind == KIND_CONTEXT ? logit_rows(ctx) : 0;
    h.v[H_N_BATCH_LAST] = sel.kind == KIND_CONTEXT ? (uint32_t) ctx->n_batch_last : 0;
    h.v[H_N_WINDOW] = count_window(ctx, sel);
    h.v[H_PAYLOAD_SUM] = payload_sum;
    fnv32 f;
    f.add(h.v, kSummed);
    h.v[H_HEADER_SUM] = f.h;
    return h;
}

// The header and payload of a context (or sequence) into a sink; `file`
// needs the checksum first, so it runs the payload twice (hash, then write).
tern_status save(tern_context * ctx, const selection & sel, const tern_token * tokens, uint32_t n_tokens,
                 sink * out) {
    sink measure = {};
    measure.st = TERN_OK;
    write_payload(ctx, sel, tokens, n_tokens, &measure);
    if (measure.st != TERN_OK) return measure.st;
    const header h = make_header(ctx, sel, n_tokens, measure.sum.h);
    out->put(h.v, kHeaderBytes);
    write_payload(ctx, sel, tokens, n_tokens, out);
    return out->st;
}

// ---- reading ---------------------------------------------------------------------------

struct source {
    const uint8_t * mem;    // memory source, or NULL for a file
    const char *    path;
    uint64_t        size;
    uint64_t        at;
    fnv32           sum;
    // Read k bytes to dst (never past size: the size was checked first).
    tern_status get(void * dst, size_t k) {
        if (at + k > size) return tern_fail(TERN_ERR_FORMAT, "state: truncated at byte %llu", (unsigned long long) at);
        if (mem) memcpy(dst, mem + at, k);
        else TERN_TRY(port_file_read(path, at, dst, k));
        sum.add(dst, k);
        at += k;
        return TERN_OK;
    }
};

tern_status bad(const char * what) { return tern_fail(TERN_ERR_FORMAT, "state: %s", what); }

// Header checks: integrity, version, kind, fingerprint against this context, counts against its sizes.
tern_status check_header(const tern_context * ctx, const header & h, int kind, uint64_t size, uint32_t max_tokens) {
    fnv32 f;
    f.add(h.v, kSummed);
    if (h.v[H_MAGIC] != kMagic) return bad("not a Tern state (bad magic)");
    if (h.v[H_VERSION] != kVersion && h.v[H_VERSION] >= 1 && h.v[H_VERSION] < kVersion) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "state: version %" PRIu32 " (this build reads %" PRIu32 ": save it again)",
                         h.v[H_VERSION], kVersion);
    }
    if (h.v[H_HEADER_SUM] != f.h) return bad("header checksum mismatch (corrupted)");
    if (h.v[H_VERSION] != kVersion) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "state: version %" PRIu32 " (this build reads %" PRIu32 ")", h.v[H_VERSION], kVersion);
    }
    if (h.v[H_KIND] != (uint32_t) kind) {
        return bad(kind == KIND_CONTEXT ? "a sequence state, not a context state" : "a context state, not a sequence state");
    }
    const kv_cache * kv = &ctx->kv;
    if (h.v[H_N_LAYER] != kv->n_layer || h.v[H_N_EMBD_K] != kv->n_embd_k ||
        h.v[H_N_EMBD_V] != kv->n_embd_v || h.v[H_N_VOCAB] != ctx->model->hp.n_vocab) {
        return tern_fail(TERN_ERR_INVALID_ARG, "state: saved from another model (%" PRIu32 " layers, K/V widths %" PRIu32 "/%" PRIu32 ", %" PRIu32 " tokens "
                         "of vocabulary; this one: %" PRIu32 ", %" PRIu32 "/%" PRIu32 ", %" PRIu32 ")", h.v[H_N_LAYER], h.v[H_N_EMBD_K], h.v[H_N_EMBD_V],
                         h.v[H_N_VOCAB], kv->n_layer, kv->n_embd_k, kv->n_embd_v, ctx->model->hp.n_vocab);
    }
    const uint64_t fp = model_fingerprint(ctx->model);
    if (h.v[H_MODEL_LO] != (uint32_t) fp || h.v[H_MODEL_HI] != (uint32_t) (fp >> 32)) {
        return tern_fail(TERN_ERR_INVALID_ARG, "state: saved from another model of this shape (fingerprint %08" PRIx32 "%08" PRIx32
                         ", this model's %016llx: other weights or hyper-parameters)",
                         h.v[H_MODEL_HI], h.v[H_MODEL_LO], (unsigned long long) fp);
    }
    if (h.v[H_TYPE_K] != (uint32_t) kv->type_k || h.v[H_TYPE_V] != (uint32_t) kv->type_v) {
        // Type ids from the file are printed as numbers: they need not be valid enum values.
        return tern_fail(TERN_ERR_INVALID_ARG, "state: K/V types %" PRIu32 "/%" PRIu32 ", this context's are %s/%s (%d/%d)",
                         h.v[H_TYPE_K], h.v[H_TYPE_V], tern_type_name(kv->type_k), tern_type_name(kv->type_v),
                         (int) kv->type_k, (int) kv->type_v);
    }
    if (h.v[H_N_CELLS] > kv->n_cells) {
        return tern_fail(TERN_ERR_CONTEXT_FULL, "state: %" PRIu32 " cells, the context has %" PRIu32, h.v[H_N_CELLS], kv->n_cells);
    }
    if (h.v[H_N_TOKENS] > max_tokens) {
        return tern_fail(TERN_ERR_NO_MEMORY, "state: %" PRIu32 " prompt tokens, room for %" PRIu32, h.v[H_N_TOKENS], max_tokens);
    }
    if (h.v[H_N_ROWS] > ctx->logits_rows || h.v[H_N_BATCH_LAST] > ctx->params.n_ctx ||
        (kind == KIND_SEQ && (h.v[H_N_ROWS] || h.v[H_N_BATCH_LAST]))) {
        return bad("logits rows or last batch larger than this context keeps");
    }
    if (h.v[H_N_WINDOW] > (kind == KIND_SEQ ? 1 : ctx->params.n_seq_max)) return bad("more window entries than sequences");
    const uint64_t want = kHeaderBytes + payload_bytes(ctx, kind, h.v[H_N_TOKENS], h.v[H_N_CELLS], h.v[H_N_WINDOW],
                                                      h.v[H_N_ROWS], h.v[H_N_BATCH_LAST]);
    if (size != want) {
        return tern_fail(TERN_ERR_FORMAT, "state: %llu bytes, the header describes %llu (truncated or extended)",
                         (unsigned long long) size, (unsigned long long) want);
    }
    return TERN_OK;
}

// One pass over the payload. verify: every value checked, bytes only hashed
// (through `staging`); apply: cells, rows and logits go to their places.
// `slots` gives the destination cell of each saved cell.
tern_status walk(tern_context * ctx, const header & h, source * src, bool apply, const int32_t * slots,
                 tern_seq_id dest, tern_token * tokens, uint8_t * staging, size_t staging_size) {
    kv_cache * kv = &ctx->kv;
    const int kind = (int) h.v[H_KIND];
    const uint32_t n_cells = h.v[H_N_CELLS];
    // Bytes to a destination (apply) or through the staging buffer (verify:
    // values of `type` checked finite, in chunks of whole `unit`s).
    auto bytes = [&](void * dst, size_t k, tern_type type, size_t unit, const char * what) -> tern_status {
        if (apply) return src->get(dst, k);
        const size_t chunk = staging_size >= unit ? staging_size / unit * unit : staging_size;
        while (k > 0) {
            const size_t c = k < chunk ? k : chunk;
            TERN_TRY(src->get(staging, c));
            if (!tern_data_finite(type, staging, c)) {
                return tern_fail(TERN_ERR_NUMERIC, "state: non-finite %s", what);
            }
            k -= c;
        }
        return TERN_OK;
    };
    for (uint32_t i = 0; i < h.v[H_N_TOKENS]; i++) {
        tern_token t;
        TERN_TRY(src->get(&t, 4));
        if (t < 0 || (uint32_t) t >= ctx->model->hp.n_vocab) return bad("a prompt token outside the vocabulary");
        if (apply && tokens) tokens[i] = t;
    }
    for (uint32_t i = 0; i < n_cells; i++) {
        tern_pos pos;
        uint64_t mask = (uint64_t) 1 << dest;
        TERN_TRY(src->get(&pos, 4));
        if (kind == KIND_CONTEXT) TERN_TRY(src->get(&mask, 8));
        const uint64_t allowed = ctx->params.n_seq_max >= 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << ctx->params.n_seq_max) - 1);
        if (pos < 0 || pos > INT32_MAX - 1 || mask == 0 || (mask & ~allowed)) {
            return bad("a cell with a bad position or sequence set");
        }
        if (apply) {
            kv_cell & c = kv->cells[slots[i]];
            c.pos = pos;
            c.delta = 0;
            c.seq_mask = mask;
        }
    }
    // Window entries (kind 1: increasing sequences of this context; kind 2: sequence 0).
    int32_t prev_seq = -1;
    for (uint32_t i = 0; i < h.v[H_N_WINDOW]; i++) {
        int32_t seq, lost;
        TERN_TRY(src->get(&seq, 4));
        TERN_TRY(src->get(&lost, 4));
        const bool seq_ok = kind == KIND_SEQ ? seq == 0 : seq > prev_seq && (uint32_t) seq < ctx->params.n_seq_max;
        if (!seq_ok || lost < 0 || lost > INT32_MAX - 1 || ctx->model->hp.n_swa == 0) {
            return bad("a bad window entry (sequence, position, or a model without a sliding window)");
        }
        prev_seq = seq;
        if (apply) kv->swa_lost[kind == KIND_SEQ ? dest : seq] = lost;
    }
    const size_t kb = kv_cache_k_row_bytes(kv), vb = kv_cache_v_row_bytes(kv);
    for (int part = 0; part < 2; part++) {
        for (uint32_t il = 0; il < kv->n_layer; il++) {
            const tern_storage st = part == 0 ? kv->k[il] : kv->v[il];
            uint8_t * host = (uint8_t *) tern_storage_host(st);
            const size_t rb = part == 0 ? kb : vb;
            for (uint32_t i = 0; i < n_cells;) {
                // A run of saved cells going to consecutive cells: one read, one write.
                uint32_t j = i + 1;
                while (j < n_cells && slots[j] == slots[j - 1] + 1) j++;
                const size_t run = (size_t) (j - i) * rb, at = (size_t) slots[i] * rb;
                if (!apply || host) {
                    TERN_TRY(bytes(apply ? host + at : NULL, run, part == 0 ? kv->type_k : kv->type_v, rb,
                                   part == 0 ? "keys (or their block scales)" : "values (or their block scales)"));
                } else {
                    for (size_t done = 0; done < run;) {  // device memory: through the staging buffer
                        const size_t c = run - done < staging_size ? run - done : staging_size;
                        TERN_TRY(src->get(staging, c));
                        TERN_TRY(exec_storage_write(&ctx->exec, st, at + done, staging, c));
                        done += c;
                    }
                }
                i = j;
            }
        }
    }
    if (kind == KIND_CONTEXT) {
        for (uint32_t i = 0; i < h.v[H_N_BATCH_LAST]; i++) {
            int32_t row;
            TERN_TRY(src->get(&row, 4));
            if (row < -1 || row >= (int32_t) h.v[H_N_ROWS]) return bad("a logits row outside the saved rows");
            if (apply) ctx->output_row[i] = row;
        }
        TERN_TRY(bytes(apply ? ctx->logits : NULL, (size_t) h.v[H_N_ROWS] * ctx->model->hp.n_vocab * sizeof(float), TERN_TYPE_F32, 4, "logits"));
        if (apply) ctx->n_batch_last = (int32_t) h.v[H_N_BATCH_LAST];
    }
    if (src->sum.h != h.v[H_PAYLOAD_SUM]) return bad("payload checksum mismatch (corrupted)");
    return TERN_OK;
}

// Load a state from a source: verify all of it, then apply it.
tern_status load(tern_context * ctx, int kind, tern_seq_id dest, source * src, tern_token * tokens, uint32_t max_tokens,
                 uint32_t * n_tokens_out) {
    if (src->size < kHeaderBytes) return bad("shorter than its header");
    header h;
    src->at = 0;
    TERN_TRY(src->get(h.v, kHeaderBytes));
    TERN_TRY(check_header(ctx, h, kind, src->size, tokens ? max_tokens : 0));
    kv_cache * kv = &ctx->kv;
    const uint32_t n_cells = h.v[H_N_CELLS];
    // Destination cells: a context fills 0..n-1; a sequence takes free cells
    // (its own old cells count as free: they are replaced).
    int32_t * slots = ctx->changed_cells;  // [n_ctx], free outside a decode
    if (kind == KIND_CONTEXT) {
        for (uint32_t i = 0; i < n_cells; i++) slots[i] = (int32_t) i;
    } else {
        const uint64_t bit = (uint64_t) 1 << dest;
        uint32_t k = 0;
        for (uint32_t i = 0; i < kv->n_cells && k < n_cells; i++) {
            if (kv->cells[i].seq_mask == 0 || kv->cells[i].seq_mask == bit) slots[k++] = (int32_t) i;
        }
        if (k < n_cells) {
            return tern_fail(TERN_ERR_CONTEXT_FULL, "state: %" PRIu32 " cells for sequence %" PRId32 ", %" PRIu32 " free", n_cells, dest, k);
        }
    }
    uint8_t * staging = (uint8_t *) ctx->activations;
    const size_t staging_size = ctx->activation_bytes;
    src->sum = fnv32();
    TERN_TRY(walk(ctx, h, src, false, slots, dest, NULL, staging, staging_size));
    // Verified: now change the context.
    if (kind == KIND_CONTEXT) {
        kv_cache_clear(kv);
    } else {
        kv_cache_seq_rm(kv, dest, -1, -1);
    }
    src->at = kHeaderBytes;
    src->sum = fnv32();
    tern_status st = walk(ctx, h, src, true, slots, dest, tokens, staging, staging_size);
    if (st != TERN_OK) {
        // Only a file changed between the two passes gets here.
        kv_cache_clear(kv);
        return tern_fail(st, "state: the file changed while it was loaded; the KV cache was cleared");
    }
    kv->used += n_cells;
    kv->head = slots[n_cells ? n_cells - 1 : 0] + (n_cells ? 1 : 0);
    if (kind == KIND_CONTEXT) kv->head = n_cells;
    if (n_tokens_out) *n_tokens_out = h.v[H_N_TOKENS];
    return TERN_OK;
}

// Entering: the guard, and for saving the pool too (pending K-shifts are applied first).
struct guard {
    tern_context * ctx;
    bool           pool;
    tern_status    st;
    guard(tern_context * c, bool need_pool, const char * what) : ctx(c), pool(false), st(TERN_OK) {
        if (!c) { st = tern_fail(TERN_ERR_INVALID_ARG, "%s: context is NULL", what); return; }
        if (!context_enter(c)) {
            st = tern_fail(TERN_ERR_BUSY, "%s: context is in use by another thread", what);
            ctx = NULL;
            return;
        }
        if (need_pool) {
            if (!tern_threadpool_acquire(c->pool)) {
                st = tern_fail(TERN_ERR_BUSY, "%s: threadpool is running another decode", what);
                return;
            }
            pool = true;
            st = context_kv_update(c);
        }
    }
    ~guard() {
        if (pool) tern_threadpool_release(ctx->pool);
        if (ctx) context_leave(ctx);
    }
};

bool seq_ok(const tern_context * ctx, tern_seq_id seq) {
    if (seq >= 0 && (uint32_t) seq < ctx->params.n_seq_max) return true;
    tern_fail(TERN_ERR_INVALID_ARG, "state: sequence id %" PRId32 " outside [0, %" PRIu32 ")", seq, ctx->params.n_seq_max);
    return false;
}

size_t get_size(tern_context * ctx, const selection & sel) {
    const int32_t rows = sel.kind == KIND_CONTEXT ? (int32_t) logit_rows(ctx) : 0;
    return kHeaderBytes + (size_t) payload_bytes(ctx, sel.kind, 0, count_cells(ctx, sel), count_window(ctx, sel), (uint64_t) rows,
                                                 sel.kind == KIND_CONTEXT ? (uint64_t) ctx->n_batch_last : 0);
}

size_t get_data(tern_context * ctx, const selection & sel, uint8_t * dst, size_t size) {
    guard g(ctx, true, "state_get_data");
    if (g.st != TERN_OK) return 0;
    if (!dst) { tern_fail(TERN_ERR_INVALID_ARG, "state_get_data: dst is NULL"); return 0; }
    sink s = {};
    s.buf = dst;
    s.cap = size;
    s.st = TERN_OK;
    if (save(ctx, sel, NULL, 0, &s) != TERN_OK) {
        tern_fail(TERN_ERR_NO_MEMORY, "state_get_data: %zu bytes given, %zu needed", size, get_size(ctx, sel));
        return 0;
    }
    return s.n;
}

size_t set_data(tern_context * ctx, int kind, tern_seq_id dest, const uint8_t * src, size_t size) {
    guard g(ctx, false, "state_set_data");
    if (g.st != TERN_OK) return 0;
    if (!src) { tern_fail(TERN_ERR_INVALID_ARG, "state_set_data: src is NULL"); return 0; }
    source s = {};
    s.mem = src;
    s.size = size;
    return load(ctx, kind, dest, &s, NULL, 0, NULL) == TERN_OK ? size : 0;
}

// A save replaces only a Tern state (or creates a new file): a model, a
// prompt or any other document at the path is refused before anything is
// written. "A Tern state" is what can be told from the header alone: the
// magic, a header checksum that holds, and the exact size the header
// describes, in this version's layout or version 1's (a prompt cache of an
// older build is replaced, not refused).
tern_status check_replaceable(const char * path) {
    port_path_type kind;
    uint64_t size = 0;
    TERN_TRY(port_path_kind(path, &kind, &size));
    if (kind == PORT_PATH_NONE) return TERN_OK;
    if (kind == PORT_PATH_OTHER) {
        return tern_fail(TERN_ERR_IO, "%s: not a regular file (a directory, FIFO or device): refused, nothing written", path);
    }
    const char * why = NULL;
    header h;
    memset(&h, 0, sizeof(h));
    if (size < kHeaderBytesV1) {
        why = "shorter than a state's header";
    } else {
        TERN_TRY(port_file_read(path, 0, h.v, size < kHeaderBytes ? kHeaderBytesV1 : kHeaderBytes));
        // Field indices of the two layouts: version 1 has no fingerprint high word and no window count.
        const bool v1 = h.v[H_VERSION] == 1;
        const uint32_t summed = v1 ? 60 : kSummed, sum = v1 ? h.v[15] : h.v[H_HEADER_SUM];
        const uint32_t at = v1 ? 1 : 0;  // version 1's counts sit one field earlier
        const uint32_t type_k = h.v[H_TYPE_K], type_v = h.v[H_TYPE_V], n_layer = h.v[H_N_LAYER];
        const uint32_t n_embd_k = h.v[H_N_EMBD_K], n_embd_v = h.v[H_N_EMBD_V], n_vocab = h.v[H_N_VOCAB];
        const uint64_t n_tokens = h.v[H_N_TOKENS - at], n_cells = h.v[H_N_CELLS - at], n_rows = h.v[H_N_ROWS - at];
        const uint64_t n_batch_last = h.v[H_N_BATCH_LAST - at], n_window = v1 ? 0 : h.v[H_N_WINDOW];
        fnv32 f;
        f.add(h.v, summed);
        const tern_type_traits * tk = tern_type_traits_get((tern_type) type_k);
        const tern_type_traits * tv = tern_type_traits_get((tern_type) type_v);
        if (h.v[H_MAGIC] != kMagic) why = "no state magic";
        else if (!v1 && (h.v[H_VERSION] != kVersion || size < kHeaderBytes)) why = "an unknown version";
        else if (sum != f.h) why = "its header checksum does not hold";
        else if (!tk || !tv || n_embd_k % tk->blck_size || n_embd_v % tv->blck_size) why = "unknown K/V types";
        else {
            const uint64_t kind_cells = h.v[H_KIND] == KIND_CONTEXT ? 12 : 4;
            const uint64_t want = (v1 ? kHeaderBytesV1 : kHeaderBytes) + n_tokens * 4 + n_cells * kind_cells + n_window * 8 +
                                  (uint64_t) n_layer * n_cells *
                                      (tern_row_size((tern_type) type_k, n_embd_k) + tern_row_size((tern_type) type_v, n_embd_v)) +
                                  n_batch_last * 4 + n_rows * n_vocab * 4;
            if (want != size) why = "its size is not the one its header describes";
        }
    }
    if (!why) return TERN_OK;
    return tern_fail(TERN_ERR_INVALID_ARG, "%s: exists and is not a Tern state file (%s, %llu bytes): refusing to replace it "
                     "(nothing written; remove it or choose another path)", path, why, (unsigned long long) size);
}

tern_status save_file(tern_context * ctx, const selection & sel, const char * path, const tern_token * tokens,
                      size_t n_tokens) {
    guard g(ctx, true, "state_save_file");
    if (g.st != TERN_OK) return g.st;
    if (!path || (!tokens && n_tokens > 0) || n_tokens > INT32_MAX) {
        return tern_fail(TERN_ERR_INVALID_ARG, "state_save_file: bad arguments");
    }
    TERN_TRY(check_replaceable(path));
    // Written beside the target and renamed over it (port.h): a save that
    // fails half way leaves the previous state as it was.
    port_file_writer w;
    TERN_TRY(port_file_create(path, &w));
    sink s = {};
    s.file = &w;
    s.st = TERN_OK;
    const tern_status st = save(ctx, sel, tokens, (uint32_t) n_tokens, &s);
    if (st != TERN_OK) {
        port_file_abandon(&w);
        return st;
    }
    return port_file_finish(&w);
}

tern_status load_file(tern_context * ctx, int kind, tern_seq_id dest, const char * path, tern_token * tokens,
                      size_t capacity, size_t * n_out) {
    guard g(ctx, false, "state_load_file");
    if (g.st != TERN_OK) return g.st;
    if (!path) return tern_fail(TERN_ERR_INVALID_ARG, "state_load_file: path is NULL");
    source s = {};
    s.path = path;
    TERN_TRY(port_file_size(path, &s.size));
    uint32_t n = 0;
    const uint32_t cap = capacity > INT32_MAX ? INT32_MAX : (uint32_t) capacity;
    tern_status st = load(ctx, kind, dest, &s, tokens, cap, &n);
    if (st != TERN_OK) tern_error_prefix("%s: ", path);
    if (st == TERN_OK && n_out) *n_out = n;
    return st;
}

}  // namespace

extern "C" size_t tern_state_get_size(tern_context * ctx) {
    return ctx ? get_size(ctx, selection{KIND_CONTEXT, 0}) : 0;
}

extern "C" size_t tern_state_get_data(tern_context * ctx, uint8_t * dst, size_t size) {
    return get_data(ctx, selection{KIND_CONTEXT, 0}, dst, size);
}

extern "C" size_t tern_state_set_data(tern_context * ctx, const uint8_t * src, size_t size) {
    return set_data(ctx, KIND_CONTEXT, 0, src, size);
}

extern "C" tern_status tern_state_save_file(tern_context * ctx, const char * path, const tern_token * tokens,
                                            size_t n_tokens) {
    return save_file(ctx, selection{KIND_CONTEXT, 0}, path, tokens, n_tokens);
}

extern "C" tern_status tern_state_load_file(tern_context * ctx, const char * path, tern_token * tokens,
                                            size_t capacity, size_t * n_tokens) {
    return load_file(ctx, KIND_CONTEXT, 0, path, tokens, capacity, n_tokens);
}

extern "C" size_t tern_state_seq_get_size(tern_context * ctx, tern_seq_id seq) {
    return ctx && seq_ok(ctx, seq) ? get_size(ctx, selection{KIND_SEQ, seq}) : 0;
}

extern "C" size_t tern_state_seq_get_data(tern_context * ctx, uint8_t * dst, size_t size, tern_seq_id seq) {
    return ctx && seq_ok(ctx, seq) ? get_data(ctx, selection{KIND_SEQ, seq}, dst, size) : 0;
}

extern "C" size_t tern_state_seq_set_data(tern_context * ctx, const uint8_t * src, size_t size, tern_seq_id dest) {
    return ctx && seq_ok(ctx, dest) ? set_data(ctx, KIND_SEQ, dest, src, size) : 0;
}

extern "C" tern_status tern_state_seq_save_file(tern_context * ctx, const char * path, tern_seq_id seq,
                                                const tern_token * tokens, size_t n_tokens) {
    if (!ctx) return tern_fail(TERN_ERR_INVALID_ARG, "state_seq_save_file: context is NULL");
    if (!seq_ok(ctx, seq)) return TERN_ERR_INVALID_ARG;
    return save_file(ctx, selection{KIND_SEQ, seq}, path, tokens, n_tokens);
}

extern "C" tern_status tern_state_seq_load_file(tern_context * ctx, const char * path, tern_seq_id dest,
                                                tern_token * tokens, size_t capacity, size_t * n_tokens) {
    if (!ctx) return tern_fail(TERN_ERR_INVALID_ARG, "state_seq_load_file: context is NULL");
    if (!seq_ok(ctx, dest)) return TERN_ERR_INVALID_ARG;
    return load_file(ctx, KIND_SEQ, dest, path, tokens, capacity, n_tokens);
}

}  // namespace tern
