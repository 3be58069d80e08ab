// Status codes and the per-thread last-error detail behind tern_last_error().
#pragma once
#include <stddef.h>
#include <string.h>
#include "tern.h"

namespace tern {

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

// The value of an enum object read as bytes (sizeof(*p) may be 1, 2 or 4:
// bare-metal Arm ABIs pack enums into the smallest type). A C caller may
// store any int in a tern.h enum; in C++ loading a value outside the
// enumerators' range as the enum type is undefined, so API entry points read
// them through this.
static inline int tern_enum_value(const void * p, size_t size) {
    if (size == 1) { unsigned char v; memcpy(&v, p, 1); return v; }
    if (size == 2) { unsigned short v; memcpy(&v, p, 2); return v; }
    int v;
    memcpy(&v, p, sizeof(v));
    return v;
}

}  // namespace tern
