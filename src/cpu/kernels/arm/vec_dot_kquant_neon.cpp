// The neon level's K-quant vec_dot kernels: SMULL + SADALP sub-block sums
// (vec_dot_kquant_arm.h). AArch64 only; a 32-bit ARM build keeps the
// references.
#include "cpu/kernels/kernel_set.h"

#if defined(__aarch64__)
#include "cpu/kernels/arm/vec_dot_kquant_arm.h"
#endif

namespace tern {

void tern_fill_vec_dot_kquant_neon(tern_kernel_set * ks) {
    (void) ks;
#if defined(__aarch64__)
    set_vec_dot_kquant<smull_lanes>(ks);
#endif
}

}  // namespace tern
