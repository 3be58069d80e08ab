// SDOT tiles over the ARM interleaved legacy layouts (repack_arm.h): Q4_0
// Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL weights in groups of 4 rows. Used by the dotprod
// level for prompts and decode, and by the i8mm level for decode (one
// activation column: an SMMLA tile would compute two columns to keep one)
// and for IQ4_NL.
//
// Per unit (one block of the group's 4 rows) and activation column:
//   S = sum over the 8 level registers k of SDOT(k, the activation's quad k)
//       (vdotq_laneq_s32: lane r += row r's 4 values . the column's 4 values),
//   the 4 rows' exact block sums times 2^SHIFT (repack_arm.h: at most 2^20);
// then the scalar reference's float step (tensor/quants_legacy.cpp) lane by lane:
//   PER_BLOCK  acc = fma((float) sumi, d_w * d_a, acc)  (+ acc = fma(m_w, s_a, acc))
//   LANES8     (IQ4_NL) eight accumulators, one per quad: acc_k = fma(d_w * d_a,
//              (float) lane_k, acc_k), summed at the end as
//              ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))
// with (float) sumi = SCVTF of S with SHIFT fraction bits (exact). So every
// output has the reference's bits, whatever tile or column block computes
// it, and the tile contract of kernel_set.h holds.
//
// Decode (one column): four groups at a time, unit by unit (the activation
// block and its scale, staged as a float, loaded once for 16 rows). Prompts:
// one group x C = 12 columns (a last block of 4 or 8), the unit decoded once
// for C columns; the columns' blocks and scales, as floats, staged on the
// stack SLICE blocks at a time (a tile's accumulators go to the output
// between slices and come back, unchanged); a short last block of columns
// repeats its last column and stores only its own.
//
// Header only, in an anonymous namespace; needs __ARM_FEATURE_DOTPROD.
#pragma once

#include <arm_neon.h>
#include "cpu/kernels/arm/repack_levels_arm.h"

// Reference arithmetic: only the explicit fused multiply-adds fuse.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace tern {
namespace {

// The 4 rows' S of one unit against one activation block (qs: 32 int8).
inline int32x4_t sdot_unit(const int8x16_t q[8], const int8_t * qs) {
    const int8x16_t a0 = vld1q_s8(qs), a1 = vld1q_s8(qs + 16);
    int32x4_t s = vdotq_laneq_s32(vdupq_n_s32(0), q[0], a0, 0);
    s = vdotq_laneq_s32(s, q[1], a0, 1);
    s = vdotq_laneq_s32(s, q[2], a0, 2);
    s = vdotq_laneq_s32(s, q[3], a0, 3);
    s = vdotq_laneq_s32(s, q[4], a1, 0);
    s = vdotq_laneq_s32(s, q[5], a1, 1);
    s = vdotq_laneq_s32(s, q[6], a1, 2);
    return vdotq_laneq_s32(s, q[7], a1, 3);
}

// LANES8: acc[k] = fma(d, (float) (row r's quad k . the column's quad k), acc[k]).
inline void sdot_lanes8(const int8x16_t q[8], const int8_t * qs, float32x4_t d, float32x4_t acc[8]) {
    const int8x16x2_t a = vld1q_s8_x2(qs);
    const int32x4_t zero = vdupq_n_s32(0);
    acc[0] = vfmaq_f32(acc[0], d, vcvtq_f32_s32(vdotq_laneq_s32(zero, q[0], a.val[0], 0)));
    acc[1] = vfmaq_f32(acc[1], d, vcvtq_f32_s32(vdotq_laneq_s32(zero, q[1], a.val[0], 1)));
    acc[2] = vfmaq_f32(acc[2], d, vcvtq_f32_s32(vdotq_laneq_s32(zero, q[2], a.val[0], 2)));
    acc[3] = vfmaq_f32(acc[3], d, vcvtq_f32_s32(vdotq_laneq_s32(zero, q[3], a.val[0], 3)));
    acc[4] = vfmaq_f32(acc[4], d, vcvtq_f32_s32(vdotq_laneq_s32(zero, q[4], a.val[1], 0)));
    acc[5] = vfmaq_f32(acc[5], d, vcvtq_f32_s32(vdotq_laneq_s32(zero, q[5], a.val[1], 1)));
    acc[6] = vfmaq_f32(acc[6], d, vcvtq_f32_s32(vdotq_laneq_s32(zero, q[6], a.val[1], 2)));
    acc[7] = vfmaq_f32(acc[7], d, vcvtq_f32_s32(vdotq_laneq_s32(zero, q[7], a.val[1], 3)));
}

inline float32x4_t lanes8_sum(const float32x4_t a[8]) {
    return vaddq_f32(vaddq_f32(vaddq_f32(a[0], a[4]), vaddq_f32(a[2], a[6])),
                     vaddq_f32(vaddq_f32(a[1], a[5]), vaddq_f32(a[3], a[7])));
}

// Decode: the activation's scales as floats, staged on the stack per slice
// of DECODE_SLICE blocks (a slice's accumulators go to the output and come
// back, unchanged).
const int64_t DECODE_SLICE = 128;

// G groups (4G rows, group g at w + g * gbytes) x one activation row over nb
// blocks (w, y at the first); the activation's scales from da/sa (staged)
// or, with da NULL, from y. Accumulators from 0 (first) or from out (the
// slices before; not IQ4_NL, whose eight accumulators per group run over
// all blocks in one call).
template <class F, int G>
void gemv_legacy_sdot(int64_t nb, const uint8_t * w, size_t gbytes, const typename F::act * y, const float * da,
                      const float * sa, float * out, bool first) {
    const bool lanes8 = F::kind == repack_arm::fmt_kind::iq4_nl;
    float32x4_t acc[G][lanes8 ? 8 : 1];
    for (int g = 0; g < G; g++) {
        for (auto & v : acc[g]) v = vdupq_n_f32(0.0f);
        if (!lanes8 && !first) acc[g][0] = vld1q_f32(out + 4 * g);
    }
    for (int64_t b = 0; b < nb; b++) {
        const float db = da ? da[b] : f16_arm((const uint8_t *) &y[b].d);
        for (int g = 0; g < G; g++) {
            const uint8_t * u = w + g * gbytes + b * F::BYTES;
            int8x16_t q[8];
            legacy_levels<F>(u, q);
            const float32x4_t d = vmulq_n_f32(f16x4_arm(u + F::D), db);
            if constexpr (lanes8) {
                sdot_lanes8(q, y[b].qs, d, acc[g]);
            } else {
                acc[g][0] = vfmaq_f32(acc[g][0], cvt_shift<F::SHIFT>(sdot_unit(q, y[b].qs)), d);
                if constexpr (F::affine) acc[g][0] = vfmaq_n_f32(acc[g][0], f16x4_arm(u + F::M), sa[b]);
            }
        }
    }
    for (int g = 0; g < G; g++) vst1q_f32(out + 4 * g, lanes8 ? lanes8_sum(acc[g]) : acc[g][0]);
}

// ng groups (group g at w + g * gbytes) x one activation row y: out[4g + r],
// four groups at a time.
template <class F>
void gemv_legacy(int64_t nb, int64_t ng, const uint8_t * w, size_t gbytes, const typename F::act * y, float * out) {
    if constexpr (F::kind == repack_arm::fmt_kind::iq4_nl) {
        int64_t g = 0;
        for (; g + 4 <= ng; g += 4) gemv_legacy_sdot<F, 4>(nb, w + g * gbytes, gbytes, y, nullptr, nullptr, out + 4 * g, true);
        for (; g < ng; g++) gemv_legacy_sdot<F, 1>(nb, w + g * gbytes, gbytes, y, nullptr, nullptr, out + 4 * g, true);
        return;
    }
    alignas(16) float da[DECODE_SLICE], sa[F::affine ? DECODE_SLICE : 1];
    for (int64_t b0 = 0; b0 < nb; b0 += DECODE_SLICE) {
        const int64_t n = nb - b0 < DECODE_SLICE ? nb - b0 : DECODE_SLICE;
        for (int64_t b = 0; b < n; b++) {
            da[b] = f16_arm((const uint8_t *) &y[b0 + b].d);
            if constexpr (F::affine) sa[b] = f16_arm((const uint8_t *) &y[b0 + b].s);
        }
        const uint8_t * wb = w + b0 * F::BYTES;
        int64_t g = 0;
        for (; g + 4 <= ng; g += 4) gemv_legacy_sdot<F, 4>(n, wb + g * gbytes, gbytes, y + b0, da, sa, out + 4 * g, b0 == 0);
        for (; g < ng; g++) gemv_legacy_sdot<F, 1>(n, wb + g * gbytes, gbytes, y + b0, da, sa, out + 4 * g, b0 == 0);
    }
}

// Prompts: a column block's activation blocks and scales (as floats),
// staged on the stack SLICE blocks at a time: per block the C columns' 32
// levels back to back, then their C scales (and s, for the affine formats).
const int64_t SLICE = 24;  // 12 columns: 24 x 432 bytes = 10 KB

template <class F, int C>
struct staged_block {
    int8_t qs[C][32];
    float d[C], s[F::affine ? C : 1];
};

// One group x C staged columns over blocks [b0, b1) (u = the group's unit b0);
// accumulators start at 0 (first) or at out (the slices before); the first
// nv columns are stored.
template <class F, int C>
void tile_legacy_sdot(int64_t b0, int64_t b1, const uint8_t * u, const staged_block<F, C> * st, float * out, int64_t ldo,
                      int nv, bool first) {
    float32x4_t acc[C];
    static_for<C>([&](auto cc) {
        constexpr int c = decltype(cc)::value;
        acc[c] = !first && c < nv ? vld1q_f32(out + c * ldo) : vdupq_n_f32(0.0f);
    });
    for (int64_t b = b0; b < b1; b++, u += F::BYTES, st++) {
        int8x16_t q[8];
        legacy_levels<F>(u, q);
        const float32x4_t dw = f16x4_arm(u + F::D);
        float32x4_t mw;
        if constexpr (F::affine) mw = f16x4_arm(u + F::M);
        static_for<C>([&](auto cc) {
            constexpr int c = decltype(cc)::value;
            const float32x4_t d = vmulq_laneq_f32(dw, vld1q_f32(st->d + c / 4 * 4), c % 4);
            acc[c] = vfmaq_f32(acc[c], cvt_shift<F::SHIFT>(sdot_unit(q, st->qs[c])), d);
            if constexpr (F::affine) acc[c] = vfmaq_laneq_f32(acc[c], mw, vld1q_f32(st->s + c / 4 * 4), c % 4);
        });
    }
    static_for<C>([&](auto cc) {
        constexpr int c = decltype(cc)::value;
        if (c < nv) vst1q_f32(out + c * ldo, acc[c]);
    });
}

// A block of C columns (the first nv real, the others repeating the last)
// over all groups: staged, then one tile per group and slice.
template <class F, int C>
void column_block_sdot(int64_t nb, int64_t ng, const uint8_t * wb, size_t gbytes, const uint8_t * a, size_t a_stride,
                       float * out, int64_t ldo, int nv) {
    typedef typename F::act A;
    staged_block<F, C> st[SLICE];
    const A * y[C];
    for (int c = 0; c < C; c++) y[c] = (const A *) (a + (c < nv ? c : nv - 1) * a_stride);
    for (int64_t b0 = 0; b0 < nb; b0 += SLICE) {
        const int64_t b1 = nb - b0 < SLICE ? nb : b0 + SLICE;
        for (int64_t b = b0; b < b1; b++) {
            staged_block<F, C> & sb = st[b - b0];
            for (int c = 0; c < C; c++) {
                vst1q_s8_x2(sb.qs[c], vld1q_s8_x2(y[c][b].qs));
                sb.d[c] = f16_arm((const uint8_t *) &y[c][b].d);
                if constexpr (F::affine) sb.s[c] = f16_arm((const uint8_t *) &y[c][b].s);
            }
        }
        for (int64_t g = 0; g < ng; g++) {
            tile_legacy_sdot<F, C>(b0, b1, wb + g * gbytes + b0 * F::BYTES, st, out + 4 * g, ldo, nv, b0 == 0);
        }
    }
}

// gemm_repacked (kernel_set.h) for F: nr / 4 groups x nc activation rows:
// blocks of 12 columns, the last 1..11 in one of 4, 8 or 12 (a chunk of 64
// columns is 5 x 12 + 4).
template <class F>
void gemm_legacy_sdot(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                      float * out, int64_t ldo) {
    typedef typename F::act A;
    const int64_t nb = k / repack_arm::QK, ng = nr / repack_arm::R;
    const uint8_t * wb = (const uint8_t *) w;
    const uint8_t * ab = (const uint8_t *) a;
    const size_t gbytes = repack_arm::R * w_stride;
    const bool lanes8 = F::kind == repack_arm::fmt_kind::iq4_nl;
    if (nc == 1 || lanes8) {  // decode; IQ4_NL's eight accumulators leave no room for columns
        for (int64_t m = 0; m < nc; m++) gemv_legacy<F>(nb, ng, wb, gbytes, (const A *) (ab + m * a_stride), out + m * ldo);
        return;
    }
    for (int64_t m = 0; m < nc; m += 12) {
        const int nv = nc - m < 12 ? (int) (nc - m) : 12;
        if (nv <= 4) column_block_sdot<F, 4>(nb, ng, wb, gbytes, ab + m * a_stride, a_stride, out + m * ldo, ldo, nv);
        else if (nv <= 8) column_block_sdot<F, 8>(nb, ng, wb, gbytes, ab + m * a_stride, a_stride, out + m * ldo, ldo, nv);
        else column_block_sdot<F, 12>(nb, ng, wb, gbytes, ab + m * a_stride, a_stride, out + m * ldo, ldo, nv);
    }
}

}  // namespace
}  // namespace tern
