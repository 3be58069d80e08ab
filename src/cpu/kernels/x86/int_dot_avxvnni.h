// The avxvnni set's integer product for the 8-row repacked tiles
// (x86/legacy_ymm_x86.h, x86/kquant_ymm_x86.h), the same interface as
// int_dot_avx2.h: unsigned weight levels u (0..255) times signed activation
// levels y, four per 32-bit lane. One VEX vpdpbusd adds a lane's four
// products to its int32, exactly (at most 4 * 255 * 128 a step): the avx2
// set's maddubs + add + madd in one instruction, with no int16 limit, so a
// quad count never splits a sum and Q8_0's u = q + 128 needs no sign trick
// (the offset comes back as -128 * the activation block's sum). K-quant
// sub-block sums meet their scale in int32 (vpmulld).
// Include only from files compiled with the avxvnni flags (x86/*_avxvnni.cpp);
// in an anonymous namespace (column_blocks.h says why).
#pragma once
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

namespace tern {
namespace {

struct int_dot_avxvnni {
    static const bool PARTIAL32 = true;  // partial sums are int32 lanes (an offset may start them)

    // Every quad of a sub-block in one int32 sum, whatever the levels.
    static constexpr int quads16(int) { return 8; }

    static __m256i bcast4(const int8_t * p) {
        int32_t v;
        memcpy(&v, p, 4);
        return _mm256_set1_epi32(v);
    }

    // init + sum over the 8 quads l of w[l] . y[4l..4l+3], int32 lanes.
    template <int U_MAX>
    static __m256i quads(__m256i init, const __m256i * w, const int8_t * y) {
        for (int l = 0; l < 8; l++) init = _mm256_dpbusd_avx_epi32(init, w[l], bcast4(y + 4 * l));
        return init;
    }

    // Sum of an activation block's 32 levels.
    static int32_t block_sum(const int8_t * qs) {
        const __m256i s = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), _mm256_loadu_si256((const __m256i *) qs));
        __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 1, 1, 1)));
        return _mm_cvtsi128_si32(h);
    }

    // K-quant sub-blocks: a partial sum p (int32 lanes), p + u . y ...
    static __m256i mac(__m256i p, __m256i u, __m256i y) { return _mm256_dpbusd_avx_epi32(p, u, y); }
    // ... the sub-block scale as it is (int32 lanes) ...
    static __m256i scale_of(__m256i sc) { return sc; }
    // ... and isum + scale * p.
    static __m256i add_scaled(__m256i isum, __m256i p, __m256i s) { return _mm256_add_epi32(isum, _mm256_mullo_epi32(p, s)); }
    // acc + madd(a, b): int16 pairs a, b, int32 lanes acc (vpdpwssd).
    static __m256i madd_acc(__m256i acc, __m256i a, __m256i b) { return _mm256_dpwssd_avx_epi32(acc, a, b); }
};

}  // namespace
}  // namespace tern
