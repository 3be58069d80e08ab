// Type traits: what every block format is and how to convert it.
//
// For each tern_type compiled in (TERN_TYPES -> TERN_WITH_TYPE_<name> in
// tern_config.h) there is one entry: block size, bytes per block, the scalar
// reference dequantizer (to_float), the reference quantizer (from_float), and
// for matrix multiplication the dot type: activations are quantized once per
// row to vec_dot_type (Q8_0 for Q4_0/Q5_0/Q8_0/IQ4_NL, Q8_1 for Q4_1/Q5_1,
// Q8_K for the K-quants, F16 for F16, BF16 for BF16, F32 for F32), exactly as
// ggml does, and vec_dot(weight row, activation row) gives one output value.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "tensor/blocks.h"

namespace tern {

typedef void (*tern_to_float_fn)(const void * src, float * dst, int64_t n);
typedef void (*tern_from_float_fn)(const float * src, void * dst, int64_t n);
// s[0] = dot(x[0..n), y[0..n)); x in the weight type, y in its vec_dot_type.
typedef void (*tern_vec_dot_fn)(int64_t n, float * s, const void * x, const void * y);

// The scalar reference functions follow one naming scheme (src/tensor/quants*.h):
//   void tern_dequantize_row_<t>(const void * src, float * dst, int64_t n);
//   void tern_quantize_row_<t>(const float * src, void * dst, int64_t n);
//   void tern_vec_dot_<t>(int64_t n, float * s, const void * x, const void * y);
// with <t> one of f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 iq4_nl q2_K q3_K
// q4_K q5_K q6_K q8_K. SIMD kernels live in src/cpu/kernels/ and are tested
// against these.
struct tern_type_traits {
    const char *       name;          // "Q4_K"
    int64_t            blck_size;     // values per block
    size_t             type_size;     // bytes per block
    bool               is_quantized;
    tern_to_float_fn   to_float;      // scalar reference dequantizer
    tern_from_float_fn from_float;    // reference quantizer (what llama-quantize writes)
    tern_type          vec_dot_type;  // what activations become for mul_mat
    tern_vec_dot_fn    vec_dot;       // scalar reference dot (NULL for pure activation types Q8_1/Q8_K)
    tern_from_float_fn from_float_act;// activation quantizer for rows of this (dot) type, rounding
                                      // as ggml's CPU backend does (differs from from_float for Q8_0/Q8_1)
};

// NULL when `type` is not a known value or not compiled in.
const tern_type_traits * tern_type_traits_get(tern_type type);
// Is this raw GGUF type id a known, compiled-in type?
bool tern_type_supported(uint32_t type_id);
// Alignment the kernels need for data of this type (its largest scalar member).
size_t tern_type_align(tern_type type);
// Bytes of a row of ne0 values; ne0 must be a multiple of the block size.
size_t tern_row_size(tern_type type, int64_t ne0);

}  // namespace tern
