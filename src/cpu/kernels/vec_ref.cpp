// Scalar references of the vector kernels (see vec.h).
#include "cpu/kernels/vec.h"
#include "cpu/kernels/exp_approx.h"
#include "core/fp16.h"

namespace tern {

float tern_kdot_f32_ref(int64_t n, const float * x, const float * y) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += x[i] * y[i];
    return sum;
}

float tern_kdot_f16_ref(int64_t n, const tern_fp16 * x, const tern_fp16 * y) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += tern_fp16_to_fp32(x[i]) * tern_fp16_to_fp32(y[i]);
    return sum;
}

double tern_ksumsq_f32_ref(int64_t n, const float * x) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double) (x[i] * x[i]);
    return sum;
}

void tern_kmad_f32_ref(int64_t n, float * y, const float * x, float s) {
    for (int64_t i = 0; i < n; i++) y[i] = y[i] + s * x[i];
}

void tern_kmad_f16_ref(int64_t n, float * y, const tern_fp16 * x, float s) {
    for (int64_t i = 0; i < n; i++) y[i] = y[i] + s * tern_fp16_to_fp32(x[i]);
}

void tern_kscale_mul_f32_ref(int64_t n, float * y, const float * x, float s, const float * w) {
    if (w) {
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] * s) * w[i];
    } else {
        for (int64_t i = 0; i < n; i++) y[i] = x[i] * s;
    }
}

void tern_kadd_f32_ref(int64_t n, float * z, const float * x, const float * y) {
    for (int64_t i = 0; i < n; i++) z[i] = x[i] + y[i];
}

void tern_kmul_f32_ref(int64_t n, float * z, const float * x, const float * y) {
    for (int64_t i = 0; i < n; i++) z[i] = x[i] * y[i];
}

void tern_kfp32_to_fp16_ref(int64_t n, const float * x, tern_fp16 * y) {
    for (int64_t i = 0; i < n; i++) y[i] = tern_fp32_to_fp16(x[i]);
}

void tern_kfp16_to_fp32_ref(int64_t n, const tern_fp16 * x, float * y) {
    for (int64_t i = 0; i < n; i++) y[i] = tern_fp16_to_fp32(x[i]);
}

float tern_kscale_mask_max_f32_ref(int64_t n, float * x, float s, const float * mask) {
    float max = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; i++) {
        const float v = !mask ? x[i] * s : mask[i] == -INFINITY ? -INFINITY : x[i] * s + mask[i];
        x[i] = v;
        if (v > max) max = v;
        nan |= v != v;
    }
    return nan ? NAN : max;
}

float tern_kexp_sum_f32_ref(int64_t n, float * x, float max) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        x[i] = tern_exp_approx(x[i] - max);
        sum += x[i];
    }
    return sum;
}

void tern_kswiglu_f32_ref(int64_t n, float * y, const float * g, const float * u) {
    for (int64_t i = 0; i < n; i++) y[i] = tern_silu_approx(g[i]) * u[i];
}

void tern_kdot_f16_rows_ref(int64_t n, int64_t n_rows, int64_t n_x, const tern_fp16 * x, const tern_fp16 * rows, int64_t stride,
                            float * out, int64_t out_stride) {
    for (int64_t g = 0; g < n_x; g++) {
        for (int64_t j = 0; j < n_rows; j++) out[g * out_stride + j] = tern_kdot_f16_ref(n, x + g * n, rows + j * stride);
    }
}

void tern_kmad_f16_rows_ref(int64_t n, int64_t n_rows, int64_t n_y, float * y, const tern_fp16 * rows, int64_t stride,
                            const float * p, int64_t p_stride) {
    for (int64_t g = 0; g < n_y; g++) {
        for (int64_t j = 0; j < n_rows; j++) {
            const float pj = p[g * p_stride + j];
            if (pj != 0.0f) tern_kmad_f16_ref(n, y + g * n, rows + j * stride, pj);
        }
    }
}

}  // namespace tern
