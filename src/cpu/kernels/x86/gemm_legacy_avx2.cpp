// Matrix tiles (tern_gemm_fn, kernel_set.h) of the avx2 kernel set for the
// legacy formats: Q4_0 Q5_0 Q8_0 IQ4_NL x Q8_0 and Q4_1 Q5_1 x Q8_1.
// Compiled with the avx2 target flags (AVX2 + FMA + F16C): static code only.
//
// Layout, as the avx512 tiles (gemm_legacy_avx512.cpp) with 8 lanes: the
// lanes are weight rows. A 32-value block is eight groups of four values;
// for 8 weight rows, group j is one ymm whose lane r holds the four levels
// 4j..4j+3 of row r as bytes (an 8x4-dword transpose of the rows' packed
// bytes, then the format's decoding). The activation's group j is one dword
// broadcast to every lane, so one maddubs per group gives, for 8 rows at
// once, the two pair sums of the quad the references sum; no step saturates:
// - Q4_0 Q4_1: unsigned levels u <= 15 (Q4_0's level is u - 8); the pairs
//   of all eight groups add up in int16 (at most 8 * 2 * 15 * 128 = 30720)
//   before one madd makes the block total;
// - Q5_0 Q5_1: u <= 31: four groups' pairs add up in int16 (4 * 2 * 31 *
//   128 = 31744), the two halves in int32; the fifth bits (qh) spread to
//   bytes with a shuffle, a mask and a min;
// - IQ4_NL: signed table values x (-127..113) times signed activations y
//   as maddubs(|y|, x * sign(y)): |y| <= 128 fits the unsigned operand and
//   -x the signed one, where the usual |x|, y * sign(x) fails for y = -128.
// Offsets come back exactly: Q4_0's (8) and Q5_0's (16) in int32 as off *
// the activation block's sum, computed once per activation block.
// Q8_0 (signed x signed, up to -128 * -128) has its own tile: per row both
// sides widened to int16 and madd-ed, the 8 rows' partial sums reduced by a
// hadd tree into one vector of row totals.
//
// Float part: the references' operations (tensor/quants_legacy.cpp), lane by
// lane, so a tile gives the scalar reference's bits and each output depends
// only on its two rows, whatever tile it falls in:
//   PER_BLOCK (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0)
//                               acc = fma((float) sumi, d_w * d_a, acc)
//                               (+ acc = fma(m_w, s_a, acc) for Q4_1 Q5_1)
//   LANES8 (IQ4_NL)             acc_l = fma(d_w * d_a, (float) lane_l, acc_l)
//                               for the 8 quads l, one ymm per quad; at the
//                               end ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)).
// Tiles (shape<F>): decode (one activation column) 16 rows, as two row
// vectors of 8, the weights prefetched ahead; prompt 8 rows x 8 columns
// (Q4_0 Q4_1 Q5_0 Q5_1), x 4 (IQ4_NL), x 2 (Q8_0); weight groups unpacked once per
// block and row vector and reused by every column of the tile. Rows past the
// end of a short tile repeat the last row (computed, not stored).
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tensor/blocks.h"
#include "tensor/quants.h"
#include "cpu/kernels/x86/int_dot_avx2.h"

namespace tern {

// Full unrolling of the constant loops over rows, columns and groups keeps
// the tile's vectors in registers.
#define UNROLL _Pragma("GCC unroll 16")

namespace {

const int QK = 32;     // values per block
const int LANES = 8;   // rows per row vector
const int GROUPS = 8;  // 4-value groups per block

inline float f32(const uint8_t * p) {
    tern_fp16 h;
    memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}
inline int32_t rd32(const uint8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}
inline uint64_t ld16(const uint8_t * p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return h;
}
inline uint64_t ld32(const uint8_t * p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

// ------------------------------------------------------------ weights

// The tiles read their weight rows through a row vector type (ROWS: rows_strided,
// rows_list), legacy_column_group_x86.h.

// Decode streams every row of the tile at once: on every `every`-th block
// (every = 64 / block size) each row's bytes PREFETCH_AHEAD ahead are
// prefetched.
const size_t PREFETCH_AHEAD = 256;

// One walk over the 8 rows of a block: each row's 16 bytes at `qs` as one
// xmm, its fp16 d (and m at byte 2, affine formats) four rows per qword, and
// the dword at `qh` (Q5) two rows per qword.
template <size_t qs, size_t qh, bool affine, typename ROWS>
inline void walk(const ROWS & rv, size_t bo, bool prefetch, __m128i x[LANES], uint64_t dq[2], uint64_t mq[2],
                 uint64_t hq[4]) {
    auto c = rv.first(bo);
    UNROLL
    for (int r = 0; r < LANES; r++) {
        const uint8_t * p = c.at();
        if (prefetch) _mm_prefetch((const char *) (p + PREFETCH_AHEAD), _MM_HINT_T0);
        x[r] = _mm_loadu_si128((const __m128i *) (p + qs));
        if (r % 4 == 0) dq[r / 4] = ld16(p);
        else dq[r / 4] |= ld16(p) << (16 * (r % 4));
        if constexpr (affine) {
            if (r % 4 == 0) mq[r / 4] = ld16(p + 2);
            else mq[r / 4] |= ld16(p + 2) << (16 * (r % 4));
        }
        if constexpr (qh != 0) {
            if (r % 2 == 0) hq[r / 2] = ld32(p + qh);
            else hq[r / 2] |= ld32(p + qh) << 32;
        }
        if (r + 1 < LANES) c.next();
    }
}

// 8 fp16 (four per qword) -> floats.
inline __m256 halves(const uint64_t q[2]) { return _mm256_cvtph_ps(_mm_set_epi64x((long long) q[1], (long long) q[0])); }

// 8 rows' 16 bytes -> q[j], lane r = bytes 4j..4j+3 of row r.
inline void transpose8(const __m128i x[LANES], __m256i q[4]) {
    const __m256i a = _mm256_set_m128i(x[4], x[0]), b = _mm256_set_m128i(x[5], x[1]);
    const __m256i c = _mm256_set_m128i(x[6], x[2]), d = _mm256_set_m128i(x[7], x[3]);
    const __m256i t0 = _mm256_unpacklo_epi32(a, b), t1 = _mm256_unpackhi_epi32(a, b);
    const __m256i t2 = _mm256_unpacklo_epi32(c, d), t3 = _mm256_unpackhi_epi32(c, d);
    q[0] = _mm256_unpacklo_epi64(t0, t2);
    q[1] = _mm256_unpackhi_epi64(t0, t2);
    q[2] = _mm256_unpacklo_epi64(t1, t3);
    q[3] = _mm256_unpackhi_epi64(t1, t3);
}

// The fifth bits of the 8 groups (qh: bit e = bit 4 of level e, one dword
// per lane) OR-ed into g as 0x10. Bits 4j..4j+3 are in byte j / 2 of qh:
// that byte is copied to the group's 4 bytes, moved up a nibble for even j,
// and byte i keeps bit 4 + i (16 << i, at most 128); min(, 16) is then 16
// where the bit is set, 0 elsewhere.
inline void add_high_bits(__m256i qh, __m256i g[GROUPS]) {
    const __m256i sixteen = _mm256_set1_epi8(0x10);
    const __m256i keep = _mm256_set1_epi32(0x80402010);  // byte i: 16 << i
    UNROLL
    for (int k = 0; k < 4; k++) {  // qh byte k: groups 2k, 2k + 1
        const char b = (char) k;
        const __m256i pick = _mm256_setr_epi8(b, b, b, b, 4 + b, 4 + b, 4 + b, 4 + b, 8 + b, 8 + b, 8 + b, 8 + b, 12 + b,
                                              12 + b, 12 + b, 12 + b, b, b, b, b, 4 + b, 4 + b, 4 + b, 4 + b, 8 + b, 8 + b,
                                              8 + b, 8 + b, 12 + b, 12 + b, 12 + b, 12 + b);
        const __m256i rep = _mm256_shuffle_epi8(qh, pick);
        const __m256i lo = _mm256_and_si256(_mm256_slli_epi16(rep, 4), keep), hi = _mm256_and_si256(rep, keep);
        g[2 * k] = _mm256_or_si256(g[2 * k], _mm256_min_epu8(lo, sixteen));
        g[2 * k + 1] = _mm256_or_si256(g[2 * k + 1], _mm256_min_epu8(hi, sixteen));
    }
}

// Packed nibbles (qs[j] = level j | level j + 16 << 4) -> the 8 groups of
// levels 0..15, plus the fifth bit from qh if Q5.
template <bool Q5>
inline void nibble_groups(const __m128i x[LANES], __m256i qh, __m256i g[GROUPS]) {
    __m256i q[4];
    transpose8(x, q);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    UNROLL
    for (int j = 0; j < 4; j++) {
        g[j] = _mm256_and_si256(q[j], m4);
        g[j + 4] = _mm256_and_si256(_mm256_srli_epi32(q[j], 4), m4);
    }
    if constexpr (Q5) add_high_bits(qh, g);
}

// Group j alone (LANES8 decode makes each group where it is used, which
// keeps 8 group vectors out of the registers the 8 accumulators need):
// q = the transposed packed nibbles, qh the fifth bits (Q5) as above.
template <bool Q5>
inline __m256i nibble_group(const __m256i q[4], __m256i qh, int j) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i nib = j < 4 ? _mm256_and_si256(q[j], m4) : _mm256_and_si256(_mm256_srli_epi32(q[j - 4], 4), m4);
    if constexpr (!Q5) return nib;
    const char b = (char) (j / 2);
    const __m256i pick = _mm256_setr_epi8(b, b, b, b, 4 + b, 4 + b, 4 + b, 4 + b, 8 + b, 8 + b, 8 + b, 8 + b, 12 + b, 12 + b,
                                          12 + b, 12 + b, b, b, b, b, 4 + b, 4 + b, 4 + b, 4 + b, 8 + b, 8 + b, 8 + b, 8 + b,
                                          12 + b, 12 + b, 12 + b, 12 + b);
    __m256i rep = _mm256_shuffle_epi8(qh, pick);
    if (j % 2 == 0) rep = _mm256_slli_epi16(rep, 4);
    const __m256i bits = _mm256_and_si256(rep, _mm256_set1_epi32(0x80402010));  // byte i: 16 << i
    return _mm256_or_si256(nib, _mm256_min_epu8(bits, _mm256_set1_epi8(0x10)));
}

// Per format: its blocks, its offset (unsigned level = level + off), its dot
// order (PER_BLOCK or LANES8, as the reference), whether it is affine (d, m
// at bytes 0, 2 and the activation's s at byte 2), whether its levels stay
// signed (IQ4_NL), and for 8 rows' block `bo` the groups and the scales d
// (and m), as floats.
struct fmt_q4_0 {
    typedef block_q4_0 block;
    typedef block_q8_0 act;
    static const int off = 8;
    static const bool five_bit = false;
    static const bool affine = false, lanes8 = false, tree = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m256i g[], __m256 * d, __m256 *) {
        __m128i x[LANES];
        uint64_t dq[2], mq[2], hq[4];
        walk<offsetof(block, qs), 0, false>(rv, bo, pf, x, dq, mq, hq);
        nibble_groups<false>(x, _mm256_setzero_si256(), g);
        *d = halves(dq);
    }
};
struct fmt_q4_1 {
    typedef block_q4_1 block;
    typedef block_q8_1 act;
    static const int off = 0;
    static const bool five_bit = false;
    static const bool affine = true, lanes8 = false, tree = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m256i g[], __m256 * d, __m256 * m) {
        __m128i x[LANES];
        uint64_t dq[2], mq[2], hq[4];
        walk<offsetof(block, qs), 0, true>(rv, bo, pf, x, dq, mq, hq);
        nibble_groups<false>(x, _mm256_setzero_si256(), g);
        *d = halves(dq);
        *m = halves(mq);
    }
};
// Q8_0: signed levels, no offset; its tile (tile_q8_0) widens both sides to
// int16 and sums the rows' products with a horizontal-add tree instead.
struct fmt_q8_0 {
    typedef block_q8_0 block;
    typedef block_q8_0 act;
    static const int off = 0;
    static const bool lanes8 = false, tree = true;
};
struct fmt_q5_0 {
    typedef block_q5_0 block;
    typedef block_q8_0 act;
    static const int off = 16;
    static const bool five_bit = true;
    static const bool affine = false, lanes8 = false, tree = false, signed_levels = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m256i g[], __m256 * d, __m256 *) {
        __m128i x[LANES];
        uint64_t dq[2], mq[2], hq[4];
        walk<offsetof(block, qs), offsetof(block, qh), false>(rv, bo, pf, x, dq, mq, hq);
        nibble_groups<true>(x, _mm256_set_epi64x((long long) hq[3], (long long) hq[2], (long long) hq[1], (long long) hq[0]), g);
        *d = halves(dq);
    }
    // Decode: the transposed nibbles (and fifth bits) only; group() makes each group.
    template <typename ROWS>
    static void load_raw(const ROWS & rv, size_t bo, bool pf, __m256i q[4], __m256i * qh, __m256 * d, __m256 * m) {
        __m128i x[LANES];
        uint64_t dq[2], mq[2], hq[4];
        walk<offsetof(block, qs), offsetof(block, qh), false>(rv, bo, pf, x, dq, mq, hq);
        transpose8(x, q);
        *qh = _mm256_set_epi64x((long long) hq[3], (long long) hq[2], (long long) hq[1], (long long) hq[0]);
        *d = halves(dq);
        (void) m;
    }
    static __m256i group(const __m256i q[4], __m256i qh, int j) {
        return nibble_group<true>(q, qh, j);
    }
};
struct fmt_q5_1 {
    typedef block_q5_1 block;
    typedef block_q8_1 act;
    static const int off = 0;
    static const bool five_bit = true;
    static const bool affine = true, lanes8 = false, tree = false, signed_levels = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m256i g[], __m256 * d, __m256 * m) {
        __m128i x[LANES];
        uint64_t dq[2], mq[2], hq[4];
        walk<offsetof(block, qs), offsetof(block, qh), true>(rv, bo, pf, x, dq, mq, hq);
        nibble_groups<true>(x, _mm256_set_epi64x((long long) hq[3], (long long) hq[2], (long long) hq[1], (long long) hq[0]), g);
        *d = halves(dq);
        *m = halves(mq);
    }
    // Decode: the transposed nibbles (and fifth bits) only; group() makes each group.
    template <typename ROWS>
    static void load_raw(const ROWS & rv, size_t bo, bool pf, __m256i q[4], __m256i * qh, __m256 * d, __m256 * m) {
        __m128i x[LANES];
        uint64_t dq[2], mq[2], hq[4];
        walk<offsetof(block, qs), offsetof(block, qh), true>(rv, bo, pf, x, dq, mq, hq);
        transpose8(x, q);
        *qh = _mm256_set_epi64x((long long) hq[3], (long long) hq[2], (long long) hq[1], (long long) hq[0]);
        *d = halves(dq);
        *m = halves(mq);
    }
    static __m256i group(const __m256i q[4], __m256i qh, int j) {
        return nibble_group<true>(q, qh, j);
    }
};
struct fmt_iq4_nl {
    typedef block_iq4_nl block;
    typedef block_q8_0 act;
    static const int off = 0;  // signed table values, no offset
    static const bool affine = false, lanes8 = true, tree = false, signed_levels = true;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m256i g[], __m256 * d, __m256 *) {
        __m128i x[LANES];
        uint64_t dq[2], mq[2], hq[4];
        walk<offsetof(block, qs), 0, false>(rv, bo, pf, x, dq, mq, hq);
        nibble_groups<false>(x, _mm256_setzero_si256(), g);
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) tern_kvalues_iq4nl));
        UNROLL
        for (int j = 0; j < GROUPS; j++) g[j] = _mm256_shuffle_epi8(table, g[j]);
        *d = halves(dq);
    }
    // Decode: the transposed nibbles (and fifth bits) only; group() makes each group.
    template <typename ROWS>
    static void load_raw(const ROWS & rv, size_t bo, bool pf, __m256i q[4], __m256i * qh, __m256 * d, __m256 * m) {
        __m128i x[LANES];
        uint64_t dq[2], mq[2], hq[4];
        walk<offsetof(block, qs), 0, false>(rv, bo, pf, x, dq, mq, hq);
        transpose8(x, q);
        (void) hq;
        *qh = _mm256_setzero_si256();
        *d = halves(dq);
        (void) m;
    }
    static __m256i group(const __m256i q[4], __m256i qh, int j) {
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) tern_kvalues_iq4nl));
        return _mm256_shuffle_epi8(table, nibble_group<false>(q, qh, j));
    }
};

// ------------------------------------------------------------ activations

template <typename F>
inline const uint8_t * act_qs(const uint8_t * y) {
    return y + (sizeof(typename F::act) == sizeof(block_q8_0) ? offsetof(block_q8_0, qs) : offsetof(block_q8_1, qs));
}

// Group j of an activation block, broadcast.
inline __m256i act_group(const uint8_t * qs, int j) { return _mm256_set1_epi32(rd32(qs + 4 * j)); }

// The sum of the block's 32 levels.
inline int32_t block_sum(const uint8_t * qs) { return int_dot_avx2::block_sum((const int8_t *) qs); }

// ------------------------------------------------------------ tiles

// Stores rows [0, nrv) of a row vector's 8 results of one column.
inline void store_rows(float * out, __m256 v, int nrv) {
    if (nrv >= LANES) {
        _mm256_storeu_ps(out, v);
        return;
    }
    float tmp[LANES];
    _mm256_storeu_ps(tmp, v);
    for (int r = 0; r < nrv; r++) out[r] = tmp[r];
}

inline bool prefetch_now(int & count, int every) {
    const bool now = count == 0;
    count = count + 1 == every ? 0 : count + 1;
    return now;
}

// Block total (int32 per row) of the unsigned groups g against activation
// block qs. Levels <= 15 (U5 false): the pairs of all eight groups add up in
// int16 (at most 8 * 2 * 15 * 128 = 30720). Levels <= 31: four groups per
// int16 sum (4 * 2 * 31 * 128 = 31744), the two halves added in int32.
template <bool U5>
inline __m256i per_block_total(const __m256i * g, const uint8_t * qs) {
    __m256i s0 = _mm256_maddubs_epi16(g[0], act_group(qs, 0));
    __m256i s1 = _mm256_maddubs_epi16(g[1], act_group(qs, 1));
    UNROLL
    for (int j = 2; j < GROUPS; j += 2) {
        s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(g[j], act_group(qs, j)));
        s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(g[j + 1], act_group(qs, j + 1)));
    }
    const __m256i ones = _mm256_set1_epi16(1);
    if constexpr (U5) return _mm256_add_epi32(_mm256_madd_epi16(s0, ones), _mm256_madd_epi16(s1, ones));
    return _mm256_madd_epi16(_mm256_add_epi16(s0, s1), ones);
}

// PER_BLOCK tile: RV row vectors x NC columns. ysum: the activation blocks'
// level sums, [block][column] for these NC columns, or NULL (computed here).
template <typename F, int RV, int NC, typename ROWS>
void tile_per_block(int64_t nb, const ROWS * rv, const uint8_t * const * ap, const int16_t * ysum, float * out,
                    int64_t ldo, int nrv) {
    typedef typename F::block WB;
    typedef typename F::act AB;
    __m256 acc[RV][NC];
    UNROLL
    for (int v = 0; v < RV; v++)
        UNROLL
        for (int c = 0; c < NC; c++) acc[v][c] = _mm256_setzero_ps();
    const int pf_every = 64 / sizeof(WB) > 0 ? (int) (64 / sizeof(WB)) : 1;
    int pf_count = 0;
    for (int64_t b = 0; b < nb; b++) {
        const size_t wo = (size_t) b * sizeof(WB), ao = (size_t) b * sizeof(AB);
        const bool prefetch = NC == 1 && prefetch_now(pf_count, pf_every);  // decode only
        UNROLL
        for (int v = 0; v < RV; v++) {
            __m256i g[GROUPS];
            __m256 dw, mw;
            F::load(rv[v], wo, prefetch, g, &dw, &mw);
            UNROLL
            for (int c = 0; c < NC; c++) {
                const uint8_t * y = ap[c] + ao;
                const uint8_t * qs = act_qs<F>(y);
                __m256i t = per_block_total<F::five_bit>(g, qs);
                if constexpr (F::off != 0) {
                    t = _mm256_add_epi32(t, _mm256_set1_epi32(-F::off * (ysum ? ysum[b * NC + c] : block_sum(qs))));
                }
                const __m256 da = _mm256_set1_ps(f32(y));
                acc[v][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_mul_ps(dw, da), acc[v][c]);
                if constexpr (F::affine) acc[v][c] = _mm256_fmadd_ps(mw, _mm256_set1_ps(f32(y + 2)), acc[v][c]);
            }
        }
    }
    for (int c = 0; c < NC; c++)
        for (int v = 0; v < RV && v * LANES < nrv; v++) store_rows(out + c * ldo + v * LANES, acc[v][c], nrv - v * LANES);
}

// LANES8 tile: RV row vectors x NC columns, eight accumulators (one per quad) each.
template <typename F, int RV, int NC, typename ROWS>
void tile_lanes8(int64_t nb, const ROWS * rv, const uint8_t * const * ap, float * out, int64_t ldo, int nrv) {
    typedef typename F::block WB;
    typedef typename F::act AB;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[RV][NC][GROUPS];
    __m256 summs[RV][NC];
    UNROLL
    for (int v = 0; v < RV; v++)
        UNROLL
        for (int c = 0; c < NC; c++) {
            UNROLL
            for (int j = 0; j < GROUPS; j++) acc[v][c][j] = _mm256_setzero_ps();
            summs[v][c] = _mm256_setzero_ps();
        }
    const int pf_every = 64 / sizeof(WB) > 0 ? (int) (64 / sizeof(WB)) : 1;
    int pf_count = 0;
    for (int64_t b = 0; b < nb; b++) {
        const size_t wo = (size_t) b * sizeof(WB), ao = (size_t) b * sizeof(AB);
        const bool prefetch = NC == 1 && prefetch_now(pf_count, pf_every);  // decode only
        UNROLL
        for (int v = 0; v < RV; v++) {
            __m256i g[GROUPS], q[4], qh;
            __m256 dw, mw;
            if constexpr (NC == 1) F::load_raw(rv[v], wo, prefetch, q, &qh, &dw, &mw);
            else F::load(rv[v], wo, prefetch, g, &dw, &mw);
            UNROLL
            for (int c = 0; c < NC; c++) {
                const uint8_t * y = ap[c] + ao;
                const uint8_t * qs = act_qs<F>(y);
                const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(f32(y)));
                UNROLL
                for (int j = 0; j < GROUPS; j++) {
                    const __m256i yj = act_group(qs, j);
                    if constexpr (NC == 1) g[j] = F::group(q, qh, j);
                    __m256i pairs;
                    if constexpr (F::signed_levels) {
                        pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(yj), _mm256_sign_epi8(g[j], yj));
                    } else {
                        pairs = _mm256_maddubs_epi16(g[j], yj);
                        // the offset off * y, pair by pair (at most 2 * 31 * 128 + 2 * 16 * 128 in int16)
                        if constexpr (F::off != 0) pairs = _mm256_sub_epi16(pairs, _mm256_maddubs_epi16(_mm256_set1_epi8((char) F::off), yj));
                    }
                    const __m256i lane = _mm256_madd_epi16(pairs, ones);
                    acc[v][c][j] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(lane), acc[v][c][j]);
                }
                if constexpr (F::affine) summs[v][c] = _mm256_fmadd_ps(mw, _mm256_set1_ps(f32(y + 2)), summs[v][c]);
            }
        }
    }
    for (int c = 0; c < NC; c++)
        for (int v = 0; v < RV && v * LANES < nrv; v++) {
            const __m256 * a = acc[v][c];
            __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6])),
                                     _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7])));
            if constexpr (F::affine) s = _mm256_add_ps(s, summs[v][c]);
            store_rows(out + c * ldo + v * LANES, s, nrv - v * LANES);
        }
}

// Q8_0 tile: RV row vectors x NC columns. Per row, its 32 levels widened to
// int16 and madd-ed with the column's (exact for every int8 pair, -128
// included); the 8 rows' int32 partial sums go through a hadd tree into one
// vector of row totals, natural order.
template <int RV, int NC, typename ROWS>
void tile_q8_0(int64_t nb, const ROWS * rv, const uint8_t * const * ap, float * out, int64_t ldo, int nrv) {
    const size_t QS = offsetof(block_q8_0, qs);
    __m256 acc[RV][NC];
    UNROLL
    for (int v = 0; v < RV; v++)
        UNROLL
        for (int c = 0; c < NC; c++) acc[v][c] = _mm256_setzero_ps();
    const int pf_every = 1;  // 34-byte blocks: a prefetch per row and block
    int pf_count = 0;
    for (int64_t b = 0; b < nb; b++) {
        const size_t o = (size_t) b * sizeof(block_q8_0);
        const bool prefetch = NC == 1 && prefetch_now(pf_count, pf_every);  // decode only
        __m256i ylo[NC], yhi[NC];
        __m256 da[NC];
        UNROLL
        for (int c = 0; c < NC; c++) {
            const uint8_t * y = ap[c] + o;
            ylo[c] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (y + QS)));
            yhi[c] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (y + QS + 16)));
            da[c] = _mm256_set1_ps(f32(y));
        }
        UNROLL
        for (int v = 0; v < RV; v++) {
            auto cur = rv[v].first(o);
            uint64_t dq[2];
            __m256i even[NC], h[NC][4], t[NC][2];
            UNROLL
            for (int r = 0; r < LANES; r++) {
                const uint8_t * p = cur.at();
                if (prefetch) _mm_prefetch((const char *) (p + PREFETCH_AHEAD), _MM_HINT_T0);
                if (r % 4 == 0) dq[r / 4] = ld16(p);
                else dq[r / 4] |= ld16(p) << (16 * (r % 4));
                const __m256i xlo = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (p + QS)));
                const __m256i xhi = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (p + QS + 16)));
                UNROLL
                for (int c = 0; c < NC; c++) {
                    const __m256i pr = _mm256_add_epi32(_mm256_madd_epi16(xlo, ylo[c]), _mm256_madd_epi16(xhi, yhi[c]));
                    if (r % 2 == 0) even[c] = pr;
                    else h[c][r / 2] = _mm256_hadd_epi32(even[c], pr);
                    if (r == 3) t[c][0] = _mm256_hadd_epi32(h[c][0], h[c][1]);
                    if (r == 7) t[c][1] = _mm256_hadd_epi32(h[c][2], h[c][3]);
                }
                if (r + 1 < LANES) cur.next();
            }
            const __m256 dw = halves(dq);
            UNROLL
            for (int c = 0; c < NC; c++) {
                // t0 = rows 0..3 (quads 0..3 | quads 4..7), t1 = rows 4..7 -> rows 0..7
                const __m256i tot = _mm256_add_epi32(_mm256_blend_epi32(t[c][0], t[c][1], 0xF0),
                                                     _mm256_permute2x128_si256(t[c][0], t[c][1], 0x21));
                acc[v][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(tot), _mm256_mul_ps(dw, da[c]), acc[v][c]);
            }
        }
    }
    for (int c = 0; c < NC; c++)
        for (int v = 0; v < RV && v * LANES < nrv; v++) store_rows(out + c * ldo + v * LANES, acc[v][c], nrv - v * LANES);
}

// Shapes: columns in groups of NCB (prompt), then one at a time (decode, and
// the columns left over); row tiles of RVB row vectors for the groups, RVD
// for single columns (row vectors one after the other). Measured best: the
// accumulators (1 per column, LANES8 8) no longer all fit the 16 registers
// at these widths, but spilling some costs less than unpacking the weights
// again.
template <typename F> struct shape;
template <> struct shape<fmt_q4_0> { static const int NCB = 8, RVB = 1, RVD = 2; };
template <> struct shape<fmt_q4_1> { static const int NCB = 8, RVB = 1, RVD = 2; };
template <> struct shape<fmt_q8_0> { static const int NCB = 2, RVB = 1, RVD = 2; };
template <> struct shape<fmt_q5_0> { static const int NCB = 4, RVB = 1, RVD = 2; };
template <> struct shape<fmt_q5_1> { static const int NCB = 4, RVB = 1, RVD = 2; };
template <> struct shape<fmt_iq4_nl> { static const int NCB = 4, RVB = 1, RVD = 2; };

template <typename F, int RV, int NC, typename ROWS>
void tile(int64_t nb, const ROWS * rv, const uint8_t * const * ap, const int16_t * ysum, float * out, int64_t ldo, int nrv) {
    if constexpr (F::tree) tile_q8_0<RV, NC>(nb, rv, ap, out, ldo, nrv);
    else if constexpr (F::lanes8) tile_lanes8<F, RV, NC>(nb, rv, ap, out, ldo, nrv);
    else tile_per_block<F, RV, NC>(nb, rv, ap, ysum, out, ldo, nrv);
}

#include "cpu/kernels/x86/legacy_column_group_x86.h"

template <typename F>
void gemm(int64_t k, int64_t nr, int64_t nc, const void * vw, size_t w_stride, const void * va, size_t a_stride,
          float * out, int64_t ldo) {
    typedef shape<F> S;
    const int64_t nb = k / QK;
    const uint8_t * w = (const uint8_t *) vw;
    const uint8_t * a = (const uint8_t *) va;
    int16_t ysum[YSUM_CAP];
    int64_t c0 = 0;
    if constexpr (S::NCB > 1) {
        for (; c0 + S::NCB <= nc; c0 += S::NCB)
            column_group<F, S::NCB, S::RVB>(nb, nr, w, w_stride, a + c0 * a_stride, a_stride, ysum, out + c0 * ldo, ldo);
    }
    for (; c0 < nc; c0++) column_group<F, 1, S::RVD>(nb, nr, w, w_stride, a + c0 * a_stride, a_stride, ysum, out + c0 * ldo, ldo);
}

}  // namespace

void tern_fill_gemm_legacy_avx2(tern_kernel_set * ks) {
#if TERN_WITH_TYPE_Q4_0
    ks->gemm[TERN_TYPE_Q4_0] = gemm<fmt_q4_0>;
#endif
#if TERN_WITH_TYPE_Q4_1
    ks->gemm[TERN_TYPE_Q4_1] = gemm<fmt_q4_1>;
#endif
#if TERN_WITH_TYPE_Q5_0
    ks->gemm[TERN_TYPE_Q5_0] = gemm<fmt_q5_0>;
#endif
#if TERN_WITH_TYPE_Q5_1
    ks->gemm[TERN_TYPE_Q5_1] = gemm<fmt_q5_1>;
#endif
#if TERN_WITH_TYPE_Q8_0
    ks->gemm[TERN_TYPE_Q8_0] = gemm<fmt_q8_0>;
#endif
#if TERN_WITH_TYPE_IQ4_NL
    ks->gemm[TERN_TYPE_IQ4_NL] = gemm<fmt_iq4_nl>;
#endif
}

}  // namespace tern
