// K-quant x Q8_K gemm tiles (tern_gemm_fn) of the avx512 kernel set: Q4_K,
// Q6_K, Q5_K, Q3_K, Q2_K weights against Q8_K activations, with AVX-512 VNNI.
// Compiled with the avx512 target flags (F/BW/VL/DQ + VNNI).
//
// Numerics: bit-identical to the scalar references (tensor/quants_k_dot.cpp),
// hence to this set's vec_dot, whatever the tile: per super-block the two
// exact integers
//   isum = sum_i scale[i/16] * level[i] * q8[i],   mins = sum_j min[j] * bsums[j]
// and then the reference's float step, lane by lane,
//   Q3_K, Q6_K  acc = fma(d, isum, acc)
//   Q2_K        acc = fma(-dmin, mins, acc); acc = fma(d, isum, acc)
//   Q4_K, Q5_K  acc = fma(d, isum, acc);     acc = fma(-dmin, mins, acc)
// with d = d_y * d_x, dmin = d_y * dmin_x. Every output goes through exactly
// these operations in every tile shape, so gemm(13 x 9) and gemm(1 x 1) give
// the same bits, and so do any thread count and batch split.
//
// Integer part. A super-block is four 64-value chunks in natural order (chunk
// k = values 64k .. 64k+63). Per chunk a weight row gives one zmm of unsigned
// levels u (Q4_K 0..15, Q5_K 0..31, Q6_K 0..63, Q3_K 0..7, Q2_K 0..3) and one
// zmm S of its sub-block scales, one int32 lane per 4 values, written (sc, 0)
// as an int16 pair; the activation gives its 64 int8 levels q. Then
//   dp  = dpbusd(init, u, q)    lane = init + sum of 4 products u * q
//   acc = dpwssd(acc, dp, S)    acc += low16(dp) * sc (+ high16(dp) * 0)
// dp fits in int16 for every type (at most 4 * 63 * 128 = 32256), so the
// second step multiplies it by its scale exactly. Offsets (level = u - 32 for
// Q6_K, u - 4 for Q3_K) start dp at -offset * (sum of the 4 activation levels),
// itself a dpbusd of the activation with the constant offset, computed once
// per activation chunk and shared by every weight row of the tile (with the
// offset, |dp| <= 4 * 32 * 128). No step saturates: -128 activations are exact.
// The 16 lanes of acc are summed once per super-block, 16 outputs at a time
// (reduce16); mins come from the weight mins and the activation bsums with two
// madds per 4 rows and activation row (mins_lanes).
//
// Tiles: an output (r, c) lives in lane slot(r, c) of a 16-lane vector; a
// micro-tile is R weight rows x C activation rows with R * C <= 16 (8 x 1 for
// decode, 8 x 2, 4 x 3, 4 x 4; single rows at the edges). The weight rows'
// scales, mins and d are unpacked once per super-block for the micro-tile:
// - nc <= 4 ("direct"): the levels are unpacked in registers as they are
//   used, each chunk serving the C activation rows; decode (nc = 1) runs
//   8 weight rows at once, sharing the activation chunk and the reductions.
// - nc > 4 ("packed"): for 4 weight rows at a time, each super-block's levels
//   and scale vectors are unpacked once into a stack buffer and reused by
//   every activation row of the tile (4 at a time); the activation
//   super-block is loaded once per micro-tile and reused by its 4 weight rows.
// Nothing here allocates; the scratch is a few KiB of stack.
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "tensor/blocks.h"
#include "tensor/quants_k.h"

namespace tern {

// GCC 12 flags the deliberately undefined registers inside avx512fintrin.h
// (_mm512_undefined_epi32) as uninitialized when inlined here: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace {

// ------------------------------------------------------------ helpers

template <int N> struct ic { static const int value = N; };

// f(ic<0>()), ..., f(ic<N-1>()): compile-time chunk indices.
template <int N, int I = 0, class Fn>
inline void unroll(Fn && f) {
    if constexpr (I < N) {
        f(ic<I>());
        unroll<N, I + 1>(f);
    }
}

inline __m512i bcast256(const void * p) { return _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) p)); }

// [a x 32 bytes | b x 32 bytes]
inline __m512i halves8(int a, int b) { return _mm512_inserti64x4(_mm512_set1_epi8((char) a), _mm256_set1_epi8((char) b), 1); }
// [a x 16 words | b x 16 words]
inline __m512i halves16(int a, int b) { return _mm512_inserti64x4(_mm512_set1_epi16((short) a), _mm256_set1_epi16((short) b), 1); }

// Per-row data of one super-block for up to 16 weight rows, unpacked four
// rows at a time (group g = rows 4g .. 4g+3, one row per 128-bit lane).
struct row_info {
    __m512i scq[4][4];  // [g][q]: lane 4i + j = scale 4q + j of row 4g + i as (int16, 0)
                        // (Q4_K / Q5_K: q < 2, scales of 32-value sub-blocks)
    __m512i m4[4][2];   // [g][h]: int16 lane 8i + j = min 8h + j of row 4g + i
                        // (Q4_K / Q5_K: h = 0 only, mins of 32-value sub-blocks)
    alignas(64) uint32_t hd[16];  // fp16 d | fp16 dmin << 16 of each row
};

enum k_float_step { STEP_NO_MINS, STEP_MINS_FIRST, STEP_MINS_AFTER };

// 16 bytes at offset off of four blocks, one per 128-bit lane.
inline __m512i load4(const uint8_t * const * x, int off) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *) (x[0] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *) (x[1] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *) (x[2] + off)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *) (x[3] + off)), 3);
}

// Per 128-bit lane: [b0 .. b15] (16 shuffle indices, -1 for zero).
#define LANES16(...) _mm512_broadcast_i32x4(_mm_setr_epi8(__VA_ARGS__))

// int16 scales per lane (lo: sub-blocks 0..7, hi: 8..15) -> scq[g][0..3] as
// (sc, sc) pairs, and m4[g] (for the offset correction of Q3_K / Q6_K).
inline void store_scales16_i16(row_info & info, int g, __m512i lo, __m512i hi) {
    info.scq[g][0] = _mm512_unpacklo_epi16(lo, lo);
    info.scq[g][1] = _mm512_unpackhi_epi16(lo, lo);
    info.scq[g][2] = _mm512_unpacklo_epi16(hi, hi);
    info.scq[g][3] = _mm512_unpackhi_epi16(hi, hi);
    info.m4[g][0] = lo;
    info.m4[g][1] = hi;
}

// 16 unsigned scale bytes per lane (sub-blocks 0..15) -> scq[g][0..3].
inline void store_scales16_u8(row_info & info, int g, __m512i sc8, __m512i bias) {
    const __m512i z = _mm512_setzero_si512();
    const __m512i lo = _mm512_sub_epi16(_mm512_unpacklo_epi8(sc8, z), bias);
    const __m512i hi = _mm512_sub_epi16(_mm512_unpackhi_epi8(sc8, z), bias);
    store_scales16_i16(info, g, lo, hi);
}

template <int off>
inline void store_hd(row_info & info, int g, const uint8_t * const * x) {
    for (int i = 0; i < 4; i++) {
        uint32_t v;
        memcpy(&v, x[i] + off, 4);
        info.hd[4 * g + i] = v;
    }
}
template <int off>
inline void store_hd16(row_info & info, int g, const uint8_t * const * x) {
    for (int i = 0; i < 4; i++) {
        uint16_t v;
        memcpy(&v, x[i] + off, 2);
        info.hd[4 * g + i] = v;
    }
}

// Scale lanes of chunk k of row r (16 sub-blocks of 16 values): lane l takes
// scale 4k + l/4, from scq[g][k].
template <int k>
inline __m512i scale16_of(const row_info & info, int r) {
    const int b = 4 * (r % 4);
    const __m512i idx = _mm512_setr_epi32(b, b, b, b, b + 1, b + 1, b + 1, b + 1, b + 2, b + 2, b + 2, b + 2, b + 3, b + 3, b + 3, b + 3);
    return _mm512_permutexvar_epi32(idx, info.scq[r / 4][k]);
}
// .. 8 sub-blocks of 32 values: lanes 0..7 scale 2k, lanes 8..15 scale 2k + 1.
template <int k>
inline __m512i scale32_of(const row_info & info, int r) {
    const int b = 4 * (r % 4) + (2 * k) % 4;
    const __m512i idx = _mm512_inserti64x4(_mm512_set1_epi32(b), _mm256_set1_epi32(b + 1), 1);
    return _mm512_permutexvar_epi32(idx, info.scq[r / 4][k / 2]);
}

// Q4_K / Q5_K: the 6-bit scales and mins of four rows (scales[12] at byte 4
// of the block): per lane [sc0..sc7, m0..m7], then into info.
inline void prep_k4(const uint8_t * const * x, int g, row_info & info) {
    const __m512i s = load4(x, 4);  // s0..s11, qs0..3
    const __m512i a = _mm512_shuffle_epi8(s, LANES16(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const __m512i b = _mm512_shuffle_epi8(s, LANES16(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    // bytes 12..15 (m4..m7) take the high nibble of s8..s11
    const __m512i a2 = _mm512_and_si512(_mm512_mask_srli_epi16(a, 0xC0C0C0C0u, a, 4), LANES16(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15));
    // | (b >> 6) << 4
    const __m512i p = _mm512_ternarylogic_epi32(a2, _mm512_srli_epi16(b, 2), _mm512_set1_epi8(0x30), 0xF8);
    const __m512i z = _mm512_setzero_si512();
    info.m4[g][0] = _mm512_unpackhi_epi8(p, z);
    const __m512i sc16 = _mm512_unpacklo_epi8(p, z);
    info.scq[g][0] = _mm512_unpacklo_epi16(sc16, sc16);
    info.scq[g][1] = _mm512_unpackhi_epi16(sc16, sc16);
    store_hd<0>(info, g, x);
}

// ------------------------------------------------------------ formats
// Per type: block, offset, float step, mins (0: none; 8: one per 32 values,
// against pair sums of bsums; 16: one per 16 values);
//   prep(x[4], g, info)  scales, mins, d, dmin of four rows' super-blocks;
//   level<k>(x)          unsigned levels of chunk k (64 values, natural order);
//   scale<k>(info, r)    scale lanes of chunk k of row r.

struct f_q4_K {
    typedef block_q4_K block;
    static const bool prefetch = false;
    static const int offset = 0, mins = 8;
    static const k_float_step step = STEP_MINS_AFTER;
    static inline void prep(const uint8_t * const * x, int g, row_info & info) { prep_k4(x, g, info); }
    // qs[32k + l]: value 64k + l in the low nibble, 64k + 32 + l in the high one.
    template <int k> static inline __m512i level(const block & x) {
        return _mm512_and_si512(_mm512_srlv_epi16(bcast256(x.qs + 32 * k), halves16(0, 4)), _mm512_set1_epi8(0x0F));
    }
    template <int k> static inline __m512i scale(const row_info & info, int r) { return scale32_of<k>(info, r); }
};

struct f_q5_K {
    typedef block_q5_K block;
    static const bool prefetch = false;
    static const int offset = 0, mins = 8;
    static const k_float_step step = STEP_MINS_AFTER;
    static inline void prep(const uint8_t * const * x, int g, row_info & info) { prep_k4(x, g, info); }
    // As Q4_K, plus bit 4: bit i/32 of qh[i % 32].
    template <int k> static inline __m512i level(const block & x) {
        const __m512i lo = _mm512_and_si512(_mm512_srlv_epi16(bcast256(x.qs + 32 * k), halves16(0, 4)), _mm512_set1_epi8(0x0F));
        const __mmask64 hb = _mm512_test_epi8_mask(bcast256(x.qh), halves8(1 << (2 * k), 1 << (2 * k + 1)));
        return _mm512_mask_add_epi8(lo, hb, lo, _mm512_set1_epi8(16));
    }
    template <int k> static inline __m512i scale(const row_info & info, int r) { return scale32_of<k>(info, r); }
};

struct f_q6_K {
    typedef block_q6_K block;
    static const bool prefetch = true;
    [[maybe_unused]] static const int offset = 32, mins = 0;
    static const k_float_step step = STEP_NO_MINS;
    static inline void prep(const uint8_t * const * x, int g, row_info & info) {
        const __m512i s = load4(x, offsetof(block_q6_K, scales));  // int8
        store_scales16_i16(info, g, _mm512_srai_epi16(_mm512_unpacklo_epi8(s, s), 8), _mm512_srai_epi16(_mm512_unpackhi_epi8(s, s), 8));
        store_hd16<offsetof(block_q6_K, d)>(info, g, x);
    }
    // Chunk k = (h, half) = (k / 2, k % 2): low 4 bits are nibble `half` of
    // ql[64h .. 64h+63]; high 2 bits are bits 4 half + {0,1} (first 32 values)
    // and 4 half + {2,3} (last 32) of qh[32h + l], moved to bits 4..5.
    template <int k> static inline __m512i level(const block & x) {
        const int h = k / 2, half = k % 2;
        const __m512i ql = _mm512_loadu_si512(x.ql + 64 * h);
        const __m512i qh = bcast256(x.qh + 32 * h);
        __m512i lo, hi;
        if constexpr (half == 0) {
            lo = _mm512_and_si512(ql, _mm512_set1_epi8(0x0F));
            hi = _mm512_sllv_epi16(qh, halves16(4, 2));
        } else {
            lo = _mm512_and_si512(_mm512_srli_epi16(ql, 4), _mm512_set1_epi8(0x0F));
            hi = _mm512_srlv_epi16(qh, halves16(0, 2));
        }
        return _mm512_ternarylogic_epi32(lo, hi, _mm512_set1_epi8(0x30), 0xF8);  // lo | (hi & 0x30)
    }
    template <int k> static inline __m512i scale(const row_info & info, int r) { return scale16_of<k>(info, r); }
};

// Q2_K / Q3_K low bits: value 128h + 32s + l in bits 2s..2s+1 of qs[32h + l].
template <int k>
inline __m512i two_bit_levels(const uint8_t * qs) {
    const int h = k / 2, half = k % 2;
    return _mm512_and_si512(_mm512_srlv_epi16(bcast256(qs + 32 * h), halves16(4 * half, 4 * half + 2)), _mm512_set1_epi8(3));
}

struct f_q3_K {
    typedef block_q3_K block;
    static const bool prefetch = true;
    [[maybe_unused]] static const int offset = 4, mins = 0;
    static const k_float_step step = STEP_NO_MINS;
    // sc[j] = (low 4 bits: scales[j % 8], nibble j / 8) | (bits 2 (j / 4) of scales[8 + j % 4]) << 4, minus 32.
    static inline void prep(const uint8_t * const * x, int g, row_info & info) {
        const __m512i s = load4(x, offsetof(block_q3_K, scales) - 2);  // qs62, qs63, scales0..11, d (inside the block)
        __m512i lo = _mm512_shuffle_epi8(s, LANES16(2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5, 6, 7, 8, 9));
        lo = _mm512_and_si512(_mm512_mask_srli_epi16(lo, 0xF0F0F0F0u, lo, 4), _mm512_set1_epi8(0x0F));
        __m512i hb = _mm512_shuffle_epi8(s, LANES16(10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13));
        hb = _mm512_srlv_epi32(hb, _mm512_broadcast_i32x4(_mm_setr_epi32(0, 2, 4, 6)));
        const __m512i sc8 = _mm512_ternarylogic_epi32(lo, _mm512_slli_epi16(hb, 4), _mm512_set1_epi8(0x30), 0xF8);
        store_scales16_u8(info, g, sc8, _mm512_set1_epi16(32));
        store_hd16<offsetof(block_q3_K, d)>(info, g, x);
    }
    // u = low bits | hbit << 2 (level = u - 4); hbit of value i = bit i/32 of hmask[i % 32].
    template <int k> static inline __m512i level(const block & x) {
        const __m512i lo = two_bit_levels<k>(x.qs);
        const __mmask64 hb = _mm512_test_epi8_mask(bcast256(x.hmask), halves8(1 << (2 * k), 1 << (2 * k + 1)));
        return _mm512_mask_add_epi8(lo, hb, lo, _mm512_set1_epi8(4));
    }
    template <int k> static inline __m512i scale(const row_info & info, int r) { return scale16_of<k>(info, r); }
};

struct f_q2_K {
    typedef block_q2_K block;
    static const bool prefetch = false;
    static const int offset = 0, mins = 16;
    static const k_float_step step = STEP_MINS_FIRST;
    static inline void prep(const uint8_t * const * x, int g, row_info & info) {
        const __m512i s = load4(x, 0);  // low nibble scale, high nibble min
        const __m512i nib = _mm512_set1_epi8(0x0F), z = _mm512_setzero_si512();
        store_scales16_u8(info, g, _mm512_and_si512(s, nib), z);
        const __m512i m = _mm512_and_si512(_mm512_srli_epi16(s, 4), nib);
        info.m4[g][0] = _mm512_unpacklo_epi8(m, z);
        info.m4[g][1] = _mm512_unpackhi_epi8(m, z);
        store_hd<offsetof(block_q2_K, d)>(info, g, x);
    }
    template <int k> static inline __m512i level(const block & x) { return two_bit_levels<k>(x.qs); }
    template <int k> static inline __m512i scale(const row_info & info, int r) { return scale16_of<k>(info, r); }
};

// ------------------------------------------------------------ lanes and slots

// Output (r, c) of an R x C micro-tile lives in lane slot(r, c) = 4 (r % 4) +
// (r / 4) C + c: the order in which mins_lanes produces it (R * C <= 16, and
// ceil(R / 4) * C <= 4).
template <int R, int C>
constexpr int slot(int r, int c) { return 4 * (r % 4) + (r / 4) * C + c; }
template <int R, int C>
constexpr int slot_row(int i) { return (i % 4) / C * 4 + i / 4 < R && (i % 4) / C < (R + 3) / 4 ? (i % 4) / C * 4 + i / 4 : 0; }
template <int R, int C>
constexpr int slot_col(int i) { return (i % 4) / C < (R + 3) / 4 ? (i % 4) % C : 0; }

template <int R, int C>
inline __m512i slot_rows() {
    return _mm512_setr_epi32((slot_row<R, C>(0)), (slot_row<R, C>(1)), (slot_row<R, C>(2)), (slot_row<R, C>(3)), (slot_row<R, C>(4)),
                             (slot_row<R, C>(5)), (slot_row<R, C>(6)), (slot_row<R, C>(7)), (slot_row<R, C>(8)), (slot_row<R, C>(9)),
                             (slot_row<R, C>(10)), (slot_row<R, C>(11)), (slot_row<R, C>(12)), (slot_row<R, C>(13)),
                             (slot_row<R, C>(14)), (slot_row<R, C>(15)));
}
template <int R, int C>
inline __m512i slot_cols() {
    return _mm512_setr_epi32((slot_col<R, C>(0)), (slot_col<R, C>(1)), (slot_col<R, C>(2)), (slot_col<R, C>(3)), (slot_col<R, C>(4)),
                             (slot_col<R, C>(5)), (slot_col<R, C>(6)), (slot_col<R, C>(7)), (slot_col<R, C>(8)), (slot_col<R, C>(9)),
                             (slot_col<R, C>(10)), (slot_col<R, C>(11)), (slot_col<R, C>(12)), (slot_col<R, C>(13)),
                             (slot_col<R, C>(14)), (slot_col<R, C>(15)));
}

// Lane i of the result = sum of the 16 lanes of v[i] (v[i] for i >= n: zero).
template <int n>
inline __m512i reduce16(const __m512i * v) {
    const __m512i z = _mm512_setzero_si512();
    __m512i a[8], b[4], c[2];
    for (int i = 0; i < 8; i++) {
        const __m512i x = 2 * i < n ? v[2 * i] : z, y = 2 * i + 1 < n ? v[2 * i + 1] : z;
        a[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(x, y), _mm512_unpackhi_epi32(x, y));
    }
    for (int i = 0; i < 4; i++) b[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(a[2 * i], a[2 * i + 1]), _mm512_unpackhi_epi64(a[2 * i], a[2 * i + 1]));
    for (int i = 0; i < 2; i++) c[i] = _mm512_add_epi32(_mm512_shuffle_i32x4(b[2 * i], b[2 * i + 1], 0x88), _mm512_shuffle_i32x4(b[2 * i], b[2 * i + 1], 0xDD));
    return _mm512_add_epi32(_mm512_shuffle_i32x4(c[0], c[1], 0x88), _mm512_shuffle_i32x4(c[0], c[1], 0xDD));
}

// mins of every slot: for 4-row group g and activation row c, madd the rows'
// mins (int16, 4 rows x 8 per vector) with the activation's bsums (Q4_K /
// Q5_K: sums of bsum pairs, one per 32 values); then lane 4 (r % 4) + w holds
// the total of vector w = g C + c.
template <int kind, int R, int C>
inline __m512i mins_lanes(const row_info & info, const block_q8_K * const * y) {
    const int G = (R + 3) / 4;
    __m512i b0[C], b1[C];
    for (int c = 0; c < C; c++) {
        const __m128i lo = _mm_loadu_si128((const __m128i *) y[c]->bsums), hi = _mm_loadu_si128((const __m128i *) (y[c]->bsums + 8));
        if constexpr (kind == 8) {
            b0[c] = _mm512_broadcast_i32x4(_mm_hadd_epi16(lo, hi));  // |pair| <= 32 * 128: exact
        } else {
            b0[c] = _mm512_broadcast_i32x4(lo);
            b1[c] = _mm512_broadcast_i32x4(hi);
        }
    }
    __m512i v[4];
    for (int i = 0; i < 4; i++) v[i] = _mm512_setzero_si512();
    for (int g = 0; g < G; g++) {
        for (int c = 0; c < C; c++) {
            if constexpr (kind == 8) v[g * C + c] = _mm512_madd_epi16(info.m4[g][0], b0[c]);
            else v[g * C + c] = _mm512_dpwssd_epi32(_mm512_madd_epi16(info.m4[g][0], b0[c]), info.m4[g][1], b1[c]);
        }
    }
    const __m512i a0 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
    const __m512i a1 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]), _mm512_unpackhi_epi32(v[2], v[3]));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(a0, a1), _mm512_unpackhi_epi64(a0, a1));
}

// ------------------------------------------------------------ weight rows

// Rows r < R of the current super-block: pointers, and prep for every group
// (a partial group repeats its last row).
template <class F, int R>
inline void prep_rows(const uint8_t * w, size_t w_stride, int64_t ib, const uint8_t ** x, row_info & info) {
    for (int r = 0; r < (R + 3) / 4 * 4; r++) x[r] = w + (r < R ? r : R - 1) * w_stride + ib * sizeof(typename F::block);
    for (int g = 0; g < (R + 3) / 4; g++) F::prep(x + 4 * g, g, info);
    if constexpr (F::prefetch) {
        // Q3_K and Q6_K keep their scales at the end of the block and are read
        // end first, which the hardware prefetchers follow badly when weights
        // stream from memory: fetch the block two ahead explicitly.
        const int bs = (int) sizeof(typename F::block);
        for (int r = 0; r < R; r++) {
            const char * p = (const char *) x[r] + 2 * bs;
            for (int o = 0; o < bs; o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
            _mm_prefetch(p + bs - 1, _MM_HINT_T0);
        }
    }
}

// Levels unpacked where they are used (decode and narrow tiles).
template <class F>
struct direct_rows {
    const uint8_t * x[16];  // the current super-block of each row
    row_info info;
    template <int k> inline __m512i L(int r) const { return F::template level<k>(*(const typename F::block *) x[r]); }
    template <int k> inline __m512i S(int r) const { return F::template scale<k>(info, r); }
};

// Levels and scale lanes of up to 4 rows unpacked once per super-block.
template <class F>
struct packed_rows {
    alignas(64) uint8_t lv[4][4][64];  // [row][chunk] levels
    alignas(64) int32_t sv[4][4][16];  // [row][chunk] scale lanes
    const uint8_t * x[4];
    row_info info;
    template <int k> inline __m512i L(int r) const { return _mm512_load_si512(lv[r][k]); }
    template <int k> inline __m512i S(int r) const { return _mm512_load_si512(sv[r][k]); }
    template <int R>
    inline void pack(const uint8_t * w, size_t w_stride, int64_t ib) {
        prep_rows<F, R>(w, w_stride, ib, x, info);
        for (int r = 0; r < R; r++) {
            unroll<4>([&](auto kk) {
                constexpr int k = decltype(kk)::value;
                _mm512_store_si512(lv[r][k], F::template level<k>(*(const typename F::block *) x[r]));
                _mm512_store_si512(sv[r][k], F::template scale<k>(info, r));
            });
        }
    }
};

// ------------------------------------------------------------ micro-tile

// One super-block of an R x C micro-tile: rows from `rows` (prepared for this
// super-block), activation blocks y[c]; returns facc after this super-block's
// float step (lanes by slot).
template <class F, int R, int C, class Rows>
inline __m512 tile_sb(const Rows & rows, const block_q8_K * const * y, __m512 facc) {
    static_assert(R * C <= 16 && (R + 3) / 4 * C <= 4, "micro-tile shape");
    static_assert(F::offset == 0 || F::offset == 4 || F::offset == 32, "offset");
    const __m512i zero = _mm512_setzero_si512();
    __m512i acc[R * C];
    unroll<4>([&](auto kk) {
        constexpr int k = decltype(kk)::value;
        __m512i q[C];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) q[c] = _mm512_loadu_si512(y[c]->qs + 64 * k);
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) {
            const __m512i L = rows.template L<k>(r), S = rows.template S<k>(r);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                const __m512i pairs = _mm512_maddubs_epi16(L, q[c]);
                if constexpr (k == 0) acc[r * C + c] = _mm512_madd_epi16(pairs, S);
                else acc[r * C + c] = _mm512_dpwssd_epi32(acc[r * C + c], pairs, S);
            }
        }
    });
    // Into slot order (lanes of no output stay zero).
    __m512i acc16[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) acc16[i] = zero;
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) acc16[slot<R, C>(r, c)] = acc[r * C + c];
    }
    __m512i isum_i = reduce16<16>(acc16);
    if constexpr (F::offset != 0) {
        // level = u - offset: minus offset * sum_j scale[j] * bsums[j]
        const __m512i corr = mins_lanes<16, R, C>(rows.info, y);
        isum_i = _mm512_sub_epi32(isum_i, _mm512_slli_epi32(corr, F::offset == 32 ? 5 : 2));
    }
    const __m512 isum = _mm512_cvtepi32_ps(isum_i);

    // d_y by slot; d_x and dmin_x by slot from the fp16 pairs (rows 0..7 in
    // h0, 8..15 in h1, interleaved d, dmin).
    __m512 yd4;
    {
        alignas(16) float ydv[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int c = 0; c < C; c++) ydv[c] = y[c]->d;
        yd4 = _mm512_castps128_ps512(_mm_load_ps(ydv));
    }
    const __m512 yd = _mm512_permutexvar_ps(slot_cols<R, C>(), yd4);
    const __m512 h0 = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *) rows.info.hd));
    const __m512 h1 = R > 8 ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *) (rows.info.hd + 8))) : h0;
    const __m512i drow = _mm512_slli_epi32((slot_rows<R, C>()), 1);
    const __m512 d = _mm512_mul_ps(yd, _mm512_permutex2var_ps(h0, drow, h1));
    if constexpr (F::step == STEP_NO_MINS) {
        facc = _mm512_fmadd_ps(d, isum, facc);
    } else {
        const __m512 mins = _mm512_cvtepi32_ps(mins_lanes<F::mins, R, C>(rows.info, y));
        const __m512 dmin = _mm512_mul_ps(yd, _mm512_permutex2var_ps(h0, _mm512_add_epi32(drow, _mm512_set1_epi32(1)), h1));
        if constexpr (F::step == STEP_MINS_FIRST) {
            facc = _mm512_fnmadd_ps(dmin, mins, facc);
            facc = _mm512_fmadd_ps(d, isum, facc);
        } else {
            facc = _mm512_fmadd_ps(d, isum, facc);
            facc = _mm512_fnmadd_ps(dmin, mins, facc);
        }
    }
    return facc;
}

// The tile's outputs of its first nv columns.
template <int R, int C>
inline void store_tile(__m512 facc, float * out, int64_t ldo, int nv = C) {
    alignas(64) float v[16];
    _mm512_store_ps(v, facc);
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < nv; c++) out[c * ldo + r] = v[slot<R, C>(r, c)];
    }
}

// ------------------------------------------------------------ drivers

// R weight rows x C activation rows (C <= 4), levels unpacked in registers.
template <class F, int R, int C>
void run_direct(int64_t nsb, const uint8_t * w, size_t w_stride, const uint8_t * a, size_t a_stride, float * out, int64_t ldo) {
    direct_rows<F> rows;
    __m512 facc = _mm512_setzero_ps();
    for (int64_t ib = 0; ib < nsb; ib++) {
        prep_rows<F, R>(w, w_stride, ib, rows.x, rows.info);
        const block_q8_K * y[C];
        for (int c = 0; c < C; c++) y[c] = (const block_q8_K *) (a + c * a_stride) + ib;
        facc = tile_sb<F, R, C>(rows, y, facc);
    }
    store_tile<R, C>(facc, out, ldo);
}

// The rows past the last full tile go one at a time: mul_mat's chunks are
// multiples of 8 rows, so only a matrix whose height is not meets them, and
// each smaller tile shape would be its own 2-4 KB of unrolled code per type.
template <class F, int C>
void direct_cols(int64_t nsb, int64_t nr, const uint8_t * w, size_t w_stride, const uint8_t * a, size_t a_stride, float * out, int64_t ldo) {
    const int RM = C <= 2 ? 8 : 4;
    int64_t r0 = 0;
    for (; r0 + RM <= nr; r0 += RM) run_direct<F, RM, C>(nsb, w + r0 * w_stride, w_stride, a, a_stride, out + r0, ldo);
    for (; r0 < nr; r0++) run_direct<F, 1, C>(nsb, w + r0 * w_stride, w_stride, a, a_stride, out + r0, ldo);
}

const int PANEL = 64;  // activation rows per packed pass

// R (<= 4) weight rows x nc (<= PANEL) activation rows: each weight
// super-block unpacked once, then used for every activation row, 4 at a time.
template <class F, int R>
void run_packed(int64_t nsb, int64_t nc, const uint8_t * w, size_t w_stride, const uint8_t * a, size_t a_stride, float * out, int64_t ldo) {
    packed_rows<F> rows;
    __m512 facc[PANEL / 4];
    const int64_t nfull = nc / 4, rem = nc % 4;
    for (int64_t i = 0; i < nfull + (rem ? 1 : 0); i++) facc[i] = _mm512_setzero_ps();
    for (int64_t ib = 0; ib < nsb; ib++) {
        rows.template pack<R>(w, w_stride, ib);
        for (int64_t cb = 0; cb < nfull; cb++) {
            const block_q8_K * y[4];
            for (int c = 0; c < 4; c++) y[c] = (const block_q8_K *) (a + (4 * cb + c) * a_stride) + ib;
            facc[cb] = tile_sb<F, R, 4>(rows, y, facc[cb]);
        }
        if (rem) {  // the 4-column tile again, its last real column repeated (code size)
            const block_q8_K * y[4];
            for (int c = 0; c < 4; c++) y[c] = (const block_q8_K *) (a + (4 * nfull + (c < rem ? c : rem - 1)) * a_stride) + ib;
            facc[nfull] = tile_sb<F, R, 4>(rows, y, facc[nfull]);
        }
    }
    for (int64_t cb = 0; cb < nfull; cb++) store_tile<R, 4>(facc[cb], out + 4 * cb * ldo, ldo);
    if (rem) store_tile<R, 4>(facc[nfull], out + 4 * nfull * ldo, ldo, (int) rem);
}

template <class F>
void gemm_k(int64_t k, int64_t nr, int64_t nc, const void * vw, size_t w_stride, const void * va, size_t a_stride, float * out, int64_t ldo) {
    const int64_t nsb = k / QK_K;
    const uint8_t * w = (const uint8_t *) vw;
    const uint8_t * a = (const uint8_t *) va;
    for (int64_t c0 = 0; c0 < nc; c0 += PANEL) {
        const int64_t ncp = nc - c0 < PANEL ? nc - c0 : PANEL;
        const uint8_t * ap = a + c0 * a_stride;
        float * op = out + c0 * ldo;
        switch (ncp) {
        case 1: direct_cols<F, 1>(nsb, nr, w, w_stride, ap, a_stride, op, ldo); break;
        case 2: direct_cols<F, 2>(nsb, nr, w, w_stride, ap, a_stride, op, ldo); break;
        case 3:  // as 2 + 1: a 3-column instance would be ~4 KB per type for 3-token inputs
            direct_cols<F, 2>(nsb, nr, w, w_stride, ap, a_stride, op, ldo);
            direct_cols<F, 1>(nsb, nr, w, w_stride, ap + 2 * a_stride, a_stride, op + 2 * ldo, ldo);
            break;
        case 4: direct_cols<F, 4>(nsb, nr, w, w_stride, ap, a_stride, op, ldo); break;
        default: {
            int64_t r0 = 0;
            for (; r0 + 4 <= nr; r0 += 4) run_packed<F, 4>(nsb, ncp, w + r0 * w_stride, w_stride, ap, a_stride, op + r0, ldo);
            for (; r0 < nr; r0++) run_packed<F, 1>(nsb, ncp, w + r0 * w_stride, w_stride, ap, a_stride, op + r0, ldo);
        }
        }
    }
}

}  // namespace


void tern_fill_gemm_kquant_avx512(tern_kernel_set * ks) {
#if TERN_WITH_TYPE_Q2_K
    ks->gemm[TERN_TYPE_Q2_K] = gemm_k<f_q2_K>;
#endif
#if TERN_WITH_TYPE_Q3_K
    ks->gemm[TERN_TYPE_Q3_K] = gemm_k<f_q3_K>;
#endif
#if TERN_WITH_TYPE_Q4_K
    ks->gemm[TERN_TYPE_Q4_K] = gemm_k<f_q4_K>;
#endif
#if TERN_WITH_TYPE_Q5_K
    ks->gemm[TERN_TYPE_Q5_K] = gemm_k<f_q5_K>;
#endif
#if TERN_WITH_TYPE_Q6_K
    ks->gemm[TERN_TYPE_Q6_K] = gemm_k<f_q6_K>;
#endif
}

}  // namespace tern
