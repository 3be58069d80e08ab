// AVX2 activation quantizers of the avx2 kernel set (kernel_set.h
// quantize_act), the same bytes as the references (tern_quantize_act_q8_0 /
// _q8_1 in tensor/quants_legacy.cpp, tern_quantize_row_q8_K in
// tensor/quants_k.cpp): the same float operations per element; the
// conversion to int rounds half to even as nearbyintf and the reference's
// magic-number rounding do. Compiled with the avx2 target flags.
#include "cpu/kernels/kernel_set.h"

#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <string.h>

namespace tern {

namespace {

inline float hmax256(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

inline int hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

inline tern_fp16 to_fp16(float f) { return (tern_fp16) _mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0); }

// 32 ints (4 x 8 lanes, each in [-127, 127]) -> 32 int8 in order.
inline __m256i pack_levels(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
    const __m256i q = _mm256_packs_epi16(ab, cd);
    // packs works per 128-bit lane: restore element order.
    return _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

__m256 k_abs_mask() { return _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)); }

// Lanes where |x| is NaN or Inf (not <= FLT_MAX, unordered counts as true).
inline __m256 non_finite(__m256 ax) { return _mm256_cmp_ps(ax, _mm256_set1_ps(FLT_MAX), _CMP_NLE_UQ); }

// One 32-value block: q = round-half-even(x * (127 / amax)); returns amax / 127.
// A block holding NaN/Inf gives levels 0 and a NaN scale, as the reference.
float block_q8(const float * x, int8_t * qs) {
    const __m256 abs_mask = k_abs_mask();
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++) {
        v[k] = _mm256_loadu_ps(x + 8 * k);
        const __m256 ax = _mm256_and_ps(v[k], abs_mask);
        amax = _mm256_max_ps(amax, ax);
        bad = _mm256_or_ps(bad, non_finite(ax));
    }
    if (_mm256_movemask_ps(bad)) {
        memset(qs, 0, 32);
        return NAN;
    }
    const float m = hmax256(amax);
    const float id = m != 0.0f ? 127.0f / m : 0.0f;
    const __m256 vid = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; k++) q[k] = _mm256_cvtps_epi32(_mm256_mul_ps(v[k], vid));
    _mm256_storeu_si256((__m256i *) qs, pack_levels(q[0], q[1], q[2], q[3]));
    return m / 127.0f;
}

#if TERN_WITH_TYPE_Q8_0
void quantize_act_q8_0(const float * src, void * dst, int64_t n) {
    block_q8_0 * y = (block_q8_0 *) dst;
    for (int64_t ib = 0; ib < n / 32; ib++) y[ib].d = to_fp16(block_q8(src + ib * 32, y[ib].qs));
}
#endif

#if TERN_WITH_TYPE_Q8_1
void quantize_act_q8_1(const float * src, void * dst, int64_t n) {
    block_q8_1 * y = (block_q8_1 *) dst;
    for (int64_t ib = 0; ib < n / 32; ib++) {
        const float d = block_q8(src + ib * 32, y[ib].qs);
        const __m256i q = _mm256_loadu_si256((const __m256i *) y[ib].qs);
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q);
        const int sum = hsum_epi32(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
        y[ib].d = to_fp16(d);
        y[ib].s = to_fp16((float) sum * d);
    }
}
#endif

// Q8_K: 256 values scaled by -127 / (the value of largest magnitude, first in
// order), levels capped at 127, sums of each 16 levels.
void quantize_row_q8_K(const float * src, void * dst, int64_t n) {
    block_q8_K * y = (block_q8_K *) dst;
    const __m256 abs_mask = k_abs_mask();
    for (int64_t ib = 0; ib < n / 256; ib++) {
        const float * x = src + ib * 256;
        __m256 amax = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
        for (int k = 0; k < 32; k++) {
            const __m256 ax = _mm256_and_ps(_mm256_loadu_ps(x + 8 * k), abs_mask);
            amax = _mm256_max_ps(amax, ax);
            bad = _mm256_or_ps(bad, non_finite(ax));
        }
        if (_mm256_movemask_ps(bad)) {
            memset(&y[ib], 0, sizeof(block_q8_K));
            y[ib].d = NAN;
            continue;
        }
        const float am = hmax256(amax);
        if (am == 0.0f) {
            memset(&y[ib], 0, sizeof(block_q8_K));
            continue;
        }
        float max = 0.0f;
        for (int i = 0; i < 256; i++) {
            if (x[i] == am || x[i] == -am) { max = x[i]; break; }
        }
        const float iscale = -127.0f / max;
        const __m256 vis = _mm256_set1_ps(iscale);
        const __m256i cap = _mm256_set1_epi32(127);
        for (int k = 0; k < 8; k++) {
            __m256i q[4];
            for (int j = 0; j < 4; j++) {
                q[j] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(vis, _mm256_loadu_ps(x + 32 * k + 8 * j))), cap);
            }
            _mm256_storeu_si256((__m256i *) (y[ib].qs + 32 * k), pack_levels(q[0], q[1], q[2], q[3]));
        }
        for (int j = 0; j < 16; j++) {
            const __m128i q = _mm_loadu_si128((const __m128i *) (y[ib].qs + 16 * j));
            const __m256i w = _mm256_cvtepi8_epi16(q);
            const __m256i s = _mm256_madd_epi16(w, _mm256_set1_epi16(1));
            y[ib].bsums[j] = (int16_t) hsum_epi32(s);
        }
        y[ib].d = 1.0f / iscale;
    }
}

}  // namespace

void tern_fill_quantize_avx2(tern_kernel_set * ks) {
#if TERN_WITH_TYPE_Q8_0
    ks->quantize_act[TERN_TYPE_Q8_0] = quantize_act_q8_0;
#endif
#if TERN_WITH_TYPE_Q8_1
    ks->quantize_act[TERN_TYPE_Q8_1] = quantize_act_q8_1;
#endif
#if TERN_WITH_TYPE_Q8_K
    ks->quantize_act[TERN_TYPE_Q8_K] = quantize_row_q8_K;
#endif
}

}  // namespace tern
