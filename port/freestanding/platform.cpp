// Freestanding port: bare metal, one thread, no file system. Everything the
// library asks of a platform (port.h) is answered here; the little a board
// must provide goes through the weak hooks of tern_port.h (clock, log sink,
// an optional heap), whose defaults make a working, silent, heap-free build.
//
// What a freestanding build cannot do, and says so: files, mmap and split
// models (TERN_ERR_UNSUPPORTED naming the call), threads (TERN_THREADS is
// forced OFF: the pool runs on the calling thread).
#include "port.h"

#include <string.h>
#include "tern_port.h"
#include "core/status.h"

namespace tern {

// ---- hooks: weak defaults ------------------------------------------------------
extern "C" __attribute__((weak)) int64_t tern_port_time_us(void) { return 0; }
extern "C" __attribute__((weak)) void tern_port_log(int level, const char * line) {
    (void) level;
    (void) line;
}
extern "C" __attribute__((weak)) void * tern_port_alloc(size_t bytes) {
    (void) bytes;
    return nullptr;
}
extern "C" __attribute__((weak)) void tern_port_free(void * p) { (void) p; }

// ---- memory, clock, diagnostics ---------------------------------------------------
void * port_alloc(size_t bytes) { return bytes ? tern_port_alloc(bytes) : nullptr; }
void * port_alloc_zeroed(size_t bytes) {
    void * p = port_alloc(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}
void port_free(void * p) {
    if (p) tern_port_free(p);
}
int64_t port_time_us(void) { return tern_port_time_us(); }
bool port_wall_clock(int64_t * seconds, int32_t * utc_offset) {   // no calendar on bare metal
    *seconds = 0;
    *utc_offset = 0;
    return false;
}

// One thread: one last-error buffer for the program.
static char g_error[PORT_ERROR_BYTES];
char * port_error_buffer(void) { return g_error; }
void port_log_line(int level, const char * line) { tern_port_log(level, line); }
const char * port_getenv(const char * name) {
    (void) name;
    return nullptr;
}
uint64_t port_cpu_hwcap(void) { return 0; }
uint64_t port_cpu_hwcap2(void) { return 0; }

// ---- files: none ------------------------------------------------------------------
static tern_status no_files(const char * what, const char * path) {
    return tern_fail(TERN_ERR_UNSUPPORTED, "%s: %s: the freestanding port has no file system (load a blob)",
                     path ? path : "(null)", what);
}
tern_status port_file_size(const char * path, uint64_t * out_size) {
    *out_size = 0;
    return no_files("size", path);
}
tern_status port_file_map_open(const char * path, int, int, port_file_map * out) {
    out->addr = nullptr;
    out->size = 0;
    out->locked = 0;
    return no_files("map", path);
}
void port_file_map_close(port_file_map * m) { m->addr = nullptr; }
tern_status port_mem_writable(void *, size_t, int) { return TERN_OK; }  // plain RAM is always writable
tern_status port_mem_own(void *, size_t) { return TERN_OK; }
tern_status port_file_read(const char * path, uint64_t, void *, uint64_t) { return no_files("read", path); }
int port_file_exists(const char *) { return 0; }
tern_status port_path_kind(const char * path, port_path_type * kind, uint64_t * size) {
    *kind = PORT_PATH_NONE;
    *size = 0;
    return no_files("stat", path);
}
tern_status port_file_create(const char * path, port_file_writer * w) {
    w->fd = -1;
    w->failed = true;
    w->path = path;
    w->target[0] = 0;
    w->temp[0] = 0;
    return no_files("create", path);
}
tern_status port_file_write(port_file_writer * w, const void *, size_t) { return no_files("write", w->path); }
tern_status port_file_finish(port_file_writer * w) { return no_files("finish", w->path); }
void port_file_abandon(port_file_writer *) {}

// ---- threads: none (TERN_THREADS=OFF); locks are no-ops on one thread ---------------
struct port_thread { int unused; };
struct port_mutex { int unused; };
struct port_cond { int unused; };
size_t port_thread_size(void) { return sizeof(port_thread); }
size_t port_mutex_size(void) { return sizeof(port_mutex); }
size_t port_cond_size(void) { return sizeof(port_cond); }
tern_status port_thread_start(port_thread *, port_thread_fn, void *) {
    return tern_fail(TERN_ERR_UNSUPPORTED, "the freestanding port runs one thread");
}
void port_thread_join(port_thread *) {}
int port_thread_pin(port_thread *, int) { return -1; }
int port_current_cpu(void) { return -1; }
int port_thread_keep_off_cpu(port_thread *, int) { return -1; }
int64_t port_thread_cpu_us(port_thread *) { return -1; }
void port_mutex_init(port_mutex *) {}
void port_mutex_destroy(port_mutex *) {}
void port_mutex_lock(port_mutex *) {}
void port_mutex_unlock(port_mutex *) {}
void port_cond_init(port_cond *) {}
void port_cond_destroy(port_cond *) {}
void port_cond_wait(port_cond *, port_mutex *) {}
void port_cond_broadcast(port_cond *) {}
int port_cpu_count(void) { return 1; }
int port_cpus_allowed(void) { return 1; }
void port_thread_yield(void) {}

// ---- shared libraries: none ---------------------------------------------------------
void * port_dlopen(const char * name, char * err, size_t err_size) {
    (void) name;
    if (err && err_size) {
        const char msg[] = "no shared libraries (freestanding port)";
        size_t n = sizeof(msg) < err_size ? sizeof(msg) : err_size;
        for (size_t i = 0; i + 1 < n; i++) err[i] = msg[i];
        err[n - 1] = 0;
    }
    return nullptr;
}
void * port_dlsym(void * lib, const char * symbol) {
    (void) lib;
    (void) symbol;
    return nullptr;
}
void port_dlclose(void * lib) { (void) lib; }

}  // namespace tern
