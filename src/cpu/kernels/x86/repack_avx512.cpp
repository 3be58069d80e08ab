// Interleaved (repacked) legacy weights and their tiles, avx512 kernel set
// (kernel_set.h: repack_rows, repack, gemm_repacked, unpack_row): Q4_0 Q4_1
// Q5_0 Q5_1 Q8_0 IQ4_NL. Compiled with the avx512 target flags (F/BW/VL/DQ +
// VNNI): static code only.
//
// The layout (16-row groups, per quad one zmm of the 16 rows' unsigned
// levels) is repack_legacy.h's, shared with the avx2 set; the Q5 formats'
// quad 4 + j costs two shifts, an AND and a ternary-logic op.
// One VNNI dpbusd of a quad's zmm with the activation's 4 values broadcast
// makes the 16 rows' exact int32 quad sums. The unsigned offset (Q4_0 8, Q5_0
// 16, Q8_0 and IQ4_NL 128, Q4_1 Q5_1 0) comes back in int32 as the dpbusd
// chain's start, -offset * (sum of the activation's levels): per activation
// block (PER_BLOCK formats, once per call and column) or per quad (LANES8
// formats, per block and column).
//
// Float part: the scalar reference's operations (tensor/quants_legacy.cpp),
// lane by lane, so every output equals the reference's bits, whatever tile
// or thread computes it:
//   PER_BLOCK (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0)
//                               acc = fma((float) sumi, d_w * d_a, acc)
//                               (+ acc = fma(m_w, s_a, acc) for Q4_1 Q5_1)
//   LANES8 (IQ4_NL)             acc_l = fma(d_w * d_a, (float) lane_l, acc_l)
//                               for the 8 quads l, one zmm per quad; at the
//                               end ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))
//
// Tiles: one group x up to 4 activation columns (PER_BLOCK, LANES8 without
// offset) or 3 (LANES8 with offset: the quad sums cost registers). No
// software prefetch: each worker streams one contiguous run of groups
// (work_claim.h), which the hardware prefetchers follow; prefetching 8 KiB
// ahead made decode 4-18% slower then (it had helped Q8_0 by 7% while
// workers took alternating chunks). (Two
// groups per tile of one column, sharing the activation's broadcasts, were
// 10% faster on LANES8 weights in L3 and 15% slower streaming from DRAM,
// where decode is.) Prompt PER_BLOCK tiles take two groups x up to 4
// columns, each broadcast feeding both groups: 11% (qwen2.5-0.5b Q4_0) to
// 24% (tinyllama Q8_0) faster prefill on one thread; 6 or 8 columns gained
// nothing more.
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>
#include "tensor/blocks.h"
#include "tensor/quants.h"
#include "cpu/kernels/column_blocks.h"
#include "cpu/kernels/repack_legacy.h"

namespace tern {

// GCC 12 flags the deliberately undefined registers inside avx512fintrin.h
// (_mm512_undefined_*) as uninitialized when inlined here: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

using namespace repack_legacy;   // R, QK, L, the formats (fmt_*)
const int64_t SUM_BLOCKS = 1024;  // activation block sums kept on the stack (K <= 32768)

inline float f16(tern_fp16 h) { return _cvtsh_ss(h); }

inline __m512i bcast4(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// off * (the 8 quad sums of an activation block's levels), int32.
template <int off>
inline __m256i quad_sums(const int8_t * qs) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8((char) off), _mm256_loadu_si256((const __m256i *) qs));
}

// Sum of the 32 int8 levels of an activation block.
inline int32_t block_sum(const int8_t * qs) {
    const __m256i s = quad_sums<1>(qs);
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 1, 1, 1)));
    return _mm_cvtsi128_si32(h);
}

// ---- tiles -------------------------------------------------------------------

inline __m512i load64(const uint8_t * p) { return _mm512_loadu_si512((const void *) p); }
inline __m512 load_halves(const uint8_t * p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p)); }

// The 16 rows' unsigned levels of quad l of a group's block g.
template <typename F>
inline __m512i load_quad(const uint8_t * g, int l) {
    if constexpr (F::kind == fmt_kind::q8) {
        return load64(g + F::QS_AT + 64 * l);
    } else if constexpr (F::kind == fmt_kind::q5) {
        const __m512i z = load64(g + F::QS_AT + 64 * (l & 3));
        if (l < 4) return _mm512_and_si512(z, _mm512_set1_epi8(0x1F));
        // bits 0..2 from the chunk's bits 5..7, bits 3..4 from H's bits 2j..2j+1
        // (16-bit shifts: the bits kept never cross a byte)
        const int j = l - 4;
        const __m512i h = load64(g + F::H_AT);
        const __m512i hs = j < 2 ? _mm512_slli_epi16(h, 3 - 2 * j) : _mm512_srli_epi16(h, 2 * j - 3);
        return _mm512_ternarylogic_epi32(_mm512_srli_epi16(z, 5), _mm512_set1_epi8(0x07),
                                         _mm512_and_si512(hs, _mm512_set1_epi8(0x18)), 0xEA);  // (a & b) | c
    } else {
        __m512i z = load64(g + F::QS_AT + 64 * (l & 3));
        if (l >= 4) z = _mm512_srli_epi16(z, 4);
        z = _mm512_and_si512(z, _mm512_set1_epi8(0x0F));
        if constexpr (F::kind == fmt_kind::iq4nl) {
            // table value + 128 (1..241), in each 128-bit lane for vpshufb
            const __m512i table = _mm512_add_epi8(
                _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) tern_kvalues_iq4nl)), _mm512_set1_epi8((char) 0x80));
            z = _mm512_shuffle_epi8(table, z);
        }
        return z;
    }
}

// PER_BLOCK: G groups of 16 rows (group i at g + i * group_bytes) x C
// activation columns; each activation broadcast feeds the G groups' dpbusd.
// An output's operations and their order do not depend on G or C, so the
// bits do not either. sums: C rows of nb block sums (stride nb), or NULL to
// compute them here (formats with an offset).
template <typename F, int G, int C>
void tile_per_block(int64_t nb, const uint8_t * g, size_t group_bytes, const uint8_t * a, size_t a_stride,
                    const int32_t * sums, float * out, int64_t ldo) {
    typedef typename F::act A;
    __m512 acc[G][C];
    for (int i = 0; i < G; i++) {
        for (int c = 0; c < C; c++) acc[i][c] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
        __m512i s[G][C];
        for (int c = 0; c < C; c++) {
            const A * ab = (const A *) (a + c * a_stride) + b;
            __m512i init = _mm512_setzero_si512();
            if constexpr (F::OFFSET != 0) init = _mm512_set1_epi32(-F::OFFSET * (sums ? sums[c * nb + b] : block_sum(ab->qs)));
            for (int i = 0; i < G; i++) s[i][c] = init;
        }
        for (int l = 0; l < L; l++) {
            __m512i w[G];
            for (int i = 0; i < G; i++) w[i] = load_quad<F>(g + i * group_bytes, l);
            for (int c = 0; c < C; c++) {
                const __m512i y = bcast4(((const A *) (a + c * a_stride) + b)->qs + 4 * l);
                for (int i = 0; i < G; i++) s[i][c] = _mm512_dpbusd_epi32(s[i][c], w[i], y);
            }
        }
        for (int c = 0; c < C; c++) {
            const A * ab = (const A *) (a + c * a_stride) + b;
            const __m512 da = _mm512_set1_ps(f16(ab->d));
            for (int i = 0; i < G; i++) {
                const uint8_t * gi = g + i * group_bytes;
                acc[i][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[i][c]), _mm512_mul_ps(load_halves(gi), da), acc[i][c]);
                if constexpr (F::affine) acc[i][c] = _mm512_fmadd_ps(load_halves(gi + F::M_AT), _mm512_set1_ps(f16(ab->s)), acc[i][c]);
            }
        }
    }
    for (int i = 0; i < G; i++) {
        for (int c = 0; c < C; c++) _mm512_storeu_ps(out + c * ldo + i * R, acc[i][c]);
    }
}

// LANES8: one group of 16 rows x C activation columns, eight accumulators
// (one per quad) each.
template <typename F, int C>
void tile_lanes8(int64_t nb, const uint8_t * g, const uint8_t * a, size_t a_stride, float * out, int64_t ldo) {
    typedef typename F::act A;
    __m512 acc[C][L];
    __m512 summs[C];
    for (int c = 0; c < C; c++) {
        for (int l = 0; l < L; l++) acc[c][l] = _mm512_setzero_ps();
        summs[c] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
        // -offset * the activation's quad sums, per column (stored, then broadcast)
        alignas(32) int32_t ncorr[C][L];
        if constexpr (F::OFFSET != 0) {
            for (int c = 0; c < C; c++) {
                const __m256i q = quad_sums<F::OFFSET>(((const A *) (a + c * a_stride) + b)->qs);
                _mm256_store_si256((__m256i *) ncorr[c], _mm256_sub_epi32(_mm256_setzero_si256(), q));
            }
        }
        const __m512 dw = load_halves(g);
        __m512 d[C];
        for (int c = 0; c < C; c++) d[c] = _mm512_mul_ps(dw, _mm512_set1_ps(f16(((const A *) (a + c * a_stride) + b)->d)));
        for (int l = 0; l < L; l++) {
            const __m512i w = load_quad<F>(g, l);
            for (int c = 0; c < C; c++) {
                const __m512i init = F::OFFSET != 0 ? _mm512_set1_epi32(ncorr[c][l]) : _mm512_setzero_si512();
                const __m512i y = bcast4(((const A *) (a + c * a_stride) + b)->qs + 4 * l);
                const __m512 lane = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(init, w, y));
                acc[c][l] = _mm512_fmadd_ps(d[c], lane, acc[c][l]);
            }
        }
        if constexpr (F::affine) {
            const __m512 mw = load_halves(g + F::M_AT);
            for (int c = 0; c < C; c++) {
                const A * ab = (const A *) (a + c * a_stride) + b;
                summs[c] = _mm512_fmadd_ps(mw, _mm512_set1_ps(f16(ab->s)), summs[c]);
            }
        }
    }
    for (int c = 0; c < C; c++) {
        const __m512 * x = acc[c];
        __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(x[0], x[4]), _mm512_add_ps(x[2], x[6])),
                                 _mm512_add_ps(_mm512_add_ps(x[1], x[5]), _mm512_add_ps(x[3], x[7])));
        if constexpr (F::affine) s = _mm512_add_ps(s, summs[c]);
        _mm512_storeu_ps(out + c * ldo, s);
    }
}

// Activation columns per register tile: PER_BLOCK one accumulator per
// column, LANES8 eight (and then an offset's quad sums cost registers too).
template <typename F> constexpr int max_cols() { return F::lanes8 && F::OFFSET != 0 ? 3 : 4; }

template <typename F, int C>
void column_block(int64_t nb, int64_t n_groups, const uint8_t * w, size_t group_bytes, const uint8_t * a, size_t a_stride,
                  float * out, int64_t ldo) {
    if constexpr (F::lanes8) {
        for (int64_t gi = 0; gi < n_groups; gi++) tile_lanes8<F, C>(nb, w + gi * group_bytes, a, a_stride, out + gi * R, ldo);
    } else {
        // The activation's block sums (formats with an offset), once per call.
        typedef typename F::act A;
        const bool keep = F::OFFSET != 0 && nb <= SUM_BLOCKS;
        int32_t sums[F::OFFSET != 0 ? C * SUM_BLOCKS : 1];
        if (keep) {
            for (int c = 0; c < C; c++) {
                const A * ab = (const A *) (a + c * a_stride);
                for (int64_t b = 0; b < nb; b++) sums[c * nb + b] = block_sum(ab[b].qs);
            }
        }
        int64_t gi = 0;
        if constexpr (C > 1) {  // prompt: groups in pairs (decode streams one group at a time, see above)
            for (; gi + 2 <= n_groups; gi += 2) {
                tile_per_block<F, 2, C>(nb, w + gi * group_bytes, group_bytes, a, a_stride, keep ? sums : nullptr, out + gi * R, ldo);
            }
        }
        for (; gi < n_groups; gi++) {
            tile_per_block<F, 1, C>(nb, w + gi * group_bytes, group_bytes, a, a_stride, keep ? sums : nullptr, out + gi * R, ldo);
        }
    }
}

template <typename F>
void gemm_repacked(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                   float * out, int64_t ldo) {
    constexpr int MC = max_cols<F>();
    const int64_t nb = k / QK, n_groups = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const uint8_t * ab = (const uint8_t *) a;
    const size_t group_bytes = R * w_stride;
    for_column_blocks<MC>(nc, [&](auto cols, int64_t m) {
        column_block<F, decltype(cols)::value>(nb, n_groups, wb, group_bytes, ab + m * a_stride, a_stride, out + m * ldo, ldo);
    });
}

// This set's tiles for tern_set_repack_legacy_all.
struct tiles {
    template <typename F> static constexpr tern_gemm_fn gemm = gemm_repacked<F>;
    static const bool IQ4_NL = true;
};

}  // namespace

void tern_fill_repack_avx512(tern_kernel_set * ks) { tern_set_repack_legacy_all<tiles>(ks); }

}  // namespace tern
