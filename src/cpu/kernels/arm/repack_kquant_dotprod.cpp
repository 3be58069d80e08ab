// The dotprod level's repacked K-quants: the ARM interleaved layouts of Q4_K,
// Q5_K and Q6_K (repack_arm.h) read by the SDOT tiles of
// repack_kquant_sdot_arm.h, prompts and decode. Compiled with the dotprod
// flags.
#include "cpu/kernels/arm/repack_kquant_sdot_arm.h"

namespace tern {

void tern_fill_repack_kquant_dotprod(tern_kernel_set * ks) {
    (void) ks;
#if TERN_WITH_TYPE_Q4_K
    tern_set_repack_arm(ks, TERN_TYPE_Q4_K, gemm_kquant_sdot<0>);
#endif
#if TERN_WITH_TYPE_Q5_K
    tern_set_repack_arm(ks, TERN_TYPE_Q5_K, gemm_kquant_sdot<1>);
#endif
#if TERN_WITH_TYPE_Q6_K
    tern_set_repack_arm(ks, TERN_TYPE_Q6_K, gemm_kquant_sdot<2>);
#endif
}

}  // namespace tern
