// AVX-512 vector kernels (see vec.h) of the avx512 kernel set: the dot
// products, multiply-adds and F16 conversions of attention and the KV-cache
// writes, 16 lanes wide; the set keeps the avx2 ones for the rest.
// Compiled with the avx512 target flags: only static functions here.
#include "cpu/kernels/vec.h"
#include "cpu/kernels/x86/attn_rows_x86.h"

#include <immintrin.h>

namespace tern {

// GCC 12 flags the deliberately undefined registers inside avx512fintrin.h
// (_mm512_undefined_ps) as uninitialized when inlined here: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

static inline __m512 load_f16x16(const tern_fp16 * p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p)); }

static float kdot_f32(int64_t n, const float * x, const float * y) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16), acc1);
    }
    for (; i + 16 <= n; i += 16) acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), acc0);
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + tern_kdot_f32_ref(n - i, x + i, y + i);
}

static float kdot_f16(int64_t n, const tern_fp16 * x, const tern_fp16 * y) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm512_fmadd_ps(load_f16x16(x + i), load_f16x16(y + i), acc0);
        acc1 = _mm512_fmadd_ps(load_f16x16(x + i + 16), load_f16x16(y + i + 16), acc1);
    }
    for (; i + 16 <= n; i += 16) acc0 = _mm512_fmadd_ps(load_f16x16(x + i), load_f16x16(y + i), acc0);
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + tern_kdot_f16_ref(n - i, x + i, y + i);
}

static void kmad_f32(int64_t n, float * y, const float * x, float s) {
    const __m512 vs = _mm512_set1_ps(s);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_add_ps(_mm512_loadu_ps(y + i), _mm512_mul_ps(vs, _mm512_loadu_ps(x + i))));
    tern_kmad_f32_ref(n - i, y + i, x + i, s);
}

static void kmad_f16(int64_t n, float * y, const tern_fp16 * x, float s) {
    const __m512 vs = _mm512_set1_ps(s);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_add_ps(_mm512_loadu_ps(y + i), _mm512_mul_ps(vs, load_f16x16(x + i))));
    tern_kmad_f16_ref(n - i, y + i, x + i, s);
}

static void kfp32_to_fp16(int64_t n, const float * x, tern_fp16 * y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm256_storeu_si256((__m256i *) (y + i), _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    tern_kfp32_to_fp16_ref(n - i, x + i, y + i);
}

static void kfp16_to_fp32(int64_t n, const tern_fp16 * x, float * y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, load_f16x16(x + i));
    tern_kfp16_to_fp32_ref(n - i, x + i, y + i);
}

// Attention rows, grouped by KV head (x86/attn_rows_x86.h): heads that are a
// multiple of 16 values 16 lanes wide, others (8, 24, ...) 8 lanes wide.
struct lanes16 {
    static constexpr int W = 16;
    static constexpr bool PAIRS = true;  // two queries' 8 chains fit the 32 zmm registers
    using vec = __m512;
    static vec zero() { return _mm512_setzero_ps(); }
    static vec load_f16(const tern_fp16 * p) { return load_f16x16(p); }
    static vec load(const float * p) { return _mm512_loadu_ps(p); }
    static void store(float * p, vec v) { _mm512_storeu_ps(p, v); }
    static vec set1(float s) { return _mm512_set1_ps(s); }
    static vec fmadd(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
    static vec add(vec a, vec b) { return _mm512_add_ps(a, b); }
    static vec mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
    static __m256 fold8(vec v) { return _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)); }
};

static void kdot_f16_rows(int64_t n, int64_t n_rows, int64_t n_x, const tern_fp16 * x, const tern_fp16 * rows, int64_t stride,
                          float * out, int64_t out_stride) {
    if (n % 16 == 0) dot_f16_rows_grouped<lanes16>(n, n_rows, n_x, x, rows, stride, out, out_stride, kdot_f16);
    else dot_f16_rows_grouped<lanes8>(n, n_rows, n_x, x, rows, stride, out, out_stride, kdot_f16);
}

static void kmad_f16_rows(int64_t n, int64_t n_rows, int64_t n_y, float * y, const tern_fp16 * rows, int64_t stride,
                          const float * p, int64_t p_stride) {
    if (n % 16 == 0) mad_f16_rows_grouped<lanes16>(n, n_rows, n_y, y, rows, stride, p, p_stride, kmad_f16);
    else mad_f16_rows_grouped<lanes8>(n, n_rows, n_y, y, rows, stride, p, p_stride, kmad_f16);
}

void tern_fill_vec_avx512(tern_kernel_set * ks) {
    ks->dot_f16_rows = kdot_f16_rows;
    ks->mad_f16_rows = kmad_f16_rows;
    ks->dot_f32 = kdot_f32;
    ks->dot_f16 = kdot_f16;
    ks->mad_f32 = kmad_f32;
    ks->mad_f16 = kmad_f16;
    ks->fp32_to_fp16 = kfp32_to_fp16;
    ks->fp16_to_fp32 = kfp16_to_fp32;
}

}  // namespace tern
