# K-quants: scalar references (src/tensor/quants_k*.cpp).
tern_add_test(NAME test_quants_k SOURCES test_quants_k.cpp)
tern_add_test(NAME test_quants_k_shared SOURCES test_quants_k_shared.cpp SHARED)
# GCC 12 for AArch64 stops with an internal compiler error (in
# vect_transform_reduction: an int8 sum widened into int) on this file at -O3.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13 AND TERN_IS_AARCH64)
  target_compile_options(test_quants_k PRIVATE -fno-tree-loop-vectorize)
endif()
