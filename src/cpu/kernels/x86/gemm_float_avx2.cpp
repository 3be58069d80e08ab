// Float gemm tiles (F32, F16, BF16 weights) and the one-row vec_dot of the
// avx2 kernel set. Compiled with the avx2 target flags (AVX2 + FMA + F16C).
//
// Dot types (tensor/types.cpp): F32 x F32, F16 x F32 (the weights converted
// with F16C, exact), BF16 x BF16 (both converted by a 16-bit shift, exact).
//
// These tiles compute the avx512 set's sums (gemm_float_avx512.cpp) bit for
// bit: its one 16-lane accumulator per output is kept here as two __m256
// halves, lo = lanes 0..7 and hi = lanes 8..15, and every lane sees the same
// operations in the same order:
//   - the row is read in steps of STEP values (F32, F16: 16; BF16: 32);
//     lane l (0..15) takes value l of the step, BF16 values 2l and 2l+1,
//     the even one first (the avx512 set splits one 512-bit load so);
//   - each part of a step is acc = fma(w, a, acc) per lane, from +0;
//   - a tail of fewer than STEP values is copied into zeroed buffers and run
//     as one more step (fma with zeros leaves acc as it is);
//   - one fixed horizontal sum: (lo + hi), (lo128 + hi128), (0+2, 1+3),
//     (0 + 1), the order of _mm512_reduce_add_ps.
// For F32 that is llama.cpp's own AVX-512 prompt matmul (tinyBLAS: one
// 16-lane FMA accumulator per output, reduce_add), which its reference
// logits come from. Sixteen lanes, not eight, also for accuracy: the 8-lane
// F32 sum drifted past the parity envelope on ktest-llama-s08-F32 (3.5e-3
// against 2.6e-3); sixteen give 5e-4.
//
// A tile of R weight rows x C activation rows runs exactly these operations
// for each of its R*C outputs, interleaved only for throughput: an output's
// bits do not depend on the tile shape, its place in the tile, nr or nc
// (kernel_set.h), and vec_dot is the 1x1 tile, so decode and prefill agree.
// Tile shapes: C activation rows (1..2) at a time, each with as many weight
// rows as the 16 ymm registers hold (rows_for); the edges are the same
// template at smaller R / C.
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <string.h>
#include "core/fp16.h"

namespace tern {

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#if TERN_WITH_TYPE_F32 || TERN_WITH_TYPE_F16 || TERN_WITH_TYPE_BF16

namespace {

typedef __m256 vec;

// The 16 lanes lo | hi to one float.
inline float hsum(vec lo, vec hi) {
    const vec v = _mm256_add_ps(lo, hi);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Each type: STEP values per step, NV parts per step, element sizes, the
// weight rows of its two-activation-row tile (ROWS2), and the loads of part
// v, half h (lanes 0..7 or 8..15) of a step from a row pointer at the step's
// start.
struct type_f32 {
    static const int STEP = 16, NV = 1, WSIZE = 4, ASIZE = 4, ROWS2 = 3;
    static inline vec load_w(const uint8_t * p, int, int h) { return _mm256_loadu_ps((const float *) p + 8 * h); }
    static inline vec load_a(const uint8_t * p, int, int h) { return _mm256_loadu_ps((const float *) p + 8 * h); }
};

struct type_f16 {
    static const int STEP = 16, NV = 1, WSIZE = 2, ASIZE = 4, ROWS2 = 3;
    static inline vec load_w(const uint8_t * p, int, int h) {
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) ((const tern_fp16 *) p + 8 * h)));
    }
    static inline vec load_a(const uint8_t * p, int, int h) { return _mm256_loadu_ps((const float *) p + 8 * h); }
};

struct type_bf16 {
    static const int STEP = 32, NV = 2, WSIZE = 2, ASIZE = 2, ROWS2 = 2;
    // Half h holds values 16h .. 16h+15; v = 0: the even ones (low halves of
    // the 32-bit lanes), v = 1: the odd ones.
    static inline vec load(const uint8_t * p, int v, int h) {
        const __m256i x = _mm256_loadu_si256((const __m256i *) ((const tern_bf16 *) p + 16 * h));
        return _mm256_castsi256_ps(v == 0 ? _mm256_slli_epi32(x, 16) : _mm256_and_si256(x, _mm256_set1_epi32((int) 0xffff0000u)));
    }
    static inline vec load_w(const uint8_t * p, int v, int h) { return load(p, v, h); }
    static inline vec load_a(const uint8_t * p, int v, int h) { return load(p, v, h); }
};

// One step of R x C outputs; w and a point at the step's first value of row 0.
template <class T, int R, int C>
inline __attribute__((always_inline)) void step(const uint8_t * w, size_t ws, const uint8_t * a, size_t as, vec (&acc)[R][C][2]) {
#pragma GCC unroll 4
    for (int v = 0; v < T::NV; v++) {
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            vec av[C];
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) av[c] = T::load_a(a + c * as, v, h);
#pragma GCC unroll 8
            for (int r = 0; r < R; r++) {
                const vec wv = T::load_w(w + r * ws, v, h);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) acc[r][c][h] = _mm256_fmadd_ps(wv, av[c], acc[r][c][h]);
            }
        }
    }
}

template <class T, int R, int C>
void tile(int64_t k, const uint8_t * w, size_t ws, const uint8_t * a, size_t as, float * out, int64_t ldo) {
    vec acc[R][C][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c][0] = acc[r][c][1] = _mm256_setzero_ps();
    }
    const int64_t kmain = k - k % T::STEP;
    for (int64_t i = 0; i < kmain; i += T::STEP) step<T, R, C>(w + i * T::WSIZE, ws, a + i * T::ASIZE, as, acc);
    if (kmain < k) {
        const size_t rest = (size_t) (k - kmain);
        alignas(32) uint8_t wb[R][T::STEP * T::WSIZE];
        alignas(32) uint8_t ab[C][T::STEP * T::ASIZE];
        memset(wb, 0, sizeof(wb));
        memset(ab, 0, sizeof(ab));
        for (int r = 0; r < R; r++) memcpy(wb[r], w + r * ws + kmain * T::WSIZE, rest * T::WSIZE);
        for (int c = 0; c < C; c++) memcpy(ab[c], a + c * as + kmain * T::ASIZE, rest * T::ASIZE);
        step<T, R, C>(&wb[0][0], sizeof(wb[0]), &ab[0][0], sizeof(ab[0]), acc);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) out[c * ldo + r] = hsum(acc[r][c][0], acc[r][c][1]);
    }
}

// Weight rows per tile for C activation rows: 2*R*C accumulators, the C
// activation vectors and one weight vector in 16 registers. 3 x 2 keeps the
// activations in registers (2 x 3 would read them from memory at every FMA);
// BF16 takes 2 x 2, its odd-value mask needing a register too.
template <class T>
constexpr int rows_for(int c) { return c == 1 ? 6 : T::ROWS2; }
const int MAX_C = 2;

// The last nr % R rows of a column group: one tile of R' < R rows.
template <class T, int C, int R>
inline void rest_rows(int rest, int64_t k, const uint8_t * w, size_t ws, const uint8_t * a, size_t as, float * out, int64_t ldo) {
    if constexpr (R > 0) {
        if (rest == R) tile<T, R, C>(k, w, ws, a, as, out, ldo);
        else rest_rows<T, C, R - 1>(rest, k, w, ws, a, as, out, ldo);
    }
}

// All nr weight rows against C activation rows.
template <class T, int C>
void column_group(int64_t k, int64_t nr, const uint8_t * w, size_t ws, const uint8_t * a, size_t as, float * out, int64_t ldo) {
    const int R = rows_for<T>(C);
    int64_t r0 = 0;
    for (; r0 + R <= nr; r0 += R) tile<T, R, C>(k, w + r0 * ws, ws, a, as, out + r0, ldo);
    if (r0 < nr) rest_rows<T, C, R - 1>((int) (nr - r0), k, w + r0 * ws, ws, a, as, out + r0, ldo);
}

template <class T>
void gemm(int64_t k, int64_t nr, int64_t nc, const void * vw, size_t ws, const void * va, size_t as, float * out, int64_t ldo) {
    const uint8_t * w = (const uint8_t *) vw;
    const uint8_t * a = (const uint8_t *) va;
    int64_t c0 = 0;
    for (; c0 + MAX_C <= nc; c0 += MAX_C) column_group<T, MAX_C>(k, nr, w, ws, a + c0 * as, as, out + c0 * ldo, ldo);
    if (c0 < nc) column_group<T, 1>(k, nr, w, ws, a + c0 * as, as, out + c0 * ldo, ldo);
}

// The 1x1 tile: the same bits as any tile for the same pair of rows.
template <class T>
void vec_dot(int64_t n, float * s, const void * x, const void * y) {
    tile<T, 1, 1>(n, (const uint8_t *) x, 0, (const uint8_t *) y, 0, s, 1);
}

}  // namespace

#endif

void tern_fill_gemm_float_avx2(tern_kernel_set * ks) {
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
