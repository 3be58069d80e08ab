// Interleaved (repacked) Q4_K, Q5_K and Q6_K weights, avxvnni kernel set
// (kernel_set.h: repack_rows, repack, gemm_repacked, unpack_row). Compiled
// with the avxvnni target flags (AVX2 + FMA + F16C + AVX-VNNI): static code
// only.
//
// The layout is repack_kquant.h's (the avx2 and avx512 sets read it too).
// Integer part with VEX vpdpbusd (int_dot_avxvnni.h): a sub-block's quads
// summed in int32 by one instruction each (the avx2 set: a maddubs and an
// int16 add per quad, a madd per 2-8 quads), the sum times the sub-block
// scale by vpmulld; Q6_K's offset starts each sub-block sum (-32 * bsum_j,
// so (u - 32) . y is summed); Q4_K's and Q5_K's mins by vpdpwssd of two
// sub-blocks' int16 pairs against the activation's bsums. Float steps: the
// scalar reference's (tensor/quants_k_dot.cpp), lane by lane,
//   Q6_K  sum = fma(d_a * d_w, isum, sum)
//   Q4_K, Q5_K  sum = fma(d_a * d_w, isum, sum); sum = fma(-(d_a * dmin_w), imin, sum)
// so every output has the reference's bits, whatever tile computes it.
//
// Tiles (one group = 16 rows = two ymm halves of 8), per super-block:
//   tile16 (decode; Q4_K and Q6_K prompts): both halves per quad, each
//     activation broadcast feeding two vpdpbusd, x C = 1 or 4 columns; a
//     single column (decode) sums Q4_K's even and odd quads apart (two
//     dependency chains of 4, not one of 8: 0.52 -> 0.36 ns per row and
//     32 values). Against x86/kquant_ymm_x86.h's half tiles with the same
//     instructions: decode Q5_K 1.15 -> 0.63 ns, Q6_K 1.06 -> 0.91, prompts
//     (64 columns) Q4_K 0.25 -> 0.21, Q6_K 0.40 -> 0.38 (L2-resident
//     weights, Zen 5).
//   Q5_K prompts: kquant_ymm_x86.h's half tile (4 columns): its fifth bits
//     cost 4 operations a quad, which tile16's two halves x 4 columns have no
//     registers left for (0.43 against 0.31 ns).
#include "cpu/kernels/kernel_set.h"

#include "cpu/kernels/x86/int_dot_avxvnni.h"
#include "cpu/kernels/x86/kquant_ymm_x86.h"

namespace tern {

namespace {

using namespace kquant_ymm;
typedef int_dot_avxvnni D;

inline __m256i dp(__m256i s, __m256i u, __m256i y) { return _mm256_dpbusd_avx_epi32(s, u, y); }

template <int C>
void q6_tile16(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * out, int64_t ldo, int nc) {
    __m256 acc[2][C];
    for (int h = 0; h < 2; h++) {
        for (int c = 0; c < C; c++) acc[h][c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += Q6_BYTES) {
        __m256i isum[2][C];
        for (int h = 0; h < 2; h++) {
            for (int c = 0; c < C; c++) isum[h][c] = _mm256_setzero_si256();
        }
        for (int j = 0; j < 16; j++) {  // 16-value sub-blocks: groups 4j..4j+3
            __m256i p[2][C];
            for (int c = 0; c < C; c++) p[0][c] = p[1][c] = _mm256_set1_epi32(-32 * a[c][b].bsums[j]);
            for (int t = 0; t < 4; t++) {
                const __m256i u0 = q6_group(g, 4 * j + t, 0), u1 = q6_group(g, 4 * j + t, 1);
                for (int c = 0; c < C; c++) {
                    const __m256i y = D::bcast4(a[c][b].qs + 16 * j + 4 * t);
                    p[0][c] = dp(p[0][c], u0, y);
                    p[1][c] = dp(p[1][c], u1, y);
                }
            }
            for (int h = 0; h < 2; h++) {
                const __m256i sc = q6_scales(g, j, h);
                for (int c = 0; c < C; c++) isum[h][c] = _mm256_add_epi32(isum[h][c], _mm256_mullo_epi32(p[h][c], sc));
            }
        }
        for (int h = 0; h < 2; h++) {
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + Q6_D + 16 * h)));
            for (int c = 0; c < C; c++) {
                acc[h][c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(a[c][b].d), dw), _mm256_cvtepi32_ps(isum[h][c]), acc[h][c]);
            }
        }
    }
    for (int c = 0; c < nc; c++) {
        for (int h = 0; h < 2; h++) _mm256_storeu_ps(out + c * ldo + 8 * h, acc[h][c]);
    }
}

// P: k4_parts or k5_parts (repack_kquant.h).
template <typename P, int C>
void k45_tile16(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * out, int64_t ldo, int nc) {
    constexpr bool SPLIT = C == 1 && !P::HIGH;  // decode Q4_K: even and odd quads apart
    __m256 acc[2][C];
    for (int h = 0; h < 2; h++) {
        for (int c = 0; c < C; c++) acc[h][c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += P::BYTES) {
        // The 6-bit scales and mins of the 8 sub-blocks, per lane (tern_k4_scale_min).
        __m256i sc[2][8], mn[2][8];
        for (int h = 0; h < 2; h++) {
            const uint8_t * sa = g + Q4_SCALES + 32 * h;
            k4_scales_mins(load32(sa), load32(sa + 64), load32(sa + 128), sc[h], mn[h]);
        }
        __m256i isum[2][C];
        for (int h = 0; h < 2; h++) {
            for (int c = 0; c < C; c++) isum[h][c] = _mm256_setzero_si256();
        }
        for (int j = 0; j < 8; j++) {  // 32-value sub-blocks
            __m256i p[2][C], odd[2][C];
            for (int c = 0; c < C; c++) p[0][c] = p[1][c] = odd[0][c] = odd[1][c] = _mm256_setzero_si256();
            for (int t = 0; t < 8; t++) {
                const __m256i u0 = k45_quad<P>(g, j, t, 0), u1 = k45_quad<P>(g, j, t, 1);
                for (int c = 0; c < C; c++) {
                    const __m256i y = D::bcast4(a[c][b].qs + 32 * j + 4 * t);
                    if (SPLIT && (t & 1)) {
                        odd[0][c] = dp(odd[0][c], u0, y);
                        odd[1][c] = dp(odd[1][c], u1, y);
                    } else {
                        p[0][c] = dp(p[0][c], u0, y);
                        p[1][c] = dp(p[1][c], u1, y);
                    }
                }
            }
            for (int h = 0; h < 2; h++) {
                for (int c = 0; c < C; c++) {
                    const __m256i s = SPLIT ? _mm256_add_epi32(p[h][c], odd[h][c]) : p[h][c];
                    isum[h][c] = _mm256_add_epi32(isum[h][c], _mm256_mullo_epi32(s, sc[h][j]));
                }
            }
        }
        __m256i imin[2][C];  // mins: two sub-blocks per vpdpwssd
        for (int c = 0; c < C; c++) {
            const int16_t * bs = a[c][b].bsums;
            imin[0][c] = imin[1][c] = _mm256_setzero_si256();
            for (int j = 0; j < 8; j += 2) {
                const __m256i bp = _mm256_set1_epi32(pair16(bs[2 * j] + bs[2 * j + 1], bs[2 * j + 2] + bs[2 * j + 3]));
                for (int h = 0; h < 2; h++) imin[h][c] = D::madd_acc(imin[h][c], pairs16(mn[h][j], mn[h][j + 1]), bp);
            }
        }
        for (int h = 0; h < 2; h++) {
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + Q4_D + 16 * h)));
            const __m256 dmw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + Q4_DMIN + 16 * h)));
            for (int c = 0; c < C; c++) {
                const __m256 da = _mm256_set1_ps(a[c][b].d);
                acc[h][c] = _mm256_fmadd_ps(_mm256_mul_ps(da, dw), _mm256_cvtepi32_ps(isum[h][c]), acc[h][c]);
                acc[h][c] = _mm256_fnmadd_ps(_mm256_mul_ps(da, dmw), _mm256_cvtepi32_ps(imin[h][c]), acc[h][c]);
            }
        }
    }
    for (int c = 0; c < nc; c++) {
        for (int h = 0; h < 2; h++) _mm256_storeu_ps(out + c * ldo + 8 * h, acc[h][c]);
    }
}

// The tiles for kquant_ymm::gemm_groups: T::run<C>(nb, group, columns, out, ldo, nv).
struct q6_tiles {
    template <int C>
    static void run(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * o, int64_t ldo, int nv) { q6_tile16<C>(nb, g, a, o, ldo, nv); }
};
template <typename P>
struct k45_tiles {
    template <int C>
    static void run(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * o, int64_t ldo, int nv) {
        if constexpr (C > 1 && P::HIGH) k45_group_tile<D, P, C>(nb, g, a, o, ldo, nv);  // Q5_K prompts
        else k45_tile16<P, C>(nb, g, a, o, ldo, nv);
    }
};

}  // namespace

void tern_fill_repack_kquant_avxvnni(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_Q4_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q4_K, gemm_groups<k45_tiles<k4_parts>>);
#endif
#if TERN_WITH_TYPE_Q5_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q5_K, gemm_groups<k45_tiles<k5_parts>>);
#endif
#if TERN_WITH_TYPE_Q6_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q6_K, gemm_groups<q6_tiles>);
#endif
}

}  // namespace tern
