// Small vector kernels behind the CPU ops.
//
// Every kernel K has a scalar reference K_ref (kernels/vec_ref.cpp), which is
// THE definition, and K, which calls the variant of the kernel set in use
// (kernel_set.h: scalar, avx2, avx512 or neon, chosen once at run time).
// Kernels marked "exact" give the same bits as the reference in every set
// (same operations per element, no fused multiply-add); dot products and sums
// of squares only reorder the summation (tests allow a relative tolerance).
#pragma once
#include <stdint.h>
#include "tern_config.h"
#include "core/fp16.h"
#include "cpu/kernels/kernel_set.h"

namespace tern {

#define TERN_KERNEL_PAIR(ret, name, field, params, args) \
    ret name##_ref params; \
    static inline ret name params { return tern_kernels()->field args; }

// sum_i x[i] * y[i], accumulated in float.
TERN_KERNEL_PAIR(float, tern_kdot_f32, dot_f32, (int64_t n, const float * x, const float * y), (n, x, y))
// sum_i f32(x[i]) * f32(y[i]), accumulated in float.
TERN_KERNEL_PAIR(float, tern_kdot_f16, dot_f16, (int64_t n, const tern_fp16 * x, const tern_fp16 * y), (n, x, y))
// sum_i (double) (x[i] * x[i]): product in float, sum in double (ggml's rms_norm).
TERN_KERNEL_PAIR(double, tern_ksumsq_f32, sumsq_f32, (int64_t n, const float * x), (n, x))
// exact: y[i] = y[i] + s * x[i] (multiply, then add).
TERN_KERNEL_PAIR(void, tern_kmad_f32, mad_f32, (int64_t n, float * y, const float * x, float s), (n, y, x, s))
// exact: y[i] = y[i] + s * f32(x[i]).
TERN_KERNEL_PAIR(void, tern_kmad_f16, mad_f16, (int64_t n, float * y, const tern_fp16 * x, float s), (n, y, x, s))
// exact: y[i] = (x[i] * s) * w[i], or x[i] * s when w is NULL. y may be x.
TERN_KERNEL_PAIR(void, tern_kscale_mul_f32, scale_mul_f32, (int64_t n, float * y, const float * x, float s, const float * w), (n, y, x, s, w))
// exact: z[i] = x[i] + y[i] (add), z[i] = x[i] * y[i] (mul). z may be x or y.
TERN_KERNEL_PAIR(void, tern_kadd_f32, add_f32, (int64_t n, float * z, const float * x, const float * y), (n, z, x, y))
TERN_KERNEL_PAIR(void, tern_kmul_f32, mul_f32, (int64_t n, float * z, const float * x, const float * y), (n, z, x, y))
// exact: F32 -> F16 with round-to-nearest-even (F16C / FCVTN semantics).
TERN_KERNEL_PAIR(void, tern_kfp32_to_fp16, fp32_to_fp16, (int64_t n, const float * x, tern_fp16 * y), (n, x, y))
// exact: F16 -> F32.
TERN_KERNEL_PAIR(void, tern_kfp16_to_fp32, fp16_to_fp32, (int64_t n, const tern_fp16 * x, float * y), (n, x, y))
// out[g * out_stride + j] = dot_f16(n, x + g * n, rows + j * stride) for g < n_x,
// j < n_rows (strides in elements): n_x query heads against the same rows
// (grouped-query attention reads each K row once for its heads). A query's
// result does not depend on n_x or on the other queries.
TERN_KERNEL_PAIR(void, tern_kdot_f16_rows, dot_f16_rows, (int64_t n, int64_t n_rows, int64_t n_x, const tern_fp16 * x, const tern_fp16 * rows, int64_t stride, float * out, int64_t out_stride), (n, n_rows, n_x, x, rows, stride, out, out_stride))
// exact: y[g * n + i] = y[g * n + i] + p[g * p_stride + j] * f32(rows[j * stride + i])
// for j = 0 .. n_rows-1 in order and each g < n_y, terms with p == 0 skipped
// (mad_f16 per row and query).
TERN_KERNEL_PAIR(void, tern_kmad_f16_rows, mad_f16_rows, (int64_t n, int64_t n_rows, int64_t n_y, float * y, const tern_fp16 * rows, int64_t stride, const float * p, int64_t p_stride), (n, n_rows, n_y, y, rows, stride, p, p_stride))
// exact: x[i] = -inf where mask[i] == -inf, else x[i] * s + mask[i] (mask NULL:
// x[i] * s); returns the largest new x[i], or NaN when one of them is NaN.
TERN_KERNEL_PAIR(float, tern_kscale_mask_max_f32, scale_mask_max_f32, (int64_t n, float * x, float s, const float * mask), (n, x, s, mask))
// x[i] = e^(x[i] - max) with the approximate exponential (exp_approx.h);
// returns sum_i x[i] (float, summed in the set's lane order).
TERN_KERNEL_PAIR(float, tern_kexp_sum_f32, exp_sum_f32, (int64_t n, float * x, float max), (n, x, max))
// y[i] = silu(g[i]) * u[i], silu(x) = x / (1 + e^-x) with the approximate exponential.
TERN_KERNEL_PAIR(void, tern_kswiglu_f32, swiglu_f32, (int64_t n, float * y, const float * g, const float * u), (n, y, g, u))
// exact: y[i] = gelu(g[i]) * u[i], GELU's tanh form as llama.cpp's CPU backend
// gives it through its F16 table: 0 at or below -10, g itself at or above 10 (and
// NaN), else h = F16(g), F16(0.5 h (1 + tanh(sqrt(2/pi) h (1 + 0.044715 h^2)))),
// read from the table of gelu_table.h. Only where gemma2 or gemma3 is compiled in.
TERN_KERNEL_PAIR(void, tern_kgeglu_f32, geglu_f32, (int64_t n, float * y, const float * g, const float * u), (n, y, g, u))

#undef TERN_KERNEL_PAIR

}  // namespace tern
