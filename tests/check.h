// Minimal test harness: CHECK records a failure and goes on; main returns
// tern_test_summary(), which prints "N passed, N failed" and the exit code.
#pragma once
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_checks_passed = 0;
static int g_checks_failed = 0;

#define CHECK(cond) do { if (cond) { g_checks_passed++; } else { g_checks_failed++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) do { if (cond) { g_checks_passed++; } else { g_checks_failed++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static inline int tern_test_summary(void) {
    printf("%d passed, %d failed\n", g_checks_passed, g_checks_failed);
    return (g_checks_failed == 0 && g_checks_passed > 0) ? 0 : 1;
}

// Folder of the shared test data (models/, vocab/, reference/). Without it the
// test is skipped (exit 77, ctest's SKIP_RETURN_CODE), except in CI (CI=true),
// where missing data is a failure.
static inline const char * tern_test_shared_dir(void) {
    const char * d = getenv("TERN_SHARED_DIR");
    char probe[4096];
    snprintf(probe, sizeof(probe), "%s/models", d ? d : "");
    FILE * f = d && *d ? fopen(probe, "r") : NULL;
    if (f) { fclose(f); return d; }
    const char * ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0) {
        fprintf(stderr, "TERN_SHARED_DIR=%s has no models/ (required in CI)\n", d ? d : "(unset)");
        exit(1);
    }
    fprintf(stderr, "skipped: TERN_SHARED_DIR=%s has no models/\n", d ? d : "(unset)");
    exit(77);
}
