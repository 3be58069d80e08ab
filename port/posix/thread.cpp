// POSIX threads for port.h: pthread threads, mutexes, condition variables and
// CPU affinity (Linux). The objects live in caller memory of port_*_size() bytes.
#include "port.h"
#include "core/status.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace tern {

struct port_thread {
    pthread_t handle;
#if defined(__linux__)
    cpu_set_t allowed;  // the CPUs it was started with (its creator's mask)
    bool      known;
#endif
};
struct port_mutex { pthread_mutex_t m; };
struct port_cond { pthread_cond_t c; };

size_t port_thread_size(void) { return sizeof(port_thread); }
size_t port_mutex_size(void) { return sizeof(port_mutex); }
size_t port_cond_size(void) { return sizeof(port_cond); }

tern_status port_thread_start(port_thread * t, port_thread_fn fn, void * arg) {
    int rc = pthread_create(&t->handle, NULL, fn, arg);
    if (rc != 0) return tern_fail(TERN_ERR_INTERNAL, "pthread_create failed: %s", strerror(rc));
#if defined(__linux__)
    t->known = pthread_getaffinity_np(t->handle, sizeof(t->allowed), &t->allowed) == 0;
#endif
    return TERN_OK;
}

void port_thread_join(port_thread * t) { pthread_join(t->handle, NULL); }

#if defined(__linux__)
int port_thread_pin(port_thread * t, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(t->handle, sizeof(set), &set);
}

int port_current_cpu(void) { return sched_getcpu(); }

int port_thread_keep_off_cpu(port_thread * t, int cpu) {
    if (!t->known || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &t->allowed) || CPU_COUNT(&t->allowed) < 2) return -1;
    cpu_set_t set = t->allowed;
    CPU_CLR(cpu, &set);
    return pthread_setaffinity_np(t->handle, sizeof(set), &set);
}
#else  // no affinity: placement is the scheduler's
int port_thread_pin(port_thread *, int) { return -1; }
int port_current_cpu(void) { return -1; }
int port_thread_keep_off_cpu(port_thread *, int) { return -1; }
#endif

void port_mutex_init(port_mutex * m) { pthread_mutex_init(&m->m, NULL); }
void port_mutex_destroy(port_mutex * m) { pthread_mutex_destroy(&m->m); }
void port_mutex_lock(port_mutex * m) { pthread_mutex_lock(&m->m); }
void port_mutex_unlock(port_mutex * m) { pthread_mutex_unlock(&m->m); }
void port_cond_init(port_cond * c) { pthread_cond_init(&c->c, NULL); }
void port_cond_destroy(port_cond * c) { pthread_cond_destroy(&c->c); }
void port_cond_wait(port_cond * c, port_mutex * m) { pthread_cond_wait(&c->c, &m->m); }
void port_cond_broadcast(port_cond * c) { pthread_cond_broadcast(&c->c); }

int port_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int) n : 1;
}

int port_cpus_allowed(void) {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
#endif
    return port_cpu_count();
}

void port_thread_yield(void) { sched_yield(); }

int64_t port_thread_cpu_us(port_thread * t) {
#if defined(_POSIX_THREAD_CPUTIME) && _POSIX_THREAD_CPUTIME >= 0
    clockid_t cid;
    struct timespec ts;
    if (pthread_getcpuclockid(t->handle, &cid) != 0 || clock_gettime(cid, &ts) != 0) return -1;
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
#else
    (void) t;
    return -1;
#endif
}

}  // namespace tern
