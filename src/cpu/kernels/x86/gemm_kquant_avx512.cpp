// PLACEHOLDER: kquant gemm tiles of the avx512 kernel set (being written).
#include "cpu/kernels/kernel_set.h"

void tern_fill_gemm_kquant_avx512(tern_kernel_set * ks) { (void) ks; }
