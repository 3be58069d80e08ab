// K-quant reference quantizers, bit-identical to llama.cpp's
// quantize_row_<t>_ref (ggml-quants.c, no importance matrix). Layouts and
// the overall procedure: tensor/quants_k.h.
//
// Sub-block fitting (one per format family):
//   - fit_symmetric_x2 (Q6_K; ggml's make_qx_quants, rmse_type 1, no weights):
//     levels l in [-nmax, nmax) for x ~ scale * l. Start from the scale that
//     maps the largest-magnitude value to -nmax, then try 18 nearby scales
//     (nmax + 0.1 * k, k = -9..9, k != 0); for each, the least-squares scale
//     with weights x^2 is sumlx / suml2 and the candidate is kept when it
//     reduces the weighted error, i.e. when sumlx^2 / suml2 grows.
//   - fit_symmetric_refine (Q3_K; make_q3_quants with rmse): levels from the
//     largest-magnitude scale, then up to 5 sweeps of coordinate descent: each
//     level is moved to the one the least-squares scale of the others would
//     pick, kept when sumlx^2 / suml2 grows.
//   - fit_affine (Q2_K, Q4_K, Q5_K; make_qkx2_quants): x ~ scale * l + min
//     with min <= 0 and levels in [0, nmax]. Start from the min/max range,
//     then for nstep + 1 scales (rmin + rdelta * k + nmax) / (max - min) solve
//     the weighted least-squares (scale, min) for the levels that scale gives,
//     keeping the pair of lowest weighted error (absolute or squared).
// Every float expression below is written in ggml's evaluation order; do not
// "simplify" it (a * b * c is (a * b) * c, and so on).
#include "tensor/quants_k.h"

#include <math.h>
#include <string.h>

namespace tern {

// Reference arithmetic: no fused multiply-add, whatever the target flags.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// Groups whose largest magnitude is below this are all zero (ggml's GROUP_MAX_EPS).
static const float k_group_max_eps = 1e-15f;

static inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Value of largest magnitude (the first one on ties) and that magnitude.
static float largest_magnitude(const float * x, int n, float * amax_out) {
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; ++i) {
        float ax = fabsf(x[i]);
        if (ax > amax) { amax = ax; max = x[i]; }
    }
    *amax_out = amax;
    return max;
}

// Q6_K sub-block fit. L[i] = level + nmax (0 .. 2 nmax - 1). Returns the scale.
static float fit_symmetric_x2(int n, int nmax, const float * x, uint8_t * L) {
    float amax;
    const float max = largest_magnitude(x, n, &amax);
    if (amax < k_group_max_eps) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    float iscale = -nmax / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        int l = clamp_int(tern_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (uint8_t) (l + nmax);
        float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0.0f;
        for (int i = 0; i < n; ++i) {
            int l = clamp_int(tern_nearest_int(iscale * x[i]), -nmax, nmax - 1);
            float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                L[i] = (uint8_t) (nmax + clamp_int(tern_nearest_int(iscale * x[i]), -nmax, nmax - 1));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// Q3_K sub-block fit. L[i] = level + nmax (0 .. 2 nmax - 1). Returns the scale.
static float fit_symmetric_refine(int n, int nmax, const float * x, uint8_t * L) {
    float amax;
    const float max = largest_magnitude(x, n, &amax);
    if (amax < k_group_max_eps) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    const float iscale = -nmax / max;
    int level[QK_K / 16];
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        int l = clamp_int(tern_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        level[i] = l;
        float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * level[i];
            if (slx > 0) {
                float sl2 = suml2 - w * level[i] * level[i];
                int new_l = clamp_int(tern_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != level[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        level[i] = new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = (uint8_t) (level[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Weighted error of scale * L[i] + min against x: sum w * |diff| or w * diff^2.
static float affine_error(int n, const float * x, const float * w, const uint8_t * L, float scale, float min,
                          bool use_mad) {
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
        float diff = scale * L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        err += w[i] * diff;
    }
    return err;
}

// Q2_K / Q4_K / Q5_K sub-block fit (n <= 32). L[i] in [0, nmax]. Returns the
// scale and stores -min (>= 0) in *neg_min.
static float fit_affine(int n, int nmax, const float * x, const float * w, uint8_t * L, float * neg_min, float rmin,
                        float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        memset(L, 0, (size_t) n);
        *neg_min = -min;
        return 0.0f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    for (int i = 0; i < n; ++i) L[i] = (uint8_t) clamp_int(tern_nearest_int(iscale * (x[i] - min)), 0, nmax);
    float best_error = affine_error(n, x, w, L, scale, min, use_mad);
    uint8_t Laux[32];
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            int l = clamp_int(tern_nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = (uint8_t) l;
            sum_l += w[i] * l;
            sum_l2 += w[i] * l * l;
            sum_xl += w[i] * l * x[i];
        }
        float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = affine_error(n, x, w, Laux, this_scale, this_min, use_mad);
            if (cur_error < best_error) {
                memcpy(L, Laux, (size_t) n);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *neg_min = -min;
    return scale;
}

// Level of each value of a sub-block with the scales as stored:
// L[i] = clamp(round((x[i] + m) / d), lo, hi) - lo. A sub-block whose scale
// rounded to 0 keeps the levels of its fit.
static void requantize(const float * x, int n, float d, float m, int lo, int hi, uint8_t * L) {
    if (!d) return;
    for (int i = 0; i < n; ++i) L[i] = (uint8_t) (clamp_int(tern_nearest_int((x[i] + m) / d), lo, hi) - lo);
}

// 2-bit levels L[256] into qs[64] (Q2_K, Q3_K layout).
static void pack_2bit(const uint8_t * L, uint8_t * qs) {
    for (int h = 0; h < QK_K; h += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[h / 4 + l] = (uint8_t) (L[h + l] | (L[h + l + 32] << 2) | (L[h + l + 64] << 4) | (L[h + l + 96] << 6));
        }
    }
}

void tern_quantize_row_q2_K(const float * src, void * dst, int64_t n) {
    block_q2_K * y = (block_q2_K *) dst;
    const float q4scale = 15.0f;
    uint8_t L[QK_K];
    float weights[16], scales[QK_K / 16], mins[QK_K / 16];
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        const float * x = src + ib * QK_K;
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = fabsf(x[16 * j + l]);
            scales[j] = fit_affine(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) y[ib].scales[j] = (uint8_t) tern_nearest_int(iscale * scales[j]);
            y[ib].d = tern_fp32_to_fp16(max_scale / q4scale);
        } else {
            memset(y[ib].scales, 0, sizeof(y[ib].scales));
            y[ib].d = tern_fp32_to_fp16(0.0f);
        }
        if (max_min > 0) {
            float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; ++j) {
                y[ib].scales[j] = (uint8_t) (y[ib].scales[j] | (tern_nearest_int(iscale * mins[j]) << 4));
            }
            y[ib].dmin = tern_fp32_to_fp16(max_min / q4scale);
        } else {
            y[ib].dmin = tern_fp32_to_fp16(0.0f);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = tern_fp16_to_fp32(y[ib].d) * (y[ib].scales[j] & 0xF);
            const float dm = tern_fp16_to_fp32(y[ib].dmin) * (y[ib].scales[j] >> 4);
            requantize(x + 16 * j, 16, d, dm, 0, 3, L + 16 * j);
        }
        pack_2bit(L, y[ib].qs);
    }
}

void tern_quantize_row_q3_K(const float * src, void * dst, int64_t n) {
    block_q3_K * y = (block_q3_K *) dst;
    uint8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        const float * x = src + ib * QK_K;
        float max_scale = 0, amax = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            scales[j] = fit_symmetric_refine(16, 4, x + 16 * j, L + 16 * j);
            float scale = fabsf(scales[j]);
            if (scale > amax) { amax = scale; max_scale = scales[j]; }
        }
        memset(y[ib].scales, 0, sizeof(y[ib].scales));
        if (max_scale) {
            float iscale = -32.0f / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) {
                int l = clamp_int((int8_t) tern_nearest_int(iscale * scales[j]), -32, 31) + 32;
                if (j < 8) {
                    y[ib].scales[j] = (uint8_t) (l & 0xF);
                } else {
                    y[ib].scales[j - 8] = (uint8_t) (y[ib].scales[j - 8] | ((l & 0xF) << 4));
                }
                y[ib].scales[8 + j % 4] = (uint8_t) (y[ib].scales[8 + j % 4] | ((l >> 4) << (2 * (j / 4))));
            }
            y[ib].d = tern_fp32_to_fp16(1 / iscale);
        } else {
            y[ib].d = tern_fp32_to_fp16(0.0f);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = tern_fp16_to_fp32(y[ib].d) * tern_q3_K_scale(j, y[ib].scales);
            requantize(x + 16 * j, 16, d, 0.0f, -4, 3, L + 16 * j);
        }
        // Levels 0..7: the bit of 4 goes to hmask, the low 2 bits to qs.
        memset(y[ib].hmask, 0, sizeof(y[ib].hmask));
        for (int i = 0; i < QK_K; ++i) {
            if (L[i] > 3) {
                y[ib].hmask[i % 32] = (uint8_t) (y[ib].hmask[i % 32] | (1 << (i / 32)));
                L[i] -= 4;
            }
        }
        pack_2bit(L, y[ib].qs);
    }
}

// Q4_K / Q5_K: fit the eight 32-value sub-blocks, quantize their scales and
// mins to 6 bits against max / 63, store d, dmin and the k4 packing, and
// re-quantize the levels (0..nmax) into L.
static void quantize_k4_superblock(const float * x, int nmax, float rmin, int nstep, tern_fp16 * d_out,
                                   tern_fp16 * dmin_out, uint8_t * packed, uint8_t * L) {
    float weights[32], scales[QK_K / 32], mins[QK_K / 32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < QK_K / 32; ++j) {
        const float * xs = x + 32 * j;
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
        float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + fabsf(xs[l]);
        scales[j] = fit_affine(32, nmax, xs, weights, L + 32 * j, &mins[j], rmin, 0.1f, nstep, false);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < QK_K / 32; ++j) {
        // Like ggml: the level goes through uint8_t before the clamp to 63.
        uint8_t ls = (uint8_t) tern_nearest_int(inv_scale * scales[j]);
        uint8_t lm = (uint8_t) tern_nearest_int(inv_min * mins[j]);
        if (ls > 63) ls = 63;
        if (lm > 63) lm = 63;
        if (j < 4) {
            packed[j] = ls;
            packed[j + 4] = lm;
        } else {
            packed[j + 4] = (uint8_t) ((ls & 0xF) | ((lm & 0xF) << 4));
            packed[j - 4] = (uint8_t) (packed[j - 4] | ((ls >> 4) << 6));
            packed[j] = (uint8_t) (packed[j] | ((lm >> 4) << 6));
        }
    }
    *d_out = tern_fp32_to_fp16(max_scale / 63.0f);
    *dmin_out = tern_fp32_to_fp16(max_min / 63.0f);
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        tern_k4_scale_min(j, packed, &sc, &m);
        const float d = tern_fp16_to_fp32(*d_out) * sc;
        const float dm = tern_fp16_to_fp32(*dmin_out) * m;
        requantize(x + 32 * j, 32, d, dm, 0, nmax, L + 32 * j);
    }
}

void tern_quantize_row_q4_K(const float * src, void * dst, int64_t n) {
    block_q4_K * y = (block_q4_K *) dst;
    uint8_t L[QK_K];
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        quantize_k4_superblock(src + ib * QK_K, 15, -1.0f, 20, &y[ib].d, &y[ib].dmin, y[ib].scales, L);
        for (int c = 0; c < QK_K / 64; ++c) {
            for (int l = 0; l < 32; ++l) y[ib].qs[32 * c + l] = (uint8_t) (L[64 * c + l] | (L[64 * c + 32 + l] << 4));
        }
    }
}

void tern_quantize_row_q5_K(const float * src, void * dst, int64_t n) {
    block_q5_K * y = (block_q5_K *) dst;
    uint8_t L[QK_K];
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        quantize_k4_superblock(src + ib * QK_K, 31, -0.5f, 15, &y[ib].d, &y[ib].dmin, y[ib].scales, L);
        memset(y[ib].qh, 0, sizeof(y[ib].qh));
        for (int c = 0; c < QK_K / 64; ++c) {
            for (int l = 0; l < 32; ++l) {
                int lo = L[64 * c + l], hi = L[64 * c + 32 + l];
                // 5th bit of value i is bit i/32 of qh[i % 32].
                y[ib].qh[l] = (uint8_t) (y[ib].qh[l] | ((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
                y[ib].qs[32 * c + l] = (uint8_t) ((lo & 0xF) | ((hi & 0xF) << 4));
            }
        }
    }
}

void tern_quantize_row_q6_K(const float * src, void * dst, int64_t n) {
    block_q6_K * y = (block_q6_K *) dst;
    uint8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t ib = 0; ib < n / QK_K; ++ib) {
        const float * x = src + ib * QK_K;
        float max_scale = 0, max_abs_scale = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            scales[j] = fit_symmetric_x2(16, 32, x + 16 * j, L + 16 * j);
            const float abs_scale = fabsf(scales[j]);
            if (abs_scale > max_abs_scale) { max_abs_scale = abs_scale; max_scale = scales[j]; }
        }
        if (max_abs_scale < k_group_max_eps) {
            memset(&y[ib], 0, sizeof(block_q6_K));
            continue;
        }
        float iscale = -128.0f / max_scale;
        y[ib].d = tern_fp32_to_fp16(1 / iscale);
        for (int j = 0; j < QK_K / 16; ++j) {
            int l = tern_nearest_int(iscale * scales[j]);
            y[ib].scales[j] = (int8_t) (l < 127 ? l : 127);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = tern_fp16_to_fp32(y[ib].d) * y[ib].scales[j];
            requantize(x + 16 * j, 16, d, 0.0f, -32, 31, L + 16 * j);
        }
        for (int h = 0; h < QK_K / 128; ++h) {
            const uint8_t * Lh = L + 128 * h;
            for (int l = 0; l < 32; ++l) {
                y[ib].ql[64 * h + l] = (uint8_t) ((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
                y[ib].ql[64 * h + 32 + l] = (uint8_t) ((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
                y[ib].qh[32 * h + l] = (uint8_t) ((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                                                  ((Lh[l + 96] >> 4) << 6));
            }
        }
    }
}

}  // namespace tern
