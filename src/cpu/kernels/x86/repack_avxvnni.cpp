// Interleaved (repacked) legacy weights, avxvnni kernel set (kernel_set.h:
// repack_rows, repack, gemm_repacked, unpack_row): Q4_0 Q4_1 Q5_0 Q5_1 Q8_0.
// Compiled with the avxvnni target flags (AVX2 + FMA + F16C + AVX-VNNI):
// static code only.
//
// The layout is repack_legacy.h's (the avx2 and avx512 sets read it too);
// the integer part is VEX vpdpbusd (int_dot_avxvnni.h): one instruction per
// quad and 8 rows, exact in int32, where the avx2 set spends a maddubs, an
// int16 add and part of a madd. Q8_0 reads its stored u = q + 128 like the
// other formats (offset 128, no sign trick). Float steps: the scalar
// reference's, lane by lane (acc = fma((float) sumi, d_w * d_a, acc), + fma(m_w,
// s_a, acc) for Q4_1 Q5_1), so every output has the reference's bits.
//
// Tiles (one group = 16 rows = two ymm halves of 8):
//   tile16 (decode, and prompts of the nibble and Q8_0 formats): both halves
//     per quad, so each activation broadcast feeds two vpdpbusd, x C = 1 or
//     4 columns. Against the avx2 tiles with the same instruction (x86/
//     legacy_ymm_x86.h, one half at a time, the block's 8 quads preloaded):
//     decode Q4_0 0.43 -> 0.31 ns per row and block, Q8_0 0.43 -> 0.27,
//     prompts (64 columns) Q4_0 0.25 -> 0.20 (one vpdpbusd per cycle: the
//     ceiling here), Q8_0 0.24 -> 0.20 (L2-resident weights, Zen 5).
//   Q5_0 and Q5_1 prompts: legacy_ymm_x86.h's half tile (its 8 quads
//     preloaded, 4 columns), whose levels cost 7 operations a quad: tile16's
//     two halves x 4 columns leave no registers to keep them (0.34 against
//     0.28 ns).
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include "cpu/kernels/x86/int_dot_avxvnni.h"
#include "cpu/kernels/x86/legacy_ymm_x86.h"

namespace tern {

namespace {

using namespace legacy_ymm;

struct dot : int_dot_avxvnni {
    static const bool SIGNED_Q8 = false;
};

// u of half h's 8 rows, quad l of a group's block.
template <typename F>
inline __m256i quad_u(const uint8_t * g, int h, int l) {
    if constexpr (F::kind == fmt_kind::q8) {
        return _mm256_loadu_si256((const __m256i *) (g + F::QS_AT + 64 * l + 32 * h));
    } else if constexpr (F::kind == fmt_kind::q5) {
        const __m256i z = _mm256_loadu_si256((const __m256i *) (g + F::QS_AT + 64 * (l & 3) + 32 * h));
        if (l < 4) return _mm256_and_si256(z, _mm256_set1_epi8(0x1F));
        // bits 0..2 from the chunk's bits 5..7, bits 3..4 from H's bits 2j..2j+1
        const int j = l - 4;
        const __m256i hb = _mm256_loadu_si256((const __m256i *) (g + F::H_AT + 32 * h));
        const __m256i hs = j < 2 ? _mm256_slli_epi16(hb, 3 - 2 * j) : _mm256_srli_epi16(hb, 2 * j - 3);
        return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(z, 5), _mm256_set1_epi8(0x07)),
                               _mm256_and_si256(hs, _mm256_set1_epi8(0x18)));
    } else {
        __m256i z = _mm256_loadu_si256((const __m256i *) (g + F::QS_AT + 64 * (l & 3) + 32 * h));
        if (l >= 4) z = _mm256_srli_epi16(z, 4);
        return _mm256_and_si256(z, _mm256_set1_epi8(0x0F));
    }
}

// One group (16 rows) x C columns over nb blocks, the first nv stored (a
// short last block of columns repeats its last one). sums: as block_sums.
template <typename F, int C>
void tile16(int64_t nb, const uint8_t * g, const uint8_t * a, size_t a_stride, const int32_t * sums, float * out, int64_t ldo, int nv) {
    typedef typename F::act A;
    const A * col[C];
    for (int c = 0; c < C; c++) col[c] = (const A *) (a + (c < nv ? c : nv - 1) * a_stride);
    __m256 acc[2][C];
    for (int h = 0; h < 2; h++) {
        for (int c = 0; c < C; c++) acc[h][c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
        __m256i s[2][C];  // int32 row sums of the two halves, from -offset * the block's sum
        for (int c = 0; c < C; c++) {
            __m256i init = _mm256_setzero_si256();
            if constexpr (F::OFFSET != 0) init = _mm256_set1_epi32(-F::OFFSET * (sums ? sums[c * nb + b] : dot::block_sum(col[c][b].qs)));
            s[0][c] = s[1][c] = init;
        }
        for (int l = 0; l < L; l++) {
            const __m256i u0 = quad_u<F>(g, 0, l), u1 = quad_u<F>(g, 1, l);
            for (int c = 0; c < C; c++) {
                const __m256i y = dot::bcast4(col[c][b].qs + 4 * l);
                s[0][c] = _mm256_dpbusd_avx_epi32(s[0][c], u0, y);
                s[1][c] = _mm256_dpbusd_avx_epi32(s[1][c], u1, y);
            }
        }
        for (int h = 0; h < 2; h++) {
            const __m256 dw = half_scales(g, h);
            for (int c = 0; c < C; c++) {
                acc[h][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[h][c]), _mm256_mul_ps(dw, _mm256_set1_ps(f16(col[c][b].d))), acc[h][c]);
                if constexpr (F::affine) {  // + m_w * s_a (Q4_1, Q5_1)
                    const __m256 mw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + F::M_AT + 16 * h)));
                    acc[h][c] = _mm256_fmadd_ps(mw, _mm256_set1_ps(f16(col[c][b].s)), acc[h][c]);
                }
            }
        }
    }
    for (int h = 0; h < 2; h++) {
        for (int c = 0; c < nv; c++) _mm256_storeu_ps(out + c * ldo + h * HALF, acc[h][c]);
    }
}

template <typename F>
void gemm_vnni(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                   float * out, int64_t ldo) {
    const int64_t nb = k / QK, n_groups = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const size_t group_bytes = R * w_stride;
    // One 4-column prompt instance per format, and the decode one (code size).
    for_padded_column_blocks<4>(nc, [&](auto cols, int64_t m, int nv) {
        constexpr int C = decltype(cols)::value;
        const uint8_t * am = (const uint8_t *) a + m * a_stride;
        if constexpr (C > 1 && F::kind == fmt_kind::q5) {
            column_block<dot, F, C>(nb, n_groups, wb, group_bytes, am, a_stride, out + m * ldo, ldo, nv);
        } else {
            int32_t sums[F::OFFSET != 0 ? C * SUM_BLOCKS : 1];
            const int32_t * s = F::OFFSET != 0 ? block_sums<dot, F, C>(nb, am, a_stride, nv, sums) : nullptr;
            for (int64_t gi = 0; gi < n_groups; gi++) tile16<F, C>(nb, wb + gi * group_bytes, am, a_stride, s, out + m * ldo + gi * R, ldo, nv);
        }
    });
}

// This set's tiles for tern_set_repack_legacy_all.
struct tiles {
    template <typename F> static constexpr tern_gemm_fn gemm = gemm_vnni<F>;
    static const bool IQ4_NL = false;  // LANES8: its own float order (the avx512 set has a tile)
};

}  // namespace

void tern_fill_repack_avxvnni(tern_kernel_set * ks) { tern_set_repack_legacy_all<tiles>(ks); }

}  // namespace tern
