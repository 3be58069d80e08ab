// The exponential of softmax and SiLU: the polynomial ggml's CPU backend uses
// (max error 1.45 ulp + 0.5), here as the scalar reference of the kernels
// exp_sum_f32 and swiglu_f32 (vec.h); the SIMD sets evaluate the same
// polynomial in their lanes.
//
//   n = round(x / ln 2)              via the 1.5 * 2^23 shifter
//   b = x - n * ln2_hi - n * ln2_lo
//   e^b ~ 1 + c1 b + u (c2 + c3 b + u (c4 + c5 b)),  u = b^2
//   e^x = e^b * 2^n                  (|n| > 192: 0 below, +inf above)
#pragma once
#include <math.h>
#include <stdint.h>

namespace tern {

static inline float tern_exp_approx(float x) {
    const float shifter = 0x1.8p23f;
    const float z = fmaf(x, 0x1.715476p+0f, shifter);
    const float n = z - shifter;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    if (fabsf(n) > 192.0f || n != n) return n <= 0.0f ? 0.0f : (n > 0.0f ? INFINITY : n);
    const float u = b * b;
    const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                         u, fmaf(0x1.ffffecp-1f, b, 1.0f));
    return ldexpf(j, (int) n);
}

// silu(x) = x / (1 + e^-x) with the approximate exponential.
static inline float tern_silu_approx(float x) { return x / (1.0f + tern_exp_approx(-x)); }

}  // namespace tern
