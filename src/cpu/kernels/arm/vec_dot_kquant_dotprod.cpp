// The dotprod level's K-quant vec_dot kernels: SDOT sub-block sums
// (vec_dot_kquant_arm.h). Compiled with the dotprod flags.
#include "cpu/kernels/arm/vec_dot_kquant_arm.h"

namespace tern {

void tern_fill_vec_dot_kquant_dotprod(tern_kernel_set * ks) { set_vec_dot_kquant<sdot_lanes>(ks); }

}  // namespace tern
