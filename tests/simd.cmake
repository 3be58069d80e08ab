# SIMD kernels against their scalar references (bit-identical results).
tern_add_test(NAME test_vec_dot_simd SOURCES test_vec_dot_simd.cpp)
