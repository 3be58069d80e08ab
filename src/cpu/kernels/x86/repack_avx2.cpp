// Interleaved (repacked) legacy weights, avx2 kernel set (kernel_set.h:
// repack_rows, repack, gemm_repacked, unpack_row): Q4_0 Q4_1 Q5_0 Q5_1 Q8_0. Compiled
// with the avx2 target flags (AVX2 + FMA + F16C): static code only.
//
// Why: in the file layout a decode tile reads 16 rows side by side, 16
// streams a few hundred bytes apart, and on this set's one-column path that
// read 15-16 GB/s where the repacked avx512 tiles read the same memory at
// 30+ (qwen2.5-0.5b Q4_0, 2 threads: 43 t/s against llama.cpp's avx2 build's
// 72). Repacked, a group is one contiguous run (repack_legacy.h: 16 rows,
// per quad the rows' four unsigned levels side by side), the same layout the
// avx512 set reads, so one repack serves both.
//
// A group's 16 rows are two halves of 8 (one ymm each: row r of the half at
// bytes 4r..4r+3 of the chunk's 32-byte half). Per half and block:
//   Q4_0: u <= 15 (level + 8); one maddubs of a quad's u with the
//         activation's 4 values broadcast gives two pair sums per row; the
//         8 quads add up in int16 (at most 8 * 2 * 15 * 128 = 30720), one
//         madd makes the int32 row totals, and -8 * (the activation block's
//         sum) takes the offset back.
//   Q5_0: the same with u <= 31 (level + 16, the high bit from the H chunk)
//         and -16 * sum: 4 quads at most per int16 sum (31744), two madds.
//   Q4_1, Q5_1: as Q4_0 and Q5_0 without an offset, plus m_w * s_a.
//   Q8_0: u = q + 128 turned back into q (xor 0x80); maddubs(|q|, the
//         activation's 4 values with q's signs) gives q * a in int16 pairs
//         (exact: activation levels are never -128, kernel_set.h), one madd
//         per quad makes the row sums in int32. (Widening q and a to int16
//         instead, as before, ran prompts 1.5x slower.)
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
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>
#include "cpu/kernels/column_blocks.h"
#include "cpu/kernels/repack_legacy.h"
#include "cpu/kernels/x86/block_sum_avx2.h"
#include "tensor/blocks.h"

namespace tern {

namespace {

using namespace repack_legacy;   // R, QK, L, the formats (fmt_*)
const int HALF = 8;                // rows per ymm
const int64_t SUM_BLOCKS = 1024;   // activation block sums kept on the stack (K <= 32768)

inline float f16(tern_fp16 h) { return _cvtsh_ss(h); }

inline int32_t rd32(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

// The 8 F16 scales of half h of a group's block, as floats.
inline __m256 half_scales(const uint8_t * g, int h) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (g + 16 * h))); }

inline int32_t block_sum(const int8_t * qs) { return act_block_sum_avx2(qs); }

// u of half h's 8 rows for the 8 quads of a group's block (Q4_0, Q5_0).
template <typename F>
inline void half_levels(const uint8_t * g, int h, __m256i w[L]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    if constexpr (F::kind == fmt_kind::q5) {
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

// Q4_0 Q4_1 Q5_0 Q5_1: NH halves from half h0 (rows 8h0..8h0 + 8NH - 1) of
// one group x C columns over nb blocks, of which the first nv are stored (a
// short last block of columns repeats its last one). sums: C rows of nb
// activation block sums (stride nb), or NULL (formats with an offset).
template <typename F, int C, int NH>
void tile_nibbles(int64_t nb, const uint8_t * g, int h0, const uint8_t * a, size_t a_stride, const int32_t * sums,
                  float * out, int64_t ldo, int nv) {
    const __m256i ones = _mm256_set1_epi16(1);
    // int16 pair sums: Q4_0 u <= 15, 8 quads <= 8 * 2 * 15 * 128 = 30720; Q5_0
    // u <= 31, 4 quads <= 31744, so its two halves of the block go apart.
    constexpr int Q16 = F::kind == fmt_kind::q5 ? 4 : 8;
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
                __m256i s;
                for (int l0 = 0; l0 < L; l0 += Q16) {
                    __m256i s16 = _mm256_maddubs_epi16(w[l0], _mm256_set1_epi32(rd32(ab->qs + 4 * l0)));
                    for (int l = l0 + 1; l < l0 + Q16; l++) s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(w[l], _mm256_set1_epi32(rd32(ab->qs + 4 * l))));
                    s = l0 == 0 ? _mm256_madd_epi16(s16, ones) : _mm256_add_epi32(s, _mm256_madd_epi16(s16, ones));
                }
                if constexpr (F::OFFSET != 0) {
                    const int32_t sum = sums ? sums[c * nb + b] : block_sum(ab->qs);
                    s = _mm256_add_epi32(s, _mm256_set1_epi32(-F::OFFSET * sum));
                }
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

// Q8_0: NH halves from half h0 of one group x C columns over nb blocks, the
// first nv stored (as tile_nibbles). q = u ^ 0x80 is the file's level; one
// maddubs(|q|, sign(a, q)) per quad gives q * a in int16 pairs, exact because
// |q| <= 128 and |a| <= 127 (quantize_act never writes -128): a pair is at
// most 2 * 128 * 127 = 32512. One madd per quad makes the int32 row sums.
template <int C, int NH>
void tile_q8_0(int64_t nb, const uint8_t * g, int h0, const uint8_t * a, size_t a_stride, float * out, int64_t ldo, int nv) {
    typedef fmt_q8_0 F;
    const __m256i flip = _mm256_set1_epi8((char) 0x80), ones = _mm256_set1_epi16(1);
    const block_q8_0 * col[C];
    for (int c = 0; c < C; c++) col[c] = (const block_q8_0 *) (a + (c < nv ? c : nv - 1) * a_stride);
    __m256 acc[NH][C];
    for (int hh = 0; hh < NH; hh++) {
        for (int c = 0; c < C; c++) acc[hh][c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
        for (int hh = 0; hh < NH; hh++) {
            const int h = h0 + hh;
            __m256i s[C];  // int32 row sums of the half
            for (int c = 0; c < C; c++) s[c] = _mm256_setzero_si256();
            for (int l = 0; l < L; l++) {
                const __m256i q = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (g + F::QS_AT + 64 * l + 32 * h)), flip);
                const __m256i mag = _mm256_abs_epi8(q);
                for (int c = 0; c < C; c++) {
                    const __m256i y = _mm256_sign_epi8(_mm256_set1_epi32(rd32(col[c][b].qs + 4 * l)), q);
                    s[c] = _mm256_add_epi32(s[c], _mm256_madd_epi16(_mm256_maddubs_epi16(mag, y), ones));
                }
            }
            const __m256 dw = half_scales(g, h);
            for (int c = 0; c < C; c++) {
                acc[hh][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[c]), _mm256_mul_ps(dw, _mm256_set1_ps(f16(col[c][b].d))), acc[hh][c]);
            }
        }
    }
    for (int hh = 0; hh < NH; hh++) {
        for (int c = 0; c < nv; c++) _mm256_storeu_ps(out + c * ldo + hh * HALF, acc[hh][c]);
    }
}

// C columns (the first nv of them stored) over n_groups groups.
template <typename F, int C>
void column_block(int64_t nb, int64_t n_groups, const uint8_t * w, size_t group_bytes, const uint8_t * a, size_t a_stride,
                  float * out, int64_t ldo, int nv) {
    if constexpr (F::kind == fmt_kind::q8) {
        for (int64_t gi = 0; gi < n_groups; gi++) {
            if constexpr (C == 1) tile_q8_0<1, 2>(nb, w + gi * group_bytes, 0, a, a_stride, out + gi * R, ldo, 1);
            else for (int h = 0; h < 2; h++) tile_q8_0<C, 1>(nb, w + gi * group_bytes, h, a, a_stride, out + gi * R + h * HALF, ldo, nv);
        }
    } else {
        // The activation's block sums, once per call.
        const bool keep = F::OFFSET != 0 && nb <= SUM_BLOCKS;
        int32_t sums[F::OFFSET != 0 ? C * SUM_BLOCKS : 1];
        if (keep) {
            for (int c = 0; c < C; c++) {
                const block_q8_0 * ab = (const block_q8_0 *) (a + (c < nv ? c : nv - 1) * a_stride);
                for (int64_t b = 0; b < nb; b++) sums[c * nb + b] = block_sum(ab[b].qs);
            }
        }
        const int32_t * s = keep ? sums : nullptr;
        for (int64_t gi = 0; gi < n_groups; gi++) {
            if constexpr (C == 1) tile_nibbles<F, 1, 2>(nb, w + gi * group_bytes, 0, a, a_stride, s, out + gi * R, ldo, 1);
            else for (int h = 0; h < 2; h++) tile_nibbles<F, C, 1>(nb, w + gi * group_bytes, h, a, a_stride, s, out + gi * R + h * HALF, ldo, nv);
        }
    }
}

template <typename F>
void gemm_repacked(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                   float * out, int64_t ldo) {
    const int64_t nb = k / QK, n_groups = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const uint8_t * ab = (const uint8_t *) a;
    const size_t group_bytes = R * w_stride;
    // One 4-column instance per format (code size).
    for_padded_column_blocks<4>(nc, [&](auto cols, int64_t m, int nv) {
        column_block<F, decltype(cols)::value>(nb, n_groups, wb, group_bytes, ab + m * a_stride, a_stride, out + m * ldo, ldo, nv);
    });
}

// This set's tiles for tern_set_repack_legacy_all.
struct tiles {
    template <typename F> static constexpr tern_gemm_fn gemm = gemm_repacked<F>;
    static const bool IQ4_NL = false;  // u = table value + 128 overflows maddubs' int16 pairs
};

}  // namespace

void tern_fill_repack_avx2(tern_kernel_set * ks) { tern_set_repack_legacy_all<tiles>(ks); }

}  // namespace tern
