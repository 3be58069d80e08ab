// Shared by the Vulkan tests (tests/vulkan.cmake): is there a Vulkan device?
// Without one a test is skipped (exit 77), except in CI (CI=true), where a
// missing driver is a failure.
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tern.h"
#include "tern_hal.h"

static inline void vulkan_test_require_device(void) {
    char names[16][32];
    const int32_t n = tern_hal_list_devices(names, 16);
    for (int32_t i = 0; i < n && i < 16; i++) {
        if (strncmp(names[i], "vulkan", 6) == 0) return;
    }
    const char * ci = getenv("CI");
    fprintf(stderr, "no Vulkan device: %s\n", tern_last_error());
    if (ci && strcmp(ci, "true") == 0) {
        fprintf(stderr, "a missing Vulkan driver fails in CI (set VK_ICD_FILENAMES to lavapipe's manifest)\n");
        exit(1);
    }
    fprintf(stderr, "skipped\n");
    exit(77);
}
