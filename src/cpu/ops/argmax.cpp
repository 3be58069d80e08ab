// ARGMAX: per row, the first index of the largest value.
#include "cpu/ops/ops.h"

namespace tern {

void tern_op_argmax(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * x = dst->src[0];
    int64_t r0, r1;
    tern_op_rows(c, tern_n_rows(x), &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * xr = (const float *) tern_row_flat(x, r);
        int64_t best = 0;
        for (int64_t i = 1; i < x->ne[0]; i++) {
            if (xr[i] > xr[best]) best = i;
        }
        ((int32_t *) dst->data)[r] = (int32_t) best;
    }
}

}  // namespace tern
