// AVX2 + FMA + F16C vector kernels (see vec.h) of the avx2 kernel set; the
// avx512 set starts from these and widens some (x86/vec_avx512.cpp). Tails
// fall back to the reference loop, element for element the same operations.
// Compiled with the avx2 target flags: only static functions here.
#include "cpu/kernels/vec.h"
#include "cpu/kernels/exp_approx.h"
#include "cpu/kernels/gelu_table.h"
#include "cpu/kernels/x86/attn_rows_x86.h"

#include <immintrin.h>
#include <math.h>

namespace tern {

static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline __m256 load_f16x8(const tern_fp16 * p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p)); }

static float kdot_f32(int64_t n, const float * x, const float * y) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
    return hsum256(_mm256_add_ps(acc0, acc1)) + tern_kdot_f32_ref(n - i, x + i, y + i);
}

static float kdot_f16(int64_t n, const tern_fp16 * x, const tern_fp16 * y) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(load_f16x8(x + i), load_f16x8(y + i), acc0);
        acc1 = _mm256_fmadd_ps(load_f16x8(x + i + 8), load_f16x8(y + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(load_f16x8(x + i), load_f16x8(y + i), acc0);
    return hsum256(_mm256_add_ps(acc0, acc1)) + tern_kdot_f16_ref(n - i, x + i, y + i);
}

static void kmad_f32(int64_t n, float * y, const float * x, float s) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(vs, _mm256_loadu_ps(x + i))));
    tern_kmad_f32_ref(n - i, y + i, x + i, s);
}

static void kmad_f16(int64_t n, float * y, const tern_fp16 * x, float s) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(vs, load_f16x8(x + i))));
    tern_kmad_f16_ref(n - i, y + i, x + i, s);
}

static void kfp32_to_fp16(int64_t n, const float * x, tern_fp16 * y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_storeu_si128((__m128i *) (y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    tern_kfp32_to_fp16_ref(n - i, x + i, y + i);
}

static void kfp16_to_fp32(int64_t n, const tern_fp16 * x, float * y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, load_f16x8(x + i));
    tern_kfp16_to_fp32_ref(n - i, x + i, y + i);
}

static double ksumsq_f32(int64_t n, const float * x) {
    __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 sq = _mm256_mul_ps(v, v);  // product in float, as the reference
        acc0 = _mm256_add_pd(acc0, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
        acc1 = _mm256_add_pd(acc1, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, _mm256_add_pd(acc0, acc1));
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + tern_ksumsq_f32_ref(n - i, x + i);
}

static void kscale_mul_f32(int64_t n, float * y, const float * x, float s, const float * w) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    if (w) {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
        tern_kscale_mul_f32_ref(n - i, y + i, x + i, s, w + i);
    } else {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
        tern_kscale_mul_f32_ref(n - i, y + i, x + i, s, NULL);
    }
}

static void kadd_f32(int64_t n, float * z, const float * x, const float * y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(z + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    tern_kadd_f32_ref(n - i, z + i, x + i, y + i);
}

static void kmul_f32(int64_t n, float * z, const float * x, const float * y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(z + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    tern_kmul_f32_ref(n - i, z + i, x + i, y + i);
}

// Attention rows, grouped by KV head: x86/attn_rows_x86.h.
static void kdot_f16_rows(int64_t n, int64_t n_rows, int64_t n_x, const tern_fp16 * x, const tern_fp16 * rows, int64_t stride,
                          float * out, int64_t out_stride) {
    dot_f16_rows_grouped<lanes8>(n, n_rows, n_x, x, rows, stride, out, out_stride, kdot_f16);
}

static void kmad_f16_rows(int64_t n, int64_t n_rows, int64_t n_y, float * y, const tern_fp16 * rows, int64_t stride,
                          const float * p, int64_t p_stride) {
    mad_f16_rows_grouped<lanes8>(n, n_rows, n_y, y, rows, stride, p, p_stride, kmad_f16);
}

static float kscale_mask_max_f32(int64_t n, float * x, float s, const float * mask) {
    const __m256 vs = _mm256_set1_ps(s), ninf = _mm256_set1_ps(-INFINITY);
    __m256 vmax = ninf, unord = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), vs);
        if (mask) {
            const __m256 m = _mm256_loadu_ps(mask + i);
            v = _mm256_blendv_ps(_mm256_add_ps(v, m), ninf, _mm256_cmp_ps(m, ninf, _CMP_EQ_OQ));
        }
        _mm256_storeu_ps(x + i, v);
        vmax = _mm256_max_ps(vmax, v);
        unord = _mm256_or_ps(unord, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, vmax);
    float max = tern_kscale_mask_max_f32_ref(n - i, x + i, s, mask ? mask + i : NULL);
    if (max != max || _mm256_movemask_ps(unord) != 0) return NAN;
    for (int l = 0; l < 8; l++) if (lanes[l] > max) max = lanes[l];
    return max;
}

// e^x as tern_exp_approx (exp_approx.h), 8 lanes: the same polynomial; 2^n
// built in the exponent bits, so |x| beyond ~87 is clamped to 0 / +inf
// (the reference gives subnormals there: a difference below 1e-37).
static inline __m256 exp_approx8(__m256 x) {
    const __m256 shifter = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shifter);
    const __m256 n = _mm256_sub_ps(z, shifter);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f), _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 r = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(j)));
    const __m256 lo = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
    const __m256 hi = _mm256_cmp_ps(x, _mm256_set1_ps(88.0f), _CMP_GT_OQ);
    return _mm256_blendv_ps(_mm256_andnot_ps(lo, r), _mm256_set1_ps(INFINITY), hi);
}

// The sum runs over the NON-ZERO exponentials in order, 8 at a time: masked
// cells (e^-inf = 0) and where a cell sits in the cache change nothing, so a
// sequence attends with the same bits whatever else the cache holds and after
// a defragmentation (kv_cache.h). Runs of 8 non-zero values take the vector
// add directly; elsewhere they are staged in order until 8 are there.
static float kexp_sum_f32(int64_t n, float * x, float max) {
    const __m256 vmax = _mm256_set1_ps(max);
    __m256 acc = _mm256_setzero_ps();
    float stage[16];
    int pending = 0;
    auto push = [&](float e) {
        stage[pending++] = e;
        if (pending == 8) {
            acc = _mm256_add_ps(acc, _mm256_loadu_ps(stage));
            pending = 0;
        }
    };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp_approx8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
        _mm256_storeu_ps(x + i, e);
        const int nz = _mm256_movemask_ps(_mm256_cmp_ps(e, _mm256_setzero_ps(), _CMP_NEQ_UQ));
        if (nz == 0) continue;
        if (nz == 0xFF && pending == 0) {
            acc = _mm256_add_ps(acc, e);
            continue;
        }
        for (int b = 0; b < 8; b++) {
            if ((nz >> b) & 1) push(x[i + b]);
        }
    }
    for (; i < n; i++) {
        x[i] = tern_exp_approx(x[i] - max);
        if (x[i] != 0.0f) push(x[i]);
    }
    float sum = hsum256(acc);
    for (int k = 0; k < pending; k++) sum += stage[k];
    return sum;
}

static void kswiglu_f32(int64_t n, float * y, const float * g, const float * u) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 gv = _mm256_loadu_ps(g + i);
        const __m256 e = exp_approx8(_mm256_sub_ps(_mm256_setzero_ps(), gv));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_div_ps(gv, _mm256_add_ps(one, e)), _mm256_loadu_ps(u + i)));
    }
    tern_kswiglu_f32_ref(n - i, y + i, g + i, u + i);
}

#if TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3
// The reference's table lookup, eight values at a time: F16C rounds x as the
// reference does (nearest even), a gather reads 4 bytes at each entry (the table
// has one entry to spare) and keeps the low half; lanes outside (-10, 10) read
// entry 0 and take 0 or x instead.
static void kgeglu_f32(int64_t n, float * y, const float * g, const float * u) {
    const tern_fp16 * table = tern_gelu_table();
    const __m256 lo = _mm256_set1_ps(-10.0f), hi = _mm256_set1_ps(10.0f);
    const __m256i magnitude = _mm256_set1_epi32(0x7fff), sign = _mm256_set1_epi32(0x8000);
    const __m256i half = _mm256_set1_epi32((int) k_gelu_table_half), low16 = _mm256_set1_epi32(0xffff);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        const __m256 inside = _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_GT_OQ), _mm256_cmp_ps(x, hi, _CMP_LT_OQ));
        const __m256i h = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
        const __m256i negative = _mm256_cmpeq_epi32(_mm256_and_si256(h, sign), sign);
        __m256i entry = _mm256_add_epi32(_mm256_and_si256(h, magnitude), _mm256_and_si256(negative, half));
        entry = _mm256_and_si256(entry, _mm256_castps_si256(inside));
        const __m256i words = _mm256_and_si256(_mm256_i32gather_epi32((const int *) table, entry, 2), low16);
        // 8 x 32-bit -> 8 x 16-bit: packus works per 128-bit half, qwords 0 and 2 hold the eight
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(words, words), 0x08);
        const __m256 v = _mm256_cvtph_ps(_mm256_castsi256_si128(packed));
        const __m256 outside = _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LE_OQ), x);  // 0 at or below -10, else x
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_blendv_ps(outside, v, inside), _mm256_loadu_ps(u + i)));
    }
    tern_kgeglu_f32_ref(n - i, y + i, g + i, u + i);
}
#endif

void tern_fill_vec_avx2(tern_kernel_set * ks) {
    ks->dot_f16_rows = kdot_f16_rows;
    ks->mad_f16_rows = kmad_f16_rows;
    ks->scale_mask_max_f32 = kscale_mask_max_f32;
    ks->exp_sum_f32 = kexp_sum_f32;
    ks->swiglu_f32 = kswiglu_f32;
#if TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3
    ks->geglu_f32 = kgeglu_f32;
#endif
    ks->dot_f32 = kdot_f32;
    ks->dot_f16 = kdot_f16;
    ks->sumsq_f32 = ksumsq_f32;
    ks->mad_f32 = kmad_f32;
    ks->mad_f16 = kmad_f16;
    ks->scale_mul_f32 = kscale_mul_f32;
    ks->add_f32 = kadd_f32;
    ks->mul_f32 = kmul_f32;
    ks->fp32_to_fp16 = kfp32_to_fp16;
    ks->fp16_to_fp32 = kfp16_to_fp32;
}

}  // namespace tern
