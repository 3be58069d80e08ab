// Repacking the matmul weights at load (see repack.h).
#include "model/repack.h"
#include "model/fingerprint.h"
#include "core/arena.h"
#include "core/status.h"
#include "cpu/kernels/kernel_set.h"
#include "port.h"
#include "tensor/types.h"

#include <string.h>

namespace tern {

namespace {

struct repacker {
    const tern_kernel_set * ks;
    uint8_t *               scratch;       // one group of rows
    size_t                  scratch_size;

    // The CPU rewrites only the weights it runs (placed on the host: a device
    // holds its own copy in the file layout).
    bool wants(const model_weight & w) const { return w.data && tern_storage_on_host(w.st) && group_bytes(w) > 0; }

    size_t group_bytes(const model_weight & w) const { return model_repack_group_bytes(w.type, w.n_dims, w.ne); }

    // Rows in whole groups: the rewritten ones (any rows past them stay as they are).
    int64_t n_groups(const model_weight & w) const { return w.ne[1] / ks->repack_rows[w.type]; }

    tern_status rewrite(model_weight * w) {
        if (!wants(*w)) return TERN_OK;
        const size_t gbytes = group_bytes(*w);
        uint8_t * data = (uint8_t *) w->data;  // the model's own bytes (see repack.h)
        for (int64_t g = 0, ng = n_groups(*w); g < ng; g++) {
            memcpy(scratch, data + g * gbytes, gbytes);
            ks->repack[w->type](w->ne[0], scratch, data + g * gbytes);
        }
        w->layout = CPU_LAYOUT_INTERLEAVED;
        return TERN_OK;
    }
};

// Every weight a mul_mat reads, once. A token embedding tied to the output:
// the CPU's get_rows always reads it; it is rewritten only where the CPU also
// runs the output matmul (the output is on the host: with the output on a
// device, the CPU's only reader is get_rows, which the file layout serves
// best) and the set can give its rows back (unpack_row). An untied embedding
// is only ever read by get_rows.
template <typename F>
tern_status each_matmul_weight(tern_model * m, const tern_kernel_set * ks, F && f) {
    for (uint32_t il = 0; il < m->hp.n_layer; il++) {
        model_layer * l = &m->w.layers[il];
        model_weight * ws[] = {&l->wq, &l->wk, &l->wv, &l->wo, &l->ffn_gate, &l->ffn_up, &l->ffn_down};
        for (model_weight * w : ws) TERN_TRY(f(w));
    }
    if (m->w.output.data != m->w.tok_embd.data) return f(&m->w.output);
    if (m->w.tok_embd.data && tern_storage_on_host(m->w.output.st) && ks->unpack_row[m->w.tok_embd.type]) {
        TERN_TRY(f(&m->w.tok_embd));
        m->w.output.layout = m->w.tok_embd.layout;  // the same bytes
    }
    return TERN_OK;
}

} // namespace

size_t model_repack_group_bytes(tern_type type, int32_t n_dims, const int64_t * ne) {
    const tern_kernel_set * ks = tern_kernels();
    if ((unsigned) type >= (unsigned) TERN_TYPE_COUNT) return 0;
    if (n_dims != 2 || ks->repack_rows[type] <= 0 || !ks->repack[type] || !ks->gemm_repacked[type] ||
        ne[1] < ks->repack_rows[type]) {
        return 0;
    }
    return (size_t) ks->repack_rows[type] * tern_row_size(type, ne[0]);
}

tern_status model_repack_weights(tern_model * m, model_repack_report report, void * user) {
    if (m->vocab_only || !m->arch || strcmp(m->files.load_path, "blob") == 0) return TERN_OK;
    repacker rp;
    rp.ks = tern_kernels();
    rp.scratch = nullptr;
    rp.scratch_size = 0;
    // mmap path: per split, the span of its rewritten tensors, made the
    // process's own writable memory (in huge pages where offered) before and
    // read-only again after.
    const bool mapped = strcmp(m->files.load_path, "mmap") == 0;
    uintptr_t span_lo[MODEL_FILES_MAX_SPLITS], span_hi[MODEL_FILES_MAX_SPLITS];
    for (int32_t i = 0; i < MODEL_FILES_MAX_SPLITS; i++) span_lo[i] = span_hi[i] = 0;
    uint64_t total = 0, done = 0;  // bytes rewritten (progress)
    each_matmul_weight(m, rp.ks, [&](model_weight * w) {
        if (!rp.wants(*w)) return TERN_OK;
        total += rp.group_bytes(*w) * (uint64_t) rp.n_groups(*w);
        if (rp.group_bytes(*w) > rp.scratch_size) rp.scratch_size = rp.group_bytes(*w);
        const uintptr_t lo = (uintptr_t) w->data, hi = lo + rp.group_bytes(*w) * (size_t) rp.n_groups(*w);
        for (int32_t i = 0; mapped && i < m->files.n_splits; i++) {
            const uintptr_t base = (uintptr_t) m->files.sources[i].map.addr;
            if (lo < base || hi > base + m->files.sources[i].map.size) continue;
            if (span_hi[i] == 0 || lo < span_lo[i]) span_lo[i] = lo;
            if (hi > span_hi[i]) span_hi[i] = hi;
        }
        return TERN_OK;
    });
    if (rp.scratch_size == 0) return TERN_OK;
    // Saved states name the model by its bytes in the file's layout: taken
    // now, before the first one is rewritten (model/fingerprint.h).
    model_fingerprint_at_load(m);
    for (int32_t i = 0; mapped && i < m->files.n_splits; i++) {
        if (span_hi[i] == 0) continue;
        void * at = (void *) span_lo[i];
        const size_t size = span_hi[i] - span_lo[i];
        // A locked mapping stays locked: copy-on-write in place.
        TERN_TRY(m->files.sources[i].map.locked ? port_mem_writable(at, size, 1) : port_mem_own(at, size));
    }
    // One group of rows (tens of KB), for the length of the load only: the
    // arena reserved it (the bound over every tensor of the header).
    const size_t mark = arena_temp_mark(&m->files.arena);
    rp.scratch = (uint8_t *) arena_alloc_temp(&m->files.arena, rp.scratch_size);
    if (!rp.scratch) return tern_fail(TERN_ERR_INTERNAL, "repack: %zu bytes of scratch were not reserved", rp.scratch_size);
    tern_status st = each_matmul_weight(m, rp.ks, [&](model_weight * w) {
        const bool wanted = rp.wants(*w);
        const uint64_t bytes = wanted ? rp.group_bytes(*w) * (uint64_t) rp.n_groups(*w) : 0;
        TERN_TRY(rp.rewrite(w));
        done += bytes;
        if (wanted && report && !report(user, (float) ((double) done / (double) total))) {
            return tern_fail(TERN_ERR_CANCELLED, "load cancelled by the progress callback");
        }
        return TERN_OK;
    });
    arena_temp_release(&m->files.arena, mark);
    for (int32_t i = 0; mapped && i < m->files.n_splits; i++) {
        if (span_hi[i] == 0) continue;
        const tern_status ro = port_mem_writable((void *) span_lo[i], span_hi[i] - span_lo[i], 0);
        if (st == TERN_OK) st = ro;
    }
    if (st != TERN_OK) tern_error_prefix("repack: ");
    return st;
}

}  // namespace tern
