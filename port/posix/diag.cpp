// POSIX diagnostics: a per-thread last-error buffer, stderr for log lines,
// getenv, and the kernel's ARM feature bits.
#include "port.h"

#include <stdio.h>
#include <stdlib.h>
#if (defined(__aarch64__) || defined(__arm__)) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace tern {

// Constant-initialised thread_local POD: no static constructor, no TLS init call.
static thread_local char g_error[PORT_ERROR_BYTES];

char * port_error_buffer(void) { return g_error; }

void port_log_line(int level, const char * line) {
    (void) level;
    fputs(line, stderr);
}

const char * port_getenv(const char * name) { return getenv(name); }

uint64_t port_cpu_hwcap(void) {
#if (defined(__aarch64__) || defined(__arm__)) && defined(__linux__)
    return (uint64_t) getauxval(AT_HWCAP);
#else
    return 0;
#endif
}

uint64_t port_cpu_hwcap2(void) {
#if (defined(__aarch64__) || defined(__arm__)) && defined(__linux__) && defined(AT_HWCAP2)
    return (uint64_t) getauxval(AT_HWCAP2);
#else
    return 0;
#endif
}

}  // namespace tern
