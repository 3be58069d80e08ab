// Attention rows for the x86 kernel sets: dot_f16_rows and mad_f16_rows (vec.h)
// over a group of query heads that share one KV head (grouped-query attention).
//
// Included by vec_avx2.cpp and vec_avx512.cpp, each compiling it with its own
// target flags; everything is in an anonymous namespace, so each translation
// unit has its own copy (no clash between differently compiled templates).
// A set supplies the lane type V (lanes8 below, lanes16 in vec_avx512.cpp):
//
//   dot: the queries are converted to float once (up to 1024 values at a
//        time), the rows go in blocks of 8. A block is converted from F16 to
//        float once, into `staged` [8, n] (on the stack, 4 KiB at most), then
//        each query x_g (g < n_x) runs 8 independent chains of FMAs over it,
//        one per row, V::W lanes wide (with 32 registers two queries at a time,
//        sharing each staged load), and the 8 chains are reduced together by a
//        tree of horizontal adds. Per query that is n/W FMAs per row and 9 shuffles
//        and adds per 8 rows, instead of a full horizontal sum per row, and
//        the F16 rows are read once per group instead of once per query head.
//        A partial last block is padded with zero rows: a row's dot is the
//        same operations wherever it sits. Heads that are not a multiple of
//        W or larger than 128 values: one dot per row (dot_row).
//   mad: the rows go in blocks of 8, staged the same way (straight from the
//        cache when there is one query); per query and per W lanes, y += p_j *
//        v_j for the 8 rows in order, multiply then add: the reference's
//        operations element for element, so the result is bit-identical.
//
// A query's dot with a row depends on those two alone: not on n_x, the other
// queries, j or n_rows. So grouping heads differently (by thread count) or
// attending fewer cells (masked ones left out) leaves the logits' bits alone.
#pragma once
#include <immintrin.h>
#include <stdint.h>
#include "core/fp16.h"

namespace tern {
namespace {

constexpr int64_t ATTN_ROWS_MAX_HEAD = 128;  // heads staged; larger ones go row by row
constexpr int ATTN_ROWS_BLOCK = 8;
constexpr int64_t ATTN_ROWS_X_FLOATS = 1024;  // queries converted to float per pass (4 KiB on the stack)

struct lanes8 {
    static constexpr int W = 8;
    static constexpr bool PAIRS = false;  // 16 ymm registers: no room for two queries' 8 chains
    using vec = __m256;
    static vec zero() { return _mm256_setzero_ps(); }
    static vec load_f16(const tern_fp16 * p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p)); }
    static vec load(const float * p) { return _mm256_loadu_ps(p); }
    static void store(float * p, vec v) { _mm256_storeu_ps(p, v); }
    static vec set1(float s) { return _mm256_set1_ps(s); }
    static vec fmadd(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
    static vec add(vec a, vec b) { return _mm256_add_ps(a, b); }
    static vec mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
    static __m256 fold8(vec v) { return v; }
};

// a[r] -> lane r of the result = sum of a[r]'s 8 lanes.
inline __m256 reduce_8x8(const __m256 a[8]) {
    const __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
    const __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
    // u0 = [r0..r3 lanes 0-3 summed | r0..r3 lanes 4-7 summed], u1 the same for r4..r7
    const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

// staged[r * n + i] = f32(rows[(j + r) * stride + i]), r < 8
template <class V>
inline void stage_rows(int64_t n, const tern_fp16 * rows, int64_t stride, float * staged) {
    for (int r = 0; r < ATTN_ROWS_BLOCK; r++) {
        const tern_fp16 * src = rows + r * stride;
        for (int64_t i = 0; i < n; i += V::W) V::store(staged + r * n + i, V::load_f16(src + i));
    }
}

// The KV cache of a layer is read once per token, mostly from DRAM (the weights
// stream through the caches between two layers): fetch the rows of the block
// ATTN_ROWS_AHEAD blocks ahead, every cache line of them.
constexpr int ATTN_ROWS_AHEAD = 4;
inline void prefetch_rows(int64_t n, int64_t j, int64_t n_rows, const tern_fp16 * rows, int64_t stride) {
    const int64_t jp = j + ATTN_ROWS_AHEAD * ATTN_ROWS_BLOCK;
    if (jp + ATTN_ROWS_BLOCK > n_rows) return;
    for (int r = 0; r < ATTN_ROWS_BLOCK; r++) {
        const char * row = (const char *) (rows + (jp + r) * stride);
        for (int64_t b = 0; b < n * (int64_t) sizeof(tern_fp16); b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
    }
}

using dot_row_fn = float (*)(int64_t n, const tern_fp16 * x, const tern_fp16 * y);
using mad_row_fn = void (*)(int64_t n, float * y, const tern_fp16 * x, float s);

// Reduce a block's 8 accumulators and store the first nr dots.
template <class V>
inline void store_dots(const typename V::vec acc[ATTN_ROWS_BLOCK], int nr, float * out) {
    __m256 a8[ATTN_ROWS_BLOCK];
    for (int r = 0; r < ATTN_ROWS_BLOCK; r++) a8[r] = V::fold8(acc[r]);
    if (nr == ATTN_ROWS_BLOCK) {
        _mm256_storeu_ps(out, reduce_8x8(a8));
        return;
    }
    alignas(32) float res[ATTN_ROWS_BLOCK];
    _mm256_store_ps(res, reduce_8x8(a8));
    for (int r = 0; r < nr; r++) out[r] = res[r];
}

// n_x <= ATTN_ROWS_X_FLOATS / n queries, n % V::W == 0, n <= ATTN_ROWS_MAX_HEAD.
template <class V>
void dot_f16_rows_chunk(int64_t n, int64_t n_rows, int64_t n_x, const tern_fp16 * x, const tern_fp16 * rows,
                        int64_t stride, float * out, int64_t out_stride) {
    alignas(64) float staged[ATTN_ROWS_BLOCK * ATTN_ROWS_MAX_HEAD];
    alignas(64) float xf[ATTN_ROWS_X_FLOATS];
    for (int64_t i = 0; i < n_x * n; i += V::W) V::store(xf + i, V::load_f16(x + i));
    for (int64_t j = 0; j < n_rows; j += ATTN_ROWS_BLOCK) {
        // The last block may be partial: its missing rows are zeros, so every row
        // gets the same operations wherever it sits (n_rows never changes a bit).
        const int nr = n_rows - j < ATTN_ROWS_BLOCK ? (int) (n_rows - j) : ATTN_ROWS_BLOCK;
        const tern_fp16 * blk = rows + j * stride;
        prefetch_rows(n, j, n_rows, rows, stride);
        if (nr == ATTN_ROWS_BLOCK) stage_rows<V>(n, blk, stride, staged);
        else {
            for (int r = 0; r < ATTN_ROWS_BLOCK; r++) {
                for (int64_t i = 0; i < n; i += V::W) V::store(staged + r * n + i, r < nr ? V::load_f16(blk + r * stride + i) : V::zero());
            }
        }
        // Two queries at a time share each staged load.
        int64_t g = 0;
        for (; V::PAIRS && g + 2 <= n_x; g += 2) {
            typename V::vec acc0[ATTN_ROWS_BLOCK], acc1[ATTN_ROWS_BLOCK];
            for (int r = 0; r < ATTN_ROWS_BLOCK; r++) acc0[r] = acc1[r] = V::zero();
            for (int64_t i = 0; i < n; i += V::W) {
                const typename V::vec x0 = V::load(xf + g * n + i), x1 = V::load(xf + (g + 1) * n + i);
                for (int r = 0; r < ATTN_ROWS_BLOCK; r++) {
                    const typename V::vec k = V::load(staged + r * n + i);
                    acc0[r] = V::fmadd(x0, k, acc0[r]);
                    acc1[r] = V::fmadd(x1, k, acc1[r]);
                }
            }
            store_dots<V>(acc0, nr, out + g * out_stride + j);
            store_dots<V>(acc1, nr, out + (g + 1) * out_stride + j);
        }
        for (; g < n_x; g++) {
            typename V::vec acc[ATTN_ROWS_BLOCK];
            for (int r = 0; r < ATTN_ROWS_BLOCK; r++) acc[r] = V::zero();
            for (int64_t i = 0; i < n; i += V::W) {
                const typename V::vec xv = V::load(xf + g * n + i);
                for (int r = 0; r < ATTN_ROWS_BLOCK; r++) acc[r] = V::fmadd(xv, V::load(staged + r * n + i), acc[r]);
            }
            store_dots<V>(acc, nr, out + g * out_stride + j);
        }
    }
}

template <class V>
void dot_f16_rows_grouped(int64_t n, int64_t n_rows, int64_t n_x, const tern_fp16 * x, const tern_fp16 * rows,
                          int64_t stride, float * out, int64_t out_stride, dot_row_fn dot_row) {
    if (n % V::W != 0 || n > ATTN_ROWS_MAX_HEAD) {
        for (int64_t j = 0; j < n_rows; j++) {
            for (int64_t g = 0; g < n_x; g++) out[g * out_stride + j] = dot_row(n, x + g * n, rows + j * stride);
        }
        return;
    }
    const int64_t per_call = ATTN_ROWS_X_FLOATS / n;  // queries converted at a time
    for (int64_t g0 = 0; g0 < n_x; g0 += per_call) {
        dot_f16_rows_chunk<V>(n, n_rows, n_x - g0 < per_call ? n_x - g0 : per_call, x + g0 * n, rows, stride,
                              out + g0 * out_stride, out_stride);
    }
}

// One query's y [n] += p_r * row r for r < 8 in order (p_r == 0 skipped);
// row(r, i) gives lanes [i, i + W) of row r (staged floats, or F16 rows).
template <class V, class Row>
inline void mad_block(int64_t n, float * y, const Row & row, const float * p) {
    bool all = true;
    for (int r = 0; r < ATTN_ROWS_BLOCK; r++) all &= p[r] != 0.0f;
    if (all) {
        typename V::vec pv[ATTN_ROWS_BLOCK];
        for (int r = 0; r < ATTN_ROWS_BLOCK; r++) pv[r] = V::set1(p[r]);
        for (int64_t i = 0; i < n; i += V::W) {
            typename V::vec acc = V::load(y + i);
            for (int r = 0; r < ATTN_ROWS_BLOCK; r++) acc = V::add(acc, V::mul(pv[r], row(r, i)));
            V::store(y + i, acc);
        }
        return;
    }
    for (int r = 0; r < ATTN_ROWS_BLOCK; r++) {
        if (p[r] == 0.0f) continue;
        const typename V::vec pv = V::set1(p[r]);
        for (int64_t i = 0; i < n; i += V::W) V::store(y + i, V::add(V::load(y + i), V::mul(pv, row(r, i))));
    }
}

template <class V>
void mad_f16_rows_grouped(int64_t n, int64_t n_rows, int64_t n_y, float * y, const tern_fp16 * rows, int64_t stride,
                          const float * p, int64_t p_stride, mad_row_fn mad_row) {
    int64_t j = 0;
    if (n % V::W == 0 && n <= ATTN_ROWS_MAX_HEAD) {
        alignas(64) float staged[ATTN_ROWS_BLOCK * ATTN_ROWS_MAX_HEAD];
        for (; j + ATTN_ROWS_BLOCK <= n_rows; j += ATTN_ROWS_BLOCK) {
            const tern_fp16 * blk = rows + j * stride;
            if (n_y == 1) {  // nothing to share: straight from the rows
                mad_block<V>(n, y, [&](int r, int64_t i) { return V::load_f16(blk + r * stride + i); }, p + j);
                continue;
            }
            prefetch_rows(n, j, n_rows, rows, stride);
            stage_rows<V>(n, blk, stride, staged);
            const auto staged_row = [&](int r, int64_t i) { return V::load(staged + r * n + i); };
            for (int64_t g = 0; g < n_y; g++) mad_block<V>(n, y + g * n, staged_row, p + g * p_stride + j);
        }
    }
    for (; j < n_rows; j++) {
        for (int64_t g = 0; g < n_y; g++) {
            const float pj = p[g * p_stride + j];
            if (pj != 0.0f) mad_row(n, y + g * n, rows + j * stride, pj);
        }
    }
}

}  // namespace
}  // namespace tern
