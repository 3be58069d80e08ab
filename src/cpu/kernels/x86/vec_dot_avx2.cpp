// AVX2 + FMA + F16C vec_dot kernels of the avx2 kernel set, and its K-quant
// tiles, bit-identical to the scalar references. Compiled with the avx2 target flags.
//
// Integer part (where SIMD pays). One 32-value block is one __m256i of levels
// times one __m256i of activation levels; the products are summed, exactly,
// into 8 int32 lanes. Lane l holds the products of elements 4l..4l+3, which
// is the lane the LANES8 reference (IQ4_NL) needs (quants_legacy.cpp):
// - unsigned levels (nibbles, 5-bit values): maddubs gives pairs in int16
//   (at most 2 * 31 * 128, no saturation), madd with ones the quads. An
//   offset (Q4_0: level = u - 8) is subtracted as maddubs(offset, y) in int16.
// - signed x signed (Q8_0, IQ4_NL): both widened to int16 and madd'ed, then a
//   hadd joins the pairs; exact for every int8 input including -128 (the
//   abs/sign trick is not). The hadd leaves the lanes in the order
//   L0 L1 L4 L5 | L2 L3 L6 L7 ("permuted"); a LANES8 kernel accumulates them
//   so and restores the order once before the final sum. PER_BLOCK needs
//   only the block total, so Q8_0 skips the hadd, and the totals of four
//   blocks come out of one hadd tree.
//
// Float part: exactly the reference's operations, in its order (see the
// PER_BLOCK / LANES8 description in tensor/quants_legacy.cpp):
//   PER_BLOCK  acc = fma((float) sumi, d_x * d_y, acc)  (+ fma(m_x, s_y, acc))
//   LANES8     acc_l = fma(d_x * d_y, (float) lane_l, acc_l) in one __m256,
//              hsum ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))
//              (+ summs = fma(m_x, s_y, summs) for the affine formats).
// fp16 scales are converted with F16C (exact, as the reference's conversion;
// only a signalling NaN comes out quieted, which the first multiplication
// does in the reference too).
//
// K-quants (x Q8_K, 256-value super-blocks): the references reduce each
// super-block to two exact integers, isum = sum_i scale[i/16] * q[i] * q8[i]
// and mins = sum_j min[j] * bsums[j], then do one type-specific float step
// (tensor/quants_k_dot.cpp). Here the super-block is read as eight 32-value
// chunks of unsigned levels u (0..63, level = u - the type's offset: Q3_K 4,
// Q6_K 32, else 0); maddubs makes int16 pairs, madd with the sub-block scales
// int32 lanes, and one horizontal sum gives isum. mins is a madd of the 16
// sub-block mins with the 16 bsums. The K-quant tiles (gemm_k) run the same
// steps for one weight row against up to 4 activation rows, decoding the
// row's scales and levels once for all of them.
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "tensor/quants.h"
#include "tensor/quants_k.h"

namespace tern {

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace {

const int QK = 32;  // values per block, every format here

// ------------------------------------------------------------ integer lanes

inline __m256i load32(const void * p) { return _mm256_loadu_si256((const __m256i *) p); }

// qs[16] -> 32 bytes 0..15: byte j < 16 the low nibble of qs[j], byte j + 16 its high nibble.
inline __m256i unpack_nibbles(const uint8_t * qs) {
    const __m128i q = _mm_loadu_si128((const __m128i *) qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0F));
}

// qh[4] (bit j = bit 4 of level j, little-endian) -> byte j = 0x10 or 0.
inline __m256i unpack_high_bits(const uint8_t * qh) {
    uint32_t bits;
    memcpy(&bits, qh, 4);
    // byte j takes byte j / 8 of `bits`, then keeps bit j % 8.
    const __m256i by_byte = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int) bits),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                         2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ULL);
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(by_byte, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// int16 pair k = sum_{j = 2k, 2k+1} (u[j] - offset) * y[j]; u in 0..63, offset <= 32
// (at most 2 * 63 * 128 + 2 * 32 * 128 in magnitude: no saturation).
template <int offset>
inline __m256i pairs_unsigned(__m256i u, __m256i y) {
    const __m256i pairs = _mm256_maddubs_epi16(u, y);
    if constexpr (offset == 0) return pairs;
    else return _mm256_sub_epi16(pairs, _mm256_maddubs_epi16(_mm256_set1_epi8(offset), y));
}

// lane l = sum_{j = 4l..4l+3} (u[j] - offset) * y[j], natural order.
template <int offset>
inline __m256i lanes_unsigned(__m256i u, __m256i y) {
    return _mm256_madd_epi16(pairs_unsigned<offset>(u, y), _mm256_set1_epi16(1));
}

// Products of signed x and y summed in pairs: lo = pairs 0..7, hi = pairs 8..15.
inline void pairs_signed(__m256i x, __m256i y, __m256i * lo, __m256i * hi) {
    *lo = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(x)), _mm256_cvtepi8_epi16(_mm256_castsi256_si128(y)));
    *hi = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(x, 1)),
                            _mm256_cvtepi8_epi16(_mm256_extracti128_si256(y, 1)));
}

// The lane sums for signed x and y, in the permuted order L0 L1 L4 L5 | L2 L3 L6 L7.
inline __m256i lanes_signed(__m256i x, __m256i y) {
    __m256i lo, hi;
    pairs_signed(x, y, &lo, &hi);
    return _mm256_hadd_epi32(lo, hi);
}

// 8 int32 partial sums of signed x * y in no particular lane order (PER_BLOCK
// needs only their total).
inline __m256i partial_sums_signed(__m256i x, __m256i y) {
    __m256i lo, hi;
    pairs_signed(x, y, &lo, &hi);
    return _mm256_add_epi32(lo, hi);
}

// Permuted lane order back to L0..L7 (64-bit pairs 0, 2, 1, 3).
inline __m256 unpermute(__m256 v) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

inline int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 1, 1, 1)));
    return _mm_cvtsi128_si32(s);
}

// The totals of four lane vectors a, b, c, d: [sum(a), sum(b), sum(c), sum(d)].
inline __m128i sum4(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// ggml's hsum_float_8: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)).
inline float hsum_lanes(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline float f32(tern_fp16 h) { return _cvtsh_ss(h); }

// ------------------------------------------------------------ formats

enum dot_order { PER_BLOCK, LANES8 };  // as the references, quants_legacy.cpp

// Per format: blocks, whether it is affine (m_x * s_y term), its reference's
// dot order, and the int32 lanes of one block against activation levels y.
struct fmt_q8_0 {
    typedef block_q8_0 block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static const dot_order order = PER_BLOCK;
    static __m256i lanes(const block & x, __m256i y) { return partial_sums_signed(load32(x.qs), y); }
};
struct fmt_q4_0 {
    typedef block_q4_0 block;
    typedef block_q8_0 act;
    static const bool affine = false;
    static const dot_order order = PER_BLOCK;
    static __m256i lanes(const block & x, __m256i y) { return lanes_unsigned<8>(unpack_nibbles(x.qs), y); }
};
struct fmt_q4_1 {
    typedef block_q4_1 block;
    typedef block_q8_1 act;
    static const bool affine = true;
    static const dot_order order = PER_BLOCK;
    static __m256i lanes(const block & x, __m256i y) { return lanes_unsigned<0>(unpack_nibbles(x.qs), y); }
};
struct fmt_q5_0 {
    typedef block_q5_0 block;
    typedef block_q8_0 act;
    static const bool affine = false, permuted = false;
    static const dot_order order = PER_BLOCK;
    static __m256i lanes(const block & x, __m256i y) {
        return lanes_unsigned<16>(_mm256_or_si256(unpack_nibbles(x.qs), unpack_high_bits(x.qh)), y);
    }
};
struct fmt_q5_1 {
    typedef block_q5_1 block;
    typedef block_q8_1 act;
    static const bool affine = true, permuted = false;
    static const dot_order order = PER_BLOCK;
    static __m256i lanes(const block & x, __m256i y) {
        return lanes_unsigned<0>(_mm256_or_si256(unpack_nibbles(x.qs), unpack_high_bits(x.qh)), y);
    }
};
struct fmt_iq4_nl {
    typedef block_iq4_nl block;
    typedef block_q8_0 act;
    static const bool affine = false, permuted = true;
    static const dot_order order = LANES8;
    static __m256i lanes(const block & x, __m256i y) {
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) tern_kvalues_iq4nl));
        return lanes_signed(_mm256_shuffle_epi8(table, unpack_nibbles(x.qs)), y);
    }
};

// ------------------------------------------------------------ K-quants

const int CHUNKS = QK_K / 32;  // 32-value chunks per super-block

// [a x 8 | b x 8] as int16: the scales of the two 16-value halves of a chunk.
inline __m256i scale_pair(int a, int b) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16((short) a)), _mm_set1_epi16((short) b), 1);
}

// Bits 2s..2s+1 of each of 32 bytes (Q2_K / Q3_K low bits, Q6_K high bits).
inline __m256i two_bits(__m256i v, int s) { return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(2 * s)), _mm256_set1_epi8(3)); }
// Nibble u (0 low, 1 high) of each of 32 bytes.
inline __m256i nibble(__m256i v, int u) { return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(4 * u)), _mm256_set1_epi8(0x0F)); }
// Bit j of each of 32 bytes, moved to bit `to`.
inline __m256i bit_to(__m256i v, int j, int to) {
    const __m256i b = _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(j)), _mm256_set1_epi8(1));
    return _mm256_sll_epi16(b, _mm_cvtsi32_si128(to));
}

// isum of one super-block: F::levels(x, j) are the unsigned levels of chunk j
// (level = u - F::offset), scales16 the 16 sub-block scales.
template <typename F>
inline int32_t k_isum(const typename F::block & x, const block_q8_K & y, const int16_t * scales16) {
    __m256i sumi = _mm256_setzero_si256();
    for (int j = 0; j < CHUNKS; j++) {
        const __m256i pairs = pairs_unsigned<F::offset>(F::levels(x, j), load32(y.qs + 32 * j));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(pairs, scale_pair(scales16[2 * j], scales16[2 * j + 1])));
    }
    return hsum_i32(sumi);
}

// mins of one super-block: sum_j min[j] * bsums[j].
inline int32_t k_mins(const int16_t * mins16, const block_q8_K & y) {
    return hsum_i32(_mm256_madd_epi16(load32(mins16), load32(y.bsums)));
}

// The float step per super-block, as the references (quants_k_dot.cpp).
enum k_float_step { STEP_NO_MINS, STEP_MINS_FIRST, STEP_MINS_AFTER };

// Per type: its float step, the unsigned levels of chunk j, and the 16 scales
// and (types with mins) 16 mins as int16, per 16-value sub-block.
struct fmt_q2_K {
    typedef block_q2_K block;
    static const int offset = 0;
    static const k_float_step step = STEP_MINS_FIRST;
    static __m256i levels(const block & x, int j) { return two_bits(load32(x.qs + 32 * (j / 4)), j % 4); }
    static void scales(const block & x, int16_t * scales16, int16_t * mins16) {
        const __m128i packed = _mm_loadu_si128((const __m128i *) x.scales);  // low nibble scale, high nibble min
        const __m128i nib = _mm_set1_epi8(0x0F);
        _mm256_storeu_si256((__m256i *) scales16, _mm256_cvtepu8_epi16(_mm_and_si128(packed, nib)));
        _mm256_storeu_si256((__m256i *) mins16, _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), nib)));
    }
};
struct fmt_q3_K {
    typedef block_q3_K block;
    static const int offset = 4;  // level = q - 4 where the hmask bit is clear
    static const k_float_step step = STEP_NO_MINS;
    static __m256i levels(const block & x, int j) {
        return _mm256_or_si256(two_bits(load32(x.qs + 32 * (j / 4)), j % 4), bit_to(load32(x.hmask), j, 2));
    }
    static void scales(const block & x, int16_t * scales16, int16_t *) {
        for (int k = 0; k < QK_K / 16; k++) scales16[k] = (int16_t) tern_q3_K_scale(k, x.scales);
    }
};
// Q4_K / Q5_K: eight 6-bit scales and mins, each for 32 values (so twice here).
inline void k4_scales(const uint8_t * packed, int16_t * scales16, int16_t * mins16) {
    for (int k = 0; k < CHUNKS; k++) {
        uint8_t sc, m;
        tern_k4_scale_min(k, packed, &sc, &m);
        scales16[2 * k] = scales16[2 * k + 1] = sc;
        mins16[2 * k] = mins16[2 * k + 1] = m;
    }
}
struct fmt_q4_K {
    typedef block_q4_K block;
    static const int offset = 0;
    static const k_float_step step = STEP_MINS_AFTER;
    static __m256i levels(const block & x, int j) { return nibble(load32(x.qs + 32 * (j / 2)), j % 2); }
    static void scales(const block & x, int16_t * scales16, int16_t * mins16) { k4_scales(x.scales, scales16, mins16); }
};
struct fmt_q5_K {
    typedef block_q5_K block;
    static const int offset = 0;
    static const k_float_step step = STEP_MINS_AFTER;
    static __m256i levels(const block & x, int j) {
        return _mm256_or_si256(nibble(load32(x.qs + 32 * (j / 2)), j % 2), bit_to(load32(x.qh), j, 4));
    }
    static void scales(const block & x, int16_t * scales16, int16_t * mins16) { k4_scales(x.scales, scales16, mins16); }
};
struct fmt_q6_K {
    typedef block_q6_K block;
    static const int offset = 32;
    static const k_float_step step = STEP_NO_MINS;
    static __m256i levels(const block & x, int j) {
        const int h = j / 4, s = j % 4;
        const __m256i low = nibble(load32(x.ql + 64 * h + 32 * (s & 1)), s / 2);
        return _mm256_or_si256(low, _mm256_slli_epi16(two_bits(load32(x.qh + 32 * h), s), 4));
    }
    static void scales(const block & x, int16_t * scales16, int16_t *) {
        _mm256_storeu_si256((__m256i *) scales16, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) x.scales)));
    }
};

inline float dmin_of(const block_q2_K & x) { return f32(x.dmin); }
inline float dmin_of(const block_q4_K & x) { return f32(x.dmin); }
inline float dmin_of(const block_q5_K & x) { return f32(x.dmin); }

// ------------------------------------------------------------ row loops

template <typename F>
void vec_dot(int64_t n, float * s, const void * vx, const void * vy) {
    const typename F::block * x = (const typename F::block *) vx;
    const typename F::act * y = (const typename F::act *) vy;
    const int64_t nb = n / QK;
    if constexpr (F::order == PER_BLOCK) {
        float acc = 0.0f;
        auto step = [&](int64_t ib, int32_t sumi) {
            acc = fmaf((float) sumi, f32(x[ib].d) * f32(y[ib].d), acc);
            if constexpr (F::affine) acc = fmaf(f32(x[ib].m), f32(y[ib].s), acc);
        };
        int64_t ib = 0;
        for (; ib + 4 <= nb; ib += 4) {  // the block totals four at a time: fewer shuffles
            int32_t sumi[4];
            _mm_storeu_si128((__m128i *) sumi,
                             sum4(F::lanes(x[ib], load32(y[ib].qs)), F::lanes(x[ib + 1], load32(y[ib + 1].qs)),
                                  F::lanes(x[ib + 2], load32(y[ib + 2].qs)), F::lanes(x[ib + 3], load32(y[ib + 3].qs))));
            for (int k = 0; k < 4; k++) step(ib + k, sumi[k]);
        }
        for (; ib < nb; ib++) step(ib, hsum_i32(F::lanes(x[ib], load32(y[ib].qs))));
        *s = acc;
    } else {
        __m256 acc = _mm256_setzero_ps();
        float summs = 0.0f;
        for (int64_t ib = 0; ib < nb; ib++) {
            const __m256 lanes = _mm256_cvtepi32_ps(F::lanes(x[ib], load32(y[ib].qs)));
            acc = _mm256_fmadd_ps(_mm256_set1_ps(f32(x[ib].d) * f32(y[ib].d)), lanes, acc);
            if constexpr (F::affine) summs = fmaf(f32(x[ib].m), f32(y[ib].s), summs);
        }
        if constexpr (F::permuted) acc = unpermute(acc);
        *s = F::affine ? hsum_lanes(acc) + summs : hsum_lanes(acc);
    }
}

// The float step of one super-block (isum, mins exact), as the references.
template <typename F>
inline float k_step(float sum, const typename F::block & x, const block_q8_K & y, int32_t isum, int32_t mins) {
    const float d = y.d * f32(x.d);
    if constexpr (F::step == STEP_NO_MINS) {
        (void) mins;
        return fmaf(d, (float) isum, sum);
    } else {
        const float dmin = y.d * dmin_of(x);
        if constexpr (F::step == STEP_MINS_FIRST) {
            sum = fmaf(-dmin, (float) mins, sum);
            return fmaf(d, (float) isum, sum);
        } else {
            sum = fmaf(d, (float) isum, sum);
            return fmaf(-dmin, (float) mins, sum);
        }
    }
}

// x: n values in F, y: n values in Q8_K.
template <typename F>
void vec_dot_k(int64_t n, float * s, const void * vx, const void * vy) {
    const typename F::block * x = (const typename F::block *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / QK_K; ib++) {
        alignas(32) int16_t scales16[QK_K / 16];
        alignas(32) int16_t mins16[QK_K / 16];
        F::scales(x[ib], scales16, mins16);
        const float d = y[ib].d * f32(x[ib].d);
        const float isum = (float) k_isum<F>(x[ib], y[ib], scales16);
        if constexpr (F::step == STEP_NO_MINS) {
            sum = fmaf(d, isum, sum);
        } else {
            const float dmin = y[ib].d * dmin_of(x[ib]);
            const float mins = (float) k_mins(mins16, y[ib]);
            if constexpr (F::step == STEP_MINS_FIRST) {
                sum = fmaf(-dmin, mins, sum);
                sum = fmaf(d, isum, sum);
            } else {
                sum = fmaf(d, isum, sum);
                sum = fmaf(-dmin, mins, sum);
            }
        }
    }
    *s = sum;
}

// K-quant tile (tern_gemm_fn, file layout): each weight row against NC = 4
// activation rows at once, its scales and levels decoded once per
// super-block for all of them (vec_dot_k decodes them again for every pair
// of rows: most of a prompt's time there). Per output the same operations as
// vec_dot_k, so the same bits alone or in any tile. A last group of fewer
// than 4 rows repeats its last row and stores n outputs (one instance per
// type keeps the set's code small).
const int K_NC = 4;

template <typename F>
void k_rows(int64_t nb, int64_t nr, const uint8_t * w, size_t w_stride, const block_q8_K * const * y, int n, float * out,
            int64_t ldo) {
    for (int64_t r = 0; r < nr; r++) {
        const typename F::block * x = (const typename F::block *) (w + r * w_stride);
        float sum[K_NC];
        for (int c = 0; c < K_NC; c++) sum[c] = 0.0f;
        for (int64_t ib = 0; ib < nb; ib++) {
            alignas(32) int16_t scales16[QK_K / 16];
            alignas(32) int16_t mins16[QK_K / 16];
            F::scales(x[ib], scales16, mins16);
            __m256i sumi[K_NC];
            for (int c = 0; c < K_NC; c++) sumi[c] = _mm256_setzero_si256();
            for (int j = 0; j < CHUNKS; j++) {
                const __m256i u = F::levels(x[ib], j), sc = scale_pair(scales16[2 * j], scales16[2 * j + 1]);
                for (int c = 0; c < K_NC; c++) {
                    const __m256i pairs = pairs_unsigned<F::offset>(u, load32(y[c][ib].qs + 32 * j));
                    sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(pairs, sc));
                }
            }
            for (int c = 0; c < K_NC; c++) {
                const int32_t mins = F::step == STEP_NO_MINS ? 0 : k_mins(mins16, y[c][ib]);
                sum[c] = k_step<F>(sum[c], x[ib], y[c][ib], hsum_i32(sumi[c]), mins);
            }
        }
        for (int c = 0; c < n; c++) out[c * ldo + r] = sum[c];
    }
}

template <typename F>
void gemm_k(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride, float * out,
            int64_t ldo) {
    const int64_t nb = k / QK_K;
    const uint8_t * wb = (const uint8_t *) w;
    if (nc == 1) {  // decode: nothing to share between columns; vec_dot_k's row loop as before
        for (int64_t r = 0; r < nr; r++) vec_dot_k<F>(k, out + r, wb + r * w_stride, a);
        return;
    }
    for (int64_t m = 0; m < nc; m += K_NC) {
        const int n = nc - m < K_NC ? (int) (nc - m) : K_NC;
        const block_q8_K * y[K_NC];
        for (int c = 0; c < K_NC; c++) y[c] = (const block_q8_K *) ((const uint8_t *) a + (m + (c < n ? c : n - 1)) * a_stride);
        k_rows<F>(nb, nr, wb, w_stride, y, n, out + m * ldo, ldo);
    }
}

}  // namespace


void tern_fill_vec_dot_avx2(tern_kernel_set * ks) {
#if TERN_WITH_TYPE_Q8_0
    ks->vec_dot[TERN_TYPE_Q8_0] = vec_dot<fmt_q8_0>;
#endif
#if TERN_WITH_TYPE_Q4_0
    ks->vec_dot[TERN_TYPE_Q4_0] = vec_dot<fmt_q4_0>;
#endif
#if TERN_WITH_TYPE_Q4_1
    ks->vec_dot[TERN_TYPE_Q4_1] = vec_dot<fmt_q4_1>;
#endif
#if TERN_WITH_TYPE_Q5_0
    ks->vec_dot[TERN_TYPE_Q5_0] = vec_dot<fmt_q5_0>;
#endif
#if TERN_WITH_TYPE_Q5_1
    ks->vec_dot[TERN_TYPE_Q5_1] = vec_dot<fmt_q5_1>;
#endif
#if TERN_WITH_TYPE_IQ4_NL
    ks->vec_dot[TERN_TYPE_IQ4_NL] = vec_dot<fmt_iq4_nl>;
#endif
#if TERN_WITH_TYPE_Q2_K
    ks->vec_dot[TERN_TYPE_Q2_K] = vec_dot_k<fmt_q2_K>;
    ks->gemm[TERN_TYPE_Q2_K] = gemm_k<fmt_q2_K>;
#endif
#if TERN_WITH_TYPE_Q3_K
    ks->vec_dot[TERN_TYPE_Q3_K] = vec_dot_k<fmt_q3_K>;
    ks->gemm[TERN_TYPE_Q3_K] = gemm_k<fmt_q3_K>;
#endif
#if TERN_WITH_TYPE_Q4_K
    ks->vec_dot[TERN_TYPE_Q4_K] = vec_dot_k<fmt_q4_K>;
    ks->gemm[TERN_TYPE_Q4_K] = gemm_k<fmt_q4_K>;
#endif
#if TERN_WITH_TYPE_Q5_K
    ks->vec_dot[TERN_TYPE_Q5_K] = vec_dot_k<fmt_q5_K>;
    ks->gemm[TERN_TYPE_Q5_K] = gemm_k<fmt_q5_K>;
#endif
#if TERN_WITH_TYPE_Q6_K
    ks->vec_dot[TERN_TYPE_Q6_K] = vec_dot_k<fmt_q6_K>;
    ks->gemm[TERN_TYPE_Q6_K] = gemm_k<fmt_q6_K>;
#endif
}

}  // namespace tern
