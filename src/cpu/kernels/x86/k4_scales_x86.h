// Q4_K's 6-bit sub-block scales and mins for the repacked layout
// (repack_kquant.h), one row per 32-bit lane: the x86 sets' vector form of
// tern_k4_scale_min. Included by repack_kquant_avx2.cpp (8 lanes) and
// repack_kquant_avx512.cpp (16 lanes), each with its own target flags; the
// lane width is the register's, the operations written once with the
// compilers' vector extensions (they compile to vpsrld / vpand / vpor / vpslld).
//
// A row's 12 scale bytes are three 4-byte words s0 s1 s2 (byte j of word i at
// bits 8j..8j+7 of its lane), and for sub-block j < 4 and 4 + j:
//   sc[j]     = s0.byte j & 63            mn[j]     = s1.byte j & 63
//   sc[4 + j] = (s2.byte j & 15) | (s0.byte j >> 6) << 4
//   mn[4 + j] = (s2.byte j >> 4) | (s1.byte j >> 6) << 4
#pragma once
#include <stdint.h>

namespace tern {
namespace {

// I: the set's integer register (__m256i, __m512i); w0 w1 w2: the three
// words of each lane's row; sc, mn: [8] sub-blocks, per lane.
template <class I>
inline void k4_scales_mins(I w0, I w1, I w2, I sc[8], I mn[8]) {
    typedef uint32_t V __attribute__((vector_size(sizeof(I))));
    const V s0 = (V) w0, s1 = (V) w1, s2 = (V) w2;
    for (int j = 0; j < 4; j++) {
        sc[j] = (I) ((s0 >> (8 * j)) & 63);
        mn[j] = (I) ((s1 >> (8 * j)) & 63);
        sc[4 + j] = (I) (((s2 >> (8 * j)) & 15) | (((s0 >> (8 * j + 6)) & 3) << 4));
        mn[4 + j] = (I) (((s2 >> (8 * j + 4)) & 15) | (((s1 >> (8 * j + 6)) & 3) << 4));
    }
}

}  // namespace
}  // namespace tern
