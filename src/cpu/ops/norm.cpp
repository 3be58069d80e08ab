// RMS_NORM fused with its weight, rounding as ggml's rms_norm followed by mul:
//   sum   = sum_i (double) (x[i] * x[i])
//   scale = 1 / sqrtf((float) (sum / n) + eps)
//   y[i]  = (x[i] * scale) * w[i]
#include "cpu/ops/ops.h"
#include "cpu/kernels/vec.h"

#include <math.h>

namespace tern {

void tern_op_rms_norm(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * x = dst->src[0];  // F32 [ne0, ...], rows may be strided
    const tern_tensor * w = dst->src[1];  // F32 [ne0] or NULL
    const float eps = tg_param_f32(dst, 0);
    const int64_t ne0 = x->ne[0];
    const float * weight = w ? (const float *) w->data : NULL;
    int64_t r0, r1;
    tern_op_rows(c, tern_n_rows(x), &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * xr = (const float *) tern_row_flat(x, r);
        const double sum = tern_ksumsq_f32(ne0, xr);
        const float mean = (float) (sum / (double) ne0);
        const float scale = 1.0f / sqrtf(mean + eps);
        tern_kscale_mul_f32(ne0, (float *) tern_row_flat(dst, r), xr, scale, weight);
    }
}

}  // namespace tern
