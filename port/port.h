// Platform layer: the only place that talks to the OS. port/posix/ implements
// it over POSIX; a bare-metal port (port/freestanding/) implements the same
// functions over its own primitives. Everything returns a tern_status or a
// plain value, never errno.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"

namespace tern {

// ---- memory: the one place memory is obtained (an arena's buffer) --------
void * port_alloc(size_t bytes);   // NULL on failure
void * port_alloc_zeroed(size_t bytes);  // the same, every byte 0 (fresh pages are not cleared twice)
void   port_free(void * p);

// ---- clock ----------------------------------------------------------------
int64_t port_time_us(void);        // monotonic microseconds
// The calendar: seconds since 1970-01-01 UTC and the local zone's offset east
// of UTC in seconds (dates in chat templates); false where there is none.
bool port_wall_clock(int64_t * seconds, int32_t * utc_offset);

// ---- diagnostics and environment ---------------------------------------------
// The calling thread's last-error line (tern_last_error), PORT_ERROR_BYTES
// long: one per thread on POSIX (thread_local lives here, not in src/), one
// for the program in the freestanding port (single-threaded).
#define PORT_ERROR_BYTES 512
char * port_error_buffer(void);
// Where a log line goes when no tern_log_set callback is installed: stderr
// on POSIX, the tern_port_log hook (tern_port.h) in the freestanding port.
void port_log_line(int level, const char * line);
// An environment variable (TERN_KERNELS), NULL when absent or when the
// platform has no environment.
const char * port_getenv(const char * name);
// ARM Linux (AArch64 and 32-bit): AT_HWCAP and AT_HWCAP2, the kernel's CPU
// feature bits (cpu/kernels/arm/arm_features.h reads them); 0 elsewhere.
uint64_t port_cpu_hwcap(void);
uint64_t port_cpu_hwcap2(void);

// ---- shared libraries (a device's driver, e.g. libvulkan.so.1) -----------------
// Open a shared library by name (dlopen, RTLD_NOW | RTLD_LOCAL); NULL when it
// cannot be opened, with the loader's reason in err[err_size] (may be NULL).
// The freestanding port has none: NULL, "no shared libraries".
void * port_dlopen(const char * name, char * err, size_t err_size);
void * port_dlsym(void * lib, const char * symbol);   // NULL when absent
void   port_dlclose(void * lib);

// ---- files ------------------------------------------------------------------
struct port_file_map {
    void *   addr;     // start of the mapping (or NULL)
    uint64_t size;     // file size
    int      locked;   // mlock succeeded
};
// Size of a regular file; TERN_ERR_IO with a detail naming the path otherwise.
tern_status port_file_size(const char * path, uint64_t * out_size);
// Map a whole file read-only and private (port_mem_writable can then make parts
// of it the process's own copy). prefetch: MAP_POPULATE / posix_madvise(WILLNEED).
tern_status port_file_map_open(const char * path, int prefetch, int lock, port_file_map * out);
void        port_file_map_close(port_file_map * m);
// Make the pages over [addr, addr + size) of a private file mapping writable
// (copy-on-write: the file is never written) or read-only again.
tern_status port_mem_writable(void * addr, size_t size, int writable);
// Make the pages over [addr, addr + size) of a private file mapping writable
// memory of the process's own, with the same bytes, in transparent huge pages
// where the system has them (Linux: copied into anonymous 2 MiB-aligned
// memory that then replaces the mapping's pages, a slice at a time; decode
// streams the weights, and 2 MiB pages read them faster). Elsewhere, or where
// that fails, the same as port_mem_writable(addr, size, 1).
tern_status port_mem_own(void * addr, size_t size);
// Read bytes [offset, offset+size) of a file into dst.
tern_status port_file_read(const char * path, uint64_t offset, void * dst, uint64_t size);
// Does a regular file exist at path?
int port_file_exists(const char * path);
// What is at a path, told without opening it (a FIFO is never opened, so
// nothing blocks); symbolic links are followed. REGULAR also gives its size.
// TERN_ERR_IO when it cannot be told (permission, a loop of links).
enum port_path_type { PORT_PATH_NONE = 0, PORT_PATH_REGULAR, PORT_PATH_OTHER };
tern_status port_path_kind(const char * path, port_path_type * kind, uint64_t * size);
// A file replaced whole (state files, written models). create checks the
// target (absent, or a regular file we may write: a directory, FIFO, device
// or socket is refused at once, without opening it) and creates a temporary
// file beside it (the same directory: the rename stays on one file system);
// write appends; finish flushes the temporary file to the disk (fsync),
// renames it over the target and flushes the directory. Until that rename
// nothing at the target's path is written or removed, and the rename
// replaces it whole: a save that fails half way (disk full, file-size limit,
// quota) leaves the previous file exactly as it was. finish reports any
// failed write, flush or rename and then removes the temporary file (only
// that); abandon closes and removes it too. A symbolic link is followed: the
// file it names is replaced, the link stays. Paths are limited to
// PORT_PATH_BYTES - 32 bytes (the temporary name's suffix). The path is the
// caller's string, which must outlive the writer.
#define PORT_PATH_BYTES 1024
struct port_file_writer {
    int          fd;
    bool         failed;
    const char * path;                     // as the caller named it (error messages)
    char         target[PORT_PATH_BYTES];  // the file replaced (links followed)
    char         temp[PORT_PATH_BYTES];    // the temporary file ("" once gone)
};
tern_status port_file_create(const char * path, port_file_writer * w);
tern_status port_file_write(port_file_writer * w, const void * data, size_t size);
tern_status port_file_finish(port_file_writer * w);
void        port_file_abandon(port_file_writer * w);

// ---- threads ------------------------------------------------------------------
struct port_thread;            // opaque, defined per platform
struct port_mutex;
struct port_cond;
typedef void * (*port_thread_fn)(void * arg);
// Objects live in caller memory of port_*_size() bytes (the arena).
size_t port_thread_size(void);
size_t port_mutex_size(void);
size_t port_cond_size(void);
tern_status port_thread_start(port_thread * t, port_thread_fn fn, void * arg);
void port_thread_join(port_thread * t);
int  port_thread_pin(port_thread * t, int cpu);   // 0 on success
// The CPU the calling thread runs on now, or -1 where unknown.
int  port_current_cpu(void);
// Let t run on the CPUs it was started with except `cpu` (a later call
// replaces the exclusion); nothing when that would leave none, or where
// affinity is unknown. 0 when the mask was set.
int  port_thread_keep_off_cpu(port_thread * t, int cpu);
// CPU time thread t has run, in microseconds, or -1 where unknown. Tells a
// thread that is not running (descheduled) from one busy with a long task.
int64_t port_thread_cpu_us(port_thread * t);
void port_mutex_init(port_mutex * m);
void port_mutex_destroy(port_mutex * m);
void port_mutex_lock(port_mutex * m);
void port_mutex_unlock(port_mutex * m);
void port_cond_init(port_cond * c);
void port_cond_destroy(port_cond * c);
void port_cond_wait(port_cond * c, port_mutex * m);
void port_cond_broadcast(port_cond * c);
int  port_cpu_count(void);
// CPUs the calling thread may run on (its affinity mask; port_cpu_count where unknown).
int  port_cpus_allowed(void);
// Give the processor to another runnable thread (sched_yield).
void port_thread_yield(void);
// Spin-wait hint (pause / yield instruction).
static inline void port_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

}  // namespace tern
