// GELU's tanh form as llama.cpp's CPU backend evaluates it, as one table.
//
// llama.cpp rounds a GELU input to F16 and reads the result from a table of
// F16 values made at start-up; inputs at or below -10 give 0 and inputs at or
// above 10 give themselves before any table is read. Between -10 and 10 the F16
// inputs are the magnitudes 0 .. 10.0 (bits 0x0000 .. 0x4900) of either sign,
// 2 x 18689 values, so the function there is a table of 73 KiB:
//
//   h     = F16 bits of x                                   (-10 < x < 10)
//   entry = (h & 0x7fff) + (h & 0x8000 ? k_gelu_table_half : 0)
//   value = F16(0.5 h (1 + tanh(sqrt(2/pi) h (1 + 0.044715 h^2))))
//
// Tern fills the same values (the same formula, each rounded to F16) once per
// process, when a kernel first asks (about a millisecond), in static storage
// that exists only where a GELU architecture (gemma2, gemma3) is compiled in.
// Every kernel set reads the one table, so every set gives the reference's
// bits; the SIMD sets convert and gather eight or more values at a time where
// the reference called tanhf per value (60% of a Gemma 3 prompt's time).
#pragma once
#include <stdint.h>
#include "core/fp16.h"

namespace tern {

constexpr uint32_t k_gelu_table_half = 0x4901;  // entries per sign: F16 magnitudes 0 .. 10.0
// One entry more than the two halves: a 4-byte gather at the last entry stays inside.
constexpr uint32_t k_gelu_table_entries = 2 * k_gelu_table_half + 1;

// The filled table (thread-safe: the first caller fills it, others wait for it).
const tern_fp16 * tern_gelu_table(void);

}  // namespace tern
