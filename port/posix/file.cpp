// POSIX files: stat, read-only mappings (optionally prefetched and locked),
// and EINTR-safe positioned reads. Errors name the path and strerror(errno).
#include "port.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/status.h"

namespace tern {

namespace {

tern_status io_fail(const char * path, const char * op) {
    return tern_fail(TERN_ERR_IO, "%s: %s: %s", path, op, strerror(errno));
}

// Opens path read-only and checks it is a regular file; *out_size is its size.
// O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as
// not a regular file); on a regular file the flag changes nothing.
tern_status open_regular(const char * path, int * out_fd, uint64_t * out_size) {
    int fd;
    do { fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); } while (fd < 0 && errno == EINTR);
    if (fd < 0) return io_fail(path, "open");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        tern_status s = io_fail(path, "fstat");
        close(fd);
        return s;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return tern_fail(TERN_ERR_IO, "%s: not a regular file", path);
    }
    *out_fd = fd;
    *out_size = (uint64_t) st.st_size;
    return TERN_OK;
}

}  // namespace

tern_status port_file_size(const char * path, uint64_t * out_size) {
    struct stat st;
    if (stat(path, &st) != 0) return io_fail(path, "stat");
    if (!S_ISREG(st.st_mode)) return tern_fail(TERN_ERR_IO, "%s: not a regular file", path);
    *out_size = (uint64_t) st.st_size;
    return TERN_OK;
}

tern_status port_file_map_open(const char * path, int prefetch, int lock, port_file_map * out) {
    memset(out, 0, sizeof(*out));
    int fd = -1;
    uint64_t size = 0;
    TERN_TRY(open_regular(path, &fd, &size));
    if (size == 0 || size > (uint64_t) SIZE_MAX) {
        close(fd);
        return tern_fail(TERN_ERR_IO, "%s: cannot map a file of %llu bytes", path, (unsigned long long) size);
    }
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    if (prefetch) flags |= MAP_POPULATE;
#endif
    void * addr = mmap(NULL, (size_t) size, PROT_READ, flags, fd, 0);
    tern_status s = addr == MAP_FAILED ? io_fail(path, "mmap") : TERN_OK;
    close(fd);  // the mapping keeps the file referenced
    if (s != TERN_OK) return s;
    if (prefetch) posix_madvise(addr, (size_t) size, POSIX_MADV_WILLNEED);
    out->addr = addr;
    out->size = size;
    out->locked = lock && mlock(addr, (size_t) size) == 0;
    return TERN_OK;
}

void port_file_map_close(port_file_map * m) {
    if (m->addr) {
        if (m->locked) munlock(m->addr, (size_t) m->size);
        munmap(m->addr, (size_t) m->size);
    }
    memset(m, 0, sizeof(*m));
}

tern_status port_mem_writable(void * addr, size_t size, int writable) {
    const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    const uintptr_t lo = (uintptr_t) addr & ~(page - 1);
    const uintptr_t hi = ((uintptr_t) addr + size + page - 1) & ~(page - 1);
    if (mprotect((void *) lo, hi - lo, writable ? PROT_READ | PROT_WRITE : PROT_READ) != 0) {
        return tern_fail(TERN_ERR_IO, "mprotect of %zu bytes: %s", (size_t) (hi - lo), strerror(errno));
    }
    return TERN_OK;
}

#if defined(__linux__)
namespace {

const uintptr_t HUGE_PAGE = (uintptr_t) 2 << 20;
const uintptr_t OWN_SLICE = (uintptr_t) 64 << 20;  // copied at a time: the transient extra memory

// [lo, hi) (page-aligned) replaced by anonymous memory holding its bytes,
// placed at the same offset modulo 2 MiB so that its huge pages stay whole
// when moved there. False: nothing changed.
bool own_slice(uintptr_t lo, uintptr_t hi) {
    const size_t len = hi - lo;
    uint8_t * raw = (uint8_t *) mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return false;
    uintptr_t dst = ((uintptr_t) raw & ~(HUGE_PAGE - 1)) + (lo & (HUGE_PAGE - 1));
    if (dst < (uintptr_t) raw) dst += HUGE_PAGE;
    (void) madvise((void *) dst, len, MADV_HUGEPAGE);  // a hint: 4 KiB pages where refused
    memcpy((void *) dst, (const void *) lo, len);
    const bool moved = mremap((void *) dst, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *) lo) != MAP_FAILED;
    const uintptr_t end = (uintptr_t) raw + len + HUGE_PAGE;
    if (dst > (uintptr_t) raw) munmap(raw, dst - (uintptr_t) raw);
    if (dst + len < end) munmap((void *) (dst + len), end - (dst + len));
    if (!moved) munmap((void *) dst, len);
    return moved;
}

}  // namespace
#endif

tern_status port_mem_own(void * addr, size_t size) {
#if defined(__linux__)
    const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    const uintptr_t lo = (uintptr_t) addr & ~(page - 1);
    const uintptr_t hi = ((uintptr_t) addr + size + page - 1) & ~(page - 1);
    for (uintptr_t a = lo; a < hi;) {
        uintptr_t b = ((a + OWN_SLICE) & ~(HUGE_PAGE - 1));  // slices end on 2 MiB boundaries
        if (b <= a || b > hi) b = hi;
        if (!own_slice(a, b)) TERN_TRY(port_mem_writable((void *) a, b - a, 1));
        a = b;
    }
    return TERN_OK;
#else
    return port_mem_writable(addr, size, 1);
#endif
}

tern_status port_file_read(const char * path, uint64_t offset, void * dst, uint64_t size) {
    int fd = -1;
    uint64_t file_size = 0;
    TERN_TRY(open_regular(path, &fd, &file_size));
    uint8_t * p = (uint8_t *) dst;
    tern_status s = TERN_OK;
    while (size > 0) {
        size_t chunk = (size_t) (size < ((uint64_t) 1 << 30) ? size : ((uint64_t) 1 << 30));
        ssize_t n = pread(fd, p, chunk, (off_t) offset);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { s = io_fail(path, "read"); break; }
        if (n == 0) {
            s = tern_fail(TERN_ERR_IO, "%s: read: unexpected end of file at offset %llu", path,
                          (unsigned long long) offset);
            break;
        }
        p += n;
        offset += (uint64_t) n;
        size -= (uint64_t) n;
    }
    close(fd);
    return s;
}

int port_file_exists(const char * path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

tern_status port_file_create(const char * path, port_file_writer * w) {
    memset(w, 0, sizeof(*w));
    w->fd = -1;
    w->path = path;
    int fd;
    do { fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); } while (fd < 0 && errno == EINTR);
    if (fd < 0) return io_fail(path, "create");
    w->fd = fd;
    return TERN_OK;
}

tern_status port_file_write(port_file_writer * w, const void * data, size_t size) {
    const uint8_t * p = (const uint8_t *) data;
    while (size > 0 && !w->failed) {
        ssize_t n = write(w->fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            w->failed = true;
            return io_fail(w->path, "write");
        }
        p += n;
        size -= (size_t) n;
    }
    return w->failed ? tern_fail(TERN_ERR_IO, "%s: an earlier write failed", w->path) : TERN_OK;
}

tern_status port_file_finish(port_file_writer * w) {
    const bool failed = w->failed;
    const int rc = w->fd >= 0 ? close(w->fd) : 0;
    w->fd = -1;
    if (failed) return tern_fail(TERN_ERR_IO, "%s: write failed", w->path);
    if (rc != 0) return io_fail(w->path, "close");
    return TERN_OK;
}

void port_file_abandon(port_file_writer * w) {
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    if (w->path && w->path[0]) unlink(w->path);
}

}  // namespace tern
