// The interleaved layout of the legacy block formats (Q4_0 Q4_1 Q5_0 Q5_1
// Q8_0 IQ4_NL) that x86 kernel sets repack weights into at load
// (kernel_set.h: repack_rows, repack, unpack_row). One layout for every set
// that reads it (avx2: x86/repack_avx2.cpp, avx512: x86/repack_avx512.cpp),
// so a model repacked by one set is read by the others' tiles alike.
//
// A group is 16 rows; per 32-value block b it holds the same bytes as the 16
// rows' blocks b in the file, so a matrix is rewritten in place. A block's
// values form 8 quads (values 4l..4l+3, l = 0..7); the tiles want, per quad,
// the 16 rows' four levels side by side, row r at bytes 4r..4r+3, as
// unsigned bytes u (one zmm, or two ymm of 8 rows):
//   d[16]   at 0      the rows' F16 scales, row r at 2r (every format)
//   m[16]   at 32     the rows' F16 minimums (Q4_1, Q5_1)
//   then 64-byte chunks, row r at bytes 4r..4r+3 of each, value 4l + i of
//   the row at byte 4r + i of:
//   Q4_0 Q4_1 IQ4_NL  chunk j (4): row's qs[4j..4j+3], that is quad j in
//                     the low nibbles, quad 4 + j in the high nibbles (as the
//                     file packs them); IQ4_NL: u = table[nibble] + 128
//   Q8_0              chunk j (8): quad j, u = qs + 128
//   Q5_0 Q5_1         chunk H, then chunk j (4): with u the 5-bit levels
//                     (nibble | qh bit << 4), chunk j = u of quad j in bits
//                     0..4 and bits 0..2 of quad 4 + j's u in bits 5..7; H
//                     = bits 3..4 of quad 4 + j's u in bits 2j..2j+1, j = 0..3
//   Q4_0 288 = 16 x 18   d qs          Q4_1   320 = 16 x 20   d m qs
//   Q5_0 352 = 16 x 22   d H qs        Q5_1   384 = 16 x 24   d m H qs
//   Q8_0 544 = 16 x 34   d qs(8)       IQ4_NL 288 = 16 x 18   d qs
// The unsigned offset (Q4_0 8, Q5_0 16, Q8_0 and IQ4_NL 128, Q4_1 Q5_1 0) is
// taken back by the tiles as -offset * (sum of the activation's levels).
//
// repack/unpack_row are plain byte moves, compiled once at the baseline
// (repack_legacy.cpp) and shared by the sets.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tensor/blocks.h"
#include "tensor/types.h"
#include "cpu/kernels/kernel_set.h"

namespace tern {
namespace repack_legacy {

const int R = 16;                 // rows per group
const int QK = 32;                // values per block
const int L = 8;                  // quads per block

// Per format: its file block and activation block, how its levels are
// stored (kind), its dot order, whether it is affine (m, and the
// activation's s), its unsigned offset, and where its parts lie in a group's
// block (M_AT, H_AT: 0 = none; QS_AT: the first of the 4 or 8 chunks).
enum class fmt_kind { nibbles, q5, q8, iq4nl };

struct fmt_q4_0 {
    typedef block_q4_0 block;
    typedef block_q8_0 act;
    static const fmt_kind kind = fmt_kind::nibbles;
    static const bool affine = false, lanes8 = false;
    static const int OFFSET = 8;
    [[maybe_unused]] static const size_t M_AT = 0, H_AT = 0, QS_AT = 2 * R, BYTES = QS_AT + 4 * 64;
};
struct fmt_q4_1 {
    typedef block_q4_1 block;
    typedef block_q8_1 act;
    static const fmt_kind kind = fmt_kind::nibbles;
    static const bool affine = true, lanes8 = false;
    static const int OFFSET = 0;
    [[maybe_unused]] static const size_t M_AT = 2 * R, H_AT = 0, QS_AT = 4 * R, BYTES = QS_AT + 4 * 64;
};
struct fmt_q5_0 {
    typedef block_q5_0 block;
    typedef block_q8_0 act;
    static const fmt_kind kind = fmt_kind::q5;
    static const bool affine = false, lanes8 = false;
    static const int OFFSET = 16;
    [[maybe_unused]] static const size_t M_AT = 0, H_AT = 2 * R, QS_AT = 2 * R + 64, BYTES = QS_AT + 4 * 64;
};
struct fmt_q5_1 {
    typedef block_q5_1 block;
    typedef block_q8_1 act;
    static const fmt_kind kind = fmt_kind::q5;
    static const bool affine = true, lanes8 = false;
    static const int OFFSET = 0;
    static const size_t M_AT = 2 * R, H_AT = 4 * R, QS_AT = 4 * R + 64, BYTES = QS_AT + 4 * 64;
};
struct fmt_q8_0 {
    typedef block_q8_0 block;
    typedef block_q8_0 act;
    static const fmt_kind kind = fmt_kind::q8;
    static const bool affine = false, lanes8 = false;
    static const int OFFSET = 128;
    [[maybe_unused]] static const size_t M_AT = 0, H_AT = 0, QS_AT = 2 * R, BYTES = QS_AT + 8 * 64;
};
struct fmt_iq4_nl {
    typedef block_iq4_nl block;
    typedef block_q8_0 act;
    static const fmt_kind kind = fmt_kind::iq4nl;
    static const bool affine = false, lanes8 = true;
    static const int OFFSET = 128;
    [[maybe_unused]] static const size_t M_AT = 0, H_AT = 0, QS_AT = 2 * R, BYTES = QS_AT + 4 * 64;
};

// Byte i of quad j's place in a chunk (row r): QS_AT + 64 j + 4 r + i.
inline size_t at(size_t qs_at, int j, int r, int i) { return qs_at + 64 * (size_t) j + 4 * r + i; }

}  // namespace repack_legacy

// Installs the layout for a legacy format t in a kernel set: repack_rows (16),
// repack (one group: 16 file rows of k values -> dst), unpack_row (row r of a
// group back to the file layout) and the set's tile over it, gemm_repacked.
// Nothing is set when t has no such layout or is not compiled in.
void tern_set_repack_legacy(tern_kernel_set * ks, tern_type t, tern_gemm_fn gemm_repacked);

// The same for every legacy format compiled in, with a set's tiles: Tiles
// has a member template gemm<fmt> (a tern_gemm_fn per format) and says
// whether it reads IQ4_NL. In an anonymous namespace: each set's file
// compiles its own copy with its target flags (column_blocks.h says why).
namespace {
template <class Tiles>
void tern_set_repack_legacy_all(tern_kernel_set * ks) {
    using namespace repack_legacy;
    (void) ks;
#if TERN_WITH_TYPE_Q4_0
    tern_set_repack_legacy(ks, TERN_TYPE_Q4_0, Tiles::template gemm<fmt_q4_0>);
#endif
#if TERN_WITH_TYPE_Q4_1
    tern_set_repack_legacy(ks, TERN_TYPE_Q4_1, Tiles::template gemm<fmt_q4_1>);
#endif
#if TERN_WITH_TYPE_Q5_0
    tern_set_repack_legacy(ks, TERN_TYPE_Q5_0, Tiles::template gemm<fmt_q5_0>);
#endif
#if TERN_WITH_TYPE_Q5_1
    tern_set_repack_legacy(ks, TERN_TYPE_Q5_1, Tiles::template gemm<fmt_q5_1>);
#endif
#if TERN_WITH_TYPE_Q8_0
    tern_set_repack_legacy(ks, TERN_TYPE_Q8_0, Tiles::template gemm<fmt_q8_0>);
#endif
#if TERN_WITH_TYPE_IQ4_NL
    if constexpr (Tiles::IQ4_NL) tern_set_repack_legacy(ks, TERN_TYPE_IQ4_NL, Tiles::template gemm<fmt_iq4_nl>);
#endif
}
}  // namespace

}  // namespace tern
