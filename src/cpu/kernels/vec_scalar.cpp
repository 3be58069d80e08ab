// Without SIMD the selected kernels are the references (see vec.h).
#include "cpu/kernels/vec.h"

#if TERN_KERNELS_SCALAR
float  tern_kdot_f32(int64_t n, const float * x, const float * y) { return tern_kdot_f32_ref(n, x, y); }
float  tern_kdot_f16(int64_t n, const tern_fp16 * x, const tern_fp16 * y) { return tern_kdot_f16_ref(n, x, y); }
double tern_ksumsq_f32(int64_t n, const float * x) { return tern_ksumsq_f32_ref(n, x); }
void   tern_kmad_f32(int64_t n, float * y, const float * x, float s) { tern_kmad_f32_ref(n, y, x, s); }
void   tern_kmad_f16(int64_t n, float * y, const tern_fp16 * x, float s) { tern_kmad_f16_ref(n, y, x, s); }
void   tern_kscale_mul_f32(int64_t n, float * y, const float * x, float s, const float * w) { tern_kscale_mul_f32_ref(n, y, x, s, w); }
void   tern_kadd_f32(int64_t n, float * z, const float * x, const float * y) { tern_kadd_f32_ref(n, z, x, y); }
void   tern_kmul_f32(int64_t n, float * z, const float * x, const float * y) { tern_kmul_f32_ref(n, z, x, y); }
void   tern_kfp32_to_fp16(int64_t n, const float * x, tern_fp16 * y) { tern_kfp32_to_fp16_ref(n, x, y); }
void   tern_kfp16_to_fp32(int64_t n, const tern_fp16 * x, float * y) { tern_kfp16_to_fp32_ref(n, x, y); }
#endif
