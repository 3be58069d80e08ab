// The repacked Q4_K, Q5_K and Q6_K tiles of the 8-lane x86 sets (avx2:
// repack_kquant_avx2.cpp, avxvnni: repack_kquant_avxvnni.cpp) over
// repack_kquant.h's layout, written once for both: D is the set's integer
// product (int_dot_avx2.h: maddubs + madd, int_dot_avxvnni.h: vpdpbusd),
// compiled in each set's file with its flags. Header only, in an anonymous
// namespace (column_blocks.h says why).
//
// A group's 16 rows are two halves of 8 (one ymm each: row r of the half at
// bytes 4r..4r+3 of a chunk's 32-byte half), done one after the other per
// super-block (the second half's lines are then in L1). Per half, sub-block
// and activation column, all in exact integers:
//   p    = sum over D::quads16(u_max) of the sub-block's quads at a time of
//          D::mac(u, the activation's 4 values broadcast): avx2 int16 pair
//          sums (Q4_K u <= 15: 8 quads; Q5_K u <= 31: 4; Q6_K u <= 63: 2),
//          avxvnni int32 sums of the whole sub-block
//   isum = D::add_scaled(isum, p, scale): the scale times the row's partial
//          sum, in int32 (avx2 madd, avxvnni vpmulld)
// then Q4_K's and Q5_K's mins (imin = sum of min_j * bsum_j) and Q6_K's
// offset (32 * sum of scale_j * bsum_j) by D::madd_acc of two sub-blocks'
// int16 pairs against the activation's bsums (with int32 partial sums,
// D::PARTIAL32, Q6_K's sub-block sum starts at -32 * bsum_j instead). The
// float part is the scalar reference's (tensor/quants_k_dot.cpp), lane by lane:
//   Q6_K  sum = fma(d_a * d_w, isum, sum)
//   Q4_K, Q5_K  sum = fma(d_a * d_w, isum, sum); sum = fma(-(d_a * dmin_w), imin, sum)
// so every output has the reference's bits, whatever tile computes it.
//
// Tiles: one group x 1 column (decode) or 4 (prompts; a short last block of
// columns repeats its last column and stores only its own outputs).
#pragma once
#include <immintrin.h>
#include <string.h>
#include "cpu/kernels/column_blocks.h"
#include "cpu/kernels/repack_kquant.h"
#include "cpu/kernels/x86/k4_scales_x86.h"
#include "tensor/blocks.h"

namespace tern {
namespace {
namespace kquant_ymm {

using namespace repack_kquant;  // R, the offsets of the two layouts
const int MAX_COLS = 4;

inline __m256i load32(const uint8_t * p) { return _mm256_loadu_si256((const __m256i *) p); }

// Two int16 in one int32 lane: lo in bits 0..15, hi in bits 16..31.
inline int32_t pair16(int32_t lo, int32_t hi) { return (int32_t) (((uint32_t) hi << 16) | ((uint32_t) lo & 0xFFFF)); }

// int32 lanes lo, hi -> (lo's low int16, hi's low int16) per lane.
inline __m256i pairs16(__m256i lo, __m256i hi) { return _mm256_blend_epi16(lo, _mm256_slli_epi32(hi, 16), 0xAA); }

// ---- Q6_K ------------------------------------------------------------------

// u of half h's 8 rows, group gi (0..63: values 4gi..4gi+3) of a super-block.
inline __m256i q6_group(const uint8_t * sb, int gi, int h) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
    const __m256i l = load32(sb + Q6_LOW + 64 * (gi % 32) + 32 * h);
    const __m256i lo = gi < 32 ? _mm256_and_si256(l, m4) : _mm256_and_si256(_mm256_srli_epi16(l, 4), m4);
    const __m256i hb = load32(sb + Q6_HIGH + 64 * (gi % 16) + 32 * h);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(hb, 2 * (gi / 16)), m2);
    return _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4));
}

// The 8 int8 scales of half h's rows for sub-block j, as int32 lanes.
inline __m256i q6_scales(const uint8_t * sb, int j, int h) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (sb + Q6_SCALES + 16 * j + 8 * h)));
}

template <class D, int C>
void q6_group_tile(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * out, int64_t ldo, int nc) {
    constexpr int Q16 = D::quads16(63) < 4 ? D::quads16(63) : 4;
    __m256 acc[2][C];
    for (int h = 0; h < 2; h++) {
        for (int c = 0; c < C; c++) acc[h][c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += Q6_BYTES) {
        for (int h = 0; h < 2; h++) {
            __m256i isum[C];
            for (int c = 0; c < C; c++) isum[c] = _mm256_setzero_si256();
            for (int j = 0; j < 16; j++) {  // 16-value sub-blocks: groups 4j..4j+3
                const __m256i sc = D::scale_of(q6_scales(g, j, h));
                __m256i u[4];
                for (int t = 0; t < 4; t++) u[t] = q6_group(g, 4 * j + t, h);
                for (int c = 0; c < C; c++) {
                    const int8_t * q = a[c][b].qs + 16 * j;
                    for (int t0 = 0; t0 < 4; t0 += Q16) {
                        __m256i p = _mm256_setzero_si256();
                        if (D::PARTIAL32 && t0 == 0) p = _mm256_set1_epi32(-32 * a[c][b].bsums[j]);
                        for (int t = t0; t < t0 + Q16; t++) p = D::mac(p, u[t], D::bcast4(q + 4 * t));
                        isum[c] = D::add_scaled(isum[c], p, sc);
                    }
                }
            }
            if constexpr (!D::PARTIAL32) {
                // The offset: 32 * sum over j of scale_j * bsum_j, two sub-blocks per madd.
                __m256i corr[C];
                for (int c = 0; c < C; c++) corr[c] = _mm256_setzero_si256();
                for (int j = 0; j < 16; j += 2) {
                    const __m256i sp = pairs16(q6_scales(g, j, h), q6_scales(g, j + 1, h));
                    for (int c = 0; c < C; c++) {
                        const int16_t * bs = a[c][b].bsums + j;
                        corr[c] = D::madd_acc(corr[c], sp, _mm256_set1_epi32(pair16(bs[0], bs[1])));
                    }
                }
                for (int c = 0; c < C; c++) isum[c] = _mm256_sub_epi32(isum[c], _mm256_slli_epi32(corr[c], 5));
            }
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + Q6_D + 16 * h)));
            for (int c = 0; c < C; c++) {
                acc[h][c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(a[c][b].d), dw), _mm256_cvtepi32_ps(isum[c]), acc[h][c]);
            }
        }
    }
    for (int c = 0; c < nc; c++) {
        for (int h = 0; h < 2; h++) _mm256_storeu_ps(out + c * ldo + 8 * h, acc[h][c]);
    }
}

// ---- Q4_K, Q5_K ------------------------------------------------------------

// u of half h's 8 rows, sub-block j's quad t (values 32j + 4t..4t+3): chunk
// 8(j/2) + t, low nibbles for even j; P = k5_parts: the 5th bit is bit j of
// QH chunk t.
template <typename P>
inline __m256i k45_quad(const uint8_t * g, int j, int t, int h) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i q = load32(g + P::QS + 64 * (8 * (j / 2) + t) + 32 * h);
    __m256i u = (j & 1) ? _mm256_and_si256(_mm256_srli_epi16(q, 4), m4) : _mm256_and_si256(q, m4);
    if constexpr (P::HIGH) {  // bit j of each byte to bit 4
        const __m256i qh = load32(g + P::QH + 64 * t + 32 * h);
        const __m256i hb = j <= 4 ? _mm256_slli_epi16(qh, 4 - j) : _mm256_srli_epi16(qh, j - 4);
        u = _mm256_or_si256(u, _mm256_and_si256(hb, _mm256_set1_epi8(0x10)));
    }
    return u;
}

// P: k4_parts or k5_parts (repack_kquant.h).
template <class D, typename P, int C>
void k45_group_tile(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * out, int64_t ldo, int nc) {
    constexpr int Q16 = D::quads16(P::HIGH ? 31 : 15);
    __m256 acc[2][C];
    for (int h = 0; h < 2; h++) {
        for (int c = 0; c < C; c++) acc[h][c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += P::BYTES) {
        for (int h = 0; h < 2; h++) {
            // The 6-bit scales and mins of the 8 sub-blocks, per lane (tern_k4_scale_min).
            const uint8_t * sa = g + Q4_SCALES + 32 * h;
            __m256i sc[8], mn[8];
            k4_scales_mins(load32(sa), load32(sa + 64), load32(sa + 128), sc, mn);
            __m256i isum[C], imin[C];
            for (int c = 0; c < C; c++) isum[c] = imin[c] = _mm256_setzero_si256();
            for (int j = 0; j < 8; j++) {  // 32-value sub-blocks
                const __m256i s = D::scale_of(sc[j]);
                for (int t0 = 0; t0 < 8; t0 += Q16) {
                    __m256i p[C];
                    for (int c = 0; c < C; c++) p[c] = _mm256_setzero_si256();
                    for (int t = t0; t < t0 + Q16; t++) {
                        const __m256i u = k45_quad<P>(g, j, t, h);
                        for (int c = 0; c < C; c++) p[c] = D::mac(p[c], u, D::bcast4(a[c][b].qs + 32 * j + 4 * t));
                    }
                    for (int c = 0; c < C; c++) isum[c] = D::add_scaled(isum[c], p[c], s);
                }
            }
            for (int j = 0; j < 8; j += 2) {  // mins: two sub-blocks per madd
                const __m256i mp = pairs16(mn[j], mn[j + 1]);
                for (int c = 0; c < C; c++) {
                    const int16_t * bs = a[c][b].bsums + 2 * j;
                    imin[c] = D::madd_acc(imin[c], mp, _mm256_set1_epi32(pair16(bs[0] + bs[1], bs[2] + bs[3])));
                }
            }
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + Q4_D + 16 * h)));
            const __m256 dmw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + Q4_DMIN + 16 * h)));
            for (int c = 0; c < C; c++) {
                const __m256 da = _mm256_set1_ps(a[c][b].d);
                acc[h][c] = _mm256_fmadd_ps(_mm256_mul_ps(da, dw), _mm256_cvtepi32_ps(isum[c]), acc[h][c]);
                acc[h][c] = _mm256_fnmadd_ps(_mm256_mul_ps(da, dmw), _mm256_cvtepi32_ps(imin[c]), acc[h][c]);
            }
        }
    }
    for (int c = 0; c < nc; c++) {
        for (int h = 0; h < 2; h++) _mm256_storeu_ps(out + c * ldo + 8 * h, acc[h][c]);
    }
}

// ---- the tern_gemm_fn over whole groups -------------------------------------

// The tiles for gemm_groups: T::run<C>(nb, group, the C columns' Q8_K blocks, out, ldo, nv).
template <class D>
struct q6_tile {
    template <int C>
    static void run(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * o, int64_t ldo, int nc) { q6_group_tile<D, C>(nb, g, a, o, ldo, nc); }
};
template <class D, typename P>
struct k45_tile {
    template <int C>
    static void run(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * o, int64_t ldo, int nc) { k45_group_tile<D, P, C>(nb, g, a, o, ldo, nc); }
};

// The tern_gemm_fn over whole groups: T::run<C>(nb, group, the C activation
// columns' Q8_K blocks, out, ldo, nv) computes one group x C columns and
// stores the first nv; columns go in blocks of MAX_COLS, one MAX_COLS-column
// instance plus the 1-column one (for_padded_column_blocks).
template <class T>
void gemm_groups(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                 float * out, int64_t ldo) {
    const int64_t nb = k / QK_K, n_groups = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const size_t group_bytes = R * w_stride;
    for_padded_column_blocks<MAX_COLS>(nc, [&](auto cols, int64_t m, int nv) {
        constexpr int C = decltype(cols)::value;
        const block_q8_K * ap[C];
        for (int c = 0; c < C; c++) ap[c] = (const block_q8_K *) ((const uint8_t *) a + (m + (c < nv ? c : nv - 1)) * a_stride);
        for (int64_t gi = 0; gi < n_groups; gi++) T::template run<C>(nb, wb + gi * group_bytes, ap, out + m * ldo + gi * R, ldo, nv);
    });
}

// Installs a set's tiles for Q4_K, Q5_K and Q6_K (those compiled in).
template <class D>
void install(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_Q4_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q4_K, gemm_groups<k45_tile<D, k4_parts>>);
#endif
#if TERN_WITH_TYPE_Q5_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q5_K, gemm_groups<k45_tile<D, k5_parts>>);
#endif
#if TERN_WITH_TYPE_Q6_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q6_K, gemm_groups<q6_tile<D>>);
#endif
}

}  // namespace kquant_ymm
}  // namespace
}  // namespace tern
