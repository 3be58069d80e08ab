// Activation columns in register-tile blocks: a GEMM tile is compiled for a
// fixed column count C (its accumulators are C registers per row group), so a
// call with nc columns runs blocks of MC columns, then one block of the
// nc % MC left. for_column_blocks calls
//   block(std::integral_constant<int, C>{}, m)
// for each block's width C (a compile-time constant for the tile template)
// and first column m. Header only, in an anonymous namespace: each kernel
// set's file compiles its own copy with its own target flags (a template
// with external linkage, instantiated alike in two sets' files, would be one
// weak symbol the linker picks from either: an avx512 body in the avx2 set).
//
// for_padded_column_blocks is the code-size variant: one MC-column instance
// runs every block, a short last one too, told by nv how many of its columns
// are real (the tile repeats the last real column and stores nv outputs);
// a single column (decode) gets its own 1-column instance. It calls
//   block(std::integral_constant<int, C>{}, m, nv)   C = 1 or MC.
#pragma once
#include <stdint.h>
#include <type_traits>

namespace tern {
namespace {

template <int MC, class Block>
inline void for_column_blocks(int64_t nc, Block && block) {
    static_assert(MC >= 1 && MC <= 4, "tiles of 1 to 4 columns");
    int64_t m = 0;
    for (; m + MC <= nc; m += MC) block(std::integral_constant<int, MC>{}, m);
    const int64_t rest = nc - m;
    if constexpr (MC > 3) {
        if (rest == 3) block(std::integral_constant<int, 3>{}, m);
    }
    if constexpr (MC > 2) {
        if (rest == 2) block(std::integral_constant<int, 2>{}, m);
    }
    if constexpr (MC > 1) {
        if (rest == 1) block(std::integral_constant<int, 1>{}, m);
    }
}

template <int MC, class Block>
inline void for_padded_column_blocks(int64_t nc, Block && block) {
    static_assert(MC >= 2, "a 1-column tile needs no padding");
    if (nc == 1) {
        block(std::integral_constant<int, 1>{}, 0, 1);
        return;
    }
    for (int64_t m = 0; m < nc; m += MC) block(std::integral_constant<int, MC>{}, m, nc - m < MC ? (int) (nc - m) : MC);
}

}  // namespace
}  // namespace tern
