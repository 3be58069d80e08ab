// Block layouts of the GGUF quantized formats, byte-compatible with ggml's.
// A row of n values of a quantized type is n / QK blocks laid end to end.
#pragma once
#include <stdint.h>
#include "core/fp16.h"

namespace tern {

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32
#define QK4_NL 32
#define QK_K 256
#define K_SCALE_SIZE 12

struct block_q4_0 { tern_fp16 d; uint8_t qs[QK4_0 / 2]; };                       // 18 bytes
struct block_q4_1 { tern_fp16 d; tern_fp16 m; uint8_t qs[QK4_1 / 2]; };          // 20
struct block_q5_0 { tern_fp16 d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; };        // 22
struct block_q5_1 { tern_fp16 d; tern_fp16 m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; }; // 24
struct block_q8_0 { tern_fp16 d; int8_t qs[QK8_0]; };                            // 34
struct block_q8_1 { tern_fp16 d; tern_fp16 s; int8_t qs[QK8_1]; };              // 36, s = d * sum(qs)
struct block_iq4_nl { tern_fp16 d; uint8_t qs[QK4_NL / 2]; };                    // 18

// K-quants: super-blocks of 256 values.
struct block_q2_K { uint8_t scales[QK_K / 16]; uint8_t qs[QK_K / 4]; tern_fp16 d; tern_fp16 dmin; };  // 84
struct block_q3_K { uint8_t hmask[QK_K / 8]; uint8_t qs[QK_K / 4]; uint8_t scales[12]; tern_fp16 d; }; // 110
struct block_q4_K { tern_fp16 d; tern_fp16 dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; }; // 144
struct block_q5_K { tern_fp16 d; tern_fp16 dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; }; // 176
struct block_q6_K { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; tern_fp16 d; }; // 210
struct block_q8_K { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; };      // 292

static_assert(sizeof(block_q4_0) == 18, "q4_0");
static_assert(sizeof(block_q4_1) == 20, "q4_1");
static_assert(sizeof(block_q5_0) == 22, "q5_0");
static_assert(sizeof(block_q5_1) == 24, "q5_1");
static_assert(sizeof(block_q8_0) == 34, "q8_0");
static_assert(sizeof(block_q8_1) == 36, "q8_1");
static_assert(sizeof(block_iq4_nl) == 18, "iq4_nl");
static_assert(sizeof(block_q2_K) == 84, "q2_K");
static_assert(sizeof(block_q3_K) == 110, "q3_K");
static_assert(sizeof(block_q4_K) == 144, "q4_K");
static_assert(sizeof(block_q5_K) == 176, "q5_K");
static_assert(sizeof(block_q6_K) == 210, "q6_K");
static_assert(sizeof(block_q8_K) == 292, "q8_K");

}  // namespace tern
