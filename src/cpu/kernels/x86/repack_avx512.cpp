// Interleaved (repacked) Q4_0 and Q8_0 weights and their tiles, avx512 kernel
// set (kernel_set.h: repack_rows, repack, gemm_repacked). Compiled with the
// avx512 target flags (F/BW/VL/DQ + VNNI): static code only.
//
// Layout of a group of 16 rows, per 32-value block b (the same bytes as the
// 16 rows' blocks b in the file, so a matrix is rewritten in place):
//   Q4_0 (288 bytes)  d[16] (F16, row r at r), then 4 x 64 bytes: chunk j
//                     holds, for row r at bytes 4r..4r+3, the row's
//                     qs[4j..4j+3] (low nibbles: values 4j..4j+3, high
//                     nibbles: values 16+4j..16+4j+3, as the file packs them)
//   Q8_0 (544 bytes)  d[16], then 8 x 64 bytes: chunk j holds row r's
//                     qs[4j..4j+3] + 128 (unsigned) at 4r..4r+3
// So one zmm load is one 4-value group of 16 rows, lanes = rows, and one VNNI
// dpbusd with the activation's 4 values broadcast makes the 16 rows' exact
// int32 quad sums. The unsigned offset (Q4_0: levels u - 8, Q8_0: u - 128)
// comes back in int32 as offset * (sum of the activation block), computed
// once per activation block per call.
//
// Float part: the scalar reference's operations (tensor/quants_legacy.cpp,
// PER_BLOCK), lane by lane: acc = fma((float) sumi, d_w * d_a, acc), blocks in
// order. So every output equals the reference's bits, whatever tile or
// thread computes it.
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <string.h>
#include "tensor/blocks.h"

// GCC 12 flags the deliberately undefined registers inside avx512fintrin.h
// (_mm512_undefined_*) as uninitialized when inlined here: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

const int R = 16;              // rows per group (zmm lanes)
const int QK = 32;             // values per block
const int MAX_COLS = 4;        // activation columns per register tile
const int64_t SUM_BLOCKS = 1024;  // activation block sums kept on the stack (K <= 32768)

inline float f16(tern_fp16 h) { return _cvtsh_ss(h); }

inline __m512i bcast4(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// Sum of the 32 int8 levels of an activation block.
inline int32_t block_sum(const int8_t * qs) {
    const __m256i a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) qs), _mm256_set1_epi8((char) 0x80));
    const __m256i s = _mm256_sad_epu8(a, _mm256_setzero_si256());  // 4 x sum of 8 (level + 128)
    __m128i t = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    t = _mm_add_epi64(t, _mm_unpackhi_epi64(t, t));
    return (int32_t) _mm_cvtsi128_si64(t) - 32 * 128;
}

// ---- layouts ---------------------------------------------------------------

struct fmt_q4_0 {
    typedef block_q4_0 block;
    static const int CHUNKS = 4;        // zmm per block
    static const int OFFSET = 8;        // level = u - 8
    static const size_t BYTES = 2 * R + 64 * CHUNKS;
    static void pack(const block * const * rows, uint8_t * dst) {
        for (int j = 0; j < CHUNKS; j++) {
            for (int r = 0; r < R; r++) memcpy(dst + 64 * j + 4 * r, rows[r]->qs + 4 * j, 4);
        }
    }
};

struct fmt_q8_0 {
    typedef block_q8_0 block;
    static const int CHUNKS = 8;
    static const int OFFSET = 128;      // level = u - 128
    static const size_t BYTES = 2 * R + 64 * CHUNKS;
    static void pack(const block * const * rows, uint8_t * dst) {
        for (int j = 0; j < CHUNKS; j++) {
            for (int r = 0; r < R; r++) {
                for (int i = 0; i < 4; i++) dst[64 * j + 4 * r + i] = (uint8_t) (rows[r]->qs[4 * j + i] ^ 0x80);
            }
        }
    }
};

template <typename F>
void repack(int64_t k, const void * src, void * dst) {
    static_assert(F::BYTES == R * sizeof(typename F::block), "same bytes as the file");
    const int64_t nb = k / QK;
    const size_t row_bytes = (size_t) nb * sizeof(typename F::block);
    uint8_t * out = (uint8_t *) dst;
    for (int64_t b = 0; b < nb; b++, out += F::BYTES) {
        const typename F::block * rows[R];
        for (int r = 0; r < R; r++) rows[r] = (const typename F::block *) ((const uint8_t *) src + r * row_bytes) + b;
        for (int r = 0; r < R; r++) memcpy(out + 2 * r, &rows[r]->d, 2);
        F::pack(rows, out + 2 * R);
    }
}

// ---- tiles -------------------------------------------------------------------

// The 16 rows' levels of one block against one activation block: exact int32
// sums of (u - OFFSET) * a per row.
template <typename F>
inline __m512i block_dot(const __m512i * w, const int8_t * qs, int32_t act_sum);

template <>
inline __m512i block_dot<fmt_q4_0>(const __m512i * w, const int8_t * qs, int32_t act_sum) {
    // w[0..3]: low nibbles (values 4j..), w[4..7]: high nibbles (values 16 + 4j..)
    __m512i s = _mm512_set1_epi32(-fmt_q4_0::OFFSET * act_sum);
    for (int j = 0; j < 4; j++) {
        s = _mm512_dpbusd_epi32(s, w[j], bcast4(qs + 4 * j));
        s = _mm512_dpbusd_epi32(s, w[4 + j], bcast4(qs + 16 + 4 * j));
    }
    return s;
}

template <>
inline __m512i block_dot<fmt_q8_0>(const __m512i * w, const int8_t * qs, int32_t act_sum) {
    __m512i s = _mm512_set1_epi32(-fmt_q8_0::OFFSET * act_sum);
    for (int j = 0; j < 8; j++) s = _mm512_dpbusd_epi32(s, w[j], bcast4(qs + 4 * j));
    return s;
}

template <typename F>
inline void load_block(const uint8_t * g, __m512i * w);

template <>
inline void load_block<fmt_q4_0>(const uint8_t * g, __m512i * w) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int j = 0; j < 4; j++) {
        const __m512i z = _mm512_loadu_si512((const void *) (g + 2 * R + 64 * j));
        w[j] = _mm512_and_si512(z, m4);
        w[4 + j] = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
    }
}

template <>
inline void load_block<fmt_q8_0>(const uint8_t * g, __m512i * w) {
    for (int j = 0; j < 8; j++) w[j] = _mm512_loadu_si512((const void * ) (g + 2 * R + 64 * j));
}

// One group of 16 rows x C activation columns. sums: C rows of nb block sums
// (stride nb), or NULL to compute them here.
template <typename F, int C>
void group_tile(int64_t nb, const uint8_t * g, const uint8_t * a, size_t a_stride, const int32_t * sums, float * out,
                int64_t ldo) {
    __m512 acc[C];
    for (int c = 0; c < C; c++) acc[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
        _mm_prefetch((const char *) (g + 4 * F::BYTES), _MM_HINT_T0);
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) g));
        __m512i w[8];
        load_block<F>(g, w);
        for (int c = 0; c < C; c++) {
            const block_q8_0 * ab = (const block_q8_0 *) (a + c * a_stride) + b;
            const int32_t s = sums ? sums[c * nb + b] : block_sum(ab->qs);
            const __m512i isum = block_dot<F>(w, ab->qs, s);
            const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(f16(ab->d)));
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), d, acc[c]);
        }
    }
    for (int c = 0; c < C; c++) _mm512_storeu_ps(out + c * ldo, acc[c]);
}

template <typename F, int C>
void column_block(int64_t nb, int64_t n_groups, const uint8_t * w, size_t group_bytes, const uint8_t * a, size_t a_stride,
                  float * out, int64_t ldo) {
    int32_t sums[MAX_COLS * SUM_BLOCKS];
    const bool keep = nb <= SUM_BLOCKS;
    if (keep) {
        for (int c = 0; c < C; c++) {
            const block_q8_0 * ab = (const block_q8_0 *) (a + c * a_stride);
            for (int64_t b = 0; b < nb; b++) sums[c * nb + b] = block_sum(ab[b].qs);
        }
    }
    for (int64_t gi = 0; gi < n_groups; gi++) {
        group_tile<F, C>(nb, w + gi * group_bytes, a, a_stride, keep ? sums : nullptr, out + gi * R, ldo);
    }
}

template <typename F>
void gemm_repacked(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                   float * out, int64_t ldo) {
    const int64_t nb = k / QK, n_groups = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const uint8_t * ab = (const uint8_t *) a;
    const size_t group_bytes = R * w_stride;
    int64_t m = 0;
    for (; m + MAX_COLS <= nc; m += MAX_COLS) {
        column_block<F, MAX_COLS>(nb, n_groups, wb, group_bytes, ab + m * a_stride, a_stride, out + m * ldo, ldo);
    }
    switch (nc - m) {
        case 3: column_block<F, 3>(nb, n_groups, wb, group_bytes, ab + m * a_stride, a_stride, out + m * ldo, ldo); break;
        case 2: column_block<F, 2>(nb, n_groups, wb, group_bytes, ab + m * a_stride, a_stride, out + m * ldo, ldo); break;
        case 1: column_block<F, 1>(nb, n_groups, wb, group_bytes, ab + m * a_stride, a_stride, out + m * ldo, ldo); break;
        default: break;
    }
}

}  // namespace

void tern_fill_repack_avx512(tern_kernel_set * ks) {
#if TERN_WITH_TYPE_Q4_0
    ks->repack_rows[TERN_TYPE_Q4_0] = R;
    ks->repack[TERN_TYPE_Q4_0] = repack<fmt_q4_0>;
    ks->gemm_repacked[TERN_TYPE_Q4_0] = gemm_repacked<fmt_q4_0>;
#endif
#if TERN_WITH_TYPE_Q8_0
    ks->repack_rows[TERN_TYPE_Q8_0] = R;
    ks->repack[TERN_TYPE_Q8_0] = repack<fmt_q8_0>;
    ks->gemm_repacked[TERN_TYPE_Q8_0] = gemm_repacked<fmt_q8_0>;
#endif
}
