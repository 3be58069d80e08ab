// NEON kernels (see vec.h). F16 loads convert with FCVTL, stores with FCVTN
// (round-to-nearest-even under the default FPCR, like F16C). Tails fall back
// to the reference loop.
//
// 32-bit ARM (ARMv7 NEON): only dot_f32. ARMv7's NEON arithmetic flushes
// subnormals to zero whatever the FPSCR says, so the kernels vec.h marks
// exact (add, mul, mad, scale_mul, conversions) keep the reference (VFP,
// IEEE) there; a dot product may round differently anyway.
#include "cpu/kernels/vec.h"

#include <arm_neon.h>
#include <math.h>
#include "cpu/kernels/exp_approx.h"

namespace tern {

static inline float add_lanes_f32(float32x4_t v) {
#if defined(__aarch64__)
    return vaddvq_f32(v);
#else
    const float32x2_t p = vadd_f32(vget_low_f32(v), vget_high_f32(v));
    return vget_lane_f32(vpadd_f32(p, p), 0);
#endif
}

static float kdot_f32(int64_t n, const float * x, const float * y) {
    float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc0 = vfmaq_f32(acc0, vld1q_f32(x + i), vld1q_f32(y + i));
        acc1 = vfmaq_f32(acc1, vld1q_f32(x + i + 4), vld1q_f32(y + i + 4));
    }
    return add_lanes_f32(vaddq_f32(acc0, acc1)) + tern_kdot_f32_ref(n - i, x + i, y + i);
}

#if defined(__aarch64__)
static inline float32x4_t load_f16x4(const tern_fp16 * p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }

static float kdot_f16(int64_t n, const tern_fp16 * x, const tern_fp16 * y) {
    float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc0 = vfmaq_f32(acc0, load_f16x4(x + i), load_f16x4(y + i));
        acc1 = vfmaq_f32(acc1, load_f16x4(x + i + 4), load_f16x4(y + i + 4));
    }
    return vaddvq_f32(vaddq_f32(acc0, acc1)) + tern_kdot_f16_ref(n - i, x + i, y + i);
}

static double ksumsq_f32(int64_t n, const float * x) {
    float64x2_t acc0 = vdupq_n_f64(0.0), acc1 = vdupq_n_f64(0.0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        const float32x4_t sq = vmulq_f32(v, v);  // product in float, as the reference
        acc0 = vaddq_f64(acc0, vcvt_f64_f32(vget_low_f32(sq)));
        acc1 = vaddq_f64(acc1, vcvt_high_f64_f32(sq));
    }
    return vaddvq_f64(vaddq_f64(acc0, acc1)) + tern_ksumsq_f32_ref(n - i, x + i);
}

static void kmad_f32(int64_t n, float * y, const float * x, float s) {
    const float32x4_t vs = vdupq_n_f32(s);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(y + i), vmulq_f32(vs, vld1q_f32(x + i))));
    tern_kmad_f32_ref(n - i, y + i, x + i, s);
}

static void kmad_f16(int64_t n, float * y, const tern_fp16 * x, float s) {
    const float32x4_t vs = vdupq_n_f32(s);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(y + i), vmulq_f32(vs, load_f16x4(x + i))));
    tern_kmad_f16_ref(n - i, y + i, x + i, s);
}

static void kscale_mul_f32(int64_t n, float * y, const float * x, float s, const float * w) {
    const float32x4_t vs = vdupq_n_f32(s);
    int64_t i = 0;
    if (w) {
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vmulq_f32(vld1q_f32(x + i), vs), vld1q_f32(w + i)));
        tern_kscale_mul_f32_ref(n - i, y + i, x + i, s, w + i);
    } else {
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vld1q_f32(x + i), vs));
        tern_kscale_mul_f32_ref(n - i, y + i, x + i, s, NULL);
    }
}

static void kadd_f32(int64_t n, float * z, const float * x, const float * y) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(z + i, vaddq_f32(vld1q_f32(x + i), vld1q_f32(y + i)));
    tern_kadd_f32_ref(n - i, z + i, x + i, y + i);
}

static void kmul_f32(int64_t n, float * z, const float * x, const float * y) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(z + i, vmulq_f32(vld1q_f32(x + i), vld1q_f32(y + i)));
    tern_kmul_f32_ref(n - i, z + i, x + i, y + i);
}

static void kfp32_to_fp16(int64_t n, const float * x, tern_fp16 * y) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(y + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    tern_kfp32_to_fp16_ref(n - i, x + i, y + i);
}

static void kfp16_to_fp32(int64_t n, const tern_fp16 * x, float * y) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, load_f16x4(x + i));
    tern_kfp16_to_fp32_ref(n - i, x + i, y + i);
}

// Attention rows for a group of query heads sharing a KV head (GQA), heads
// of n <= 256 values, n a multiple of 4 (others go row by row through
// kdot_f16 / kmad_f16). Rows are taken in blocks of ROWS, converted from F16
// once into float on the stack and met there by every query of the group:
// - dot_f16_rows: per row one chain of fused multiply-adds over the n / 4
//   lanes of 4 values, then ((l0 + l1) + (l2 + l3)) (two pairwise adds give
//   4 rows' dots in one register). A row's dot is these operations wherever
//   the row sits and whatever the group: grouping and the number of cells
//   attended change no bit;
// - mad_f16_rows: a query's output, up to 64 values at a time, stays in
//   registers over the block's rows: y = y + p_j * row_j (kmad_f16's
//   unfused operations, rows in order, p_j == 0 skipped), so the same bits.
// The queries are converted once per call, in chunks of ATTN_X_CHUNK values
// (on the stack).
constexpr int64_t ATTN_X_CHUNK = 1024;
constexpr int64_t ATTN_N_MAX = 256;
constexpr int DOT_ROWS = 4, MAD_ROWS = 8;

// rows [j0, j0 + nr) of width n as floats rf[r * n + i]; rows past nr are zeros.
static inline void stage_rows(int64_t n, int nr, int block, const tern_fp16 * rows, int64_t stride, float * rf) {
    for (int r = 0; r < block; r++) {
        float * d = rf + r * n;
        if (r < nr) {
            for (int64_t i = 0; i < n; i += 4) vst1q_f32(d + i, load_f16x4(rows + r * stride + i));
        } else {
            for (int64_t i = 0; i < n; i += 4) vst1q_f32(d + i, vdupq_n_f32(0.0f));
        }
    }
}

// RB (4 or 2) rows' dots from their accumulators: lane r = ((l0 + l1) + (l2 + l3)) of row r.
template <int RB>
static inline void store_dots(const float32x4_t * acc, float * o, int nr) {
    const float32x4_t p01 = vpaddq_f32(acc[0], acc[1]);
    const float32x4_t dots = vpaddq_f32(p01, RB == 4 ? vpaddq_f32(acc[2], acc[3]) : p01);
    if (nr == 4) {
        vst1q_f32(o, dots);
        return;
    }
    float v[4];
    vst1q_f32(v, dots);
    for (int r = 0; r < nr; r++) o[r] = v[r];
}

// Heads of NQ lanes (n = 4 NQ <= 32): blocks of RB rows (RB * NQ <= 16
// registers) stay in registers while every query meets them.
template <int NQ, int RB>
static void dot_rows_regs(int64_t n_rows, int64_t ng, const float * xf, const tern_fp16 * rows, int64_t stride, float * out,
                          int64_t out_stride) {
    const int64_t n = 4 * NQ;
    for (int64_t j0 = 0; j0 < n_rows; j0 += RB) {
        const int nr = n_rows - j0 < RB ? (int) (n_rows - j0) : RB;
        float32x4_t rv[RB][NQ];
        for (int r = 0; r < RB; r++) {
            for (int k = 0; k < NQ; k++) rv[r][k] = r < nr ? load_f16x4(rows + (j0 + r) * stride + 4 * k) : vdupq_n_f32(0.0f);
        }
        for (int64_t g = 0; g < ng; g++) {
            float32x4_t acc[RB];
            for (int r = 0; r < RB; r++) acc[r] = vdupq_n_f32(0.0f);
            for (int k = 0; k < NQ; k++) {
                const float32x4_t xv = vld1q_f32(xf + g * n + 4 * k);
                for (int r = 0; r < RB; r++) acc[r] = vfmaq_f32(acc[r], xv, rv[r][k]);
            }
            store_dots<RB>(acc, out + g * out_stride + j0, nr);
        }
    }
}

// Wider heads: the block's rows staged as floats on the stack.
static void dot_rows_staged(int64_t n, int64_t n_rows, int64_t ng, const float * xf, const tern_fp16 * rows, int64_t stride,
                            float * out, int64_t out_stride) {
    float rf[DOT_ROWS * ATTN_N_MAX];
    for (int64_t j0 = 0; j0 < n_rows; j0 += DOT_ROWS) {
        const int nr = n_rows - j0 < DOT_ROWS ? (int) (n_rows - j0) : DOT_ROWS;
        stage_rows(n, nr, DOT_ROWS, rows + j0 * stride, stride, rf);
        for (int64_t g = 0; g < ng; g++) {
            const float * xg = xf + g * n;
            float32x4_t acc[DOT_ROWS];
            for (int r = 0; r < DOT_ROWS; r++) acc[r] = vdupq_n_f32(0.0f);
            for (int64_t i = 0; i < n; i += 4) {
                const float32x4_t xv = vld1q_f32(xg + i);
                for (int r = 0; r < DOT_ROWS; r++) acc[r] = vfmaq_f32(acc[r], xv, vld1q_f32(rf + r * n + i));
            }
            store_dots<DOT_ROWS>(acc, out + g * out_stride + j0, nr);
        }
    }
}

static void kdot_f16_rows(int64_t n, int64_t n_rows, int64_t n_x, const tern_fp16 * x, const tern_fp16 * rows, int64_t stride,
                          float * out, int64_t out_stride) {
    if (n % 4 != 0 || n > ATTN_N_MAX) {
        for (int64_t g = 0; g < n_x; g++) {
            for (int64_t j = 0; j < n_rows; j++) out[g * out_stride + j] = kdot_f16(n, x + g * n, rows + j * stride);
        }
        return;
    }
    float xf[ATTN_X_CHUNK];
    const int64_t per_chunk = ATTN_X_CHUNK / n;
    for (int64_t g0 = 0; g0 < n_x; g0 += per_chunk) {
        const int64_t ng = n_x - g0 < per_chunk ? n_x - g0 : per_chunk;
        for (int64_t i = 0; i < ng * n; i += 4) vst1q_f32(xf + i, load_f16x4(x + g0 * n + i));
        float * o = out + g0 * out_stride;
        switch (n / 4) {
            case 1: dot_rows_regs<1, 4>(n_rows, ng, xf, rows, stride, o, out_stride); break;
            case 2: dot_rows_regs<2, 4>(n_rows, ng, xf, rows, stride, o, out_stride); break;
            case 3: dot_rows_regs<3, 4>(n_rows, ng, xf, rows, stride, o, out_stride); break;
            case 4: dot_rows_regs<4, 4>(n_rows, ng, xf, rows, stride, o, out_stride); break;
            case 5: dot_rows_regs<5, 2>(n_rows, ng, xf, rows, stride, o, out_stride); break;
            case 6: dot_rows_regs<6, 2>(n_rows, ng, xf, rows, stride, o, out_stride); break;
            case 7: dot_rows_regs<7, 2>(n_rows, ng, xf, rows, stride, o, out_stride); break;
            case 8: dot_rows_regs<8, 2>(n_rows, ng, xf, rows, stride, o, out_stride); break;
            default: dot_rows_staged(n, n_rows, ng, xf, rows, stride, o, out_stride); break;
        }
    }
}

// y[0 .. 4 * NQ) += p_j * rows_j for the block's nr staged rows (p_j == 0 skipped).
template <int NQ>
static inline void mad_block(float * y, const float * rf, int64_t n, int nr, const float * p) {
    float32x4_t acc[NQ];
    for (int k = 0; k < NQ; k++) acc[k] = vld1q_f32(y + 4 * k);
    for (int r = 0; r < nr; r++) {
        const float pj = p[r];
        if (pj == 0.0f) continue;
        const float32x4_t vs = vdupq_n_f32(pj);
        for (int k = 0; k < NQ; k++) acc[k] = vaddq_f32(acc[k], vmulq_f32(vs, vld1q_f32(rf + r * n + 4 * k)));
    }
    for (int k = 0; k < NQ; k++) vst1q_f32(y + 4 * k, acc[k]);
}

// Heads of NQ lanes (n = 4 NQ <= 32): blocks of RB rows in registers.
template <int NQ, int RB>
static void mad_rows_regs(int64_t n_rows, int64_t n_y, float * y, const tern_fp16 * rows, int64_t stride, const float * p,
                          int64_t p_stride) {
    for (int64_t j0 = 0; j0 < n_rows; j0 += RB) {
        const int nr = n_rows - j0 < RB ? (int) (n_rows - j0) : RB;
        float32x4_t rv[RB][NQ];
        for (int r = 0; r < RB; r++) {
            for (int k = 0; k < NQ; k++) rv[r][k] = r < nr ? load_f16x4(rows + (j0 + r) * stride + 4 * k) : vdupq_n_f32(0.0f);
        }
        for (int64_t g = 0; g < n_y; g++) {
            float * yg = y + g * 4 * NQ;
            const float * pg = p + g * p_stride + j0;
            float32x4_t acc[NQ];
            for (int k = 0; k < NQ; k++) acc[k] = vld1q_f32(yg + 4 * k);
            for (int r = 0; r < nr; r++) {
                if (pg[r] == 0.0f) continue;
                const float32x4_t vs = vdupq_n_f32(pg[r]);
                for (int k = 0; k < NQ; k++) acc[k] = vaddq_f32(acc[k], vmulq_f32(vs, rv[r][k]));
            }
            for (int k = 0; k < NQ; k++) vst1q_f32(yg + 4 * k, acc[k]);
        }
    }
}

static void kmad_f16_rows(int64_t n, int64_t n_rows, int64_t n_y, float * y, const tern_fp16 * rows, int64_t stride,
                          const float * p, int64_t p_stride) {
    if (n % 4 != 0 || n > ATTN_N_MAX) {
        for (int64_t g = 0; g < n_y; g++) {
            for (int64_t j = 0; j < n_rows; j++) {
                const float pj = p[g * p_stride + j];
                if (pj != 0.0f) kmad_f16(n, y + g * n, rows + j * stride, pj);
            }
        }
        return;
    }
    switch (n / 4) {
        case 1: return mad_rows_regs<1, 4>(n_rows, n_y, y, rows, stride, p, p_stride);
        case 2: return mad_rows_regs<2, 4>(n_rows, n_y, y, rows, stride, p, p_stride);
        case 3: return mad_rows_regs<3, 4>(n_rows, n_y, y, rows, stride, p, p_stride);
        case 4: return mad_rows_regs<4, 4>(n_rows, n_y, y, rows, stride, p, p_stride);
        case 5: return mad_rows_regs<5, 2>(n_rows, n_y, y, rows, stride, p, p_stride);
        case 6: return mad_rows_regs<6, 2>(n_rows, n_y, y, rows, stride, p, p_stride);
        case 7: return mad_rows_regs<7, 2>(n_rows, n_y, y, rows, stride, p, p_stride);
        case 8: return mad_rows_regs<8, 2>(n_rows, n_y, y, rows, stride, p, p_stride);
        default: break;
    }
    float rf[MAD_ROWS * ATTN_N_MAX];
    for (int64_t j0 = 0; j0 < n_rows; j0 += MAD_ROWS) {
        const int nr = n_rows - j0 < MAD_ROWS ? (int) (n_rows - j0) : MAD_ROWS;
        stage_rows(n, nr, nr, rows + j0 * stride, stride, rf);
        for (int64_t g = 0; g < n_y; g++) {
            float * yg = y + g * n;
            const float * pg = p + g * p_stride + j0;
            int64_t i = 0;
            for (; i + 64 <= n; i += 64) mad_block<16>(yg + i, rf + i, n, nr, pg);
            switch ((n - i) / 4) {  // the rest, 4 values at a time (n < 64 lands here whole)
                case 0: break;
                case 1: mad_block<1>(yg + i, rf + i, n, nr, pg); break;
                case 2: mad_block<2>(yg + i, rf + i, n, nr, pg); break;
                case 3: mad_block<3>(yg + i, rf + i, n, nr, pg); break;
                case 4: mad_block<4>(yg + i, rf + i, n, nr, pg); break;
                case 5: mad_block<5>(yg + i, rf + i, n, nr, pg); break;
                case 6: mad_block<6>(yg + i, rf + i, n, nr, pg); break;
                case 7: mad_block<7>(yg + i, rf + i, n, nr, pg); break;
                case 8: mad_block<8>(yg + i, rf + i, n, nr, pg); break;
                case 9: mad_block<9>(yg + i, rf + i, n, nr, pg); break;
                case 10: mad_block<10>(yg + i, rf + i, n, nr, pg); break;
                case 11: mad_block<11>(yg + i, rf + i, n, nr, pg); break;
                case 12: mad_block<12>(yg + i, rf + i, n, nr, pg); break;
                case 13: mad_block<13>(yg + i, rf + i, n, nr, pg); break;
                case 14: mad_block<14>(yg + i, rf + i, n, nr, pg); break;
                default: mad_block<15>(yg + i, rf + i, n, nr, pg); break;
            }
        }
    }
}

// exact (vec.h): x * s (+ mask; -inf where the mask is -inf), the largest, NaN if any is.
static float kscale_mask_max_f32(int64_t n, float * x, float s, const float * mask) {
    const float32x4_t vs = vdupq_n_f32(s), ninf = vdupq_n_f32(-INFINITY);
    float32x4_t vmax = ninf;
    uint32x4_t ordered = vdupq_n_u32(0xFFFFFFFFu);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vmulq_f32(vld1q_f32(x + i), vs);
        if (mask) {
            const float32x4_t m = vld1q_f32(mask + i);
            v = vbslq_f32(vceqq_f32(m, ninf), ninf, vaddq_f32(v, m));
        }
        vst1q_f32(x + i, v);
        vmax = vmaxnmq_f32(vmax, v);
        ordered = vandq_u32(ordered, vceqq_f32(v, v));
    }
    float max = tern_kscale_mask_max_f32_ref(n - i, x + i, s, mask ? mask + i : NULL);
    if (max != max || vminvq_u32(ordered) == 0) return NAN;
    const float m4 = vmaxvq_f32(vmax);
    return m4 > max ? m4 : max;
}

// e^x as tern_exp_approx (exp_approx.h), 4 lanes: the same polynomial with
// the same fused steps; 2^n built in the exponent bits, so x below -87 gives 0
// and above 88 +inf (the reference gives subnormals below: a difference under
// 1e-37), as the x86 sets do.
static inline float32x4_t exp_approx4(float32x4_t x) {
    const float32x4_t shifter = vdupq_n_f32(0x1.8p23f);
    const float32x4_t z = vfmaq_f32(shifter, x, vdupq_n_f32(0x1.715476p+0f));
    const float32x4_t n = vsubq_f32(z, shifter);
    const float32x4_t b = vfmsq_f32(vfmsq_f32(x, n, vdupq_n_f32(0x1.62e4p-1f)), n, vdupq_n_f32(0x1.7f7d1cp-20f));
    const float32x4_t u = vmulq_f32(b, b);
    const float32x4_t j = vfmaq_f32(
        vfmaq_f32(vdupq_n_f32(1.0f), vdupq_n_f32(0x1.ffffecp-1f), b), u,
        vfmaq_f32(vfmaq_f32(vdupq_n_f32(0x1.fffdb6p-2f), vdupq_n_f32(0x1.555e66p-3f), b), u,
                  vfmaq_f32(vdupq_n_f32(0x1.573e2ep-5f), vdupq_n_f32(0x1.0e4020p-7f), b)));
    const int32x4_t e = vshlq_n_s32(vreinterpretq_s32_f32(z), 23);
    const float32x4_t r = vreinterpretq_f32_s32(vaddq_s32(e, vreinterpretq_s32_f32(j)));
    const uint32x4_t lo = vcltq_f32(x, vdupq_n_f32(-87.0f));
    const uint32x4_t hi = vcgtq_f32(x, vdupq_n_f32(88.0f));
    const float32x4_t r0 = vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(r), lo));
    return vbslq_f32(hi, vdupq_n_f32(INFINITY), r0);
}

// The sum runs over the NON-ZERO exponentials in order, 4 at a time into one
// vector of lanes: masked cells (e^-inf = 0) and where a cell sits in the
// cache change nothing (kv_cache.h). Runs of 4 non-zero values take the
// vector add directly; elsewhere they are staged in order until 4 are there.
static float kexp_sum_f32(int64_t n, float * x, float max) {
    const float32x4_t vmax = vdupq_n_f32(max);
    float32x4_t acc = vdupq_n_f32(0.0f);
    float stage[4];
    int pending = 0;
    auto push = [&](float e) {
        stage[pending++] = e;
        if (pending == 4) {
            acc = vaddq_f32(acc, vld1q_f32(stage));
            pending = 0;
        }
    };
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = exp_approx4(vsubq_f32(vld1q_f32(x + i), vmax));
        vst1q_f32(x + i, e);
        const uint32x4_t nz = vmvnq_u32(vceqq_f32(e, vdupq_n_f32(0.0f)));  // NaN counts as non-zero
        if (vmaxvq_u32(nz) == 0) continue;
        if (vminvq_u32(nz) != 0 && pending == 0) {
            acc = vaddq_f32(acc, e);
            continue;
        }
        for (int k = 0; k < 4; k++) {
            if (x[i + k] != 0.0f) push(x[i + k]);  // NaN != 0: pushed
        }
    }
    for (; i < n; i++) {
        x[i] = tern_exp_approx(x[i] - max);
        if (x[i] != 0.0f) push(x[i]);
    }
    // (0 + 2) + (1 + 3), then the staged values in order.
    const float32x2_t h = vadd_f32(vget_low_f32(acc), vget_high_f32(acc));
    float sum = vget_lane_f32(h, 0) + vget_lane_f32(h, 1);
    for (int k = 0; k < pending; k++) sum += stage[k];
    return sum;
}

static void kswiglu_f32(int64_t n, float * y, const float * g, const float * u) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t gv = vld1q_f32(g + i);
        const float32x4_t e = exp_approx4(vnegq_f32(gv));
        vst1q_f32(y + i, vmulq_f32(vdivq_f32(gv, vaddq_f32(one, e)), vld1q_f32(u + i)));
    }
    tern_kswiglu_f32_ref(n - i, y + i, g + i, u + i);
}

#endif  // __aarch64__

void tern_fill_vec_neon(tern_kernel_set * ks) {
    ks->dot_f32 = kdot_f32;
#if defined(__aarch64__)
    ks->dot_f16 = kdot_f16;
    ks->sumsq_f32 = ksumsq_f32;
    ks->mad_f32 = kmad_f32;
    ks->mad_f16 = kmad_f16;
    ks->scale_mul_f32 = kscale_mul_f32;
    ks->add_f32 = kadd_f32;
    ks->mul_f32 = kmul_f32;
    ks->fp32_to_fp16 = kfp32_to_fp16;
    ks->fp16_to_fp32 = kfp16_to_fp32;
    ks->dot_f16_rows = kdot_f16_rows;
    ks->mad_f16_rows = kmad_f16_rows;
    ks->scale_mask_max_f32 = kscale_mask_max_f32;
    ks->exp_sum_f32 = kexp_sum_f32;
    ks->swiglu_f32 = kswiglu_f32;
#endif
}

}  // namespace tern
