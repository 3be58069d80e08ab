// Float gemm tiles (F32, F16, BF16 weights) and the one-row vec_dot of the
// avx512 kernel set. Compiled with the avx512 target flags (AVX2 + FMA +
// F16C + AVX-512 F/BW/VL/DQ/VNNI; no AVX512-BF16: BF16 is converted by a
// 16-bit shift, which is exact).
//
// Dot types (tensor/types.cpp): F32 x F32, F16 x F32 (the weights converted
// with F16C, exact), BF16 x BF16 (both converted by a shift, exact).
//
// One output, wherever it falls: a single __m512 accumulator starts at +0;
// the row is read in steps of STEP values (F32, F16: 16; BF16: 32, read as
// one 512-bit load and split into its even and odd values, even first);
// each 16-lane part of a step is one acc = fma(w, a, acc). A tail of fewer
// than STEP values is copied into zeroed buffers and run as one more step
// (fma with zeros leaves acc as it is). Last, one fixed horizontal sum:
// (lo256 + hi256), (lo128 + hi128), then (0+2, 1+3), then (0 + 1), the
// order of _mm512_reduce_add_ps. For F32 that is llama.cpp's own AVX-512
// prompt matmul (tinyBLAS), which its reference logits come from.
//
// A tile of R weight rows x C activation rows runs exactly these operations
// for each of its R*C outputs, interleaved only for throughput: an output's
// bits do not depend on the tile shape, its place in the tile, nr or nc
// (kernel_set.h), and vec_dot is the 1x1 tile, so decode and prefill agree.
// The avx2 set (gemm_float_avx2.cpp) keeps each accumulator as two 8-lane
// halves and gives these same bits.
// Tile shapes: C activation rows (1..4) at a time, each with as many weight
// rows as the 32 zmm registers hold (rows_for); the edges are the same
// template at 4 or 1 rows (column_group).
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <string.h>
#include "core/fp16.h"
#include "cpu/kernels/column_blocks.h"

namespace tern {

// GCC 12 flags the deliberately undefined registers inside avx512fintrin.h
// (_mm512_undefined_*) as uninitialized when inlined here: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#if TERN_WITH_TYPE_F32 || TERN_WITH_TYPE_F16 || TERN_WITH_TYPE_BF16

namespace {

typedef __m512 vec;

inline float hsum(vec v) {
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Each type: STEP values per step, NV parts per step, element sizes, and
// the loads of part v of a step from a row pointer at the step's start.
struct type_f32 {
    static const int STEP = 16, NV = 1, WSIZE = 4, ASIZE = 4;
    static inline vec load_w(const uint8_t * p, int) { return _mm512_loadu_ps(p); }
    static inline vec load_a(const uint8_t * p, int) { return _mm512_loadu_ps(p); }
};

struct type_f16 {
    static const int STEP = 16, NV = 1, WSIZE = 2, ASIZE = 4;
    static inline vec load_w(const uint8_t * p, int) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p)); }
    static inline vec load_a(const uint8_t * p, int) { return _mm512_loadu_ps(p); }
};

struct type_bf16 {
    static const int STEP = 32, NV = 2, WSIZE = 2, ASIZE = 2;
    // v = 0: the even elements (low halves of the 32-bit lanes), v = 1: the odd ones.
    static inline vec load(const uint8_t * p, int v) {
        const __m512i x = _mm512_loadu_si512(p);
        return _mm512_castsi512_ps(v == 0 ? _mm512_slli_epi32(x, 16) : _mm512_and_si512(x, _mm512_set1_epi32((int) 0xffff0000u)));
    }
    static inline vec load_w(const uint8_t * p, int v) { return load(p, v); }
    static inline vec load_a(const uint8_t * p, int v) { return load(p, v); }
};

// One step of R x C outputs; w and a point at the step's first value of row 0.
template <class T, int R, int C>
inline __attribute__((always_inline)) void step(const uint8_t * w, size_t ws, const uint8_t * a, size_t as, vec (&acc)[R][C]) {
#pragma GCC unroll 4
    for (int v = 0; v < T::NV; v++) {
        vec av[C];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) av[c] = T::load_a(a + c * as, v);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            const vec wv = T::load_w(w + r * ws, v);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) acc[r][c] = _mm512_fmadd_ps(wv, av[c], acc[r][c]);
        }
    }
}

template <class T, int R, int C>
void tile(int64_t k, const uint8_t * w, size_t ws, const uint8_t * a, size_t as, float * out, int64_t ldo) {
    vec acc[R][C];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = _mm512_setzero_ps();
    }
    const int64_t kmain = k - k % T::STEP;
    for (int64_t i = 0; i < kmain; i += T::STEP) step<T, R, C>(w + i * T::WSIZE, ws, a + i * T::ASIZE, as, acc);
    if (kmain < k) {
        const size_t rest = (size_t) (k - kmain);
        alignas(64) uint8_t wb[R][T::STEP * T::WSIZE];
        alignas(64) uint8_t ab[C][T::STEP * T::ASIZE];
        memset(wb, 0, sizeof(wb));
        memset(ab, 0, sizeof(ab));
        for (int r = 0; r < R; r++) memcpy(wb[r], w + r * ws + kmain * T::WSIZE, rest * T::WSIZE);
        for (int c = 0; c < C; c++) memcpy(ab[c], a + c * as + kmain * T::ASIZE, rest * T::ASIZE);
        step<T, R, C>(&wb[0][0], sizeof(wb[0]), &ab[0][0], sizeof(ab[0]), acc);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) out[c * ldo + r] = hsum(acc[r][c]);
    }
}

// Weight rows per tile for C activation rows: R*C accumulators, the C
// activation vectors and one weight vector in 32 registers (6 x 4 measured
// as fast as 4 x 6 and 5 x 5 for F16 and BF16, and faster for F32).
constexpr int rows_for(int c) { return c <= 2 ? 8 : 6; }
constexpr int MAX_C = 4;

// All nr weight rows against C activation rows: full tiles of R rows, then
// the last nr % R rows as one 4-row tile where R > 4 (a 64-row chunk against
// 6-row tiles leaves 4) and single rows. Only these three shapes per C are
// compiled (every smaller R would be its own ~2.5 KB of unrolled code), and
// each output's operations do not depend on the shape anyway.
template <class T, int C>
void column_group(int64_t k, int64_t nr, const uint8_t * w, size_t ws, const uint8_t * a, size_t as, float * out, int64_t ldo) {
    const int R = rows_for(C);
    int64_t r0 = 0;
    for (; r0 + R <= nr; r0 += R) tile<T, R, C>(k, w + r0 * ws, ws, a, as, out + r0, ldo);
    if constexpr (R > 4) {
        if (nr - r0 >= 4) {
            tile<T, 4, C>(k, w + r0 * ws, ws, a, as, out + r0, ldo);
            r0 += 4;
        }
    }
    for (; r0 < nr; r0++) tile<T, 1, C>(k, w + r0 * ws, ws, a, as, out + r0, ldo);
}

template <class T>
void gemm(int64_t k, int64_t nr, int64_t nc, const void * vw, size_t ws, const void * va, size_t as, float * out, int64_t ldo) {
    const uint8_t * w = (const uint8_t *) vw;
    const uint8_t * a = (const uint8_t *) va;
    for_column_blocks<MAX_C>(nc, [&](auto cols, int64_t c0) {
        column_group<T, decltype(cols)::value>(k, nr, w, ws, a + c0 * as, as, out + c0 * ldo, ldo);
    });
}

// The 1x1 tile: the same bits as any tile for the same pair of rows.
template <class T>
void vec_dot(int64_t n, float * s, const void * x, const void * y) {
    tile<T, 1, 1>(n, (const uint8_t *) x, 0, (const uint8_t *) y, 0, s, 1);
}

}  // namespace

#endif

void tern_fill_gemm_float_avx512(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_F32
    ks->vec_dot[TERN_TYPE_F32] = vec_dot<type_f32>;
    ks->gemm[TERN_TYPE_F32] = gemm<type_f32>;
#endif
#if TERN_WITH_TYPE_F16
    ks->vec_dot[TERN_TYPE_F16] = vec_dot<type_f16>;
    ks->gemm[TERN_TYPE_F16] = gemm<type_f16>;
#endif
#if TERN_WITH_TYPE_BF16
    ks->vec_dot[TERN_TYPE_BF16] = vec_dot<type_bf16>;
    ks->gemm[TERN_TYPE_BF16] = gemm<type_bf16>;
#endif
}

}  // namespace tern
