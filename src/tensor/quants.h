// Scalar references of the float types (quants_float.cpp), the legacy 32-value
// block formats (quants_legacy.cpp, which also decodes IQ4_NL) and IQ4_NL's
// table and quantizer (quants_iq4nl.cpp). The K-quants are in tensor/quants_k.h. Every function follows the
// scheme of tensor/types.h; n is the number of values and, for block formats,
// a multiple of 32.
//
// Quantizers reproduce llama.cpp's reference quantizers bit for bit
// (quantize_row_<t>_ref in ggml-quants.c), so a tensor quantized here has the
// same bytes as the one llama-quantize writes:
//   Q4_0 / Q5_0  symmetric: the value of largest magnitude `max` gets level 0,
//                d = max / -8 (-16), level = min(15 (31), trunc(x / d + 8.5 (16.5))).
//   Q4_1 / Q5_1  affine: d = (max - min) / 15 (31), m = min,
//                level = min(15 (31), trunc((x - min) / d + 0.5)).
//   Q8_0 / Q8_1  d = amax / 127, q = roundf(x / d); Q8_1 also keeps s = d * sum(q).
//   IQ4_NL       levels index the non-linear table tern_kvalues_iq4nl; the scale
//                is searched (see quants_iq4nl.cpp).
// `1 / d` is computed once per block and multiplied, as ggml does, and d and m
// are rounded to fp16 only when stored.
//
// Dot products (tern_vec_dot_<t>) take the weight row x in <t> and the
// activation row y in <t>'s vec_dot_type: F32, F16, BF16 with themselves
// (products summed in double); Q4_0, Q5_0, Q8_0, IQ4_NL with Q8_0; Q4_1, Q5_1
// with Q8_1. Block formats sum the integer products of a block exactly, then
// add sumi * d_x * d_y (+ m_x * s_y for the affine formats) in float.
#pragma once
#include <stdint.h>
#include "tensor/blocks.h"

namespace tern {

// The 16 values of IQ4_NL, ascending (ggml's kvalues_iq4nl).
extern const int8_t tern_kvalues_iq4nl[16];

void tern_dequantize_row_f32(const void * src, float * dst, int64_t n);
void tern_quantize_row_f32(const float * src, void * dst, int64_t n);
void tern_vec_dot_f32(int64_t n, float * s, const void * x, const void * y);

void tern_dequantize_row_f16(const void * src, float * dst, int64_t n);
void tern_quantize_row_f16(const float * src, void * dst, int64_t n);
// y is F32: F16 weights meet F32 activations (llama.cpp's prompt path keeps them unrounded).
void tern_vec_dot_f16(int64_t n, float * s, const void * x, const void * y);

void tern_dequantize_row_bf16(const void * src, float * dst, int64_t n);
void tern_quantize_row_bf16(const float * src, void * dst, int64_t n);
void tern_vec_dot_bf16(int64_t n, float * s, const void * x, const void * y);

void tern_dequantize_row_q4_0(const void * src, float * dst, int64_t n);
void tern_quantize_row_q4_0(const float * src, void * dst, int64_t n);
void tern_vec_dot_q4_0(int64_t n, float * s, const void * x, const void * y);  // y: Q8_0

void tern_dequantize_row_q4_1(const void * src, float * dst, int64_t n);
void tern_quantize_row_q4_1(const float * src, void * dst, int64_t n);
void tern_vec_dot_q4_1(int64_t n, float * s, const void * x, const void * y);  // y: Q8_1

void tern_dequantize_row_q5_0(const void * src, float * dst, int64_t n);
void tern_quantize_row_q5_0(const float * src, void * dst, int64_t n);
void tern_vec_dot_q5_0(int64_t n, float * s, const void * x, const void * y);  // y: Q8_0

void tern_dequantize_row_q5_1(const void * src, float * dst, int64_t n);
void tern_quantize_row_q5_1(const float * src, void * dst, int64_t n);
void tern_vec_dot_q5_1(int64_t n, float * s, const void * x, const void * y);  // y: Q8_1

void tern_dequantize_row_q8_0(const void * src, float * dst, int64_t n);
void tern_quantize_row_q8_0(const float * src, void * dst, int64_t n);
void tern_vec_dot_q8_0(int64_t n, float * s, const void * x, const void * y);  // y: Q8_0

// Q8_1 is an activation type only: no dot product of its own.
void tern_dequantize_row_q8_1(const void * src, float * dst, int64_t n);
void tern_quantize_row_q8_1(const float * src, void * dst, int64_t n);
// Activation quantizers as ggml's CPU backend rounds (127 / amax, ties to even);
// see levels_q8 in quants_legacy.cpp.
void tern_quantize_act_q8_0(const float * src, void * dst, int64_t n);
void tern_quantize_act_q8_1(const float * src, void * dst, int64_t n);


void tern_dequantize_row_iq4_nl(const void * src, float * dst, int64_t n);
void tern_quantize_row_iq4_nl(const float * src, void * dst, int64_t n);
void tern_vec_dot_iq4_nl(int64_t n, float * s, const void * x, const void * y);  // y: Q8_0

}  // namespace tern
