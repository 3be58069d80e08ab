// Interleaved (repacked) Q4_K, Q5_K and Q6_K weights, avx2 kernel set (kernel_set.h:
// repack_rows, repack, gemm_repacked, unpack_row). Compiled with the avx2
// target flags (AVX2 + FMA + F16C): static code only.
//
// Why: in the file layout a decode tile reads 16 rows side by side, 16
// streams a few hundred bytes apart, and this set's K-quant decode ran at
// 0.78-0.90x llama.cpp's avx2 build. Repacked (repack_kquant.h: 16 rows, per
// 4 values the rows' levels side by side) a group is one contiguous run, the
// layout the avx512 set reads, so one repack serves both.
//
// The tiles are x86/kquant_ymm_x86.h's with maddubs (int_dot_avx2.h): int16
// pair sums of 8 (Q4_K), 4 (Q5_K) or 2 (Q6_K) quads at a time, madd with
// the sub-block scale into int32.
#include "cpu/kernels/kernel_set.h"

#include "cpu/kernels/x86/int_dot_avx2.h"
#include "cpu/kernels/x86/kquant_ymm_x86.h"

namespace tern {

void tern_fill_repack_kquant_avx2(tern_kernel_set * ks) { kquant_ymm::install<int_dot_avx2>(ks); }

}  // namespace tern
