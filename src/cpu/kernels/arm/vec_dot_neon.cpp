// The neon level's vec_dot kernels for the legacy block formats: SMULL +
// SADALP integer sums (vec_dot_legacy_arm.h), on every AArch64 core and on
// ARMv7 with NEON (Q8_0 Q4_0 Q4_1 there).
#include "cpu/kernels/arm/vec_dot_legacy_arm.h"

namespace tern {

void tern_fill_vec_dot_neon(tern_kernel_set * ks) { set_vec_dot_legacy<smull_sums>(ks); }

}  // namespace tern
