// GET_ROWS: dst row i = F32(table row ids[i]), dequantized by the type's to_float.
#include "cpu/ops/ops.h"
#include "tensor/types.h"

#include <string.h>

void tern_op_get_rows(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * table = dst->src[0];  // [ne0, n_rows] any type
    const tern_tensor * ids = dst->src[1];    // I32 [n]
    const tern_to_float_fn to_float = tern_type_traits_get(table->type)->to_float;
    const int64_t ne0 = table->ne[0];
    int64_t r0, r1;
    tern_split_rows(dst->ne[1], c->ith, c->nth, &r0, &r1);
    for (int64_t i = r0; i < r1; i++) {
        int32_t id;
        memcpy(&id, (const uint8_t *) ids->data + i * ids->nb[0], sizeof(id));
        float * out = (float *) tern_row_ptr(dst, i, 0, 0);
        if (id < 0 || id >= table->ne[1]) {
            memset(out, 0, (size_t) ne0 * sizeof(float));
            continue;
        }
        to_float(tern_row_ptr(table, id, 0, 0), out, ne0);
    }
}
