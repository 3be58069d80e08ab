// The repacked legacy tiles of the 8-lane x86 sets (avx2: repack_avx2.cpp,
// avxvnni: repack_avxvnni.cpp) over repack_legacy.h's layout, written once
// for both: D is the set's integer product (int_dot_avx2.h: maddubs + madd,
// int_dot_avxvnni.h: vpdpbusd), compiled in each set's file with its flags.
// Header only, in an anonymous namespace (column_blocks.h says why).
//
// A group's 16 rows are two halves of 8 (one ymm each: row r of the half at
// bytes 4r..4r+3 of a chunk's 32-byte half). Per half, block and column,
// D::quads gives the rows' int32 sums of u . y over the block's 8 quads (u
// the unsigned levels, y the activation's 4 levels of a quad broadcast),
// started from -offset * (the activation block's sum):
//   Q4_0: u <= 15 (level + 8), offset 8;  Q5_0: u <= 31 (level + 16, the
//   high bit from the H chunk), offset 16;  Q4_1, Q5_1: no offset, plus
//   m_w * s_a;  Q8_0: u = q + 128, offset 128 (D::SIGNED_Q8: the set's own
//   tile instead, D::tile_q8_0).
// Integer sums are exact in any order, and the float part is the scalar
// reference's (acc = fma((float) sumi, d_w * d_a, acc), lane by lane), so
// every output equals the reference's bits whatever tile computes it.
//
// Tiles: prompts, one half (8 rows) x 4 columns (one instance per format, a
// short last block repeats its last column), both halves of a group in turn
// (the second reads the group's lines again from L1/L2).
// Decode (one column): both halves block by block, in one pass: a second pass
// over lines already in cache leaves the memory idle meanwhile (the
// prefetchers follow the demand stream), and one pass decoded 15-18% faster.
#pragma once
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include "cpu/kernels/column_blocks.h"
#include "cpu/kernels/repack_legacy.h"
#include "tensor/blocks.h"

namespace tern {
namespace {
namespace legacy_ymm {

using namespace repack_legacy;     // R, QK, L, the formats (fmt_*)
const int HALF = 8;                // rows per ymm
const int64_t SUM_BLOCKS = 1024;   // activation block sums kept on the stack (K <= 32768)

inline float f16(tern_fp16 h) { return _cvtsh_ss(h); }

// The 8 F16 scales of half h of a group's block, as floats.
inline __m256 half_scales(const uint8_t * g, int h) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + 16 * h))); }

// The largest u of a format.
template <typename F>
constexpr int u_max() { return F::kind == fmt_kind::q8 ? 255 : F::kind == fmt_kind::q5 ? 31 : 15; }

// u of half h's 8 rows for the 8 quads of a group's block.
template <typename F>
inline void half_levels(const uint8_t * g, int h, __m256i w[L]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    if constexpr (F::kind == fmt_kind::q8) {
        for (int l = 0; l < L; l++) w[l] = _mm256_loadu_si256((const __m256i *) (g + F::QS_AT + 64 * l + 32 * h));
    } else if constexpr (F::kind == fmt_kind::q5) {
        const __m256i hb = _mm256_loadu_si256((const __m256i *) (g + F::H_AT + 32 * h));
        for (int j = 0; j < 4; j++) {
            const __m256i z = _mm256_loadu_si256((const __m256i *) (g + F::QS_AT + 64 * j + 32 * h));
            // bits 3..4 of quad 4 + j's u sit in bits 2j..2j+1 of H
            const __m256i hs = j < 2 ? _mm256_slli_epi16(hb, 3 - 2 * j) : _mm256_srli_epi16(hb, 2 * j - 3);
            w[j] = _mm256_and_si256(z, _mm256_set1_epi8(0x1F));
            w[4 + j] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(z, 5), _mm256_set1_epi8(0x07)),
                                       _mm256_and_si256(hs, _mm256_set1_epi8(0x18)));
        }
    } else {
        for (int j = 0; j < 4; j++) {
            const __m256i z = _mm256_loadu_si256((const __m256i *) (g + F::QS_AT + 64 * j + 32 * h));
            w[j] = _mm256_and_si256(z, m4);
            w[4 + j] = _mm256_and_si256(_mm256_srli_epi16(z, 4), m4);
        }
    }
}

// NH halves from half h0 (rows 8h0..8h0 + 8NH - 1) of one group x C columns
// over nb blocks, of which the first nv are stored (a short last block of
// columns repeats its last one). sums: C rows of nb activation block sums
// (stride nb), or NULL (formats with an offset).
template <class D, typename F, int C, int NH>
void tile_halves(int64_t nb, const uint8_t * g, int h0, const uint8_t * a, size_t a_stride, const int32_t * sums,
                 float * out, int64_t ldo, int nv) {
    typedef typename F::act A;
    const uint8_t * col[C];
    for (int c = 0; c < C; c++) col[c] = a + (c < nv ? c : nv - 1) * a_stride;
    __m256 acc[NH][C];
    for (int hh = 0; hh < NH; hh++) {
        for (int c = 0; c < C; c++) acc[hh][c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
        for (int hh = 0; hh < NH; hh++) {
            __m256i w[L];
            half_levels<F>(g, h0 + hh, w);
            const __m256 dw = half_scales(g, h0 + hh);
            for (int c = 0; c < C; c++) {
                const A * ab = (const A *) col[c] + b;
                __m256i init = _mm256_setzero_si256();
                if constexpr (F::OFFSET != 0) {
                    init = _mm256_set1_epi32(-F::OFFSET * (sums ? sums[c * nb + b] : D::block_sum(ab->qs)));
                }
                const __m256i s = D::template quads<u_max<F>()>(init, w, ab->qs);
                acc[hh][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dw, _mm256_set1_ps(f16(ab->d))), acc[hh][c]);
                if constexpr (F::affine) {  // + m_w * s_a (Q4_1, Q5_1)
                    const __m256 mw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + F::M_AT + 16 * (h0 + hh))));
                    acc[hh][c] = _mm256_fmadd_ps(mw, _mm256_set1_ps(f16(ab->s)), acc[hh][c]);
                }
            }
        }
    }
    for (int hh = 0; hh < NH; hh++) {
        for (int c = 0; c < nv; c++) _mm256_storeu_ps(out + c * ldo + hh * HALF, acc[hh][c]);
    }
}

// The block sums of C activation columns (the last of nv real ones
// repeated), column c's at sums[c * nb]; NULL when they do not fit
// (SUM_BLOCKS: the tiles then sum each block where they use it).
template <class D, typename F, int C>
inline const int32_t * block_sums(int64_t nb, const uint8_t * a, size_t a_stride, int nv, int32_t * sums) {
    if (nb > SUM_BLOCKS) return nullptr;
    for (int c = 0; c < C; c++) {
        const typename F::act * ab = (const typename F::act *) (a + (c < nv ? c : nv - 1) * a_stride);
        for (int64_t b = 0; b < nb; b++) sums[c * nb + b] = D::block_sum(ab[b].qs);
    }
    return sums;
}

// C columns (the first nv of them stored) over n_groups groups.
template <class D, typename F, int C>
void column_block(int64_t nb, int64_t n_groups, const uint8_t * w, size_t group_bytes, const uint8_t * a, size_t a_stride,
                  float * out, int64_t ldo, int nv) {
    if constexpr (F::kind == fmt_kind::q8 && D::SIGNED_Q8) {
        for (int64_t gi = 0; gi < n_groups; gi++) {
            if constexpr (C == 1) D::template tile_q8_0<1, 2>(nb, w + gi * group_bytes, 0, a, a_stride, out + gi * R, ldo, 1);
            else for (int h = 0; h < 2; h++) D::template tile_q8_0<C, 1>(nb, w + gi * group_bytes, h, a, a_stride, out + gi * R + h * HALF, ldo, nv);
        }
    } else {
        // The activation's block sums (formats with an offset), once per call.
        int32_t sums[F::OFFSET != 0 ? C * SUM_BLOCKS : 1];
        const int32_t * s = F::OFFSET != 0 ? block_sums<D, F, C>(nb, a, a_stride, nv, sums) : nullptr;
        for (int64_t gi = 0; gi < n_groups; gi++) {
            if constexpr (C == 1) tile_halves<D, F, 1, 2>(nb, w + gi * group_bytes, 0, a, a_stride, s, out + gi * R, ldo, 1);
            else for (int h = 0; h < 2; h++) tile_halves<D, F, C, 1>(nb, w + gi * group_bytes, h, a, a_stride, s, out + gi * R + h * HALF, ldo, nv);
        }
    }
}

// The tern_gemm_fn over whole groups (kernel_set.h: gemm_repacked).
template <class D, typename F>
void gemm_repacked(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                   float * out, int64_t ldo) {
    const int64_t nb = k / QK, n_groups = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const uint8_t * ab = (const uint8_t *) a;
    const size_t group_bytes = R * w_stride;
    // One 4-column instance per format (code size).
    for_padded_column_blocks<4>(nc, [&](auto cols, int64_t m, int nv) {
        column_block<D, F, decltype(cols)::value>(nb, n_groups, wb, group_bytes, ab + m * a_stride, a_stride, out + m * ldo, ldo, nv);
    });
}

}  // namespace legacy_ymm
}  // namespace
}  // namespace tern
