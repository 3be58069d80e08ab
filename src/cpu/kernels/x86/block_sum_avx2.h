// Sum of an activation block's 32 int8 levels, for the avx2 set's tiles
// (include only from files compiled with the avx2 or avx512 flags).
#pragma once
#include <immintrin.h>
#include <stdint.h>

namespace tern {

inline int32_t act_block_sum_avx2(const void * qs) {
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), _mm256_loadu_si256((const __m256i *) qs));
    const __m256i s = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 1, 1, 1)));
    return _mm_cvtsi128_si32(h);
}

}  // namespace tern
