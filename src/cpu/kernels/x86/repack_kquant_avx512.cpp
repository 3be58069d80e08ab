// Interleaved (repacked) Q4_K, Q5_K and Q6_K weights and their tiles, avx512 kernel
// set (kernel_set.h: repack_rows, repack, gemm_repacked). Compiled with the
// avx512 target flags (F/BW/VL/DQ + VNNI): static code only.
//
// The layout (16-row groups, lanes = rows) is repack_kquant.h's, shared with
// the avx2 set.
// One VNNI dpbusd with the activation's 4 values broadcast gives 16 rows'
// exact quad sums; per sub-block they are multiplied by the sub-block scales
// (int32 lanes), Q6_K's offset 32 comes back through the Q8_K bsums and Q4_K's
// and Q5_K's mins through bsums too, all in exact integers.
//
// Float part: the scalar reference's steps (tensor/quants_k_dot.cpp), lane by
// lane, super-blocks in order:
//   Q6_K  sum = fma(d_a * d_w, isum, sum)
//   Q4_K, Q5_K  sum = fma(d_a * d_w, isum, sum); sum = fma(-(d_a * dmin_w), mins, sum)
// so every output has the reference's bits, whatever tile computes it.
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <string.h>
#include "tensor/blocks.h"
#include "cpu/kernels/repack_kquant.h"
#include "cpu/kernels/x86/k4_scales_x86.h"

namespace tern {

// GCC 12 flags the deliberately undefined registers inside avx512fintrin.h
// (_mm512_undefined_*) as uninitialized when inlined here: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

using namespace repack_kquant;  // R, the offsets of the two layouts
const int MAX_COLS = 4;   // activation columns per register tile

inline __m512i bcast4(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

inline __m512i load64(const uint8_t * p) { return _mm512_loadu_si512((const void *) p); }

// ---- Q6_K ------------------------------------------------------------------

// u of the 16 rows' group g (0..63) of a super-block.
inline __m512i q6_group(const uint8_t * sb, int g) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m2 = _mm512_set1_epi8(0x03);
    const __m512i l = load64(sb + Q6_LOW + 64 * (g % 32));
    const __m512i lo = g < 32 ? _mm512_and_si512(l, m4) : _mm512_and_si512(_mm512_srli_epi16(l, 4), m4);
    const __m512i h = load64(sb + Q6_HIGH + 64 * (g % 16));
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(h, 2 * (g / 16)), m2);
    return _mm512_or_si512(lo, _mm512_slli_epi16(hi, 4));
}

template <int C>
void q6_group_tile(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * out, int64_t ldo, int nc) {
    __m512 acc[C];
    for (int c = 0; c < C; c++) acc[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++, g += Q6_BYTES) {
        __m512i isum[C];
        for (int c = 0; c < C; c++) isum[c] = _mm512_setzero_si512();
        for (int j = 0; j < 16; j++) {  // 16-value sub-blocks: groups 4j..4j+3
            // The super-block after next, a few lines per step: the hardware
            // prefetchers stop at page boundaries, which these groups cross often.
            for (int p = 0; p < 4; p++) _mm_prefetch((const char *) (g + 2 * Q6_BYTES + 64 * (4 * j + p)), _MM_HINT_T0);
            __m512i u[4];
            for (int t = 0; t < 4; t++) u[t] = q6_group(g, 4 * j + t);
            const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (g + Q6_SCALES + 16 * j)));
            for (int c = 0; c < C; c++) {
                const block_q8_K * ab = a[c] + b;
                __m512i s = _mm512_set1_epi32(-32 * ab->bsums[j]);
                for (int t = 0; t < 4; t++) s = _mm512_dpbusd_epi32(s, u[t], bcast4(ab->qs + 16 * j + 4 * t));
                isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(s, sc));
            }
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (g + Q6_D)));
        for (int c = 0; c < C; c++) {
            const __m512 d = _mm512_mul_ps(_mm512_set1_ps(a[c][b].d), dw);
            acc[c] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(isum[c]), acc[c]);
        }
    }
    for (int c = 0; c < nc; c++) _mm512_storeu_ps(out + c * ldo, acc[c]);
}

// ---- Q4_K, Q5_K ------------------------------------------------------------

// P: k4_parts or k5_parts (repack_kquant.h). Q5_K's 5th bits: chunk t of QH
// holds bit j for sub-block j's quad t, kept in 8 registers per super-block.
template <typename P, int C>
void k45_group_tile(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * out, int64_t ldo, int nc) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), bit4 = _mm512_set1_epi8(0x10);
    constexpr int LINES = (int) (P::BYTES / 64 + 7) / 8;  // prefetched per sub-block
    __m512 acc[C];
    for (int c = 0; c < C; c++) acc[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++, g += P::BYTES) {
        // The 6-bit scales and mins of the 8 sub-blocks, per lane (tern_k4_scale_min).
        __m512i sc[8], mn[8];
        k4_scales_mins(load64(g + Q4_SCALES), load64(g + Q4_SCALES + 64), load64(g + Q4_SCALES + 128), sc, mn);
        __m512i qh[P::HIGH ? 8 : 1];
        if constexpr (P::HIGH) {
            for (int t = 0; t < 8; t++) qh[t] = load64(g + P::QH + 64 * t);
        }
        __m512i isum[C], imin[C];
        for (int c = 0; c < C; c++) isum[c] = imin[c] = _mm512_setzero_si512();
        for (int j = 0; j < 8; j++) {  // 32-value sub-blocks: chunk 8(j/2) + t, low nibbles for even j
            // The super-block after next, a few lines per step (see Q6_K).
            for (int p = 0; p < LINES; p++) _mm_prefetch((const char *) (g + 2 * P::BYTES + 64 * (LINES * j + p)), _MM_HINT_T0);
            __m512i u[8];
            for (int t = 0; t < 8; t++) {
                const __m512i q = load64(g + P::QS + 64 * (8 * (j / 2) + t));
                u[t] = (j & 1) ? _mm512_and_si512(_mm512_srli_epi16(q, 4), m4) : _mm512_and_si512(q, m4);
                if constexpr (P::HIGH) {  // bit j of each byte to bit 4
                    const __m512i h = j <= 4 ? _mm512_slli_epi16(qh[t], 4 - j) : _mm512_srli_epi16(qh[t], j - 4);
                    u[t] = _mm512_or_si512(u[t], _mm512_and_si512(h, bit4));
                }
            }
            for (int c = 0; c < C; c++) {
                const block_q8_K * ab = a[c] + b;
                __m512i s = _mm512_setzero_si512();
                for (int t = 0; t < 8; t++) s = _mm512_dpbusd_epi32(s, u[t], bcast4(ab->qs + 32 * j + 4 * t));
                isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(s, sc[j]));
                const int32_t bs = (int32_t) ab->bsums[2 * j] + ab->bsums[2 * j + 1];
                imin[c] = _mm512_add_epi32(imin[c], _mm512_mullo_epi32(mn[j], _mm512_set1_epi32(bs)));
            }
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (g + Q4_D)));
        const __m512 dmw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (g + Q4_DMIN)));
        for (int c = 0; c < C; c++) {
            const __m512 da = _mm512_set1_ps(a[c][b].d);
            acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(da, dw), _mm512_cvtepi32_ps(isum[c]), acc[c]);
            acc[c] = _mm512_fnmadd_ps(_mm512_mul_ps(da, dmw), _mm512_cvtepi32_ps(imin[c]), acc[c]);
        }
    }
    for (int c = 0; c < nc; c++) _mm512_storeu_ps(out + c * ldo, acc[c]);
}

// ---- the tern_gemm_fn over whole groups -------------------------------------

template <int C>
struct q6_tile { static void run(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * o, int64_t ldo, int nc) { q6_group_tile<C>(nb, g, a, o, ldo, nc); } };
template <int C>
struct q4_tile { static void run(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * o, int64_t ldo, int nc) { k45_group_tile<k4_parts, C>(nb, g, a, o, ldo, nc); } };
template <int C>
struct q5_tile { static void run(int64_t nb, const uint8_t * g, const block_q8_K * const * a, float * o, int64_t ldo, int nc) { k45_group_tile<k5_parts, C>(nb, g, a, o, ldo, nc); } };

}  // namespace

void tern_fill_repack_kquant_avx512(tern_kernel_set * ks) {
#if TERN_WITH_TYPE_Q4_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q4_K, gemm_groups<q4_tile, MAX_COLS>);
#endif
#if TERN_WITH_TYPE_Q5_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q5_K, gemm_groups<q5_tile, MAX_COLS>);
#endif
#if TERN_WITH_TYPE_Q6_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q6_K, gemm_groups<q6_tile, MAX_COLS>);
#endif
}

}  // namespace tern
