// File-layout matrix tiles (tern_gemm_fn, kernel_set.h) of the i8mm level for
// the K-quants (Q2_K..Q6_K x Q8_K) on the int8 matrix multiply SMMLA
// (compiled with the i8mm flags, arm_features.h). They serve the rows a model
// keeps in the file layout; repacked Q4_K/Q5_K/Q6_K go through
// repack_kquant_i8mm.cpp.
//
// The reference (tensor/quants_k_dot.cpp) needs per super-block and output
// two exact integers, isum = sum_j scale[j] * (q . y over sub-block j) and
// mins = sum_j min[j] * bsums[j], then one or two float fused multiply-adds.
// Here, for a pair of weight rows (r, r + 1) and a pair of activation rows
// (c, c + 1), lanes (r, c) (r, c + 1) (r + 1, c) (r + 1, c + 1):
// - sub-block j's four dot products are two SMMLA (values 0-7 and 8-15 of
//   both rows side by side, made by ZIP1/ZIP2 of 64-bit halves), then one
//   multiply-accumulate by (scale_r[j], scale_r[j], scale_r+1[j],
//   scale_r+1[j]) adds them to isum's lanes: exact int32, as in the
//   reference (the largest, Q6_K, stays under 2^28);
// - mins per lane from the super-blocks' mins and the activation bsums
//   (kquant_levels_neon.h mins_dot);
// - the float step of the type, lane by lane with VFMA (fused, as fmaf):
//   d = d_y * d_x and dmin = d_y * dmin_x per lane, isum and mins converted
//   to float as the reference converts them.
// So every output has the reference's bits wherever it falls: the tile
// contract of kernel_set.h holds, and these tiles, the vec_dot kernels and
// the scalar set agree.
//
// Tiles: 4 weight rows x 4 activation rows, each weight super-block unpacked
// once (kquant_levels_neon.h) and its SMMLA operands built once for all four
// activation rows. A short tile repeats its last row or column (computed,
// not stored); a column pair that is entirely past the end is skipped. A
// single column (decode) is one SDOT dot per row instead
// (vec_dot_kquant_arm.h: the same bits).
#include "cpu/kernels/arm/vec_dot_kquant_arm.h"

namespace tern {

namespace {

using namespace neon_kquant;

const int TILE = 4;           // weight rows and activation rows per tile
const int NSUB = QK_K / 16;   // 16-value sub-blocks per super-block

inline int8x16_t zip_lo(int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
inline int8x16_t zip_hi(int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}

// (a, a, b, b) and (a, b, a, b): the lane patterns of a row pair and a column pair.
inline float32x4_t rows_f32(float a, float b) { return vcombine_f32(vdup_n_f32(a), vdup_n_f32(b)); }
inline float32x4_t cols_f32(float a, float b) {
    const float32x2_t p = vset_lane_f32(b, vdup_n_f32(a), 1);
    return vcombine_f32(p, p);
}

template <class B>
void tile(int64_t nsb, const uint8_t * w, size_t ws, int nrows, const uint8_t * a, size_t as, int ncols,
                       float * out, int64_t ldo) {
    const float_step step = k_step<B>::value;
    const B * wr[TILE];
    const block_q8_K * ar[TILE];
    for (int i = 0; i < TILE; i++) {
        wr[i] = (const B *) (w + (size_t) (i < nrows ? i : nrows - 1) * ws);
        ar[i] = (const block_q8_K *) (a + (size_t) (i < ncols ? i : ncols - 1) * as);
    }
    const int npairs_c = ncols > 2 ? 2 : 1;
    float32x4_t acc[2][2];
    for (int p = 0; p < 2; p++) acc[p][0] = acc[p][1] = vdupq_n_f32(0.0f);
    for (int64_t ib = 0; ib < nsb; ib++) {
        superblock sb[TILE];
        for (int r = 0; r < TILE; r++) unpack(wr[r][ib], &sb[r]);
        // wop[p][j]: sub-block j of rows 2p, 2p + 1 as two SMMLA operands.
        int8x16_t wop[2][NSUB][2];
        for (int p = 0; p < 2; p++) {
            for (int j = 0; j < NSUB; j++) {
                wop[p][j][0] = zip_lo(sb[2 * p].q[j], sb[2 * p + 1].q[j]);
                wop[p][j][1] = zip_hi(sb[2 * p].q[j], sb[2 * p + 1].q[j]);
            }
        }
        for (int q = 0; q < npairs_c; q++) {
            const block_q8_K & y0 = ar[2 * q][ib];
            const block_q8_K & y1 = ar[2 * q + 1][ib];
            int32x4_t isum[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
            for (int j = 0; j < NSUB; j++) {
                const int8x16_t v0 = vld1q_s8(y0.qs + 16 * j), v1 = vld1q_s8(y1.qs + 16 * j);
                const int8x16_t a0 = zip_lo(v0, v1), a1 = zip_hi(v0, v1);
                for (int p = 0; p < 2; p++) {
                    const int32x4_t dots = vmmlaq_s32(vmmlaq_s32(vdupq_n_s32(0), wop[p][j][0], a0), wop[p][j][1], a1);
                    const int32x4_t sc = vcombine_s32(vdup_n_s32(sb[2 * p].scale[j]), vdup_n_s32(sb[2 * p + 1].scale[j]));
                    isum[p] = vmlaq_s32(isum[p], dots, sc);
                }
            }
            const float32x4_t dy = cols_f32(y0.d, y1.d);
            for (int p = 0; p < 2; p++) {
                const B & x0 = wr[2 * p][ib];
                const B & x1 = wr[2 * p + 1][ib];
                const float32x4_t d = vmulq_f32(dy, rows_f32(f16(x0.d), f16(x1.d)));
                const float32x4_t fisum = vcvtq_f32_s32(isum[p]);
                if constexpr (step == NO_MINS) {
                    acc[p][q] = vfmaq_f32(acc[p][q], d, fisum);
                } else {
                    const float32x4_t dmin = vmulq_f32(dy, rows_f32(f16(x0.dmin), f16(x1.dmin)));
                    const int32_t m[4] = {mins_dot(sb[2 * p], y0), mins_dot(sb[2 * p], y1), mins_dot(sb[2 * p + 1], y0),
                                          mins_dot(sb[2 * p + 1], y1)};
                    const float32x4_t mins = vcvtq_f32_s32(vld1q_s32(m));
                    if constexpr (step == MINS_FIRST) {
                        acc[p][q] = vfmaq_f32(acc[p][q], vnegq_f32(dmin), mins);
                        acc[p][q] = vfmaq_f32(acc[p][q], d, fisum);
                    } else {
                        acc[p][q] = vfmaq_f32(acc[p][q], d, fisum);
                        acc[p][q] = vfmaq_f32(acc[p][q], vnegq_f32(dmin), mins);
                    }
                }
            }
        }
    }
    for (int p = 0; p < 2; p++) {
        for (int q = 0; q < npairs_c; q++) {
            float v[4];
            vst1q_f32(v, acc[p][q]);
            for (int l = 0; l < 4; l++) {
                const int r = 2 * p + l / 2, c = 2 * q + l % 2;
                if (r < nrows && c < ncols) out[c * ldo + r] = v[l];
            }
        }
    }
}

template <class B>
void gemm_kquant(int64_t k, int64_t nr, int64_t nc, const void * w, size_t ws, const void * a, size_t as,
                       float * out, int64_t ldo) {
    const int64_t nsb = k / QK_K;
    for (int64_t c0 = 0; c0 < nc; c0 += TILE) {
        const int ncols = (int) (nc - c0 < TILE ? nc - c0 : TILE);
        if (ncols == 1) {
            const uint8_t * ac = (const uint8_t *) a + c0 * as;
            for (int64_t r = 0; r < nr; r++) {
                vec_dot_kquant<B, k_step<B>::value, sdot_lanes>(k, out + c0 * ldo + r, (const uint8_t *) w + r * ws, ac);
            }
            continue;
        }
        for (int64_t r0 = 0; r0 < nr; r0 += TILE) {
            const int nrows = (int) (nr - r0 < TILE ? nr - r0 : TILE);
            tile<B>(nsb, (const uint8_t *) w + r0 * ws, ws, nrows, (const uint8_t *) a + c0 * as, as, ncols,
                    out + c0 * ldo + r0, ldo);
        }
    }
}

}  // namespace

void tern_fill_gemm_kquant_i8mm(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_Q2_K
    ks->gemm[TERN_TYPE_Q2_K] = gemm_kquant<block_q2_K>;
#endif
#if TERN_WITH_TYPE_Q3_K
    ks->gemm[TERN_TYPE_Q3_K] = gemm_kquant<block_q3_K>;
#endif
#if TERN_WITH_TYPE_Q4_K
    ks->gemm[TERN_TYPE_Q4_K] = gemm_kquant<block_q4_K>;
#endif
#if TERN_WITH_TYPE_Q5_K
    ks->gemm[TERN_TYPE_Q5_K] = gemm_kquant<block_q5_K>;
#endif
#if TERN_WITH_TYPE_Q6_K
    ks->gemm[TERN_TYPE_Q6_K] = gemm_kquant<block_q6_K>;
#endif
}

}  // namespace tern
