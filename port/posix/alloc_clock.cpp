// POSIX memory and clock: malloc for the arena buffers, CLOCK_MONOTONIC.
#include "port.h"

#include <stdlib.h>
#include <time.h>

namespace tern {

void * port_alloc(size_t bytes) { return bytes ? malloc(bytes) : NULL; }
void port_free(void * p) { free(p); }

int64_t port_time_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace tern
