// IQ4_NL: 32 values per block, each a 4-bit index into a fixed non-linear
// table of 16 levels (denser near zero), times one fp16 scale d.
// Decoding (dequantize, dot with Q8_0) is shared with the legacy formats in
// quants_legacy.cpp; this file has the table and the quantizer.
//
// Quantizer (llama.cpp's quantize_iq4_nl without importance weights, the one
// llama-quantize runs; reproduced bit for bit). Per block of 32, with weights
// w_j = x_j^2 and max = the value of largest magnitude:
//   1. Scale 1/id = max / 127: map each x_j to the nearest table level q_j,
//      and take the least-squares scale d = sum(w q x) / sum(w q^2); its
//      quality is best = d * sum(w q x) (the error it removes).
//   2. Try 15 more inverse scales id = (t - 127) / max, t = -7..7 (they map max
//      onto or near the most negative level), keeping the fitted d with the
//      largest sum(w q x)^2 / sum(w q^2).
//   3. Store d as fp16 and choose the final levels as nearest to x_j / d.
// A block whose largest magnitude is below 1e-15 gets d = 0 (all levels then
// index the table value nearest to 0).
#include <math.h>
#include <string.h>
#include "tensor/quants.h"

namespace tern {

// Bit-identical to llama.cpp only if every product is rounded before it is
// added: forbid fused multiply-add contraction here, whatever the target flags
// (GCC contracts across statements by default as soon as FMA is available).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

const int8_t tern_kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

namespace {

const float BLOCK_MAX_EPS = 1e-15f;
const int N_TRY = 7;

// Index of the table level nearest to v (the lower one on a tie), by bisection.
int nearest_level(float v) {
    const int8_t * t = tern_kvalues_iq4nl;
    if (v <= t[0]) return 0;
    if (v >= t[15]) return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (v < t[mid]) hi = mid; else lo = mid;
    }
    return v - t[hi - 1] < t[hi] - v ? hi - 1 : hi;
}

// Weighted sums of the fit x_j ~ d * q_j with q_j the level nearest to x_j * id.
struct fit_sums {
    float sumqx;  // sum(w q x)
    float sumq2;  // sum(w q^2)
};

fit_sums fit(const float * x, const float * w, float id) {
    fit_sums f = {0.0f, 0.0f};
    for (int j = 0; j < QK4_NL; j++) {
        const float q = tern_kvalues_iq4nl[nearest_level(id * x[j])];
        f.sumqx += w[j] * q * x[j];
        f.sumq2 += w[j] * q * q;
    }
    return f;
}

// Steps 1 and 2 of the header: the best scale of a block (0 for a zero block).
float search_scale(const float * x) {
    float w[QK4_NL];
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < QK4_NL; j++) {
        w[j] = x[j] * x[j];
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    if (amax < BLOCK_MAX_EPS) return 0.0f;

    const float t0 = (float) tern_kvalues_iq4nl[0];
    fit_sums f = fit(x, w, 1.0f / (-max / t0));
    float d = f.sumqx / f.sumq2;
    float best = d * f.sumqx;
    for (int itry = -N_TRY; itry <= N_TRY; itry++) {
        f = fit(x, w, (float) (itry + tern_kvalues_iq4nl[0]) / max);
        if (f.sumq2 > 0 && f.sumqx * f.sumqx > best * f.sumq2) {
            d = f.sumqx / f.sumq2;
            best = d * f.sumqx;
        }
    }
    return d;
}

}  // namespace

void tern_quantize_row_iq4_nl(const float * src, void * dst, int64_t n) {
    block_iq4_nl * y = (block_iq4_nl *) dst;
    for (int64_t ib = 0; ib < n / QK4_NL; ib++) {
        const float * x = src + ib * QK4_NL;
        const float d = search_scale(x);
        const float id = d ? 1.0f / d : 0.0f;
        y[ib].d = tern_fp32_to_fp16(d);
        for (int j = 0; j < QK4_NL / 2; j++) {
            const int lo = nearest_level(id * x[j]);
            const int hi = nearest_level(id * x[j + QK4_NL / 2]);
            y[ib].qs[j] = (uint8_t) (lo | (hi << 4));
        }
    }
}

}  // namespace tern
