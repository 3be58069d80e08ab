// Activation columns in register-tile blocks: a GEMM tile is compiled for a
// fixed column count C (its accumulators are C registers per row group), so a
// call with nc columns runs blocks of MC columns, then one block of the
// nc % MC left. for_column_blocks calls
//   block(std::integral_constant<int, C>{}, m)
// for each block's width C (a compile-time constant for the tile template)
// and first column m. Header only: each kernel set's file instantiates it
// with its own target flags (its lambdas' types are its own).
#pragma once
#include <stdint.h>
#include <type_traits>

namespace tern {

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

}  // namespace tern
