// F32, F16 and BF16 rows: element-wise conversion, and dot products that
// multiply in float and sum in double, as ggml's scalar path does.
#include "tensor/quants.h"
#include "core/fp16.h"

namespace tern {

namespace {

inline float f32_load(float v) { return v; }
inline float f32_store(float v) { return v; }

template <typename T, float (*load)(T)>
void dequantize_row(const void * src, float * dst, int64_t n) {
    const T * x = (const T *) src;
    for (int64_t i = 0; i < n; i++) dst[i] = load(x[i]);
}

template <typename T, T (*store)(float)>
void quantize_row(const float * src, void * dst, int64_t n) {
    T * y = (T *) dst;
    for (int64_t i = 0; i < n; i++) y[i] = store(src[i]);
}

template <typename T, float (*load)(T)>
void vec_dot(int64_t n, float * s, const void * vx, const void * vy) {
    const T * x = (const T *) vx;
    const T * y = (const T *) vy;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double) (load(x[i]) * load(y[i]));
    *s = (float) sum;
}

}  // namespace

void tern_dequantize_row_f32(const void * src, float * dst, int64_t n) { dequantize_row<float, f32_load>(src, dst, n); }
void tern_quantize_row_f32(const float * src, void * dst, int64_t n) { quantize_row<float, f32_store>(src, dst, n); }
void tern_vec_dot_f32(int64_t n, float * s, const void * x, const void * y) { vec_dot<float, f32_load>(n, s, x, y); }

void tern_dequantize_row_f16(const void * src, float * dst, int64_t n) {
    dequantize_row<tern_fp16, tern_fp16_to_fp32>(src, dst, n);
}
void tern_quantize_row_f16(const float * src, void * dst, int64_t n) {
    quantize_row<tern_fp16, tern_fp32_to_fp16>(src, dst, n);
}

void tern_vec_dot_f16(int64_t n, float * s, const void * vx, const void * vy) {
    const tern_fp16 * x = (const tern_fp16 *) vx;
    const float * y = (const float *) vy;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double) (tern_fp16_to_fp32(x[i]) * y[i]);
    *s = (float) sum;
}

void tern_dequantize_row_bf16(const void * src, float * dst, int64_t n) {
    dequantize_row<tern_bf16, tern_bf16_to_fp32>(src, dst, n);
}
void tern_quantize_row_bf16(const float * src, void * dst, int64_t n) {
    quantize_row<tern_bf16, tern_fp32_to_bf16>(src, dst, n);
}
void tern_vec_dot_bf16(int64_t n, float * s, const void * x, const void * y) {
    vec_dot<tern_bf16, tern_bf16_to_fp32>(n, s, x, y);
}

}  // namespace tern
