#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

// Constant-initialised thread_local POD: no static constructor, no TLS init call.
static thread_local char g_last_error[512];

tern_status tern_fail(tern_status status, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_last_error, sizeof(g_last_error), fmt, ap);
    va_end(ap);
    return status;
}

void tern_error_prefix(const char * fmt, ...) {
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    char joined[sizeof(prefix) + sizeof(g_last_error)];
    snprintf(joined, sizeof(joined), "%s%s", prefix, g_last_error);
    memcpy(g_last_error, joined, sizeof(g_last_error) - 1);
    g_last_error[sizeof(g_last_error) - 1] = 0;
}

void tern_error_clear(void) { g_last_error[0] = 0; }

extern "C" const char * tern_last_error(void) { return g_last_error; }

extern "C" const char * tern_status_str(tern_status status) {
    // A C caller may pass any int; in C++ a value outside the enumerators' range
    // must not be loaded as the enum type (undefined), so read it as an int.
    int value;
    memcpy(&value, &status, sizeof(value));
    switch (value) {
        case TERN_OK:               return "ok";
        case TERN_ERR_INVALID_ARG:  return "invalid argument";
        case TERN_ERR_IO:           return "i/o error";
        case TERN_ERR_FORMAT:       return "malformed file";
        case TERN_ERR_UNSUPPORTED:  return "unsupported";
        case TERN_ERR_NO_MEMORY:    return "out of memory";
        case TERN_ERR_CANCELLED:    return "cancelled";
        case TERN_ERR_CONTEXT_FULL: return "context full";
        case TERN_ERR_ABORTED:      return "aborted";
        case TERN_ERR_NOT_FOUND:    return "not found";
        case TERN_ERR_SHAPE:        return "wrong shape";
        case TERN_ERR_INTERNAL:     return "internal error";
        case TERN_ERR_BUSY:         return "busy";
        case TERN_ERR_NUMERIC:      return "non-finite numbers";
    }
    return "unknown status";
}
