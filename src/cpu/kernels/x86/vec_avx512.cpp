// AVX-512 vector kernels (see vec.h) of the avx512 kernel set: the dot
// products, multiply-adds and F16 conversions of attention and the KV-cache
// writes, 16 lanes wide; the set keeps the avx2 ones for the rest.
// Compiled with the avx512 target flags: only static functions here.
#include "cpu/kernels/vec.h"

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

// Attention rows: a head of up to 128 values (a multiple of 16) stays in registers
// across the cells; other sizes go row by row. Each row's dot and each add are the
// same operations as kdot_f16 / kmad_f16.
static inline __m256 load_f16x8(const tern_fp16 * p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p)); }

static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Heads of 8 values (small models): 8 lanes, one accumulator per row.
static void kdot_f16_rows8(int64_t n_rows, const tern_fp16 * x, const tern_fp16 * rows, int64_t stride, float * out) {
    const __m256 q = load_f16x8(x);
    for (int64_t j = 0; j < n_rows; j++) out[j] = hsum256(_mm256_mul_ps(q, load_f16x8(rows + j * stride)));
}

static void kdot_f16_rows(int64_t n, int64_t n_rows, const tern_fp16 * x, const tern_fp16 * rows, int64_t stride, float * out) {
    if (n == 8) {
        kdot_f16_rows8(n_rows, x, rows, stride, out);
        return;
    }
    if (n % 16 != 0 || n > 128) {
        for (int64_t j = 0; j < n_rows; j++) out[j] = kdot_f16(n, x, rows + j * stride);
        return;
    }
    const int nq = (int) (n / 16);
    __m512 q[8];
    for (int k = 0; k < nq; k++) q[k] = load_f16x16(x + 16 * k);
    for (int64_t j = 0; j < n_rows; j++) {
        const tern_fp16 * r = rows + j * stride;
        if (j + 4 < n_rows) _mm_prefetch((const char *) (r + 4 * stride), _MM_HINT_T0);
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        for (int k = 0; k + 1 < nq; k += 2) {
            acc0 = _mm512_fmadd_ps(q[k], load_f16x16(r + 16 * k), acc0);
            acc1 = _mm512_fmadd_ps(q[k + 1], load_f16x16(r + 16 * k + 16), acc1);
        }
        if (nq & 1) acc0 = _mm512_fmadd_ps(q[nq - 1], load_f16x16(r + 16 * (nq - 1)), acc0);
        out[j] = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    }
}

static void kmad_f16_rows(int64_t n, int64_t n_rows, float * y, const tern_fp16 * rows, int64_t stride, const float * p) {
    if (n == 8) {  // small heads: 8 lanes, the same multiply then add per element
        __m256 acc = _mm256_loadu_ps(y);
        for (int64_t j = 0; j < n_rows; j++) {
            if (p[j] != 0.0f) acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(p[j]), load_f16x8(rows + j * stride)));
        }
        _mm256_storeu_ps(y, acc);
        return;
    }
    if (n % 16 != 0 || n > 128) {
        for (int64_t j = 0; j < n_rows; j++) if (p[j] != 0.0f) kmad_f16(n, y, rows + j * stride, p[j]);
        return;
    }
    const int nq = (int) (n / 16);
    __m512 acc[8];
    for (int k = 0; k < nq; k++) acc[k] = _mm512_loadu_ps(y + 16 * k);
    for (int64_t j = 0; j < n_rows; j++) {
        if (p[j] == 0.0f) continue;
        const tern_fp16 * r = rows + j * stride;
        const __m512 vs = _mm512_set1_ps(p[j]);
        for (int k = 0; k < nq; k++) acc[k] = _mm512_add_ps(acc[k], _mm512_mul_ps(vs, load_f16x16(r + 16 * k)));
    }
    for (int k = 0; k < nq; k++) _mm512_storeu_ps(y + 16 * k, acc[k]);
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
