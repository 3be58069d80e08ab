// POSIX memory and clocks: malloc for the arena buffers, CLOCK_MONOTONIC, the calendar.
#include "port.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tern {

// Buffers of 8 MiB and more (a read-path model, a context's arena) are asked
// for transparent huge pages on Linux: decode streams them every token, and
// 2 MiB pages read faster (fewer TLB misses and page walks). A hint only.
namespace {
void * advise_huge(void * p, size_t bytes) {
#if defined(__linux__)
    const uintptr_t huge = (uintptr_t) 2 << 20;
    if (p && bytes >= 4 * huge) {
        const uintptr_t lo = ((uintptr_t) p + huge - 1) & ~(huge - 1), hi = ((uintptr_t) p + bytes) & ~(huge - 1);
        if (hi > lo) (void) madvise((void *) lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return p;
}
}  // namespace

void * port_alloc(size_t bytes) { return bytes ? advise_huge(malloc(bytes), bytes) : NULL; }
// calloc: a large buffer is fresh anonymous pages, which the system gives zeroed (no memset).
void * port_alloc_zeroed(size_t bytes) { return bytes ? advise_huge(calloc(1, bytes), bytes) : NULL; }
void port_free(void * p) { free(p); }

int64_t port_time_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

bool port_wall_clock(int64_t * seconds, int32_t * utc_offset) {
    const time_t now = time(NULL);
    struct tm local;
    if (now == (time_t) -1 || !localtime_r(&now, &local)) return false;
    *seconds = (int64_t) now;
    *utc_offset = (int32_t) local.tm_gmtoff;
    return true;
}

}  // namespace tern
