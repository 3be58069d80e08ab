// Small vector kernels behind the CPU ops.
//
// Every kernel K has a scalar reference K_ref (kernels/vec_ref.cpp), which is
// THE definition, and K, the variant selected at compile time:
//   AVX-512 (x86/vec_avx512.cpp + x86/vec_avx2.cpp for the rest) when
//     __AVX512F__ and the AVX2 set are on,
//   AVX2 + FMA + F16C (x86/vec_avx2.cpp),
//   NEON (arm/vec_neon.cpp) on AArch64,
//   else the reference (vec_scalar.cpp); TERN_SIMD_FORCE_SCALAR forces it.
// Kernels marked "exact" give the same bits as the reference (same operations
// per element, no fused multiply-add); dot products and sums of squares only
// reorder the summation (tests allow a relative tolerance).
#pragma once
#include <stdint.h>
#include "tern_config.h"
#include "core/fp16.h"

#if !TERN_SIMD_FORCE_SCALAR && defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define TERN_KERNELS_AVX512 1
#define TERN_KERNELS_NAME "avx512"
#elif !TERN_SIMD_FORCE_SCALAR && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define TERN_KERNELS_AVX2 1
#define TERN_KERNELS_NAME "avx2"
#elif !TERN_SIMD_FORCE_SCALAR && defined(__ARM_NEON) && defined(__aarch64__)
#define TERN_KERNELS_NEON 1
#define TERN_KERNELS_NAME "neon"
#else
#define TERN_KERNELS_SCALAR 1
#define TERN_KERNELS_NAME "scalar"
#endif

#define TERN_KERNEL_PAIR(ret, name, args) ret name args; ret name##_ref args;

// sum_i x[i] * y[i], accumulated in float.
TERN_KERNEL_PAIR(float, tern_kdot_f32, (int64_t n, const float * x, const float * y))
// sum_i f32(x[i]) * f32(y[i]), accumulated in float.
TERN_KERNEL_PAIR(float, tern_kdot_f16, (int64_t n, const tern_fp16 * x, const tern_fp16 * y))
// sum_i (double) (x[i] * x[i]): product in float, sum in double (ggml's rms_norm).
TERN_KERNEL_PAIR(double, tern_ksumsq_f32, (int64_t n, const float * x))
// exact: y[i] = y[i] + s * x[i] (multiply, then add).
TERN_KERNEL_PAIR(void, tern_kmad_f32, (int64_t n, float * y, const float * x, float s))
// exact: y[i] = y[i] + s * f32(x[i]).
TERN_KERNEL_PAIR(void, tern_kmad_f16, (int64_t n, float * y, const tern_fp16 * x, float s))
// exact: y[i] = (x[i] * s) * w[i], or x[i] * s when w is NULL. y may be x.
TERN_KERNEL_PAIR(void, tern_kscale_mul_f32, (int64_t n, float * y, const float * x, float s, const float * w))
// exact: z[i] = x[i] + y[i] (add), z[i] = x[i] * y[i] (mul). z may be x or y.
TERN_KERNEL_PAIR(void, tern_kadd_f32, (int64_t n, float * z, const float * x, const float * y))
TERN_KERNEL_PAIR(void, tern_kmul_f32, (int64_t n, float * z, const float * x, const float * y))
// exact: F32 -> F16 with round-to-nearest-even (F16C / FCVTN semantics).
TERN_KERNEL_PAIR(void, tern_kfp32_to_fp16, (int64_t n, const float * x, tern_fp16 * y))
// exact: F16 -> F32.
TERN_KERNEL_PAIR(void, tern_kfp16_to_fp32, (int64_t n, const tern_fp16 * x, float * y))

#undef TERN_KERNEL_PAIR
