// Float vec_dot of the neon kernel set (F32 weights x F32, F16 x F32,
// BF16 x BF16), with the operations of the x86 sets' float tiles
// (x86/gemm_float_avx512.cpp), so every SIMD set of Tern gives a float model
// the same bits:
//   sixteen float lanes (four float32x4) start at +0; the row is read in
//   steps of 16 values (BF16: 32, split into the even values then the odd
//   ones); each 16-lane part of a step is one lane-wise fused acc += w * a; a
//   tail of fewer than a step is run as one more step over zero-padded copies;
//   last, one fixed horizontal sum: lanes 0-7 + 8-15, then 0-3 + 4-7, then
//   (0 + 2, 1 + 3), then (0 + 1).
// F16 converts with FCVTL and BF16 by a 16-bit shift, both exact. Each output
// is one vec_dot (gemm stays NULL), so the tile contract of kernel_set.h holds.
// AArch64 only; a 32-bit ARM build keeps the references.
#include "cpu/kernels/kernel_set.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>
#endif

namespace tern {

#if defined(__aarch64__) && (TERN_WITH_TYPE_F32 || TERN_WITH_TYPE_F16 || TERN_WITH_TYPE_BF16)

// Reference arithmetic: only the explicit fused multiply-adds fuse.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace {

// Per type: STEP values per step in NV parts of 16 lanes, element sizes, and
// load(part v of a step, lanes 4q .. 4q + 3) for weights and activations.
struct type_f32 {
    static const int STEP = 16, NV = 1, WSIZE = 4, ASIZE = 4;
    static inline float32x4_t load_w(const uint8_t * p, int, int q) { return vld1q_f32((const float *) p + 4 * q); }
    static inline float32x4_t load_a(const uint8_t * p, int, int q) { return vld1q_f32((const float *) p + 4 * q); }
};

struct type_f16 {
    static const int STEP = 16, NV = 1, WSIZE = 2, ASIZE = 4;
    static inline float32x4_t load_w(const uint8_t * p, int, int q) {
        return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *) p + 4 * q)));
    }
    static inline float32x4_t load_a(const uint8_t * p, int, int q) { return vld1q_f32((const float *) p + 4 * q); }
};

struct type_bf16 {
    static const int STEP = 32, NV = 2, WSIZE = 2, ASIZE = 2;
    // Part v: the even (v = 0) or odd (v = 1) values of the step's 32; lanes
    // 4q .. 4q + 3 of it are values 2 (4q + l) + v.
    static inline float32x4_t load(const uint8_t * p, int v, int q) {
        const uint16x8x2_t d = vld2q_u16((const uint16_t *) p + 16 * (q / 2));
        const uint16x8_t part = d.val[v];
        const uint16x4_t half = (q % 2) ? vget_high_u16(part) : vget_low_u16(part);
        return vreinterpretq_f32_u32(vshll_n_u16(half, 16));
    }
    static inline float32x4_t load_w(const uint8_t * p, int v, int q) { return load(p, v, q); }
    static inline float32x4_t load_a(const uint8_t * p, int v, int q) { return load(p, v, q); }
};

template <class T>
inline void step(const uint8_t * w, const uint8_t * a, float32x4_t (&acc)[4]) {
    for (int v = 0; v < T::NV; v++) {
        for (int q = 0; q < 4; q++) acc[q] = vfmaq_f32(acc[q], T::load_w(w, v, q), T::load_a(a, v, q));
    }
}

template <class T>
void vec_dot(int64_t n, float * s, const void * vx, const void * vy) {
    const uint8_t * w = (const uint8_t *) vx;
    const uint8_t * a = (const uint8_t *) vy;
    float32x4_t acc[4];
    for (int q = 0; q < 4; q++) acc[q] = vdupq_n_f32(0.0f);
    const int64_t nmain = n - n % T::STEP;
    for (int64_t i = 0; i < nmain; i += T::STEP) step<T>(w + i * T::WSIZE, a + i * T::ASIZE, acc);
    if (nmain < n) {
        const size_t rest = (size_t) (n - nmain);
        alignas(16) uint8_t wb[T::STEP * T::WSIZE];
        alignas(16) uint8_t ab[T::STEP * T::ASIZE];
        memset(wb, 0, sizeof(wb));
        memset(ab, 0, sizeof(ab));
        memcpy(wb, w + nmain * T::WSIZE, rest * T::WSIZE);
        memcpy(ab, a + nmain * T::ASIZE, rest * T::ASIZE);
        step<T>(wb, ab, acc);
    }
    const float32x4_t t = vaddq_f32(vaddq_f32(acc[0], acc[2]), vaddq_f32(acc[1], acc[3]));
    const float32x2_t u = vadd_f32(vget_low_f32(t), vget_high_f32(t));
    *s = vget_lane_f32(u, 0) + vget_lane_f32(u, 1);
}

}  // namespace

#endif

void tern_fill_gemm_float_neon(tern_kernel_set * ks) {
    (void) ks;
#if defined(__aarch64__)
#if TERN_WITH_TYPE_F32
    ks->vec_dot[TERN_TYPE_F32] = vec_dot<type_f32>;
#endif
#if TERN_WITH_TYPE_F16
    ks->vec_dot[TERN_TYPE_F16] = vec_dot<type_f16>;
#endif
#if TERN_WITH_TYPE_BF16
    ks->vec_dot[TERN_TYPE_BF16] = vec_dot<type_bf16>;
#endif
#endif
}

}  // namespace tern
