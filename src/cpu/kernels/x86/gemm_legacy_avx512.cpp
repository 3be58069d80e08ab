// Matrix tiles (tern_gemm_fn, kernel_set.h) of the avx512 kernel set for the
// legacy formats: Q4_0 Q5_0 Q8_0 IQ4_NL x Q8_0 and Q4_1 Q5_1 x Q8_1.
// Compiled with the avx512 target flags (F/BW/VL/DQ + VNNI): static code only.
//
// Layout: the SIMD lanes are weight rows. A 32-value block is eight groups of
// four values; for 16 weight rows ("a row vector"), group j of the block is
// one zmm whose lane r holds the four levels 4j..4j+3 of row r as unsigned
// bytes: the rows' 16 packed bytes are loaded in one walk over the rows,
// transposed as 16x4 dwords (unpacks), then nibble-split and decoded (Q5:
// fifth bits from qh through a 16-entry vpermd table; IQ4_NL: vpshufb into
// the level table). The activation's group j is one dword broadcast to every
// lane, so one VNNI dpbusd per group makes, for 16 rows at once, exactly the
// quad sums the references sum (int32, no saturation, any int8 input).
//
// Levels are made unsigned (u = level + off: Q4_0 8, Q5_0 16, Q8_0 and
// IQ4_NL 128 through a shifted table, Q4_1 Q5_1 0) and the offset is taken
// back exactly in int32 as the dpbusd chain's start, -off * (sum of the
// activation's levels), computed once per activation block and shared by all
// rows: per call and column for the block totals (PER_BLOCK formats, on the
// stack), per block and column for the eight quad sums (LANES8 formats).
//
// Float part: the references' operations (tensor/quants_legacy.cpp), lane by
// lane, so a tile gives the scalar reference's bits and each output depends
// only on its two rows, whatever tile it falls in:
//   PER_BLOCK (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0)
//                               acc = fma((float) sumi, d_w * d_a, acc)
//                               (+ acc = fma(m_w, s_a, acc) for Q4_1 Q5_1)
//   LANES8 (IQ4_NL)             acc_l = fma(d_w * d_a, (float) lane_l, acc_l)
//                               for the 8 quads l, one zmm per quad; at the
//                               end ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)).
// The rows' fp16 d (and m, qh) are packed four (two) to a general register
// during the walk: a vpgatherdd per block is slower on the machines measured.
//
// Tiles (shape<F>): decode (one activation column) 32 rows, the weights
// prefetched ahead since 32 row streams are more than the hardware prefetch
// follows; prompt 16 rows x 16 columns (PER_BLOCK) or x 4 (LANES8, eight
// accumulators per column), weight groups unpacked once per block and reused
// by every column, activation groups loaded once per block and column. Rows
// past the end of a short tile repeat the last row (computed, not stored).
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tensor/blocks.h"
#include "tensor/quants.h"

namespace tern {

// GCC 12 flags the deliberately undefined registers inside avx512fintrin.h
// (_mm512_undefined_*) as uninitialized when inlined here: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Full unrolling of the constant loops over rows, columns and groups keeps
// the tile's vectors in registers.
#define UNROLL _Pragma("GCC unroll 16")

namespace {

const int QK = 32;        // values per block
const int LANES = 16;     // rows per row vector
const int GROUPS = 8;     // 4-value groups per block

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

// ------------------------------------------------------------ weights

// The tiles read their weight rows through a row vector type (ROWS: rows_strided,
// rows_list), legacy_column_group_x86.h.

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

// Decode streams every row of the tile at once, more streams than the
// hardware prefetchers follow: on every `every`-th block (every = 64 / block
// size, so that a row moves less than a 64-byte line in between) each row's
// bytes PREFETCH_AHEAD ahead are prefetched.
const size_t PREFETCH_AHEAD = 256;

// What one walk over the 16 rows of a block collects: each row's 16 packed
// bytes at `qs` as one xmm, and in general registers (four rows per qword)
// its fp16 d, or (`words`) the dword at byte 0, and the dword at `qh`.
template <size_t qs, size_t qh, bool words, typename ROWS>
inline void walk(const ROWS & rv, size_t bo, bool prefetch, __m128i x[LANES], uint64_t dq[8], uint64_t hq[8]) {
    auto c = rv.first(bo);
    UNROLL
    for (int r = 0; r < LANES; r++) {
        const uint8_t * p = c.at();
        if (prefetch) _mm_prefetch((const char *) (p + PREFETCH_AHEAD), _MM_HINT_T0);
        x[r] = _mm_loadu_si128((const __m128i *) (p + qs));
        if constexpr (words) {
            if (r % 2 == 0) dq[r / 2] = ld32(p);
            else dq[r / 2] |= ld32(p) << 32;
        } else {
            if (r % 4 == 0) dq[r / 4] = ld16(p);
            else dq[r / 4] |= ld16(p) << (16 * (r % 4));
        }
        if constexpr (qh != 0) {
            if (r % 2 == 0) hq[r / 2] = ld32(p + qh);
            else hq[r / 2] |= ld32(p + qh) << 32;
        }
        if (r + 1 < LANES) c.next();
    }
}

inline __m512i qwords512(const uint64_t q[8]) {
    return _mm512_set_epi64((long long) q[7], (long long) q[6], (long long) q[5], (long long) q[4], (long long) q[3],
                            (long long) q[2], (long long) q[1], (long long) q[0]);
}
// 16 fp16 (four per qword) -> floats.
inline __m512 halves(const uint64_t q[4]) {
    return _mm512_cvtph_ps(_mm256_set_epi64x((long long) q[3], (long long) q[2], (long long) q[1], (long long) q[0]));
}
// fp16 in the low (hi = false) or high half of 16 dwords -> floats.
inline __m512 word_halves(__m512i words, bool hi) {
    if (hi) words = _mm512_srli_epi32(words, 16);
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words));
}

// 16 rows' 16 bytes -> q[j], lane r = bytes 4j..4j+3 of row r.
inline void transpose16(const __m128i x[LANES], __m512i q[4]) {
    auto four = [&](int r) {  // rows r, r + 4, r + 8, r + 12 in the four 128-bit lanes
        __m512i v = _mm512_castsi128_si512(x[r]);
        v = _mm512_inserti32x4(v, x[r + 4], 1);
        v = _mm512_inserti32x4(v, x[r + 8], 2);
        return _mm512_inserti32x4(v, x[r + 12], 3);
    };
    const __m512i a = four(0), b = four(1), c = four(2), d = four(3);
    const __m512i t0 = _mm512_unpacklo_epi32(a, b), t1 = _mm512_unpackhi_epi32(a, b);
    const __m512i t2 = _mm512_unpacklo_epi32(c, d), t3 = _mm512_unpackhi_epi32(c, d);
    q[0] = _mm512_unpacklo_epi64(t0, t2);
    q[1] = _mm512_unpackhi_epi64(t0, t2);
    q[2] = _mm512_unpacklo_epi64(t1, t3);
    q[3] = _mm512_unpackhi_epi64(t1, t3);
}

// dword v (0..15) -> byte i = 0x10 where bit i of v is set (vpermd reads bits 0..3 of the index).
inline __m512i high_bits(__m512i qh, int j) {
    const __m512i spread = _mm512_setr_epi32(0x00000000, 0x00000010, 0x00001000, 0x00001010, 0x00100000, 0x00100010,
                                             0x00101000, 0x00101010, 0x10000000, 0x10000010, 0x10001000, 0x10001010,
                                             0x10100000, 0x10100010, 0x10101000, 0x10101010);
    return _mm512_permutexvar_epi32(j == 0 ? qh : _mm512_srli_epi32(qh, 4 * j), spread);
}

// Packed nibbles (qs[j] = level j | level j + 16 << 4) -> the 8 groups of
// levels 0..15, plus the fifth bit from qh (bit e = bit 4 of level e) if Q5.
template <bool Q5>
inline void nibble_groups(const __m128i x[LANES], __m512i qh, __m512i g[GROUPS]) {
    __m512i q[4];
    transpose16(x, q);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    UNROLL
    for (int j = 0; j < 4; j++) {
        if constexpr (Q5) {  // (q & m4) | high bits, one ternary-logic op
            g[j] = _mm512_ternarylogic_epi32(q[j], m4, high_bits(qh, j), 0xEA);
            g[j + 4] = _mm512_ternarylogic_epi32(_mm512_srli_epi32(q[j], 4), m4, high_bits(qh, j + 4), 0xEA);
        } else {
            g[j] = _mm512_and_si512(q[j], m4);
            g[j + 4] = _mm512_and_si512(_mm512_srli_epi32(q[j], 4), m4);
        }
    }
}

// Per format: its blocks, the offset that makes its levels unsigned, its dot
// order (PER_BLOCK or LANES8, as the reference), whether it is affine
// (d, m at bytes 0, 2 and the activation's s at byte 2), and for 16 rows'
// block `bo` the unsigned groups and the scales d (and m), as floats.
struct fmt_q4_0 {
    typedef block_q4_0 block;
    typedef block_q8_0 act;
    static const int off = 8;
    static const bool affine = false, lanes8 = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m512i g[GROUPS], __m512 * d, __m512 *) {
        __m128i x[LANES];
        uint64_t dq[8], hq[8];
        walk<offsetof(block, qs), 0, false>(rv, bo, pf, x, dq, hq);
        nibble_groups<false>(x, _mm512_setzero_si512(), g);
        *d = halves(dq);
    }
};
struct fmt_iq4_nl {
    typedef block_iq4_nl block;
    typedef block_q8_0 act;
    static const int off = 128;
    static const bool affine = false, lanes8 = true;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m512i g[GROUPS], __m512 * d, __m512 *) {
        __m128i x[LANES];
        uint64_t dq[8], hq[8];
        walk<offsetof(block, qs), 0, false>(rv, bo, pf, x, dq, hq);
        nibble_groups<false>(x, _mm512_setzero_si512(), g);
        // table value + 128 (1..241), in each 128-bit lane for vpshufb
        const __m512i table = _mm512_add_epi8(
            _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) tern_kvalues_iq4nl)), _mm512_set1_epi8((char) 0x80));
        UNROLL
        for (int j = 0; j < GROUPS; j++) g[j] = _mm512_shuffle_epi8(table, g[j]);
        *d = halves(dq);
    }
};
struct fmt_q4_1 {
    typedef block_q4_1 block;
    typedef block_q8_1 act;
    static const int off = 0;
    static const bool affine = true, lanes8 = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m512i g[GROUPS], __m512 * d, __m512 * m) {
        __m128i x[LANES];
        uint64_t dq[8], hq[8];
        walk<offsetof(block, qs), 0, true>(rv, bo, pf, x, dq, hq);
        nibble_groups<false>(x, _mm512_setzero_si512(), g);
        const __m512i words = qwords512(dq);  // d | m << 16
        *d = word_halves(words, false);
        *m = word_halves(words, true);
    }
};
struct fmt_q5_0 {
    typedef block_q5_0 block;
    typedef block_q8_0 act;
    static const int off = 16;
    static const bool affine = false, lanes8 = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m512i g[GROUPS], __m512 * d, __m512 *) {
        __m128i x[LANES];
        uint64_t dq[8], hq[8];
        walk<offsetof(block, qs), offsetof(block, qh), false>(rv, bo, pf, x, dq, hq);
        nibble_groups<true>(x, qwords512(hq), g);
        *d = halves(dq);
    }
};
struct fmt_q5_1 {
    typedef block_q5_1 block;
    typedef block_q8_1 act;
    static const int off = 0;
    static const bool affine = true, lanes8 = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m512i g[GROUPS], __m512 * d, __m512 * m) {
        __m128i x[LANES];
        uint64_t dq[8], hq[8];
        walk<offsetof(block, qs), offsetof(block, qh), true>(rv, bo, pf, x, dq, hq);
        nibble_groups<true>(x, qwords512(hq), g);
        const __m512i words = qwords512(dq);  // d | m << 16
        *d = word_halves(words, false);
        *m = word_halves(words, true);
    }
};
struct fmt_q8_0 {
    typedef block_q8_0 block;
    typedef block_q8_0 act;
    static const int off = 128;
    static const bool affine = false, lanes8 = false;
    template <typename ROWS>
    static void load(const ROWS & rv, size_t bo, bool pf, __m512i g[GROUPS], __m512 * d, __m512 *) {
        __m128i x[LANES];
        uint64_t dq[8], hq[8];
        walk<offsetof(block, qs), 0, false>(rv, bo, pf, x, dq, hq);  // levels 0..15
        transpose16(x, g);
        walk<offsetof(block, qs) + 16, 0, false>(rv, bo, false, x, hq, hq);  // levels 16..31
        transpose16(x, g + 4);
        const __m512i flip = _mm512_set1_epi8((char) 0x80);  // level + 128
        UNROLL
        for (int j = 0; j < GROUPS; j++) g[j] = _mm512_xor_si512(g[j], flip);
        *d = halves(dq);
    }
};

// ------------------------------------------------------------ activations

const size_t ACT_QS_Q8_0 = offsetof(block_q8_0, qs);
const size_t ACT_QS_Q8_1 = offsetof(block_q8_1, qs);

template <typename F>
inline const uint8_t * act_qs(const uint8_t * y) {
    return y + (sizeof(typename F::act) == sizeof(block_q8_0) ? ACT_QS_Q8_0 : ACT_QS_Q8_1);
}

// Group j of an activation block, broadcast.
inline __m512i act_group(const uint8_t * qs, int j) { return _mm512_set1_epi32(rd32(qs + 4 * j)); }

// off * (the 8 quad sums of the block's levels), int32.
template <int off>
inline __m256i quad_sums(const uint8_t * qs) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8((char) off), _mm256_loadu_si256((const __m256i *) qs));
}

// The sum of the block's 32 levels.
inline int32_t block_sum(const uint8_t * qs) {
    const __m256i s = quad_sums<1>(qs);
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 1, 1, 1)));
    return _mm_cvtsi128_si32(h);
}

// ------------------------------------------------------------ tiles

inline bool prefetch_now(int & count, int every) {
    const bool now = count == 0;
    count = count + 1 == every ? 0 : count + 1;
    return now;
}

// Stores rows [0, nrv) of a row vector's 16 results of one column.
inline void store_rows(float * out, __m512 v, int nrv) {
    const __mmask16 mask = nrv >= LANES ? (__mmask16) 0xFFFF : (__mmask16) ((1u << nrv) - 1);
    _mm512_mask_storeu_ps(out, mask, v);
}

// PER_BLOCK tile: RV row vectors x NC columns. ysum: the activation blocks'
// level sums, [block][column] for these NC columns, or NULL (computed here).
template <typename F, int RV, int NC, typename ROWS>
void tile_per_block(int64_t nb, const ROWS * rv, const uint8_t * const * ap, const int16_t * ysum, float * out,
                    int64_t ldo, int nrv) {
    typedef typename F::block WB;
    typedef typename F::act AB;
    __m512 acc[RV][NC];
    UNROLL
    for (int v = 0; v < RV; v++)
        UNROLL
        for (int c = 0; c < NC; c++) acc[v][c] = _mm512_setzero_ps();
    const int pf_every = 64 / sizeof(WB) > 0 ? (int) (64 / sizeof(WB)) : 1;
    int pf_count = 0;
    for (int64_t b = 0; b < nb; b++) {
        const size_t wo = (size_t) b * sizeof(WB), ao = (size_t) b * sizeof(AB);
        const bool prefetch = NC == 1 && prefetch_now(pf_count, pf_every);  // decode only
        __m512i g[RV][GROUPS];
        __m512 dw[RV], mw[RV];
        UNROLL
        for (int v = 0; v < RV; v++) {
            F::load(rv[v], wo, prefetch, g[v], &dw[v], &mw[v]);
        }
        UNROLL
        for (int c = 0; c < NC; c++) {
            const uint8_t * y = ap[c] + ao;
            const uint8_t * qs = act_qs<F>(y);
            const __m512 da = _mm512_set1_ps(f32(y));
            __m512i init = _mm512_setzero_si512();
            if constexpr (F::off != 0) init = _mm512_set1_epi32(-F::off * (ysum ? ysum[b * NC + c] : block_sum(qs)));
            __m512i yg[GROUPS];
            UNROLL
            for (int j = 0; j < GROUPS; j++) yg[j] = act_group(qs, j);
            UNROLL
            for (int v = 0; v < RV; v++) {
                __m512i s0 = _mm512_dpbusd_epi32(init, g[v][0], yg[0]);
                __m512i s1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), g[v][1], yg[1]);
                UNROLL
                for (int j = 2; j < GROUPS; j += 2) {
                    s0 = _mm512_dpbusd_epi32(s0, g[v][j], yg[j]);
                    s1 = _mm512_dpbusd_epi32(s1, g[v][j + 1], yg[j + 1]);
                }
                const __m512 sumi = _mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1));
                acc[v][c] = _mm512_fmadd_ps(sumi, _mm512_mul_ps(dw[v], da), acc[v][c]);
                if constexpr (F::affine) acc[v][c] = _mm512_fmadd_ps(mw[v], _mm512_set1_ps(f32(y + 2)), acc[v][c]);
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
    __m512 acc[RV][NC][GROUPS];
    __m512 summs[RV][NC];
    UNROLL
    for (int v = 0; v < RV; v++)
        UNROLL
        for (int c = 0; c < NC; c++) {
            UNROLL
            for (int j = 0; j < GROUPS; j++) acc[v][c][j] = _mm512_setzero_ps();
            summs[v][c] = _mm512_setzero_ps();
        }
    const int pf_every = 64 / sizeof(WB) > 0 ? (int) (64 / sizeof(WB)) : 1;
    int pf_count = 0;
    for (int64_t b = 0; b < nb; b++) {
        const size_t wo = (size_t) b * sizeof(WB), ao = (size_t) b * sizeof(AB);
        const bool prefetch = NC == 1 && prefetch_now(pf_count, pf_every);  // decode only
        // -off * the activation's quad sums, per column (stored, then broadcast)
        alignas(32) int32_t ncorr[NC][GROUPS];
        if constexpr (F::off != 0) {
            UNROLL
            for (int c = 0; c < NC; c++) {
                const __m256i q = quad_sums<F::off>(act_qs<F>(ap[c] + ao));
                _mm256_store_si256((__m256i *) ncorr[c], _mm256_sub_epi32(_mm256_setzero_si256(), q));
            }
        }
        UNROLL
        for (int v = 0; v < RV; v++) {  // row vectors one after the other: 8 groups live at a time
            __m512i g[GROUPS];
            __m512 dw, mw;
            F::load(rv[v], wo, prefetch, g, &dw, &mw);
            UNROLL
            for (int c = 0; c < NC; c++) {
                const uint8_t * y = ap[c] + ao;
                const uint8_t * qs = act_qs<F>(y);
                const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(f32(y)));
                UNROLL
                for (int j = 0; j < GROUPS; j++) {
                    const __m512i init = F::off != 0 ? _mm512_set1_epi32(ncorr[c][j]) : _mm512_setzero_si512();
                    const __m512 lane = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(init, g[j], act_group(qs, j)));
                    acc[v][c][j] = _mm512_fmadd_ps(d, lane, acc[v][c][j]);
                }
                if constexpr (F::affine) summs[v][c] = _mm512_fmadd_ps(mw, _mm512_set1_ps(f32(y + 2)), summs[v][c]);
            }
        }
    }
    for (int c = 0; c < NC; c++)
        for (int v = 0; v < RV && v * LANES < nrv; v++) {
            const __m512 * a = acc[v][c];
            __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[4]), _mm512_add_ps(a[2], a[6])),
                                     _mm512_add_ps(_mm512_add_ps(a[1], a[5]), _mm512_add_ps(a[3], a[7])));
            if constexpr (F::affine) s = _mm512_add_ps(s, summs[v][c]);
            store_rows(out + c * ldo + v * LANES, s, nrv - v * LANES);
        }
}

// Shapes: columns in groups of NCB (prompt), then NCM, then one at a time
// (decode, and the columns left over: NCM = 1 for none); row tiles of RVB
// row vectors for the groups, RVD for single columns. NCB is as wide as the
// registers allow: PER_BLOCK keeps 8 weight groups and one accumulator per
// column, LANES8 eight accumulators per column.
template <typename F> struct shape;
template <> struct shape<fmt_q4_0> { static const int NCB = 16, NCM = 4, RVB = 1, RVD = 2; };
template <> struct shape<fmt_q4_1> { static const int NCB = 16, NCM = 4, RVB = 1, RVD = 2; };
template <> struct shape<fmt_q8_0> { static const int NCB = 16, NCM = 4, RVB = 1, RVD = 2; };
template <> struct shape<fmt_q5_0> { static const int NCB = 4, NCM = 1, RVB = 1, RVD = 2; };
template <> struct shape<fmt_q5_1> { static const int NCB = 4, NCM = 1, RVB = 1, RVD = 2; };
template <> struct shape<fmt_iq4_nl> { static const int NCB = 4, NCM = 1, RVB = 1, RVD = 2; };

template <typename F, int RV, int NC, typename ROWS>
void tile(int64_t nb, const ROWS * rv, const uint8_t * const * ap, const int16_t * ysum, float * out, int64_t ldo, int nrv) {
    if constexpr (F::lanes8) tile_lanes8<F, RV, NC>(nb, rv, ap, out, ldo, nrv);
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
    for (; c0 + S::NCB <= nc; c0 += S::NCB)
        column_group<F, S::NCB, S::RVB>(nb, nr, w, w_stride, a + c0 * a_stride, a_stride, ysum, out + c0 * ldo, ldo);
    if constexpr (S::NCM > 1) {
        for (; c0 + S::NCM <= nc; c0 += S::NCM)
            column_group<F, S::NCM, S::RVB>(nb, nr, w, w_stride, a + c0 * a_stride, a_stride, ysum, out + c0 * ldo, ldo);
    }
    for (; c0 < nc; c0++) column_group<F, 1, S::RVD>(nb, nr, w, w_stride, a + c0 * a_stride, a_stride, ysum, out + c0 * ldo, ldo);
}

}  // namespace

void tern_fill_gemm_legacy_avx512(tern_kernel_set * ks) {
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
