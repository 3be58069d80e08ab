// POSIX files: stat, read-only mappings (optionally prefetched and locked),
// EINTR-safe positioned reads, and files replaced whole (a temporary file
// beside the target, fsync, rename). Errors name the path and strerror(errno).
#include "port.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

tern_status port_path_kind(const char * path, port_path_type * kind, uint64_t * size) {
    *kind = PORT_PATH_NONE;
    *size = 0;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return TERN_OK;
        return io_fail(path, "stat");
    }
    *kind = S_ISREG(st.st_mode) ? PORT_PATH_REGULAR : PORT_PATH_OTHER;
    if (*kind == PORT_PATH_REGULAR) *size = (uint64_t) st.st_size;
    return TERN_OK;
}

namespace {

const char * kind_name(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

// w->target = path with its symbolic links followed (at most 16), using
// w->temp as the readlink buffer. A target that does not exist is fine (the
// file is created there).
tern_status resolve_target(const char * path, port_file_writer * w) {
    const size_t n = strlen(path);
    if (n == 0) return tern_fail(TERN_ERR_INVALID_ARG, "an empty path");
    if (n + 32 > sizeof(w->target)) return tern_fail(TERN_ERR_INVALID_ARG, "%s: path longer than %zu bytes", path, sizeof(w->target) - 32);
    memcpy(w->target, path, n + 1);
    for (int hop = 0; hop < 16; hop++) {
        struct stat st;
        if (lstat(w->target, &st) != 0) return errno == ENOENT ? TERN_OK : io_fail(path, "lstat");
        if (!S_ISLNK(st.st_mode)) return TERN_OK;
        const ssize_t len = readlink(w->target, w->temp, sizeof(w->temp) - 1);
        if (len < 0) return io_fail(path, "readlink");
        w->temp[len] = 0;
        if (w->temp[0] == '/') {
            if ((size_t) len + 32 > sizeof(w->target)) return tern_fail(TERN_ERR_INVALID_ARG, "%s: link target too long", path);
            memcpy(w->target, w->temp, (size_t) len + 1);
        } else {  // relative to the link's directory
            char * slash = strrchr(w->target, '/');
            const size_t dir = slash ? (size_t) (slash - w->target) + 1 : 0;
            if (dir + (size_t) len + 32 > sizeof(w->target)) return tern_fail(TERN_ERR_INVALID_ARG, "%s: link target too long", path);
            memcpy(w->target + dir, w->temp, (size_t) len + 1);
        }
    }
    return tern_fail(TERN_ERR_IO, "%s: too many levels of symbolic links", path);
}

// Flush the directory holding `target` (the rename's entry); a file system
// that cannot is not an error (the data itself was flushed).
void sync_dir(char * target) {
    char * slash = strrchr(target, '/');
    const char * dir = ".";
    char saved = 0;
    if (slash) {
        saved = slash[slash == target ? 1 : 0];
        slash[slash == target ? 1 : 0] = 0;  // "/name" -> "/", "a/b" -> "a"
        dir = target;
    }
    int fd;
    do { fd = open(dir, O_RDONLY | O_CLOEXEC | O_DIRECTORY); } while (fd < 0 && errno == EINTR);
    if (fd >= 0) {
        (void) fsync(fd);
        close(fd);
    }
    if (slash) slash[slash == target ? 1 : 0] = saved;
}

// Temporary files of this process are numbered (with the pid: unique on the machine).
uint32_t g_temp_counter = 0;

void remove_temp(port_file_writer * w) {
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    if (w->temp[0]) unlink(w->temp);
    w->temp[0] = 0;
}

}  // namespace

tern_status port_file_create(const char * path, port_file_writer * w) {
    w->fd = -1;
    w->failed = true;  // until the temporary file exists
    w->path = path ? path : "(null)";
    w->target[0] = 0;
    w->temp[0] = 0;
    if (!path) return tern_fail(TERN_ERR_INVALID_ARG, "file path is NULL");
    TERN_TRY(resolve_target(path, w));
    w->temp[0] = 0;
    // The target: absent, or a regular file this process may write. stat, not
    // open: opening a FIFO for writing would wait for a reader.
    struct stat st;
    bool exists = stat(w->target, &st) == 0;
    if (!exists && errno != ENOENT) return io_fail(path, "stat");
    if (exists && !S_ISREG(st.st_mode)) {
        return tern_fail(TERN_ERR_IO, "%s: %s, not a regular file: refused (nothing written)", path, kind_name(st.st_mode));
    }
    if (exists && access(w->target, W_OK) != 0) return io_fail(path, "write access");
    // A name of our own beside it: pid and a counter, created exclusively.
    int fd = -1;
    for (int attempt = 0; attempt < 64 && fd < 0; attempt++) {
        const int len = snprintf(w->temp, sizeof(w->temp), "%s.tern-tmp-%ld-%u", w->target, (long) getpid(),
                                 __atomic_fetch_add(&g_temp_counter, 1u, __ATOMIC_RELAXED));
        if (len < 0 || (size_t) len >= sizeof(w->temp)) break;  // resolve_target left 32 bytes: not reached
        do { fd = open(w->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); } while (fd < 0 && errno == EINTR);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        tern_status s = tern_fail(TERN_ERR_IO, "%s: cannot create a temporary file beside it (%s): %s", path, w->temp,
                                  strerror(errno));
        w->temp[0] = 0;
        return s;
    }
    // A replaced file keeps its permissions.
    if (exists) (void) fchmod(fd, st.st_mode & 07777);
    w->fd = fd;
    w->failed = false;
    return TERN_OK;
}

tern_status port_file_write(port_file_writer * w, const void * data, size_t size) {
    const uint8_t * p = (const uint8_t *) data;
    while (size > 0 && !w->failed) {
        ssize_t n = write(w->fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            w->failed = true;
            return n < 0 ? io_fail(w->path, "write") : tern_fail(TERN_ERR_IO, "%s: write: no progress", w->path);
        }
        p += n;
        size -= (size_t) n;
    }
    return w->failed ? tern_fail(TERN_ERR_IO, "%s: an earlier write failed", w->path) : TERN_OK;
}

tern_status port_file_finish(port_file_writer * w) {
    if (w->fd < 0 || w->failed) {
        remove_temp(w);
        return tern_fail(TERN_ERR_IO, "%s: write failed; the file was left as it was", w->path);
    }
    tern_status s = TERN_OK;
    int rc;
    do { rc = fsync(w->fd); } while (rc != 0 && errno == EINTR);
    if (rc != 0) s = io_fail(w->path, "fsync");
    const int fd = w->fd;
    w->fd = -1;
    if (close(fd) != 0 && s == TERN_OK) s = io_fail(w->path, "close");
    if (s == TERN_OK && rename(w->temp, w->target) != 0) s = io_fail(w->path, "rename");
    if (s != TERN_OK) {
        remove_temp(w);
        return s;
    }
    w->temp[0] = 0;  // it is the target now
    sync_dir(w->target);
    return TERN_OK;
}

void port_file_abandon(port_file_writer * w) { remove_temp(w); }

}  // namespace tern
