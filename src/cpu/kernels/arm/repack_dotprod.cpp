// The dotprod level's repacked legacy formats: the ARM interleaved layout
// (repack_arm.h) read by the SDOT tiles of repack_sdot_arm.h, prompts and
// decode. Compiled with the dotprod flags.
#include "cpu/kernels/arm/repack_sdot_arm.h"

namespace tern {

void tern_fill_repack_dotprod(tern_kernel_set * ks) {
    using namespace repack_arm;
    (void) ks;
#if TERN_WITH_TYPE_Q4_0
    tern_set_repack_arm(ks, TERN_TYPE_Q4_0, gemm_legacy_sdot<fmt_q4_0>);
#endif
#if TERN_WITH_TYPE_Q4_1
    tern_set_repack_arm(ks, TERN_TYPE_Q4_1, gemm_legacy_sdot<fmt_q4_1>);
#endif
#if TERN_WITH_TYPE_Q5_0
    tern_set_repack_arm(ks, TERN_TYPE_Q5_0, gemm_legacy_sdot<fmt_q5_0>);
#endif
#if TERN_WITH_TYPE_Q5_1
    tern_set_repack_arm(ks, TERN_TYPE_Q5_1, gemm_legacy_sdot<fmt_q5_1>);
#endif
#if TERN_WITH_TYPE_Q8_0
    tern_set_repack_arm(ks, TERN_TYPE_Q8_0, gemm_legacy_sdot<fmt_q8_0>);
#endif
#if TERN_WITH_TYPE_IQ4_NL
    tern_set_repack_arm(ks, TERN_TYPE_IQ4_NL, gemm_legacy_sdot<fmt_iq4_nl>);
#endif
}

}  // namespace tern
