// Status codes and the per-thread last-error detail behind tern_last_error().
#pragma once
#include "tern.h"

// Record a detail line for the current thread and return `status`, so a
// failing path reads: return tern_fail(TERN_ERR_FORMAT, "%s: bad magic", path);
tern_status tern_fail(tern_status status, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// Prefix the current detail line with more context ("model.gguf: " + detail).
void tern_error_prefix(const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

void tern_error_clear(void);

// Propagate a failing status: TERN_TRY(gguf_parse(...));
#define TERN_TRY(expr) do { tern_status tern_try_s_ = (expr); if (tern_try_s_ != TERN_OK) return tern_try_s_; } while (0)
