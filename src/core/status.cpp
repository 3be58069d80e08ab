#include "core/status.h"
#include "port.h"

#include <stdarg.h>
#include <stdio.h>   // vsnprintf / snprintf only: formatting, no streams
#include <string.h>

namespace tern {

// The storage is the port's (per thread on POSIX): PORT_ERROR_BYTES bytes.
static const size_t kErrorBytes = PORT_ERROR_BYTES;

tern_status tern_fail(tern_status status, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(port_error_buffer(), kErrorBytes, fmt, ap);
    va_end(ap);
    return status;
}

void tern_error_prefix(const char * fmt, ...) {
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    char * err = port_error_buffer();
    // Move the message right and put the prefix in front (no second buffer on
    // the stack), cut to the buffer.
    const size_t room = kErrorBytes - 1;
    const char * end = (const char *) memchr(err, 0, room);
    const size_t n_err = end ? (size_t) (end - err) : room;
    const size_t n_head = strlen(prefix) < room ? strlen(prefix) : room;
    const size_t keep = n_err < room - n_head ? n_err : room - n_head;
    memmove(err + n_head, err, keep);
    memcpy(err, prefix, n_head);
    err[n_head + keep] = 0;
}

void tern_error_clear(void) { port_error_buffer()[0] = 0; }

extern "C" const char * tern_last_error(void) { return port_error_buffer(); }

extern "C" const char * tern_status_str(tern_status status) {
    // A C caller may pass any int; in C++ a value outside the enumerators' range
    // must not be loaded as the enum type (undefined), so read it as an int.
    const int value = tern_enum_value(&status, sizeof(status));
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

}  // namespace tern
