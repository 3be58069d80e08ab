// The interleaved layouts the ARM dotprod and i8mm levels repack weights into
// at load (kernel_set.h: repack_rows, repack, unpack_row): Q4_0 Q4_1 Q5_0
// Q5_1 Q8_0 IQ4_NL Q4_K Q5_K Q6_K. One layout per type for both levels, so
// decode runs the same SDOT code on either.
//
// A group is 4 rows. Its unit (one 32-value block of the 4 rows for the
// legacy formats, one 256-value super-block for the K-quants) holds exactly
// the bytes the 4 rows' blocks take in the file, rearranged so that one
// 16-byte register holds a "quad" of the 4 rows: 4 consecutive values of each
// row, row r at bytes 4r..4r+3. That is the operand of SDOT by element
// (vdotq_laneq_s32: each int32 lane r += row r's quad . the activation's 4
// values), so one instruction makes 4 rows' partial sums; two quad registers
// zipped (ZIP1/ZIP2 of 32-bit lanes) are the operands of SMMLA for rows 0-1
// and 2-3 (8 consecutive values of two rows).
//
// Levels come out of a register in a few NEON operations
// (repack_levels_arm.h), as T = level << SHIFT, an int8 whose SDOT sum is the
// block's integer sum times 2^SHIFT (exact: at most 2^20), which the float
// conversion takes back exactly (SCVTF with SHIFT fraction bits). Legacy
// unit, level register k = values 4k..4k+3 (k = 0..7):
//   Q4_0    d[4] (F16) @0, qs @8: chunk j (j < 4, 16 bytes at 8 + 16j): row r's
//           qs[4j..4j+3] ^ 0x88 at 4r: the nibbles become the 4-bit two's
//           complement of level = nibble - 8. Register j = chunk << 4, register
//           4 + j = chunk & 0xF0: T = 16 * level, SHIFT 4.
//   Q4_1    d @0, m[4] @8, qs @16 as Q4_0 without the xor: T = level (0..15).
//   Q5_0    d @0, H @8 (16 bytes), qs @24 as Q4_1's. Bit k of H's byte 4r + i is
//           NOT the fifth bit of value 4k + i of row r: T = 8 * (level) =
//           nibble << 3 | (!bit) << 7 (level = nibble + 16 bit - 16), SHIFT 3.
//   Q5_1    d @0, m @8, H @16, qs @32: bit k of H's byte 4r + i is the fifth bit
//           itself: T = nibble | bit << 4 (0..31).
//   Q8_0    d @0, qs @8: chunk k (k < 8) = row r's qs[4k..4k+3] at 4r: T = q.
//   IQ4_NL  d @0, qs @8 as Q4_1's: T = the table value of the nibble.
//   bytes   Q4_0 72, Q4_1 80, Q5_0 88, Q5_1 96, Q8_0 136, IQ4_NL 72 (4 file blocks)
// K-quant unit (a super-block of 4 rows):
//   Q4_K  576 bytes: d[4] @0, dmin[4] @8; scales @16: byte 16t + 4j + r = row
//         r's scales[4t + j] (t < 3: the file's 12 bytes transposed, so one
//         register per third gives 4 rows' 6-bit fields side by side); qs @64:
//         chunk k (k < 32) = row r's qs[4k..4k+3] at 4r: low nibbles = values
//         64(k/8) + 4(k%8) + i of sub-block 2(k/8), high nibbles the same of
//         sub-block 2(k/8) + 1. T = level (0..15).
//   Q5_K  704 bytes: as Q4_K with qh between: @64, chunk t (t < 8) = row r's
//         qh[4t..4t+3] at 4r (bit s: the fifth bit of sub-block s's value 4t +
//         i); qs @192. T = nibble | bit << 4.
//   Q6_K  840 bytes: d[4] @0; scales @8: byte 4j + r = row r's scales[j]
//         (j < 16); low bits @72: chunk k (k < 32) byte 4r + i = low 4 bits of
//         u[4k + i] | low 4 bits of u[128 + 4k + i] << 4 (u = level + 32); high
//         bits @584: chunk m (m < 16) byte 4r + i, bits 2b..2b+1 = (high 2 bits
//         of u[4(m + 16b) + i]) ^ 2 (b < 4). T = (u << 2) ^ 0x80 = 4 * level =
//         low << 2 | (high ^ 2) << 6, SHIFT 2.
// repack/unpack_row are byte moves compiled at the baseline (repack_arm.cpp).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tensor/blocks.h"
#include "tensor/types.h"
#include "cpu/kernels/kernel_set.h"

namespace tern {
namespace repack_arm {

const int R = 4;    // rows per group
const int QK = 32;  // values per legacy block

enum class fmt_kind { q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl };

// Per legacy format: its file block and activation block, how its levels
// are stored, whether it is affine (m, and the activation's s), SHIFT and
// where its parts lie in a unit (M, H: 0 = none).
template <class B, class A, fmt_kind K, bool AFFINE, int SHIFT_, size_t M_, size_t H_, size_t QS_>
struct legacy_fmt {
    typedef B block;
    typedef A act;
    static const fmt_kind kind = K;
    static const bool affine = AFFINE;
    static const int SHIFT = SHIFT_;
    static const size_t D = 0, M = M_, H = H_, QS = QS_, BYTES = R * sizeof(B);
};
typedef legacy_fmt<block_q4_0, block_q8_0, fmt_kind::q4_0, false, 4, 0, 0, 8> fmt_q4_0;
typedef legacy_fmt<block_q4_1, block_q8_1, fmt_kind::q4_1, true, 0, 8, 0, 16> fmt_q4_1;
typedef legacy_fmt<block_q5_0, block_q8_0, fmt_kind::q5_0, false, 3, 0, 8, 24> fmt_q5_0;
typedef legacy_fmt<block_q5_1, block_q8_1, fmt_kind::q5_1, true, 0, 8, 16, 32> fmt_q5_1;
typedef legacy_fmt<block_q8_0, block_q8_0, fmt_kind::q8_0, false, 0, 0, 0, 8> fmt_q8_0;
typedef legacy_fmt<block_iq4_nl, block_q8_0, fmt_kind::iq4_nl, false, 0, 0, 0, 8> fmt_iq4_nl;

// K-quant units.
const size_t K_D = 0, K_DMIN = 8, K_SC = 16, Q4K_QS = 64, Q5K_QH = 64, Q5K_QS = 192;
const size_t Q4K_BYTES = 576, Q5K_BYTES = 704;
const size_t Q6K_D = 0, Q6K_SC = 8, Q6K_QL = 72, Q6K_QH = 584, Q6K_BYTES = 840;
static_assert(Q4K_BYTES == R * sizeof(block_q4_K), "Q4_K unit: the file's bytes");
static_assert(Q5K_BYTES == R * sizeof(block_q5_K), "Q5_K unit: the file's bytes");
static_assert(Q6K_BYTES == R * sizeof(block_q6_K), "Q6_K unit: the file's bytes");

}  // namespace repack_arm

// Installs the layout of t in a kernel set: repack_rows (4), repack (one
// group: 4 file rows of k values -> dst), unpack_row (row r of a group back to
// the file layout) and the set's tile over it, gemm_repacked. Nothing is set
// for a type without an ARM layout or not compiled in.
void tern_set_repack_arm(tern_kernel_set * ks, tern_type t, tern_gemm_fn gemm_repacked);

}  // namespace tern
