// PLACEHOLDER: float gemm tiles of the avx2 kernel set (being written).
#include "cpu/kernels/kernel_set.h"

void tern_fill_gemm_float_avx2(tern_kernel_set * ks) { (void) ks; }
