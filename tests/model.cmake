# End-to-end tests of the model, context and decode.
tern_add_test(NAME test_parity SOURCES test_parity.cpp SHARED)
tern_add_test(NAME test_decode SOURCES test_decode.cpp SHARED)
if(NOT TERN_SANITIZE)
  # Interposes malloc/free: not with a sanitizer's allocator.
  tern_add_test(NAME test_no_malloc SOURCES test_no_malloc.cpp SHARED)
endif()
tern_add_test(NAME test_repack SOURCES test_repack.cpp SHARED)
tern_add_test(NAME test_hostile SOURCES test_hostile.cpp SHARED)  # hostile models and API misuse (issue 8)
tern_add_test(NAME test_kv_cache SOURCES test_kv_cache.cpp SHARED)  # sequences, K-shift, defrag (issue 7)
tern_add_test(NAME test_state SOURCES test_state.cpp SHARED)  # state save/restore (issue 7)
if("phi3" IN_LIST TERN_ARCHS)
  tern_add_test(NAME test_swa SOURCES test_swa.cpp SHARED)  # sliding-window attention on phi3 files made at run time (issue 7)
endif()
