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
//
// Decode (one column): a group's u unpacked in registers as it is used, the
// super-block after next prefetched. Prompts: per group and panel of 64
// columns each super-block is staged once (u to the stack) and read by every
// block of 4 columns (gemm_repacked).
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

// One super-block of a group x C columns (ab[c]: the column's Q8_K block):
// the exact integer sums, then the float step into acc[c]. u_of(q) gives the
// u of quad q (values 4q..4q+3, 16-value sub-block q / 4); pre(j) runs before
// sub-block j (the decode tile's prefetch).
template <int C, class UOf, class Pre>
inline void q6_columns(const uint8_t * g, UOf && u_of, const block_q8_K * const * ab, __m512 * acc, Pre && pre) {
    __m512i isum[C];
    for (int c = 0; c < C; c++) isum[c] = _mm512_setzero_si512();
    for (int j = 0; j < 16; j++) {  // 16-value sub-blocks: quads 4j..4j+3
        pre(j);
        __m512i u[4];
        for (int t = 0; t < 4; t++) u[t] = u_of(4 * j + t);
        const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (g + Q6_SCALES + 16 * j)));
        for (int c = 0; c < C; c++) {
            __m512i s = _mm512_set1_epi32(-32 * ab[c]->bsums[j]);
            for (int t = 0; t < 4; t++) s = _mm512_dpbusd_epi32(s, u[t], bcast4(ab[c]->qs + 16 * j + 4 * t));
            isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(s, sc));
        }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (g + Q6_D)));
    for (int c = 0; c < C; c++) {
        const __m512 d = _mm512_mul_ps(_mm512_set1_ps(ab[c]->d), dw);
        acc[c] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(isum[c]), acc[c]);
    }
}

// ---- Q4_K, Q5_K ------------------------------------------------------------

// u of sub-block j's quad t (values 32j + 4t..4t+3) of the 16 rows: chunk
// 8(j/2) + t, low nibbles for even j; P = k5_parts: qh = QH chunk t, whose
// bit j is the 5th bit.
template <typename P>
inline __m512i k45_quad(const uint8_t * g, int j, int t, __m512i qh) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i q = load64(g + P::QS + 64 * (8 * (j / 2) + t));
    __m512i u = (j & 1) ? _mm512_and_si512(_mm512_srli_epi16(q, 4), m4) : _mm512_and_si512(q, m4);
    if constexpr (P::HIGH) {  // bit j of each byte to bit 4
        const __m512i h = j <= 4 ? _mm512_slli_epi16(qh, 4 - j) : _mm512_srli_epi16(qh, j - 4);
        u = _mm512_or_si512(u, _mm512_and_si512(h, _mm512_set1_epi8(0x10)));
    }
    return u;
}

// As q6_columns, with the 8 sub-blocks' scales sc and mins mn (int32 lanes);
// quad q = 8j + t.
template <int C, class UOf, class Pre>
inline void k45_columns(const uint8_t * g, UOf && u_of, const __m512i * sc, const __m512i * mn, const block_q8_K * const * ab,
                        __m512 * acc, Pre && pre) {
    __m512i isum[C], imin[C];
    for (int c = 0; c < C; c++) isum[c] = imin[c] = _mm512_setzero_si512();
    for (int j = 0; j < 8; j++) {  // 32-value sub-blocks
        pre(j);
        __m512i u[8];
        for (int t = 0; t < 8; t++) u[t] = u_of(8 * j + t);
        for (int c = 0; c < C; c++) {
            __m512i s = _mm512_setzero_si512();
            for (int t = 0; t < 8; t++) s = _mm512_dpbusd_epi32(s, u[t], bcast4(ab[c]->qs + 32 * j + 4 * t));
            isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(s, sc[j]));
            const int32_t bs = (int32_t) ab[c]->bsums[2 * j] + ab[c]->bsums[2 * j + 1];
            imin[c] = _mm512_add_epi32(imin[c], _mm512_mullo_epi32(mn[j], _mm512_set1_epi32(bs)));
        }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (g + Q4_D)));
    const __m512 dmw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (g + Q4_DMIN)));
    for (int c = 0; c < C; c++) {
        const __m512 da = _mm512_set1_ps(ab[c]->d);
        acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(da, dw), _mm512_cvtepi32_ps(isum[c]), acc[c]);
        acc[c] = _mm512_fnmadd_ps(_mm512_mul_ps(da, dmw), _mm512_cvtepi32_ps(imin[c]), acc[c]);
    }
}

// ---- the formats: decode (one column) and a prompt panel's super-block -------

// A super-block of a group unpacked once for every column block of a panel.
struct staged {
    __m512i u[64];          // quad q's u
    __m512i sc[8], mn[8];   // Q4_K Q5_K: the sub-blocks' scales and mins
};

// The super-block after next, LINES lines before sub-block j: the hardware
// prefetchers stop at page boundaries, which decode's groups cross often.
template <size_t BYTES, int LINES>
inline void prefetch_ahead(const uint8_t * g, int j) {
    for (int p = 0; p < LINES; p++) _mm_prefetch((const char *) (g + 2 * BYTES + 64 * (LINES * j + p)), _MM_HINT_T0);
}

struct fmt_q6 {
    static const size_t BYTES = Q6_BYTES;
    static void decode(int64_t nb, const uint8_t * g, const block_q8_K * a, float * out) {
        __m512 acc = _mm512_setzero_ps();
        for (int64_t b = 0; b < nb; b++, g += BYTES) {
            const block_q8_K * ab = a + b;
            q6_columns<1>(g, [&](int q) { return q6_group(g, q); }, &ab, &acc, [&](int j) { prefetch_ahead<BYTES, 4>(g, j); });
        }
        _mm512_storeu_ps(out, acc);
    }
    static void stage(const uint8_t * g, staged & s) {
        for (int q = 0; q < 64; q++) s.u[q] = q6_group(g, q);
    }
    static void columns(const uint8_t * g, const staged & s, const block_q8_K * const * ab, __m512 * acc) {
        q6_columns<4>(g, [&](int q) { return s.u[q]; }, ab, acc, [](int) {});
    }
};

// P: k4_parts or k5_parts (repack_kquant.h).
template <typename P>
struct fmt_k45 {
    static const size_t BYTES = P::BYTES;
    // The 6-bit scales and mins of the 8 sub-blocks, per lane (tern_k4_scale_min).
    static void scales(const uint8_t * g, __m512i * sc, __m512i * mn) {
        k4_scales_mins(load64(g + Q4_SCALES), load64(g + Q4_SCALES + 64), load64(g + Q4_SCALES + 128), sc, mn);
    }
    static void decode(int64_t nb, const uint8_t * g, const block_q8_K * a, float * out) {
        constexpr int LINES = (int) (BYTES / 64 + 7) / 8;  // prefetched per sub-block
        __m512 acc = _mm512_setzero_ps();
        for (int64_t b = 0; b < nb; b++, g += BYTES) {
            __m512i sc[8], mn[8], qh[8];
            scales(g, sc, mn);
            for (int t = 0; t < 8; t++) qh[t] = P::HIGH ? load64(g + P::QH + 64 * t) : _mm512_setzero_si512();
            const block_q8_K * ab = a + b;
            k45_columns<1>(g, [&](int q) { return k45_quad<P>(g, q / 8, q % 8, qh[q % 8]); }, sc, mn, &ab, &acc,
                           [&](int j) { prefetch_ahead<BYTES, LINES>(g, j); });
        }
        _mm512_storeu_ps(out, acc);
    }
    static void stage(const uint8_t * g, staged & s) {
        scales(g, s.sc, s.mn);
        for (int t = 0; t < 8; t++) {
            const __m512i qh = P::HIGH ? load64(g + P::QH + 64 * t) : _mm512_setzero_si512();
            for (int j = 0; j < 8; j++) s.u[8 * j + t] = k45_quad<P>(g, j, t, qh);
        }
    }
    static void columns(const uint8_t * g, const staged & s, const block_q8_K * const * ab, __m512 * acc) {
        k45_columns<4>(g, [&](int q) { return s.u[q]; }, s.sc, s.mn, ab, acc, [](int) {});
    }
};

// ---- the tern_gemm_fn over whole groups -------------------------------------

const int PANEL = 64;  // activation columns per staged pass

// Decode: group by group. Prompts: per group and panel of up to PANEL
// columns, each super-block is staged once (its u unpacked to the stack) and
// read by the panel's blocks of 4 columns (the last block repeats its last
// real column); each output gets the decode tile's operations in the same
// order, so the same bits.
template <class F>
void gemm_repacked(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                   float * out, int64_t ldo) {
    const int64_t nb = k / QK_K, n_groups = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const size_t group_bytes = R * w_stride;
    if (nc == 1) {
        for (int64_t gi = 0; gi < n_groups; gi++) F::decode(nb, wb + gi * group_bytes, (const block_q8_K *) a, out + gi * R);
        return;
    }
    staged s;
    __m512 acc[PANEL];
    for (int64_t m0 = 0; m0 < nc; m0 += PANEL) {
        const int np = (int) (nc - m0 < PANEL ? nc - m0 : PANEL);
        const uint8_t * ap = (const uint8_t *) a + m0 * a_stride;
        for (int64_t gi = 0; gi < n_groups; gi++) {
            const uint8_t * g = wb + gi * group_bytes;
            for (int c = 0; c < np; c++) acc[c] = _mm512_setzero_ps();
            for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
                F::stage(g, s);
                for (int c0 = 0; c0 < np; c0 += 4) {
                    const block_q8_K * ab[4];
                    __m512 acc4[4];
                    for (int c = 0; c < 4; c++) {
                        const int cc = c0 + c < np ? c0 + c : np - 1;
                        ab[c] = (const block_q8_K *) (ap + cc * a_stride) + b;
                        acc4[c] = acc[cc];
                    }
                    F::columns(g, s, ab, acc4);
                    for (int c = 0; c < 4 && c0 + c < np; c++) acc[c0 + c] = acc4[c];
                }
            }
            for (int c = 0; c < np; c++) _mm512_storeu_ps(out + (m0 + c) * ldo + gi * R, acc[c]);
        }
    }
}

}  // namespace

void tern_fill_repack_kquant_avx512(tern_kernel_set * ks) {
#if TERN_WITH_TYPE_Q4_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q4_K, gemm_repacked<fmt_k45<k4_parts>>);
#endif
#if TERN_WITH_TYPE_Q5_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q5_K, gemm_repacked<fmt_k45<k5_parts>>);
#endif
#if TERN_WITH_TYPE_Q6_K
    tern_set_repack_kquant(ks, TERN_TYPE_Q6_K, gemm_repacked<fmt_q6>);
#endif
}

}  // namespace tern
