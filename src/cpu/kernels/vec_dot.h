// The vec_dot kernels of mul_mat: one output value = dot(weight row, activation row).
//
// tern_cpu_vec_dot(type) picks, at compile time (see vec.h for the targets),
// the SIMD kernel of a weight type when there is one, else the type's scalar
// reference (tern_type_traits::vec_dot). Every SIMD kernel gives the SAME BITS
// as its reference: the references fix the float operations (the ones
// llama.cpp's x86 kernels do, see tensor/quants_legacy.cpp and
// tensor/quants_k_dot.cpp), the kernels only compute the integer part of each
// block (products and their sums, exact in any order) with vector
// instructions and then do exactly the reference's float steps.
#pragma once
#include "cpu/kernels/vec.h"
#include "tensor/types.h"

// The dot function mul_mat uses for weights of `type`; NULL where the traits
// have none (unknown type, pure activation types).
tern_vec_dot_fn tern_cpu_vec_dot(tern_type type);

#if TERN_KERNELS_AVX2 || TERN_KERNELS_AVX512
#define TERN_VEC_DOT_X86 1
// AVX2 + FMA + F16C kernels (x86/vec_dot_avx2.cpp), same contract as the
// references tern_vec_dot_<t> (tensor/types.h).
void tern_vec_dot_q8_0_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_0
void tern_vec_dot_q4_0_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_0
void tern_vec_dot_q5_0_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_0
void tern_vec_dot_iq4_nl_avx2(int64_t n, float * s, const void * x, const void * y);  // y: Q8_0
void tern_vec_dot_q4_1_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_1
void tern_vec_dot_q5_1_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_1
void tern_vec_dot_q2_K_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_K
void tern_vec_dot_q3_K_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_K
void tern_vec_dot_q4_K_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_K
void tern_vec_dot_q5_K_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_K
void tern_vec_dot_q6_K_avx2(int64_t n, float * s, const void * x, const void * y);    // y: Q8_K
#endif
