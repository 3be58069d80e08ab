// PLACEHOLDER: kquant gemm tiles of the avx2 kernel set (being written).
#include "cpu/kernels/kernel_set.h"

namespace tern {

void tern_fill_gemm_kquant_avx2(tern_kernel_set * ks) { (void) ks; }

}  // namespace tern
