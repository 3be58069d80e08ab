// The i8mm level's repacked K-quants: the ARM interleaved layouts of Q4_K,
// Q5_K and Q6_K (repack_arm.h), prompts on SMMLA, decode (one activation
// column) on the SDOT tiles of repack_kquant_sdot_arm.h. Compiled with the
// i8mm flags.
//
// The integers and float steps are those of repack_kquant_sdot_arm.h (the
// scalar reference's, tensor/quants_k_dot.cpp), in SMMLA's lanes: per unit,
// row pair (r, r + 1) and column pair (c, c + 1), lanes (r, c) (r, c + 1)
// (r + 1, c) (r + 1, c + 1):
// - weight operands ZIP1/ZIP2 (32-bit lanes) of two level registers (8
//   consecutive values of rows r, r + 1), activation operands ZIP1/ZIP2
//   (64-bit lanes) of the two columns' 16-value halves; SMMLA into a running
//   sum R over the unit, and after each sub-block isum += R * (scale_s -
//   scale_s+1) with the scale steps in the row pair's pattern (summation by
//   parts, as the SDOT tiles);
// - mins (Q4_K, Q5_K) per column as the SDOT tiles make them, zipped into
//   the pair's lanes;
// - the float steps lane by lane with d_w (r, r, r + 1, r + 1) and d_a (c, c
//   + 1, c, c + 1).
// Every output has the reference's bits wherever its tile falls.
//
// Tiles: one group x 2P columns (the unit's levels and weight operands made
// once for all of them); a short last block of columns repeats its last
// column and stores only its own.
#include "cpu/kernels/arm/repack_kquant_sdot_arm.h"

namespace tern {

namespace {

using namespace repack_arm;

const int PAIRS = 2;  // column pairs per prompt tile

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

// (a0, a1, a0, a1) of two floats.
inline float32x4_t cols_f32(float a0, float a1) {
    const float32x2_t p = vset_lane_f32(a1, vdup_n_f32(a0), 1);
    return vcombine_f32(p, p);
}

// Per column pair: running sums and isum of both row pairs.
struct pair_sums {
    int32x4_t r[2], isum[2];
};

// Sub-block of 8N values (N = 4: 32, N = 2: 16) of the unit: weight level
// registers q[0 .. 2N - 1] (quads), activations at byte off of each column's
// qs; R += SMMLA, isum += R * dsc (row pair patterns dp[2]).
template <int N, int P>
inline void smmla_sub(const int8x16_t * q, const int32x4_t dp[2], const block_q8_K * const * y, int64_t b, int off,
                      pair_sums s[P]) {
    int8x16_t wop[2][N];
    for (int i = 0; i < N; i++) {
        wop[0][i] = zip1_32(q[2 * i], q[2 * i + 1]);
        wop[1][i] = zip2_32(q[2 * i], q[2 * i + 1]);
    }
    for (int p = 0; p < P; p++) {
        const int8_t * a0 = y[2 * p][b].qs + off, * a1 = y[2 * p + 1][b].qs + off;
        int8x16_t aop[N];
        for (int h = 0; h < N / 2; h++) {
            const int8x16_t x0 = vld1q_s8(a0 + 16 * h), x1 = vld1q_s8(a1 + 16 * h);
            aop[2 * h] = zip1_64(x0, x1);
            aop[2 * h + 1] = zip2_64(x0, x1);
        }
        for (int rp = 0; rp < 2; rp++) {
            for (int i = 0; i < N; i++) s[p].r[rp] = vmmlaq_s32(s[p].r[rp], wop[rp][i], aop[i]);
            s[p].isum[rp] = vmlaq_s32(s[p].isum[rp], s[p].r[rp], dp[rp]);
        }
    }
}

// Row pair patterns (r0 r0 r1 r1), (r2 r2 r3 r3) of int32 or float lanes.
inline void row_pairs(int32x4_t v, int32x4_t out[2]) {
    out[0] = vzip1q_s32(v, v);
    out[1] = vzip2q_s32(v, v);
}
inline void row_pairs(float32x4_t v, float32x4_t out[2]) {
    out[0] = vzip1q_f32(v, v);
    out[1] = vzip2q_f32(v, v);
}

// T: 0 = Q4_K, 1 = Q5_K, 2 = Q6_K. One group x 2P columns y[0 .. 2P - 1], the first nv stored.
template <int T, int P>
void tile_kquant_smmla(int64_t nsb, const uint8_t * u, const block_q8_K * const * y, float * out, int64_t ldo, int nv) {
    const size_t UB = T == 0 ? Q4K_BYTES : T == 1 ? Q5K_BYTES : Q6K_BYTES;
    float32x4_t acc[P][2];
    for (int p = 0; p < P; p++) acc[p][0] = acc[p][1] = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nsb; b++, u += UB) {
        pair_sums s[P];
        for (int p = 0; p < P; p++) s[p].r[0] = s[p].r[1] = s[p].isum[0] = s[p].isum[1] = vdupq_n_s32(0);
        int32x4_t mins[2 * P];
        float32x4_t dxp[2], dminp[2];
        if constexpr (T == 2) {
            int32x4_t sc[16];
            alignas(16) int32_t dsc[16][4];
            q6_scales(u, sc);
            scale_steps<16>(sc, dsc);
            static_for<16>([&](auto jc) {
                constexpr int j = decltype(jc)::value;
                int8x16_t q[4];
                q6_levels<j>(u, q);
                int32x4_t dp[2];
                row_pairs(vld1q_s32(dsc[j]), dp);
                smmla_sub<2, P>(q, dp, y, b, 16 * j, s);
            });
            row_pairs(f16x4_arm(u + Q6K_D), dxp);
        } else {
            int32x4_t sc[8];
            alignas(16) int32_t dsc[8][4];
            int16x8_t m16[4];
            k4_scales(u, sc, m16);
            scale_steps<8>(sc, dsc);
            for (int cc = 0; cc < 4; cc++) {
                int8x16_t lo[8], hi[8];
                k45_levels<T == 1>(u, cc, lo, hi);
                int32x4_t dp[2];
                row_pairs(vld1q_s32(dsc[2 * cc]), dp);
                smmla_sub<4, P>(lo, dp, y, b, 64 * cc, s);
                row_pairs(vld1q_s32(dsc[2 * cc + 1]), dp);
                smmla_sub<4, P>(hi, dp, y, b, 64 * cc + 32, s);
            }
            for (int c = 0; c < 2 * P; c++) mins[c] = k45_mins(m16, y[c][b]);
            row_pairs(f16x4_arm(u + K_D), dxp);
            row_pairs(f16x4_arm(u + K_DMIN), dminp);
        }
        for (int p = 0; p < P; p++) {
            const float32x4_t dy = cols_f32(y[2 * p][b].d, y[2 * p + 1][b].d);
            for (int rp = 0; rp < 2; rp++) {
                if constexpr (T == 2) {
                    acc[p][rp] = vfmaq_f32(acc[p][rp], vmulq_f32(dxp[rp], dy), vcvtq_n_f32_s32(s[p].isum[rp], 2));
                } else {
                    const int32x4_t m = rp == 0 ? vzip1q_s32(mins[2 * p], mins[2 * p + 1]) : vzip2q_s32(mins[2 * p], mins[2 * p + 1]);
                    acc[p][rp] = vfmaq_f32(acc[p][rp], vmulq_f32(dxp[rp], dy), vcvtq_f32_s32(s[p].isum[rp]));
                    acc[p][rp] = vfmsq_f32(acc[p][rp], vmulq_f32(dminp[rp], dy), vcvtq_f32_s32(m));
                }
            }
        }
    }
    for (int p = 0; p < P; p++) {
        if (2 * p < nv) vst1q_f32(out + 2 * p * ldo, vuzp1q_f32(acc[p][0], acc[p][1]));
        if (2 * p + 1 < nv) vst1q_f32(out + (2 * p + 1) * ldo, vuzp2q_f32(acc[p][0], acc[p][1]));
    }
}

template <int T>
void gemm_kquant_smmla(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride, const void * a, size_t a_stride,
                       float * out, int64_t ldo) {
    const int C = 2 * PAIRS;
    const int64_t nsb = k / QK_K, ng = nr / R;
    const uint8_t * wb = (const uint8_t *) w;
    const size_t gbytes = R * w_stride;
    if (nc == 1) {  // decode: SDOT, one column
        gemv_kquant<T>(nsb, ng, wb, gbytes, (const block_q8_K *) a, out);
        return;
    }
    for (int64_t m = 0; m < nc; m += C) {
        const int nv = nc - m < C ? (int) (nc - m) : C;
        const block_q8_K * y[C];
        for (int c = 0; c < C; c++) y[c] = (const block_q8_K *) ((const uint8_t *) a + (m + (c < nv ? c : nv - 1)) * a_stride);
        for (int64_t g = 0; g < ng; g++) tile_kquant_smmla<T, PAIRS>(nsb, wb + g * gbytes, y, out + m * ldo + 4 * g, ldo, nv);
    }
}

}  // namespace

void tern_fill_repack_kquant_i8mm(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_Q4_K
    tern_set_repack_arm(ks, TERN_TYPE_Q4_K, gemm_kquant_smmla<0>);
#endif
#if TERN_WITH_TYPE_Q5_K
    tern_set_repack_arm(ks, TERN_TYPE_Q5_K, gemm_kquant_smmla<1>);
#endif
#if TERN_WITH_TYPE_Q6_K
    tern_set_repack_arm(ks, TERN_TYPE_Q6_K, gemm_kquant_smmla<2>);
#endif
}

}  // namespace tern
