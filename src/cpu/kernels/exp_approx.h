// The exponential that ggml's CPU softmax and SiLU use on AVX-512 machines
// (ggml_v_expf, "adapted from arm limited optimized routine": max error 1.45
// ulp + 0.5), written as scalar code with fmaf so that every target computes
// the same bits. llama.cpp applies it to 16 lanes at a time and the C
// library's expf to the tail of a row; tern_exp_row16() does the same, which
// is what makes softmax probabilities and SiLU outputs match llama.cpp's bit
// for bit (they feed F16 and Q8 roundings, where a 1-ulp change shows).
//
//   n = round(x / ln 2)              via the 1.5 * 2^23 shifter
//   b = x - n * ln2_hi - n * ln2_lo
//   e^b ~ 1 + c1 b + u (c2 + c3 b + u (c4 + c5 b)),  u = b^2
//   e^x = e^b * 2^n                  (|n| > 192: 0 below, +inf above)
#pragma once
#include <math.h>
#include <stdint.h>

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

// Sum of 16 floats in the order of _mm512_reduce_add_ps: halves, quarters,
// then pairs.
static inline float tern_sum16_tree(const float * v) {
    float t8[8], t4[4];
    for (int i = 0; i < 8; i++) t8[i] = v[i + 8] + v[i];
    for (int i = 0; i < 4; i++) t4[i] = t8[i + 4] + t8[i];
    return (t4[0] + t4[2]) + (t4[1] + t4[3]);
}

// silu(x) = x / (1 + e^-x) with the approximate exponential (16-lane part of a row).
static inline float tern_silu_approx(float x) { return x / (1.0f + tern_exp_approx(-x)); }
// The same with the C library's expf (tail of a row).
static inline float tern_silu_exact(float x) { return x / (1.0f + expf(-x)); }
