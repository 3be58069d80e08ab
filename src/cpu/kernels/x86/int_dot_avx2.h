// The avx2 set's integer product for the 8-row repacked tiles
// (x86/legacy_ymm_x86.h, x86/kquant_ymm_x86.h): unsigned weight levels u
// times signed activation levels y, four per 32-bit lane (one row's quad).
// maddubs makes two int16 pair sums per lane; they add up in int16 while no
// sum can pass 32767 (quads16), then madd (by ones, or by the sub-block
// scale) widens them to int32. Exact: a pair is at most 2 * u_max * 128.
// Include only from files compiled with the avx2 flags (x86/*_avx2.cpp); in
// an anonymous namespace (column_blocks.h says why).
#pragma once
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

namespace tern {
namespace {

struct int_dot_avx2 {
    static const bool PARTIAL32 = false;  // partial sums are int16 pairs

    // Quads of levels <= u_max whose int16 pair sums add up without
    // saturating: u_max 15 (Q4_0 Q4_1 Q4_K): 8 (<= 30720), 31 (Q5_*): 4
    // (<= 31744), 63 (Q6_K): 2 (<= 32256).
    static constexpr int quads16(int u_max) { return 32767 / (2 * u_max * 128); }

    static __m256i bcast4(const int8_t * p) {
        int32_t v;
        memcpy(&v, p, 4);
        return _mm256_set1_epi32(v);
    }

    // init + sum over the 8 quads l of w[l] . y[4l..4l+3], int32 lanes; the
    // levels are <= U_MAX.
    template <int U_MAX>
    static __m256i quads(__m256i init, const __m256i * w, const int8_t * y) {
        constexpr int Q16 = quads16(U_MAX);
        const __m256i ones = _mm256_set1_epi16(1);
        for (int l0 = 0; l0 < 8; l0 += Q16) {
            __m256i s16 = _mm256_maddubs_epi16(w[l0], bcast4(y + 4 * l0));
            for (int l = l0 + 1; l < l0 + Q16; l++) s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(w[l], bcast4(y + 4 * l)));
            init = _mm256_add_epi32(init, _mm256_madd_epi16(s16, ones));
        }
        return init;
    }

    // Sum of an activation block's 32 levels.
    static int32_t block_sum(const int8_t * qs) {
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), _mm256_loadu_si256((const __m256i *) qs));
        const __m256i s = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
        __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 1, 1, 1)));
        return _mm_cvtsi128_si32(h);
    }

    // K-quant sub-blocks: a partial sum p of up to quads16(u_max) quads
    // (int16 pairs), p + u . y ...
    static __m256i mac(__m256i p, __m256i u, __m256i y) { return _mm256_add_epi16(p, _mm256_maddubs_epi16(u, y)); }
    // ... the sub-block scale (int32 lanes) in the form add_scaled takes
    // (each lane's low int16 in both halves of the lane) ...
    static __m256i scale_of(__m256i sc) { return _mm256_blend_epi16(sc, _mm256_slli_epi32(sc, 16), 0xAA); }
    // ... and isum + scale * p, int32 lanes.
    static __m256i add_scaled(__m256i isum, __m256i p, __m256i s) { return _mm256_add_epi32(isum, _mm256_madd_epi16(p, s)); }
    // acc + madd(a, b): int16 pairs a, b, int32 lanes acc.
    static __m256i madd_acc(__m256i acc, __m256i a, __m256i b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
};

}  // namespace
}  // namespace tern
