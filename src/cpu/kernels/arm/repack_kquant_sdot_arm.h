// SDOT tiles over the ARM interleaved K-quant layouts (repack_arm.h): Q4_K,
// Q5_K and Q6_K weights in groups of 4 rows times Q8_K activations. Used by
// the dotprod level for prompts and decode and by the i8mm level for decode.
//
// The reference (tensor/quants_k_dot.cpp) needs per super-block and output
// two exact integers, isum = sum_s scale_s * S_s (S_s: sub-block s's sum of
// level x activation products) and, for Q4_K/Q5_K, mins = sum_s min_s *
// (the activation's sum over sub-block s), then its float steps:
//   Q6_K        sum = fma(d_a * d_w, isum, sum)
//   Q4_K, Q5_K  sum = fma(d_a * d_w, isum, sum); sum = fma(-(d_a * dmin_w), mins, sum)
// Here, lane r = row r of the group, per unit and activation column:
// - one running SDOT sum R over the unit (4 rows' quads, by element against
//   the column's quads), and after each sub-block isum += R * (scale_s -
//   scale_s+1) (the last sub-block: its scale): summation by parts, the same
//   isum without clearing a sum per sub-block (int32 wraps, the result fits);
// - mins by SMLAL of the mins (int16) and the Q8_K bsums summed in pairs;
// - the float steps lane by lane (VFMA is fmaf; the d products per lane).
// Q6_K's levels come as T = 4 * level (repack_arm.h): R and isum are 4x the
// reference's, and SCVTF with 2 fraction bits gives (float) isum exactly.
// Every output has the reference's bits wherever its tile falls.
//
// Shapes: G groups x C columns, the unit's levels decoded once per tile in
// sub-block slices (16 registers), each slice used by all C columns:
// decode (G = 2, C = 1) and prompts (G = 1, C = 4; a short last block of
// columns repeats its last column and stores only its own).
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

// isum += R * dsc after a sub-block's SDOTs (summation by parts).
inline int32x4_t mla_s32(int32x4_t acc, int32x4_t r, int32x4_t dsc) { return vmlaq_s32(acc, r, dsc); }

// dsc[s] = sc[s] - sc[s + 1], dsc[n - 1] = sc[n - 1]: written to memory (the
// stack), read back where a sub-block needs it (as registers, the 8 or 16 of
// them stayed live over the whole unit and pushed the levels out).
template <int N>
inline void scale_steps(const int32x4_t sc[N], int32_t dsc[N][4]) {
    for (int s = 0; s + 1 < N; s++) vst1q_s32(dsc[s], vsubq_s32(sc[s], sc[s + 1]));
    vst1q_s32(dsc[N - 1], sc[N - 1]);
}

// Q4_K / Q5_K mins of one unit against y: sum_s m_s * (bsums[2s] + bsums[2s + 1]).
inline int32x4_t k45_mins(const int16x8_t m16[4], const block_q8_K & y) {
    const int16x8_t bsp = vpaddq_s16(vld1q_s16(y.bsums), vld1q_s16(y.bsums + 8));
    int32x4_t m = vmull_laneq_s16(vget_low_s16(m16[0]), bsp, 0);
    m = vmlal_high_laneq_s16(m, m16[0], bsp, 1);
    m = vmlal_laneq_s16(m, vget_low_s16(m16[1]), bsp, 2);
    m = vmlal_high_laneq_s16(m, m16[1], bsp, 3);
    m = vmlal_laneq_s16(m, vget_low_s16(m16[2]), bsp, 4);
    m = vmlal_high_laneq_s16(m, m16[2], bsp, 5);
    m = vmlal_laneq_s16(m, vget_low_s16(m16[3]), bsp, 6);
    return vmlal_high_laneq_s16(m, m16[3], bsp, 7);
}

// R += 8 quads (regs q) . the activation's 8 quads in a0 (quads 0..3) and a1 (4..7).
inline int32x4_t sdot8(int32x4_t r, const int8x16_t q[8], int8x16_t a0, int8x16_t a1) {
    r = vdotq_laneq_s32(r, q[0], a0, 0);
    r = vdotq_laneq_s32(r, q[1], a0, 1);
    r = vdotq_laneq_s32(r, q[2], a0, 2);
    r = vdotq_laneq_s32(r, q[3], a0, 3);
    r = vdotq_laneq_s32(r, q[4], a1, 0);
    r = vdotq_laneq_s32(r, q[5], a1, 1);
    r = vdotq_laneq_s32(r, q[6], a1, 2);
    return vdotq_laneq_s32(r, q[7], a1, 3);
}

// R += 4 quads q[0..3] . the activation's 4 quads in a.
inline int32x4_t sdot4(int32x4_t r, const int8x16_t * q, int8x16_t a) {
    r = vdotq_laneq_s32(r, q[0], a, 0);
    r = vdotq_laneq_s32(r, q[1], a, 1);
    r = vdotq_laneq_s32(r, q[2], a, 2);
    return vdotq_laneq_s32(r, q[3], a, 3);
}

// Q4_K (HIGH false) / Q5_K: G groups (group g at w + g * gbytes) x C columns
// y[c] over nsb super-blocks; out + 4g + c * ldo for c < nv.
template <bool HIGH, int G, int C>
void tile_k45_sdot(int64_t nsb, const uint8_t * w, size_t gbytes, const block_q8_K * const * y, float * out, int64_t ldo,
                   int nv) {
    const size_t UB = HIGH ? repack_arm::Q5K_BYTES : repack_arm::Q4K_BYTES;
    float32x4_t acc[G][C];
    for (int g = 0; g < G; g++) {
        for (int c = 0; c < C; c++) acc[g][c] = vdupq_n_f32(0.0f);
    }
    for (int64_t b = 0; b < nsb; b++) {
        for (int g = 0; g < G; g++) {
            const uint8_t * u = w + g * gbytes + b * UB;
            int32x4_t sc[8];
            alignas(16) int32_t dsc[8][4];
            int16x8_t m16[4];
            k4_scales(u, sc, m16);
            scale_steps<8>(sc, dsc);
            int32x4_t r[C], isum[C];
            for (int c = 0; c < C; c++) r[c] = isum[c] = vdupq_n_s32(0);
            for (int cc = 0; cc < 4; cc++) {  // sub-blocks 2cc, 2cc + 1
                int8x16_t lo[8], hi[8];
                k45_levels<HIGH>(u, cc, lo, hi);
                for (int c = 0; c < C; c++) {
                    const int8x16x4_t a = vld1q_s8_x4(y[c][b].qs + 64 * cc);
                    r[c] = sdot8(r[c], lo, a.val[0], a.val[1]);
                    isum[c] = mla_s32(isum[c], r[c], vld1q_s32(dsc[2 * cc]));
                    r[c] = sdot8(r[c], hi, a.val[2], a.val[3]);
                    isum[c] = mla_s32(isum[c], r[c], vld1q_s32(dsc[2 * cc + 1]));
                }
            }
            const float32x4_t dx = f16x4_arm(u + repack_arm::K_D), dminx = f16x4_arm(u + repack_arm::K_DMIN);
            for (int c = 0; c < C; c++) {
                const float dy = y[c][b].d;
                const float32x4_t mins = vcvtq_f32_s32(k45_mins(m16, y[c][b]));
                acc[g][c] = vfmaq_f32(acc[g][c], vmulq_n_f32(dx, dy), vcvtq_f32_s32(isum[c]));
                acc[g][c] = vfmsq_f32(acc[g][c], vmulq_n_f32(dminx, dy), mins);
            }
        }
    }
    for (int g = 0; g < G; g++) {
        for (int c = 0; c < nv; c++) vst1q_f32(out + 4 * g + c * ldo, acc[g][c]);
    }
}

// Q6_K: as tile_k45_sdot.
template <int G, int C>
void tile_q6_sdot(int64_t nsb, const uint8_t * w, size_t gbytes, const block_q8_K * const * y, float * out, int64_t ldo,
                  int nv) {
    const size_t UB = repack_arm::Q6K_BYTES;
    float32x4_t acc[G][C];
    for (int g = 0; g < G; g++) {
        for (int c = 0; c < C; c++) acc[g][c] = vdupq_n_f32(0.0f);
    }
    for (int64_t b = 0; b < nsb; b++) {
        for (int g = 0; g < G; g++) {
            const uint8_t * u = w + g * gbytes + b * UB;
            int32x4_t sc[16];
            alignas(16) int32_t dsc[16][4];
            q6_scales(u, sc);
            scale_steps<16>(sc, dsc);
            int32x4_t r[C], isum[C];
            for (int c = 0; c < C; c++) r[c] = isum[c] = vdupq_n_s32(0);
            static_for<16>([&](auto jc) {  // sub-block j: values 16j .. 16j + 15
                constexpr int j = decltype(jc)::value;
                int8x16_t q[4];
                q6_levels<j>(u, q);
                for (int c = 0; c < C; c++) {
                    r[c] = sdot4(r[c], q, vld1q_s8(y[c][b].qs + 16 * j));
                    isum[c] = mla_s32(isum[c], r[c], vld1q_s32(dsc[j]));
                }
            });
            const float32x4_t dx = f16x4_arm(u + repack_arm::Q6K_D);
            for (int c = 0; c < C; c++) {
                acc[g][c] = vfmaq_f32(acc[g][c], vmulq_n_f32(dx, y[c][b].d), vcvtq_n_f32_s32(isum[c], 2));
            }
        }
    }
    for (int g = 0; g < G; g++) {
        for (int c = 0; c < nv; c++) vst1q_f32(out + 4 * g + c * ldo, acc[g][c]);
    }
}

// T: 0 = Q4_K, 1 = Q5_K, 2 = Q6_K.
template <int T, int G, int C>
inline void tile_kquant_sdot(int64_t nsb, const uint8_t * w, size_t gbytes, const block_q8_K * const * y, float * out,
                             int64_t ldo, int nv) {
    if constexpr (T == 2) tile_q6_sdot<G, C>(nsb, w, gbytes, y, out, ldo, nv);
    else tile_k45_sdot<T == 1, G, C>(nsb, w, gbytes, y, out, ldo, nv);
}

// ng groups (group g at w + g * gbytes) x one activation row y: out[4g + r].
template <int T>
void gemv_kquant(int64_t nsb, int64_t ng, const uint8_t * w, size_t gbytes, const block_q8_K * y, float * out) {
    const block_q8_K * ys[1] = {y};
    int64_t g = 0;
    for (; g + 2 <= ng; g += 2) tile_kquant_sdot<T, 2, 1>(nsb, w + g * gbytes, gbytes, ys, out + 4 * g, 4, 1);
    if (g < ng) tile_kquant_sdot<T, 1, 1>(nsb, w + g * gbytes, gbytes, ys, out + 4 * g, 4, 1);
}

// gemm_repacked (kernel_set.h) for T: nr / 4 groups x nc activation rows.
template <int T>
void gemm_kquant_sdot(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                      float * out, int64_t ldo) {
    const int C = 4;
    const int64_t nsb = k / QK_K, ng = nr / repack_arm::R;
    const uint8_t * wb = (const uint8_t *) w;
    const size_t gbytes = repack_arm::R * w_stride;
    if (nc == 1) {
        gemv_kquant<T>(nsb, ng, wb, gbytes, (const block_q8_K *) a, out);
        return;
    }
    for (int64_t m = 0; m < nc; m += C) {
        const int nv = nc - m < C ? (int) (nc - m) : C;
        const block_q8_K * y[C];
        for (int c = 0; c < C; c++) y[c] = (const block_q8_K *) ((const uint8_t *) a + (m + (c < nv ? c : nv - 1)) * a_stride);
        for (int64_t g = 0; g < ng; g++) tile_kquant_sdot<T, 1, C>(nsb, wb + g * gbytes, gbytes, y, out + m * ldo + 4 * g, ldo, nv);
    }
}

}  // namespace
}  // namespace tern
