// Thread pool: see threadpool.h for the protocol.
#include "cpu/threadpool.h"
#include "core/arena.h"
#include "core/status.h"
#include "cpu/work_claim.h"
#include "port.h"

#include <inttypes.h>
#include <atomic>
#include <string.h>

namespace tern {

namespace {

struct pool_worker {
    tern_threadpool * pool;
    int32_t           ith;
    port_thread *     thread;
};

} // namespace

}  // namespace tern

// The public type (tern.h) is global; its members are Tern's own types.
using namespace tern;
struct tern_threadpool {
    alignas(64) std::atomic<int32_t> arrived;      // workers at the current barrier
    alignas(64) std::atomic<int32_t> generation;   // barrier phase, bumped by the last arrival
    alignas(64) std::atomic<int32_t> kickoffs;     // jobs started
    std::atomic<int32_t> sleepers;                 // workers sleeping on cond
    std::atomic<bool>    stop;
    std::atomic<int32_t> in_use;                   // 1 while a decode owns the pool (tern_threadpool_acquire)
    alignas(64) std::atomic<int32_t> caller_cpu;   // CPU of the thread that started the current job, or -1
    int32_t              n_threads;
    bool                 keep_apart;               // workers leave the caller's CPU (see worker_main)
    int32_t              spin_rounds;
    tern_threadpool_fn   fn;                       // the job; written before a kick-off
    void *               arg;
    port_mutex *         mutex;
    port_cond *          cond;
    pool_worker *        workers;                  // [n_threads]; [0] is the caller
    tern_claim_counter * claims;                   // [2][n_threads] (tern_threadpool_claims)
    void *               owned_mem;                // from port_alloc (tern_threadpool_create) or NULL
};

namespace tern {

extern "C" tern_threadpool_params tern_threadpool_default_params(int32_t n_threads) {
    tern_threadpool_params p;
    p.n_threads = n_threads;
    p.spin_rounds = 1 << 14;
    p.pin_threads = 0;
    return p;
}

static int32_t effective_threads(int32_t n) { return TERN_WITH_THREADS ? n : 1; }

// The block: pool | workers | claims | threads | mutex | cond, each 64-byte aligned.
size_t tern_threadpool_mem_size(int32_t n_threads) {
    int32_t n = effective_threads(n_threads < 1 ? 1 : n_threads);
    size_t bytes = arena_padded(sizeof(tern_threadpool)) + arena_padded((size_t) n * sizeof(pool_worker)) +
                   arena_padded(2 * (size_t) n * sizeof(tern_claim_counter));
#if TERN_WITH_THREADS
    bytes += (size_t) n * arena_padded(port_thread_size()) + arena_padded(port_mutex_size()) + arena_padded(port_cond_size());
#endif
    return arena_buffer_size(bytes);
}

int32_t tern_threadpool_n_threads(const tern_threadpool * pool) { return pool ? pool->n_threads : 1; }

tern_claim_counter * tern_threadpool_claims(tern_threadpool * pool) { return pool->claims; }

#if TERN_WITH_THREADS

// Wait until `counter` differs from `seen`: spin, then sleep. Every 64 spins
// the thread yields, so that with more threads than free cores the worker
// being waited for gets to run instead of being starved by spinners.
static void wait_for_change(tern_threadpool * pool, const std::atomic<int32_t> & counter, int32_t seen) {
    for (int32_t r = 0; r < pool->spin_rounds; r++) {
        if (counter.load(std::memory_order_acquire) != seen) return;
        if ((r & 63) == 63) port_thread_yield();
        else port_cpu_relax();
    }
    port_mutex_lock(pool->mutex);
    pool->sleepers.fetch_add(1, std::memory_order_seq_cst);
    while (counter.load(std::memory_order_seq_cst) == seen) port_cond_wait(pool->cond, pool->mutex);
    pool->sleepers.fetch_sub(1, std::memory_order_seq_cst);
    port_mutex_unlock(pool->mutex);
}

static void bump(tern_threadpool * pool, std::atomic<int32_t> & counter) {
    counter.fetch_add(1, std::memory_order_seq_cst);
    if (pool->sleepers.load(std::memory_order_seq_cst) > 0) {
        port_mutex_lock(pool->mutex);
        port_cond_broadcast(pool->cond);
        port_mutex_unlock(pool->mutex);
    }
}

void tern_threadpool_barrier(tern_threadpool * pool) {
    if (!pool || pool->n_threads == 1) return;
    int32_t gen = pool->generation.load(std::memory_order_acquire);
    if (pool->arrived.fetch_add(1, std::memory_order_acq_rel) == pool->n_threads - 1) {
        pool->arrived.store(0, std::memory_order_relaxed);
        bump(pool, pool->generation);
    } else {
        wait_for_change(pool, pool->generation, gen);
    }
}

static void * worker_main(void * p) {
    pool_worker * w = (pool_worker *) p;
    tern_threadpool * pool = w->pool;
    int32_t seen = 0;
    for (;;) {
        wait_for_change(pool, pool->kickoffs, seen);
        seen = pool->kickoffs.load(std::memory_order_acquire);
        if (pool->stop.load(std::memory_order_acquire)) return NULL;
        // A worker woken from its sleep is often placed on the waker's CPU,
        // and the scheduler may leave it there: then every barrier is a
        // context switch (a 45 us stories260K token took 150-400 us). With no
        // more threads than CPUs, a worker that finds itself on the caller's
        // CPU moves to the others. Costs one sched_getcpu per job.
        if (pool->keep_apart) {
            const int32_t cpu = pool->caller_cpu.load(std::memory_order_relaxed);
            if (cpu >= 0 && port_current_cpu() == cpu) port_thread_keep_off_cpu(w->thread, cpu);
        }
        pool->fn(w->ith, pool->n_threads, pool->arg);
        tern_threadpool_barrier(pool);
    }
}

void tern_threadpool_run(tern_threadpool * pool, tern_threadpool_fn fn, void * arg) {
    if (!pool || pool->n_threads == 1) {
        fn(0, 1, arg);
        return;
    }
    pool->fn = fn;
    pool->arg = arg;
    if (pool->keep_apart) pool->caller_cpu.store(port_current_cpu(), std::memory_order_relaxed);
    bump(pool, pool->kickoffs);
    fn(0, pool->n_threads, arg);
    tern_threadpool_barrier(pool);
}

static void stop_workers(tern_threadpool * pool, int32_t n_started) {
    pool->stop.store(true, std::memory_order_release);
    bump(pool, pool->kickoffs);
    for (int32_t i = 1; i < n_started; i++) port_thread_join(pool->workers[i].thread);
    port_cond_destroy(pool->cond);
    port_mutex_destroy(pool->mutex);
}

#else  // single-threaded pool: same interface, no thread calls

void tern_threadpool_barrier(tern_threadpool * pool) { (void) pool; }
void tern_threadpool_run(tern_threadpool * pool, tern_threadpool_fn fn, void * arg) { (void) pool; fn(0, 1, arg); }

#endif

tern_status tern_threadpool_init_in(void * mem, const tern_threadpool_params * params, tern_threadpool ** out_pool) {
    if (!mem || !params || !out_pool) return tern_fail(TERN_ERR_INVALID_ARG, "threadpool: NULL argument");
    if (params->n_threads < 1 || params->n_threads > TERN_MAX_THREADS) {
        return tern_fail(TERN_ERR_INVALID_ARG, "threadpool: n_threads %" PRId32 " not in [1, %d]", params->n_threads, TERN_MAX_THREADS);
    }
    const int32_t n = effective_threads(params->n_threads);
    uint8_t * p = (uint8_t *) (((uintptr_t) mem + TERN_ARENA_ALIGN - 1) & ~(uintptr_t) (TERN_ARENA_ALIGN - 1));
    // Plain storage: every member is set below (std::atomic<int32_t> is trivially constructible).
    tern_threadpool * pool = (tern_threadpool *) p;
    p += arena_padded(sizeof(tern_threadpool));
    pool->arrived.store(0);
    pool->generation.store(0);
    pool->kickoffs.store(0);
    pool->sleepers.store(0);
    pool->stop.store(false);
    pool->in_use.store(0);
    pool->caller_cpu.store(-1);
    pool->n_threads = n;
    pool->keep_apart = false;
    pool->spin_rounds = params->spin_rounds < 0 ? 0 : params->spin_rounds;
    pool->fn = NULL;
    pool->arg = NULL;
    pool->owned_mem = NULL;
    pool->workers = (pool_worker *) p;
    p += arena_padded((size_t) n * sizeof(pool_worker));
    for (int32_t i = 0; i < n; i++) pool->workers[i] = pool_worker{ pool, i, NULL };
    pool->claims = (tern_claim_counter *) p;
    p += arena_padded(2 * (size_t) n * sizeof(tern_claim_counter));
    for (int32_t i = 0; i < 2 * n; i++) pool->claims[i].next.store(0);
    pool->mutex = NULL;
    pool->cond = NULL;
#if TERN_WITH_THREADS
    pool->mutex = (port_mutex *) p;
    p += arena_padded(port_mutex_size());
    pool->cond = (port_cond *) p;
    p += arena_padded(port_cond_size());
    port_mutex_init(pool->mutex);
    port_cond_init(pool->cond);
    // Asked only when there are threads to pin (it may read /sys on Linux).
    const int n_cpu = n > 1 && params->pin_threads ? port_cpu_count() : 1;
    pool->keep_apart = n > 1 && !params->pin_threads && n <= port_cpus_allowed();
    for (int32_t i = 1; i < n; i++) {
        pool->workers[i].thread = (port_thread *) p;
        p += arena_padded(port_thread_size());
        tern_status st = port_thread_start(pool->workers[i].thread, worker_main, &pool->workers[i]);
        if (st != TERN_OK) {
            stop_workers(pool, i);
            return st;
        }
        // Affinity is a hint: a failure (restricted cpuset) leaves the thread unpinned.
        if (params->pin_threads) port_thread_pin(pool->workers[i].thread, i % n_cpu);
    }
#endif
    *out_pool = pool;
    return TERN_OK;
}

extern "C" tern_status tern_threadpool_create(const tern_threadpool_params * params, tern_threadpool ** out_pool) {
    if (!params || !out_pool) return tern_fail(TERN_ERR_INVALID_ARG, "threadpool: NULL argument");
    if (params->n_threads < 1 || params->n_threads > TERN_MAX_THREADS) {
        return tern_fail(TERN_ERR_INVALID_ARG, "threadpool: n_threads %" PRId32 " not in [1, %d]", params->n_threads, TERN_MAX_THREADS);
    }
    void * mem = port_alloc(tern_threadpool_mem_size(params->n_threads));
    if (!mem) return tern_fail(TERN_ERR_NO_MEMORY, "threadpool: cannot obtain %zu bytes", tern_threadpool_mem_size(params->n_threads));
    tern_status st = tern_threadpool_init_in(mem, params, out_pool);
    if (st != TERN_OK) {
        port_free(mem);
        return st;
    }
    (*out_pool)->owned_mem = mem;
    return TERN_OK;
}

bool tern_threadpool_acquire(tern_threadpool * pool) {
    int32_t expected = 0;
    return pool->in_use.compare_exchange_strong(expected, 1, std::memory_order_acquire);
}

void tern_threadpool_release(tern_threadpool * pool) { pool->in_use.store(0, std::memory_order_release); }

extern "C" void tern_threadpool_free(tern_threadpool * pool) {
    if (!pool) return;
#if TERN_WITH_THREADS
    stop_workers(pool, pool->n_threads);
#endif
    if (pool->owned_mem) port_free(pool->owned_mem);
}

}  // namespace tern
