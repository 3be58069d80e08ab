# Every kernel set this build has and this CPU runs, against the scalar references.
tern_add_test(NAME test_kernel_sets SOURCES test_kernel_sets.cpp)
