// GET_ROWS: dst row i = F32(table row ids[i]), dequantized by the type's
// to_float. A repacked table (a token embedding in the kernel set's
// interleaved layout, CPU_LAYOUT_INTERLEAVED) gives each row back in the file
// layout first (kernel set unpack_row) into the worker's scratch row.
#include "cpu/ops/ops.h"
#include "core/arena.h"
#include "cpu/kernels/kernel_set.h"
#include "tensor/types.h"

#include <string.h>

namespace tern {

static bool repacked_table(const tern_tensor * table) {
    return table->layout == CPU_LAYOUT_INTERLEAVED && tern_kernels()->unpack_row[table->type];
}

size_t tern_op_get_rows_work_size(const tern_tensor * dst, int32_t n_threads) {
    const tern_tensor * table = dst->src[0];
    if (!repacked_table(table)) return 0;
    return (size_t) n_threads * arena_padded(tern_row_size(table->type, table->ne[0]));
}

void tern_op_get_rows(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * table = dst->src[0];  // [ne0, n_rows] any type
    const tern_tensor * ids = dst->src[1];    // I32 [n]
    const tern_to_float_fn to_float = tern_type_traits_get(table->type)->to_float;
    const tern_kernel_set * ks = tern_kernels();
    const int64_t ne0 = table->ne[0];
    const bool repacked = repacked_table(table);
    const int64_t group = repacked ? ks->repack_rows[table->type] : 1;
    const int64_t n_grouped = repacked ? table->ne[1] / group * group : 0;
    const size_t row_bytes = tern_row_size(table->type, ne0);
    uint8_t * scratch = repacked ? (uint8_t *) c->work + (size_t) c->ith * arena_padded(row_bytes) : NULL;
    int64_t r0, r1;
    tern_op_rows(c, dst->ne[1], &r0, &r1);
    for (int64_t i = r0; i < r1; i++) {
        int32_t id;
        memcpy(&id, (const uint8_t *) ids->data + i * ids->nb[0], sizeof(id));
        float * out = (float *) tern_row_ptr(dst, i, 0, 0);
        if (id < 0 || id >= table->ne[1]) {
            memset(out, 0, (size_t) ne0 * sizeof(float));
            continue;
        }
        if (id < n_grouped) {
            const int64_t g0 = id / group * group;
            ks->unpack_row[table->type](ne0, tern_row_ptr(table, g0, 0, 0), (int32_t) (id - g0), scratch);
            to_float(scratch, out, ne0);
            continue;
        }
        to_float(tern_row_ptr(table, id, 0, 0), out, ne0);
    }
}

}  // namespace tern
