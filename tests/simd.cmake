# Every kernel set this build has and this CPU runs, against the scalar references.
tern_add_test(NAME test_kernel_sets SOURCES test_kernel_sets.cpp)
# GCC 12 for AArch64 stops with an internal compiler error (in
# vect_transform_reduction) on this file at -O3: no loop vectorizer for it.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13 AND TERN_IS_AARCH64)
  target_compile_options(test_kernel_sets PRIVATE -fno-tree-loop-vectorize)
endif()
