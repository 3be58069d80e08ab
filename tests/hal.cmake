# The accelerator HAL (issue 20): only in builds with the sim device
# (TERN_DEVICES=sim), which makes every HAL path testable on the CPU.
if(NOT TERN_CONFIG_DEVICE_SIM)
  return()
endif()
# Under a sanitizer the parity test runs three models (each 8 placements); the
# Release build runs every model of ../shared/reference.
if(TERN_SANITIZE)
  tern_add_test(NAME test_hal_parity SOURCES test_hal_parity.cpp SHARED
                ARGS stories260K ktest-llama-Q4_K_M ktest-qwen2-Q8_0)
else()
  tern_add_test(NAME test_hal_parity SOURCES test_hal_parity.cpp SHARED)
endif()
tern_add_test(NAME test_hal_kv SOURCES test_hal_kv.cpp SHARED)
tern_add_test(NAME test_hal_cache SOURCES test_hal_cache.cpp)
tern_add_test(NAME test_hal_capture SOURCES test_hal_capture.cpp SHARED)
tern_add_test(NAME test_hal_regex SOURCES test_hal_regex.cpp)
