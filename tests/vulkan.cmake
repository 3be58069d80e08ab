# The Vulkan device's tests (TERN_DEVICES contains vulkan). They need a Vulkan
# driver (lavapipe in CI: VK_ICD_FILENAMES=.../lvp_icd.x86_64.json); without
# one they are skipped, and with CI=true a missing driver fails. With
# TERN_VULKAN_VALIDATION=1 in the environment the device runs under the Khronos
# validation layer with synchronization validation: any message fails the test
# (it fails the device call, and the output is matched here too).
if(NOT TERN_CONFIG_DEVICE_VULKAN)
  return()
endif()
tern_add_test(NAME test_vulkan_ops SOURCES test_vulkan_ops.cpp LABELS vulkan)
set_tests_properties(test_vulkan_ops PROPERTIES FAIL_REGULAR_EXPRESSION "vulkan validation:")
# One binary, three placements (see test_vulkan_parity.cpp).
tern_add_test(NAME test_vulkan_parity SOURCES test_vulkan_parity.cpp ARGS all LABELS vulkan SHARED)
foreach(config partial nkvo)
  add_test(NAME test_vulkan_parity_${config} COMMAND test_vulkan_parity ${config})
  set_tests_properties(test_vulkan_parity_${config} PROPERTIES SKIP_RETURN_CODE 77 LABELS vulkan
    ENVIRONMENT "TERN_SHARED_DIR=${TERN_SHARED_DIR};TERN_SOURCE_DIR=${PROJECT_SOURCE_DIR};TERN_BIN_DIR=${PROJECT_BINARY_DIR}/bin")
endforeach()
set_tests_properties(test_vulkan_parity test_vulkan_parity_partial test_vulkan_parity_nkvo PROPERTIES
  FAIL_REGULAR_EXPRESSION "vulkan validation:")
tern_add_test(NAME test_vulkan_decode SOURCES test_vulkan_decode.cpp LABELS vulkan SHARED)
set_tests_properties(test_vulkan_decode PROPERTIES FAIL_REGULAR_EXPRESSION "vulkan validation:")
# No driver, no loader: a one-line error and a non-zero exit (runs everywhere: it needs no device).
if(TARGET tern_cli)
  add_test(NAME vulkan_no_driver COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/vulkan_no_driver.sh $<TARGET_FILE:tern_cli>
           ${PROJECT_SOURCE_DIR}/examples/models/stories260K.gguf)
  set_tests_properties(vulkan_no_driver PROPERTIES LABELS vulkan)
endif()
