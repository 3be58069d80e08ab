# Block formats part A: traits, float types, legacy quants, IQ4_NL (src/tensor/).
tern_add_test(NAME test_quants_roundtrip SOURCES test_quants_roundtrip.cpp)
tern_add_test(NAME test_quants_legacy SOURCES test_quants_legacy.cpp)
tern_add_test(NAME test_quants_shared SOURCES test_quants_shared.cpp SHARED)
