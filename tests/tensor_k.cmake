# K-quants: scalar references (src/tensor/quants_k*.cpp).
tern_add_test(NAME test_quants_k SOURCES test_quants_k.cpp)
tern_add_test(NAME test_quants_k_shared SOURCES test_quants_k_shared.cpp SHARED)
