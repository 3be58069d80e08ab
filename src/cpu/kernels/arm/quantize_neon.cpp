// NEON activation quantizers of the neon kernel set (kernel_set.h
// quantize_act), writing the same bytes as the references
// (tern_quantize_act_q8_0 / _q8_1 in tensor/quants_legacy.cpp,
// tern_quantize_row_q8_K in tensor/quants_k.cpp): the same float operations
// per element (one multiply by the same inverse scale), and the conversion to
// int by FCVTNS, which rounds half to even as nearbyintf and the reference's
// magic-number rounding do for these magnitudes (|level| <= 128). The scales
// themselves are the references' scalar expressions. Two kinds of block, which
// real activations do not produce, go to the reference's own code (one block
// of it), so that the bytes stay the reference's there too:
// - a NaN or Inf (FMAXV propagates NaN; Inf is > FLT_MAX): levels 0, scale NaN;
// - a largest magnitude below 127 / FLT_MAX (~3.7e-37): the inverse scale
//   overflows to Inf and the reference converts +-Inf to int (undefined in C
//   for the Q8_0/Q8_1 cast, 0 from Q8_K's magic-number rounding) where FCVTNS
//   would saturate. The scale is 0 there, so only the bytes would differ.
// AArch64 only (FCVTNS and the across-vector reductions); a 32-bit ARM build
// keeps the references.
#include "cpu/kernels/kernel_set.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "core/fp16.h"
#include "tensor/blocks.h"
#include "tensor/quants.h"
#include "tensor/quants_k.h"
#endif

namespace tern {

#if defined(__aarch64__)

namespace {

// max |x[i]| over n values (a multiple of 16); NaN if any value is NaN.
inline float abs_max(const float * x, int n) {
    float32x4_t m0 = vdupq_n_f32(0.0f), m1 = m0;
    for (int i = 0; i < n; i += 8) {
        m0 = vmaxq_f32(m0, vabsq_f32(vld1q_f32(x + i)));
        m1 = vmaxq_f32(m1, vabsq_f32(vld1q_f32(x + i + 4)));
    }
    return vmaxvq_f32(vmaxq_f32(m0, m1));
}

// 16 levels round-half-even(s * x[i]) (|s * x[i]| <= 127.5 here), capped at
// `cap`, as int8.
inline int8x16_t levels16(const float * x, float32x4_t s, int32x4_t cap) {
    int32x4_t q[4];
    for (int k = 0; k < 4; k++) q[k] = vminq_s32(vcvtnq_s32_f32(vmulq_f32(vld1q_f32(x + 4 * k), s)), cap);
    const int16x8_t lo = vcombine_s16(vqmovn_s32(q[0]), vqmovn_s32(q[1]));
    const int16x8_t hi = vcombine_s16(vqmovn_s32(q[2]), vqmovn_s32(q[3]));
    return vcombine_s8(vqmovn_s16(lo), vqmovn_s16(hi));
}

// One 32-value block: q = round-half-even(x * (127 / amax)), *d = amax / 127.
// false (nothing written) for a block the header leaves to the reference.
bool block_q8(const float * x, int8_t * qs, float * d) {
    const float amax = abs_max(x, 32);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    if (!(amax <= FLT_MAX) || !(id <= FLT_MAX)) return false;
    const float32x4_t vid = vdupq_n_f32(id);
    const int32x4_t cap = vdupq_n_s32(127);  // never reached: |x * id| <= 127
    vst1q_s8(qs, levels16(x, vid, cap));
    vst1q_s8(qs + 16, levels16(x + 16, vid, cap));
    *d = amax / 127.0f;
    return true;
}

void quantize_act_q8_0(const float * src, void * dst, int64_t n) {
    block_q8_0 * y = (block_q8_0 *) dst;
    for (int64_t ib = 0; ib < n / 32; ib++) {
        float d;
        if (block_q8(src + ib * 32, y[ib].qs, &d)) y[ib].d = tern_fp32_to_fp16(d);
        else tern_quantize_act_q8_0(src + ib * 32, &y[ib], 32);
    }
}

void quantize_act_q8_1(const float * src, void * dst, int64_t n) {
    block_q8_1 * y = (block_q8_1 *) dst;
    for (int64_t ib = 0; ib < n / 32; ib++) {
        float d;
        if (!block_q8(src + ib * 32, y[ib].qs, &d)) {
            tern_quantize_act_q8_1(src + ib * 32, &y[ib], 32);
            continue;
        }
        const int16x8_t pairs = vaddq_s16(vpaddlq_s8(vld1q_s8(y[ib].qs)), vpaddlq_s8(vld1q_s8(y[ib].qs + 16)));
        const int sum = vaddlvq_s16(pairs);
        y[ib].d = tern_fp32_to_fp16(d);
        y[ib].s = tern_fp32_to_fp16((float) sum * d);
    }
}

// Q8_K: 256 values scaled by -127 / (the value of largest magnitude, the
// first in order), levels capped at 127, the sum of each 16 levels.
void quantize_row_q8_K(const float * src, void * dst, int64_t n) {
    block_q8_K * y = (block_q8_K *) dst;
    for (int64_t ib = 0; ib < n / 256; ib++) {
        const float * x = src + ib * 256;
        const float am = abs_max(x, 256);
        if (!(am <= FLT_MAX)) {  // NaN or Inf: the reference's block
            tern_quantize_row_q8_K(x, &y[ib], 256);
            continue;
        }
        if (am == 0.0f) {
            memset(&y[ib], 0, sizeof(block_q8_K));
            continue;
        }
        float max = 0.0f;
        for (int i = 0; i < 256; i++) {
            if (x[i] == am || x[i] == -am) {
                max = x[i];
                break;
            }
        }
        const float iscale = -127.0f / max;
        if (!(fabsf(iscale) <= FLT_MAX)) {  // am < 127 / FLT_MAX: the reference's block
            tern_quantize_row_q8_K(x, &y[ib], 256);
            continue;
        }
        const float32x4_t vis = vdupq_n_f32(iscale);
        const int32x4_t cap = vdupq_n_s32(127);  // x = -max gives +127.0 exactly; rounding up to 128 is capped
        for (int j = 0; j < 16; j++) {
            const int8x16_t q = levels16(x + 16 * j, vis, cap);
            vst1q_s8(y[ib].qs + 16 * j, q);
            y[ib].bsums[j] = (int16_t) vaddlvq_s8(q);
        }
        y[ib].d = 1.0f / iscale;
    }
}

}  // namespace

#endif  // __aarch64__

void tern_fill_quantize_neon(tern_kernel_set * ks) {
    (void) ks;
#if defined(__aarch64__)
#if TERN_WITH_TYPE_Q8_0
    ks->quantize_act[TERN_TYPE_Q8_0] = quantize_act_q8_0;
#endif
#if TERN_WITH_TYPE_Q8_1
    ks->quantize_act[TERN_TYPE_Q8_1] = quantize_act_q8_1;
#endif
#if TERN_WITH_TYPE_Q8_K
    ks->quantize_act[TERN_TYPE_Q8_K] = quantize_row_q8_K;
#endif
#endif
}

}  // namespace tern
