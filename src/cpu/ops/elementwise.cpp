// Element-wise F32 ops over rows: ADD and MUL (src1 repeated along every dim,
// e.g. a bias [ne0] over all rows), SCALE, SWIGLU (silu(gate) * up with
// silu(x) = x / (1 + e^-x), e^ as kernels/exp_approx.h computes it), GEGLU
// (gelu(gate) * up, kernels/vec.h), SOFTCAP (tanh(x * (1/c)) * c).
#include "cpu/ops/ops.h"
#include "cpu/kernels/vec.h"

#include <math.h>

namespace tern {

typedef void (*binary_kernel)(int64_t n, float * z, const float * x, const float * y);

static void binary_op(const tern_op_ctx * c, tern_tensor * dst, binary_kernel kernel) {
    const tern_tensor * a = dst->src[0];
    const tern_tensor * b = dst->src[1];
    const int64_t ne0 = a->ne[0], bne0 = b->ne[0];
    int64_t r0, r1;
    tern_op_rows(c, tern_n_rows(a), &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % a->ne[1], i2 = (r / a->ne[1]) % a->ne[2], i3 = r / (a->ne[1] * a->ne[2]);
        const float * ar = (const float *) tern_row_ptr(a, i1, i2, i3);
        const float * br = (const float *) tern_row_ptr(b, i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]);
        float * dr = (float *) tern_row_flat(dst, r);
        for (int64_t k = 0; k < ne0; k += bne0) kernel(bne0, dr + k, ar + k, br);
    }
}

void tern_op_add(const tern_op_ctx * c, tern_tensor * dst) { binary_op(c, dst, tern_kadd_f32); }
void tern_op_mul(const tern_op_ctx * c, tern_tensor * dst) { binary_op(c, dst, tern_kmul_f32); }

void tern_op_scale(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * a = dst->src[0];
    const float s = tg_param_f32(dst, 0);
    int64_t r0, r1;
    tern_op_rows(c, tern_n_rows(a), &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        tern_kscale_mul_f32(a->ne[0], (float *) tern_row_flat(dst, r), (const float *) tern_row_flat(a, r), s, NULL);
    }
}

typedef void (*gated_kernel)(int64_t n, float * y, const float * g, const float * u);

static void gated_op(const tern_op_ctx * c, tern_tensor * dst, gated_kernel kernel) {
    const tern_tensor * gate = dst->src[0];
    const tern_tensor * up = dst->src[1];
    const int64_t ne0 = gate->ne[0];
    int64_t r0, r1;
    tern_op_rows(c, tern_n_rows(gate), &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * g = (const float *) tern_row_flat(gate, r);
        const float * u = (const float *) tern_row_flat(up, r);
        float * y = (float *) tern_row_flat(dst, r);
        kernel(ne0, y, g, u);
    }
}

void tern_op_swiglu(const tern_op_ctx * c, tern_tensor * dst) { gated_op(c, dst, tern_kswiglu_f32); }
void tern_op_geglu(const tern_op_ctx * c, tern_tensor * dst) { gated_op(c, dst, tern_kgeglu_f32); }

// llama.cpp's scale, tanh, scale, each rounded to float.
void tern_op_softcap(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * a = dst->src[0];
    const float cap = tg_param_f32(dst, 0), inv = 1.0f / cap;
    int64_t r0, r1;
    tern_op_rows(c, tern_n_rows(a), &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * x = (const float *) tern_row_flat(a, r);
        float * y = (float *) tern_row_flat(dst, r);
        for (int64_t i = 0; i < a->ne[0]; i++) y[i] = tanhf(x[i] * inv) * cap;
    }
}

}  // namespace tern
