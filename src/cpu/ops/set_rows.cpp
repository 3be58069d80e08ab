// SET_ROWS: destination row idx[i] = convert(rows row i) for F32 rows; F16 by
// round-to-nearest-even (as F16C), F32 copied, other types by their
// from_float; rows of the destination's own type are copied byte for byte
// (KV defragmentation). Workers split the rows; indices are expected
// distinct (the KV cache's slots), an index out of range writes nothing.
//
// COPY_ROWS: dst row i = table row ids[i], byte for byte (an id out of range
// gives a zero row).
#include "cpu/ops/ops.h"
#include "cpu/kernels/vec.h"
#include "tensor/types.h"

#include <string.h>

namespace tern {

void tern_op_set_rows(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * target = dst->src[0];  // [row_len, n_rows]; same bytes as dst
    const tern_tensor * rows = dst->src[1];    // F32 [row_len, n]
    const tern_tensor * idx = dst->src[2];     // I32 [n]
    const int64_t row_len = rows->ne[0];
    const tern_from_float_fn from_float = tern_type_traits_get(target->type)->from_float;
    const bool raw = rows->type == target->type;
    const size_t row_bytes = tern_row_size(target->type, row_len);
    int64_t r0, r1;
    tern_op_rows(c, rows->ne[1], &r0, &r1);
    for (int64_t i = r0; i < r1; i++) {
        int32_t slot;
        memcpy(&slot, (const uint8_t *) idx->data + i * idx->nb[0], sizeof(slot));
        if (slot < 0 || slot >= dst->ne[1]) continue;
        const float * src = (const float *) tern_row_ptr(rows, i, 0, 0);
        void * out = tern_row_ptr(dst, slot, 0, 0);
        if (raw) {
            memcpy(out, src, row_bytes);
            continue;
        }
        switch (target->type) {
            case TERN_TYPE_F16: tern_kfp32_to_fp16(row_len, src, (tern_fp16 *) out); break;
            case TERN_TYPE_F32: memcpy(out, src, (size_t) row_len * sizeof(float)); break;
            default: from_float(src, out, row_len); break;
        }
    }
}

void tern_op_copy_rows(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * table = dst->src[0];  // [ne0, n_rows] any type, contiguous
    const tern_tensor * ids = dst->src[1];    // I32 [n]
    const size_t row_bytes = tern_row_size(table->type, table->ne[0]);
    int64_t r0, r1;
    tern_op_rows(c, dst->ne[1], &r0, &r1);
    for (int64_t i = r0; i < r1; i++) {
        int32_t id;
        memcpy(&id, (const uint8_t *) ids->data + i * ids->nb[0], sizeof(id));
        void * out = tern_row_ptr(dst, i, 0, 0);
        if (id < 0 || id >= table->ne[1]) {
            memset(out, 0, row_bytes);
            continue;
        }
        memcpy(out, tern_row_ptr(table, id, 0, 0), row_bytes);
    }
}

}  // namespace tern
