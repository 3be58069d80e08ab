// The interleaved layout of Q4_K, Q5_K and Q6_K that x86 kernel sets repack weights
// into at load (kernel_set.h: repack_rows, repack, unpack_row). One layout for
// every set that reads it (avx512: x86/repack_kquant_avx512.cpp, one zmm of 16
// rows; avx2: x86/repack_kquant_avx2.cpp, two ymm of 8 rows), so a matrix is
// repacked once whichever set reads it.
//
// A group is 16 rows; per 256-value super-block the group holds the 16 rows'
// super-blocks in exactly their file bytes, rearranged so that lanes = rows
// (u = the unsigned level of a value, a "quad" = 4 consecutive values, row r
// at bytes 4r..4r+3 of each 64-byte chunk):
//   Q4_K (2304 bytes)  d[16], dmin[16] (F16); 3 x 64 bytes: lane r of chunk k
//                      = row r's scales[4k..4k+3] (the packed 6-bit scales and
//                      mins, decoded in the lanes); 32 x 64 bytes: lane r of
//                      chunk k = row r's qs[4k..4k+3] (low nibbles: values
//                      64(k/8) + 4(k%8) + 0..3, high nibbles: 32 further on)
//   Q5_K (2816 bytes)  as Q4_K, with 8 x 64 bytes of high bits between the
//                      scales and the qs: lane r of chunk t = row r's
//                      qh[4t..4t+3] (bit j of byte i: the 5th bit of value
//                      32j + 4t + i, that is of sub-block j's quad t)
//   Q6_K (3360 bytes)  d[16]; scales[16 sub-blocks][16 rows] (int8); 32 x 64
//                      bytes of low nibbles: chunk k lane r byte i = low 4
//                      bits of u[4k+i] | low 4 bits of u[128+4k+i] << 4;
//                      16 x 64 bytes of high bits: chunk m lane r byte i, bits
//                      2b..2b+1 = high 2 bits of u[4(m+16b)+i], b = 0..3
// The tiles take Q6_K's offset 32 and Q4_K's mins back through the Q8_K
// activation's bsums, in exact integers.
//
// repack/unpack_row are byte moves compiled once at the baseline
// (repack_kquant.cpp) and shared by the sets.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tensor/blocks.h"
#include "tensor/types.h"
#include "cpu/kernels/kernel_set.h"

namespace tern {
namespace repack_kquant {

const int R = 16;  // rows per group

const size_t Q6_D = 0, Q6_SCALES = 32, Q6_LOW = 32 + 256, Q6_HIGH = 32 + 256 + 2048, Q6_BYTES = 3360;
static_assert(Q6_BYTES == R * sizeof(block_q6_K), "Q6_K group: the file's bytes");

const size_t Q4_D = 0, Q4_DMIN = 32, Q4_SCALES = 64, Q4_QS = 64 + 192, Q4_BYTES = 2304;
static_assert(Q4_BYTES == R * sizeof(block_q4_K), "Q4_K group: the file's bytes");

const size_t Q5_QH = 64 + 192, Q5_QS = Q5_QH + 512, Q5_BYTES = 2816;  // d, dmin, scales as Q4_K
static_assert(Q5_BYTES == R * sizeof(block_q5_K), "Q5_K group: the file's bytes");

// Q4_K and Q5_K share their tiles (the 5th bit is the only difference):
// where the levels lie, and whether there is a high bit.
struct k4_parts { static const size_t QS = Q4_QS, QH = 0, BYTES = Q4_BYTES; static const bool HIGH = false; };
struct k5_parts { static const size_t QS = Q5_QS, QH = Q5_QH, BYTES = Q5_BYTES; static const bool HIGH = true; };

}  // namespace repack_kquant

// Installs the layout for t (Q4_K, Q5_K or Q6_K) in a kernel set: repack_rows (16),
// repack, unpack_row and the set's tile over it, gemm_repacked. Nothing is
// set for another type or one not compiled in.
void tern_set_repack_kquant(tern_kernel_set * ks, tern_type t, tern_gemm_fn gemm_repacked);

}  // namespace tern
