// File-layout matrix tiles (tern_gemm_fn, kernel_set.h) of the i8mm level for
// the PER_BLOCK legacy formats, Q4_0 Q8_0 x Q8_0 and Q4_1 x Q8_1, built on the
// int8 matrix multiply SMMLA (compiled with the i8mm flags, arm_features.h).
// They serve the rows a model keeps in the file layout (no repacking, the
// blob path, the rows past a matrix's last repacked group); repacked weights
// go through repack_i8mm.cpp.
//
// SMMLA multiplies a 2x8 int8 matrix by the transpose of another 2x8 and
// adds the 2x2 int32 result: with A = 8 values of weight rows r and r + 1 and
// B = the same 8 values of activation rows c and c + 1, it adds the four
// products (r, c) (r, c + 1) (r + 1, c) (r + 1, c + 1) to the lanes of an
// int32x4. Four of them (values 0-7, 8-15, 16-23, 24-31, the operands made by
// ZIP1/ZIP2 of the two rows' 64-bit halves) give the exact integer sum of a
// whole 32-value block for a 2x2 pair of rows, twice the int8 work of SDOT
// per instruction.
//
// Float part, lane by lane, the reference's (tensor/quants_legacy.cpp,
// PER_BLOCK) operations for each output:
//   acc = fma((float) sumi, d_w * d_a, acc)     (+ acc = fma(m_w, s_a, acc) for Q4_1)
// block after block, with VFMA (fused, as fmaf) and the scale products formed
// per lane from the fp16 scales converted by FCVT. Every output therefore has
// the reference's bits, whatever tile or place in a tile it falls in: the
// tile contract of kernel_set.h holds, and these tiles, the vec_dot kernels
// and the scalar set agree.
//
// Tiles: 4 weight rows x 4 activation rows (two row pairs x two column pairs,
// 16 SMMLA per block), the weight levels decoded once per block and used by
// all four columns. A short tile (the last rows or columns) repeats its last
// row or column: computed, not stored. A single column (decode) is one SDOT
// dot per row instead (vec_dot_legacy_arm.h: the same bits), not a tile that
// computes four columns to keep one.
#include "cpu/kernels/arm/vec_dot_legacy_arm.h"

namespace tern {

namespace {

const int TILE = 4;  // weight rows and activation rows per tile

// The SMMLA operands of two rows' blocks: chunk c = values 8c .. 8c + 7 of
// row 0 then row 1.
inline void pair_operands(int8x16_t lo0, int8x16_t hi0, int8x16_t lo1, int8x16_t hi1, int8x16_t * op) {
    const int64x2_t l0 = vreinterpretq_s64_s8(lo0), l1 = vreinterpretq_s64_s8(lo1);
    const int64x2_t h0 = vreinterpretq_s64_s8(hi0), h1 = vreinterpretq_s64_s8(hi1);
    op[0] = vreinterpretq_s8_s64(vzip1q_s64(l0, l1));
    op[1] = vreinterpretq_s8_s64(vzip2q_s64(l0, l1));
    op[2] = vreinterpretq_s8_s64(vzip1q_s64(h0, h1));
    op[3] = vreinterpretq_s8_s64(vzip2q_s64(h0, h1));
}

// One tile: rows r < nrows of w (stride ws) x columns c < ncols of a.
template <class F>
void tile(int64_t nb, const uint8_t * w, size_t ws, int nrows, const uint8_t * a, size_t as, int ncols,
                       float * out, int64_t ldo) {
    typedef typename F::block wblock;
    typedef typename F::act ablock;
    const wblock * wr[TILE];
    const ablock * ar[TILE];
    for (int i = 0; i < TILE; i++) {
        wr[i] = (const wblock *) (w + (size_t) (i < nrows ? i : nrows - 1) * ws);
        ar[i] = (const ablock *) (a + (size_t) (i < ncols ? i : ncols - 1) * as);
    }
    // acc[p][q]: lanes (2p, 2q) (2p, 2q + 1) (2p + 1, 2q) (2p + 1, 2q + 1) as (row, column).
    float32x4_t acc[2][2];
    for (int p = 0; p < 2; p++) acc[p][0] = acc[p][1] = vdupq_n_f32(0.0f);
    for (int64_t ib = 0; ib < nb; ib++) {
        int8x16_t wop[2][4];
        float32x4_t dw[2], mw[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
        (void) mw;
        for (int p = 0; p < 2; p++) {
            int8x16_t lo0, hi0, lo1, hi1;
            F::levels(wr[2 * p][ib], &lo0, &hi0);
            F::levels(wr[2 * p + 1][ib], &lo1, &hi1);
            pair_operands(lo0, hi0, lo1, hi1, wop[p]);
            const float d0 = f16(wr[2 * p][ib].d), d1 = f16(wr[2 * p + 1][ib].d);
            dw[p] = vcombine_f32(vdup_n_f32(d0), vdup_n_f32(d1));  // d0 d0 d1 d1
            if constexpr (F::affine) {
                const float m0 = f16(wr[2 * p][ib].m), m1 = f16(wr[2 * p + 1][ib].m);
                mw[p] = vcombine_f32(vdup_n_f32(m0), vdup_n_f32(m1));
            }
        }
        for (int q = 0; q < 2; q++) {
            const ablock & y0 = ar[2 * q][ib];
            const ablock & y1 = ar[2 * q + 1][ib];
            int8x16_t aop[4];
            pair_operands(vld1q_s8(y0.qs), vld1q_s8(y0.qs + 16), vld1q_s8(y1.qs), vld1q_s8(y1.qs + 16), aop);
            const float da0 = f16(y0.d), da1 = f16(y1.d);
            const float32x2_t da_pair = {da0, da1};
            const float32x4_t da = vcombine_f32(da_pair, da_pair);  // da0 da1 da0 da1
            float32x4_t sa = vdupq_n_f32(0.0f);  // Q4_1's activation sums
            (void) sa;
            if constexpr (F::affine) {
                const float32x2_t s_pair = {f16(y0.s), f16(y1.s)};
                sa = vcombine_f32(s_pair, s_pair);
            }
            for (int p = 0; p < 2; p++) {
                int32x4_t sumi = vmmlaq_s32(vdupq_n_s32(0), wop[p][0], aop[0]);
                sumi = vmmlaq_s32(sumi, wop[p][1], aop[1]);
                sumi = vmmlaq_s32(sumi, wop[p][2], aop[2]);
                sumi = vmmlaq_s32(sumi, wop[p][3], aop[3]);
                acc[p][q] = vfmaq_f32(acc[p][q], vcvtq_f32_s32(sumi), vmulq_f32(dw[p], da));
                if constexpr (F::affine) acc[p][q] = vfmaq_f32(acc[p][q], mw[p], sa);
            }
        }
    }
    for (int p = 0; p < 2; p++) {
        for (int q = 0; q < 2; q++) {
            float v[4];
            vst1q_f32(v, acc[p][q]);
            for (int l = 0; l < 4; l++) {
                const int r = 2 * p + l / 2, c = 2 * q + l % 2;
                if (r < nrows && c < ncols) out[c * ldo + r] = v[l];
            }
        }
    }
}

template <class F>
void gemm(int64_t k, int64_t nr, int64_t nc, const void * w, size_t ws, const void * a, size_t as,
                       float * out, int64_t ldo) {
    const int64_t nb = k / QK;
    for (int64_t c0 = 0; c0 < nc; c0 += TILE) {
        const int ncols = (int) (nc - c0 < TILE ? nc - c0 : TILE);
        if (ncols == 1) {
            const uint8_t * ac = (const uint8_t *) a + c0 * as;
            for (int64_t r = 0; r < nr; r++) vec_dot_per_block<F, sdot_sums>(k, out + c0 * ldo + r, (const uint8_t *) w + r * ws, ac);
            continue;
        }
        for (int64_t r0 = 0; r0 < nr; r0 += TILE) {
            const int nrows = (int) (nr - r0 < TILE ? nr - r0 : TILE);
            tile<F>(nb, (const uint8_t *) w + r0 * ws, ws, nrows, (const uint8_t *) a + c0 * as, as, ncols,
                    out + c0 * ldo + r0, ldo);
        }
    }
}

}  // namespace

void tern_fill_gemm_legacy_i8mm(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_Q8_0
    ks->gemm[TERN_TYPE_Q8_0] = gemm<neon_legacy::fmt_q8_0>;
#endif
#if TERN_WITH_TYPE_Q4_0
    ks->gemm[TERN_TYPE_Q4_0] = gemm<neon_legacy::fmt_q4_0>;
#endif
#if TERN_WITH_TYPE_Q4_1
    ks->gemm[TERN_TYPE_Q4_1] = gemm<neon_legacy::fmt_q4_1>;
#endif
}

}  // namespace tern
