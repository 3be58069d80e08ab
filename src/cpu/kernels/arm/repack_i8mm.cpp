// The i8mm level's repacked legacy formats: the ARM interleaved layout
// (repack_arm.h), prompts on SMMLA, decode (one activation column) and IQ4_NL
// on the SDOT tiles of repack_sdot_arm.h. Compiled with the i8mm flags.
//
// SMMLA multiplies a 2x8 int8 matrix by the transpose of another 2x8 and
// adds the 2x2 int32 result. Per unit (one block of a group's 4 rows), with
// q[k] the level registers (quad k of rows 0..3, repack_levels_arm.h):
//   weight operand, rows 0-1, values 8i..8i+7 = ZIP1 (32-bit lanes) of q[2i]
//   and q[2i + 1]; rows 2-3 = ZIP2 of the same;
//   activation operand, columns c, c + 1, values 8i..8i+7 = ZIP1 / ZIP2 (64-bit
//   lanes) of the two columns' 16-value halves;
// four SMMLA per row pair and column pair give the exact block sums S (times
// 2^SHIFT) in lanes (r, c) (r, c + 1) (r + 1, c) (r + 1, c + 1). The float
// step is the scalar reference's (tensor/quants_legacy.cpp), lane by lane:
//   acc = fma((float) sumi, d_w * d_a, acc)   (+ acc = fma(m_w, s_a, acc))
// with d_w (r, r, r + 1, r + 1) and d_a (c, c + 1, c, c + 1), so every output
// has the reference's bits whatever tile computes it; IQ4_NL's LANES8 order
// needs each quad's sum apart, which SMMLA does not give: it keeps the SDOT
// tiles.
//
// Tiles: one group x 2P columns (P = 6 column pairs, a last block of 2 or 4;
// the weight operands made once per unit for all of them). The activation operands and scale
// patterns of a column block are made once per call and staged on the
// stack, PAIR_SLICE blocks at a time (a tile's accumulators go to the output
// between slices and come back, unchanged). A short last block of columns
// repeats its last column and stores only its own; UZP1/UZP2 of the two row
// pairs' tiles give each column's 4 outputs.
#include "cpu/kernels/arm/repack_sdot_arm.h"

namespace tern {

namespace {

using namespace repack_arm;

const int PAIRS = 6;  // column pairs per prompt tile (4: 3.16 instructions per block and output for Q4_0, 6: 2.9)

inline int8x16_t zip1_32(int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_s32(vzip1q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
}
inline int8x16_t zip2_32(int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_s32(vzip2q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
}
inline int8x16_t zip1_64(int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
inline int8x16_t zip2_64(int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}

// A column pair's unit of the staged activations: the SMMLA operands of
// values 0-7, 8-15, 16-23, 24-31 of both columns, d_a (c, c + 1, c, c + 1)
// and, affine formats, s_a the same way.
struct staged_pair {
    int8_t op[64];
    float d[4], s[4];
};
const int64_t PAIR_SLICE = 24;  // blocks staged at a time: 6 pairs x 24 x 96 bytes = 13.5 KB

inline void stage_pair(const int8_t * q0, const int8_t * q1, float d0, float d1, float s0, float s1, staged_pair * st) {
    const int8x16x2_t x = vld1q_s8_x2(q0), z = vld1q_s8_x2(q1);
    vst1q_s8(st->op, zip1_64(x.val[0], z.val[0]));
    vst1q_s8(st->op + 16, zip2_64(x.val[0], z.val[0]));
    vst1q_s8(st->op + 32, zip1_64(x.val[1], z.val[1]));
    vst1q_s8(st->op + 48, zip2_64(x.val[1], z.val[1]));
    st->d[0] = st->d[2] = d0;
    st->d[1] = st->d[3] = d1;
    st->s[0] = st->s[2] = s0;
    st->s[1] = st->s[3] = s1;
}

// One group x P column pairs over blocks [b0, b1) (u = the group's unit b0,
// st = the pairs' staged units, P per block); accumulators from 0 (first) or
// from out; the first nv columns stored.
template <class F, int P>
void tile_legacy_smmla(int64_t b0, int64_t b1, const uint8_t * u, const staged_pair * st, float * out, int64_t ldo, int nv,
                       bool first) {
    float32x4_t acc[P][2];
    static_for<P>([&](auto pc) {
        constexpr int p = decltype(pc)::value;
        for (int rp = 0; rp < 2; rp++) acc[p][rp] = vdupq_n_f32(0.0f);
        if (!first) {  // the lanes (r, c) back from columns 2p, 2p + 1
            const float32x4_t c0 = 2 * p < nv ? vld1q_f32(out + 2 * p * ldo) : vdupq_n_f32(0.0f);
            const float32x4_t c1 = 2 * p + 1 < nv ? vld1q_f32(out + (2 * p + 1) * ldo) : vdupq_n_f32(0.0f);
            acc[p][0] = vzip1q_f32(c0, c1);
            acc[p][1] = vzip2q_f32(c0, c1);
        }
    });
    for (int64_t b = b0; b < b1; b++, u += F::BYTES, st += P) {
        int8x16_t q[8], wop[2][4];
        legacy_levels<F>(u, q);
        for (int i = 0; i < 4; i++) {
            wop[0][i] = zip1_32(q[2 * i], q[2 * i + 1]);
            wop[1][i] = zip2_32(q[2 * i], q[2 * i + 1]);
        }
        const float32x4_t dw = f16x4_arm(u + F::D);
        const float32x4_t dwp[2] = {vzip1q_f32(dw, dw), vzip2q_f32(dw, dw)};  // (d0 d0 d1 d1), (d2 d2 d3 d3)
        float32x4_t mwp[2];
        if constexpr (F::affine) {
            const float32x4_t mw = f16x4_arm(u + F::M);
            mwp[0] = vzip1q_f32(mw, mw);
            mwp[1] = vzip2q_f32(mw, mw);
        }
        static_for<P>([&](auto pc) {
            constexpr int p = decltype(pc)::value;
            const int8x16x4_t aop = vld1q_s8_x4(st[p].op);
            const float32x4_t da = vld1q_f32(st[p].d);
            for (int rp = 0; rp < 2; rp++) {
                int32x4_t s = vmmlaq_s32(vdupq_n_s32(0), wop[rp][0], aop.val[0]);
                s = vmmlaq_s32(s, wop[rp][1], aop.val[1]);
                s = vmmlaq_s32(s, wop[rp][2], aop.val[2]);
                s = vmmlaq_s32(s, wop[rp][3], aop.val[3]);
                acc[p][rp] = vfmaq_f32(acc[p][rp], cvt_shift<F::SHIFT>(s), vmulq_f32(dwp[rp], da));
                if constexpr (F::affine) acc[p][rp] = vfmaq_f32(acc[p][rp], mwp[rp], vld1q_f32(st[p].s));
            }
        });
    }
    static_for<P>([&](auto pc) {
        constexpr int p = decltype(pc)::value;
        // columns 2p, 2p + 1: rows (0, 1, 2, 3) from the lanes (r, c) of both row pairs
        if (2 * p < nv) vst1q_f32(out + 2 * p * ldo, vuzp1q_f32(acc[p][0], acc[p][1]));
        if (2 * p + 1 < nv) vst1q_f32(out + (2 * p + 1) * ldo, vuzp2q_f32(acc[p][0], acc[p][1]));
    });
}

// A block of 2P columns (the first nv real, the others repeating the last)
// over all groups: staged, then one tile per group and slice.
template <class F, int P>
void column_block_smmla(int64_t nb, int64_t ng, const uint8_t * wb, size_t gbytes, const uint8_t * a, size_t a_stride,
                        float * out, int64_t ldo, int nv) {
    typedef typename F::act A;
    staged_pair st[PAIR_SLICE * P];
    const A * y[2 * P];
    for (int c = 0; c < 2 * P; c++) y[c] = (const A *) (a + (c < nv ? c : nv - 1) * a_stride);
    for (int64_t b0 = 0; b0 < nb; b0 += PAIR_SLICE) {
        const int64_t b1 = nb - b0 < PAIR_SLICE ? nb : b0 + PAIR_SLICE;
        for (int64_t b = b0; b < b1; b++) {
            for (int p = 0; p < P; p++) {
                const A & y0 = y[2 * p][b];
                const A & y1 = y[2 * p + 1][b];
                float s0 = 0.0f, s1 = 0.0f;
                if constexpr (F::affine) s0 = f16_arm((const uint8_t *) &y0.s), s1 = f16_arm((const uint8_t *) &y1.s);
                stage_pair(y0.qs, y1.qs, f16_arm((const uint8_t *) &y0.d), f16_arm((const uint8_t *) &y1.d), s0, s1,
                           &st[(b - b0) * P + p]);
            }
        }
        for (int64_t g = 0; g < ng; g++) {
            tile_legacy_smmla<F, P>(b0, b1, wb + g * gbytes + b0 * F::BYTES, st, out + 4 * g, ldo, nv, b0 == 0);
        }
    }
}

// gemm_repacked (kernel_set.h) for F: blocks of 2 PAIRS = 12 columns, the
// last 2..11 in one of 4, 8 or 12 (a chunk of 64 columns is 5 x 12 + 4).
template <class F>
void gemm_legacy_smmla(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                       float * out, int64_t ldo) {
    typedef typename F::act A;
    const int64_t nb = k / QK, ng = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const uint8_t * ab = (const uint8_t *) a;
    const size_t gbytes = R * w_stride;
    if (nc == 1) {  // decode: SDOT, one column
        gemv_legacy<F>(nb, ng, wb, gbytes, (const A *) a, out);
        return;
    }
    for (int64_t m = 0; m < nc; m += 2 * PAIRS) {
        const int nv = nc - m < 2 * PAIRS ? (int) (nc - m) : 2 * PAIRS;
        if (nv <= 4) column_block_smmla<F, 2>(nb, ng, wb, gbytes, ab + m * a_stride, a_stride, out + m * ldo, ldo, nv);
        else if (nv <= 8) column_block_smmla<F, 4>(nb, ng, wb, gbytes, ab + m * a_stride, a_stride, out + m * ldo, ldo, nv);
        else column_block_smmla<F, PAIRS>(nb, ng, wb, gbytes, ab + m * a_stride, a_stride, out + m * ldo, ldo, nv);
    }
}

}  // namespace

void tern_fill_repack_i8mm(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_Q4_0
    tern_set_repack_arm(ks, TERN_TYPE_Q4_0, gemm_legacy_smmla<fmt_q4_0>);
#endif
#if TERN_WITH_TYPE_Q4_1
    tern_set_repack_arm(ks, TERN_TYPE_Q4_1, gemm_legacy_smmla<fmt_q4_1>);
#endif
#if TERN_WITH_TYPE_Q5_0
    tern_set_repack_arm(ks, TERN_TYPE_Q5_0, gemm_legacy_smmla<fmt_q5_0>);
#endif
#if TERN_WITH_TYPE_Q5_1
    tern_set_repack_arm(ks, TERN_TYPE_Q5_1, gemm_legacy_smmla<fmt_q5_1>);
#endif
#if TERN_WITH_TYPE_Q8_0
    tern_set_repack_arm(ks, TERN_TYPE_Q8_0, gemm_legacy_smmla<fmt_q8_0>);
#endif
    // IQ4_NL: the dotprod level's SDOT tiles (filled before this).
}

}  // namespace tern
