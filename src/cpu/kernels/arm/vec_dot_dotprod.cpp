// The dotprod level's vec_dot kernels for the legacy block formats: SDOT
// integer sums (vec_dot_legacy_arm.h). Compiled with the dotprod flags.
#include "cpu/kernels/arm/vec_dot_legacy_arm.h"

namespace tern {

void tern_fill_vec_dot_dotprod(tern_kernel_set * ks) { set_vec_dot_legacy<sdot_sums>(ks); }

}  // namespace tern
