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
#endif
}

}  // namespace tern
