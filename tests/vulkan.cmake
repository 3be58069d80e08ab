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
