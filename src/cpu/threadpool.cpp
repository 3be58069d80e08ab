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

// A worker inside one item this long is probed: if it then gets under a
// quarter of the next BENCH_US as CPU time, it was descheduled there: benched.
const int64_t BENCH_US = 300;
const int32_t BACKOFF_MIN = 4, BACKOFF_MAX = 256;
// A bench lasts its backoff in jobs, and at most its backoff in milliseconds:
// a prompt's job is long, and a worker descheduled once (the host took its
// CPU for a moment) must not sit out the next 8 prompts.
const int64_t BENCH_JOB_CAP_US = 1000;
// Waiting: spin, then yield every round, then sleep.
const int64_t SPIN_US = 20;
const int64_t SLEEP_US = 2000;

enum { JOB_CLASSIC = 0, JOB_STEPS = 1 };

struct pool_worker {
    tern_threadpool * pool;
    int32_t           ith;
    port_thread *     thread;
    alignas(64) pool_atomic<uint64_t> window;     // the job id while inside a window, 0 outside
    pool_atomic<uint32_t> item_seq;               // odd while computing an item
    pool_atomic<uint64_t> benched_until;          // sits out step jobs with smaller ids
    pool_atomic<int64_t>  bench_end_us;           // ... or until this time (port_time_us)
    pool_atomic<int32_t>  backoff;                // jobs the next bench lasts
};

} // namespace

}  // namespace tern

// The public type (tern.h) is global; its members are Tern's own types.
using namespace tern;
struct tern_threadpool {
    alignas(64) pool_atomic<int32_t> arrived;      // classic: workers at the current barrier
    alignas(64) pool_atomic<int32_t> generation;   // classic: barrier phase, bumped by the last arrival
    alignas(64) pool_atomic<int32_t> kickoffs;     // jobs started
    pool_atomic<int32_t> sleepers;                 // workers sleeping on cond (kick-offs, barriers, steps)
    pool_atomic<int32_t> bench_sleepers;           // benched workers sleeping on cond until their bench ends
    pool_atomic<uint64_t> last_job;                // the id of the last step job started
    pool_atomic<bool>    stop;
    pool_atomic<int32_t> in_use;                   // 1 while a decode owns the pool (tern_threadpool_acquire)
    alignas(64) pool_atomic<int32_t> caller_cpu;   // CPU of the thread that started the current job, or -1
    pool_atomic<int32_t> job_kind;
    pool_atomic<int32_t> classic_kick;             // the kick-off count that starts the classic job in job_kind
    // The step job being published, under a sequence lock (odd while written).
    alignas(64) pool_atomic<uint32_t> snap_seq;
    pool_atomic<const tern_step_ops *> snap_ops;
    pool_atomic<const void *> snap_job;
    pool_atomic<uint64_t> snap_id;
    pool_atomic<uint64_t> snap_base;
    alignas(64) pool_atomic<uint64_t> active_job;  // the step job in progress (0: none)
    pool_atomic<uint64_t> abort_job;               // the job that stops after its current step
    pool_atomic<uint64_t> abort_checked;           // the last step the caller asked abort() about
    uint64_t             next_base;                // first step tag of the next job
    uint64_t             n_jobs;
    pool_atomic<uint64_t> n_benched;
    pool_atomic<uint64_t> n_worker_jobs;
    int32_t              n_threads;
    bool                 keep_apart;               // workers leave the caller's CPU (see worker_main)
    int32_t              spin_rounds;
    size_t               min_step_bytes;
    tern_threadpool_fn   fn;                       // the classic job; written before a kick-off
    void *               arg;
    port_mutex *         mutex;
    port_cond *          cond;
    pool_worker *        workers;                  // [n_threads]; [0] is the caller
    tern_step_set        sets[STEP_RING];
    void *               owned_mem;                // from port_alloc (tern_threadpool_create) or NULL
};

namespace tern {

extern "C" tern_threadpool_params tern_threadpool_default_params(int32_t n_threads) {
    tern_threadpool_params p;
    p.n_threads = n_threads;
    p.spin_rounds = 1 << 14;
    p.pin_threads = 0;
    p.min_step_bytes = 64 * 1024;
    return p;
}

static int32_t effective_threads(int32_t n) { return TERN_WITH_THREADS ? n : 1; }

// The block: pool | workers | claim words | threads | mutex | cond, each 64-byte aligned.
size_t tern_threadpool_mem_size(int32_t n_threads) {
    int32_t n = effective_threads(n_threads < 1 ? 1 : n_threads);
    size_t bytes = arena_padded(sizeof(tern_threadpool)) + arena_padded((size_t) n * sizeof(pool_worker)) +
                   arena_padded((size_t) STEP_RING * (size_t) n * sizeof(tern_claim_word));
#if TERN_WITH_THREADS
    bytes += (size_t) n * arena_padded(port_thread_size()) + arena_padded(port_mutex_size()) + arena_padded(port_cond_size());
#endif
    return arena_buffer_size(bytes);
}

int32_t tern_threadpool_n_threads(const tern_threadpool * pool) { return pool ? pool->n_threads : 1; }
size_t tern_threadpool_min_step_bytes(const tern_threadpool * pool) { return pool ? pool->min_step_bytes : 0; }

void tern_threadpool_get_stats(const tern_threadpool * pool, tern_threadpool_stats * out) {
    memset(out, 0, sizeof(*out));
    if (!pool) return;
    out->jobs = pool->n_jobs;
    out->benched = pool->n_benched.load();
    out->worker_jobs = pool->n_worker_jobs.load();
}

// ---- waiting -----------------------------------------------------------------

#if TERN_WITH_THREADS

static void wake_sleepers(tern_threadpool * pool) {
    if (pool->sleepers.load(std::memory_order_seq_cst) > 0) {
        port_mutex_lock(pool->mutex);
        port_cond_broadcast(pool->cond);
        port_mutex_unlock(pool->mutex);
    }
}

// Wait until `counter` differs from `seen`: spin (spin_rounds, at most
// SLEEP_US), yielding every 64 rounds so that with more threads than free
// cores the one waited for gets to run; then sleep.
static void wait_for_change(tern_threadpool * pool, const pool_atomic<int32_t> & counter, int32_t seen) {
    const int64_t t0 = port_time_us();
    for (int32_t r = 0; r < pool->spin_rounds; r++) {
        if (counter.load(std::memory_order_acquire) != seen) return;
        if ((r & 63) == 63) {
            port_thread_yield();
            if (port_time_us() - t0 > SLEEP_US) break;
        } else {
            port_cpu_relax();
        }
    }
    port_mutex_lock(pool->mutex);
    pool->sleepers.fetch_add(1, std::memory_order_seq_cst);
    while (counter.load(std::memory_order_seq_cst) == seen) port_cond_wait(pool->cond, pool->mutex);
    pool->sleepers.fetch_sub(1, std::memory_order_seq_cst);
    port_mutex_unlock(pool->mutex);
}

static void bump(tern_threadpool * pool, pool_atomic<int32_t> & counter) {
    counter.fetch_add(1, std::memory_order_seq_cst);
    wake_sleepers(pool);
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

#else

void tern_threadpool_barrier(tern_threadpool * pool) { (void) pool; }

#endif

// ---- step jobs -------------------------------------------------------------------

namespace {

struct step_runner {
    tern_threadpool *     pool;
    const tern_step_ops * ops;
    const void *          job;
    uint64_t              id;
    uint64_t              base;
    int32_t               ith;
    int32_t               nth;
    pool_worker *         self;       // NULL for the caller

    // Announce reading the job, then check it is still the one in progress
    // (a Dekker handshake with the caller's end: one of the two sees the other).
    bool open_window() {
        if (!self) return true;
        self->window.store(id, std::memory_order_seq_cst);
        if (pool->active_job.load(std::memory_order_seq_cst) == id) return true;
        self->window.store(0, std::memory_order_release);
        return false;
    }
    void close_window() {
        if (self) self->window.store(0, std::memory_order_release);
    }

    // The set of step s, set up. false: a late worker of a job that is over.
    // *past: the step is over (the set holds a newer step).
    bool arrive(uint64_t s, bool * past) {
        tern_step_set * set = &pool->sets[s % STEP_RING];
        *past = false;
        for (;;) {
            uint64_t t = set->init.load(std::memory_order_acquire);
            const uint64_t tag = t >> 1;
            if (tag > s) {
                *past = true;
                return true;
            }
            if (tag == s) {
                if (t & 1) {
                    port_cpu_relax();  // being set up by another worker: microseconds
                    continue;
                }
                // Another job's step: this worker's job is over (its tags ran out).
                return set->job.load(std::memory_order_relaxed) == id;
            }
            // With an abort callback, the step after s - 1 is set up only once the
            // caller has asked it about s - 1: an abort stops the job exactly there.
            if (ops->abort && s > base && pool->abort_checked.load(std::memory_order_acquire) < s - 1) {
                if (pool->active_job.load(std::memory_order_acquire) != id) return false;
                port_thread_yield();  // the caller is finishing its wait and its question
                continue;
            }
            if (!open_window()) return false;
            if (!set->init.compare_exchange_strong(t, (s << 1) | 1, std::memory_order_acq_rel)) {
                close_window();
                continue;
            }
            // Busy before any field changes (the sequence lock's writer side).
            std::atomic_thread_fence(std::memory_order_release);
            int32_t prev_node = -1, prev_phase = 0;
            if (s > base) {
                const tern_step_set * ps = &pool->sets[(s - 1) % STEP_RING];
                prev_node = ps->node.load(std::memory_order_relaxed);
                prev_phase = ps->phase.load(std::memory_order_relaxed);
            }
            int32_t node = -1, phase = 0;
            int64_t n = 0;
            const bool more = pool->abort_job.load(std::memory_order_acquire) != id &&
                              ops->next(job, prev_node, prev_phase, &node, &phase, &n);
            if (!more) {
                node = -1;
                n = 0;
            }
            set->node.store(node, std::memory_order_relaxed);
            set->phase.store(phase, std::memory_order_relaxed);
            set->job.store(id, std::memory_order_relaxed);
            set->n_items.store(n, std::memory_order_relaxed);
            set->init.store(s << 1, std::memory_order_release);
            close_window();
            return true;
        }
    }

    // Wait for step s's n items to be done (or the set to move on).
    static bool step_over(uint64_t d, uint64_t s, int64_t n) { return step_tag(d) > s || step_done_count(d, s) >= n; }

    void wait_done(tern_step_set * set, uint64_t s, int64_t n) {
        uint64_t d = set->done.load(std::memory_order_acquire);
        if (step_over(d, s, n)) return;
#if TERN_WITH_THREADS
        // Who is late: a worker in the same item (item_seq odd and unchanged)
        // for BENCH_US of this wait is asked how much CPU time it got over
        // the next BENCH_US: under a quarter of it, it is not running (another
        // process has its core) and is benched; more, it is computing a long
        // item (a prompt's chunk on a slow core) and is waited for. Where a
        // thread's CPU time is unknown, the time in the item alone decides.
        uint32_t seen[TERN_MAX_THREADS];
        int64_t  since[TERN_MAX_THREADS];     // wall time item_seq was first seen at `seen`
        int64_t  cpu_at[TERN_MAX_THREADS];    // the worker's CPU time at wall time probe_at (-1: no probe, -2: judged)
        int64_t  probe_at[TERN_MAX_THREADS];
        // The workers' item_seq lines are first read after SPIN_US: a short wait
        // (most of decode's) moves no line but done's.
        const int64_t t0 = port_time_us();
        bool watching = false;
        for (uint32_t r = 1;; r++) {
            d = set->done.load(std::memory_order_acquire);
            if (step_over(d, s, n)) return;
            if (r & 15) {
                port_cpu_relax();
                continue;
            }
            const int64_t now_us = port_time_us();
            const int64_t waited = now_us - t0;
            if (waited <= SPIN_US) continue;
            port_thread_yield();
            if (!watching) {
                for (int32_t w = 1; w < nth; w++) {
                    seen[w] = pool->workers[w].item_seq.load(std::memory_order_relaxed);
                    since[w] = now_us;
                    cpu_at[w] = -1;
                }
                watching = true;
                continue;   // the next round times them (no sleep before it)
            }
            bool probing = false;   // a verdict pending: do not sleep before it
            for (int32_t w = 1; w < nth; w++) {
                pool_worker * pw = &pool->workers[w];
                const uint32_t now = pw->item_seq.load(std::memory_order_relaxed);
                if (now != seen[w]) {
                    seen[w] = now;
                    since[w] = now_us;
                    cpu_at[w] = -1;
                    if ((now & 1) && pw->benched_until.load(std::memory_order_relaxed) <= id) probing = true;
                    continue;
                }
                if (!(now & 1) || pw->benched_until.load(std::memory_order_relaxed) > id) continue;
                if (now_us - since[w] <= BENCH_US) {
                    // In an item, not yet timed out: no sleep before its verdict (a
                    // waiter descheduled past SLEEP_US would otherwise never judge it).
                    if (cpu_at[w] != -2) probing = true;
                    continue;
                }
                bool late = true;
                const int64_t cpu = port_thread_cpu_us(pw->thread);
                if (cpu >= 0) {
                    if (cpu_at[w] == -2) continue;   // judged running: a long item
                    if (cpu_at[w] < 0) {
                        cpu_at[w] = cpu;
                        probe_at[w] = now_us;
                        probing = true;
                        continue;
                    }
                    if (now_us - probe_at[w] <= BENCH_US) {
                        probing = true;
                        continue;
                    }
                    late = (cpu - cpu_at[w]) * 4 < now_us - probe_at[w];
                    cpu_at[w] = -2;
                }
                if (late) {
                    const int32_t b = pw->backoff.load(std::memory_order_relaxed);
                    const int32_t nb = b < BACKOFF_MIN ? BACKOFF_MIN : (b * 2 > BACKOFF_MAX ? BACKOFF_MAX : b * 2);
                    pw->backoff.store(nb, std::memory_order_relaxed);
                    pw->bench_end_us.store(now_us + (int64_t) nb * BENCH_JOB_CAP_US, std::memory_order_relaxed);
                    pw->benched_until.store(id + (uint64_t) nb, std::memory_order_relaxed);
                    pool->n_benched.fetch_add(1, std::memory_order_relaxed);
                }
            }
            if (waited > SLEEP_US && !probing) {
                port_mutex_lock(pool->mutex);
                pool->sleepers.fetch_add(1, std::memory_order_seq_cst);
                for (;;) {
                    d = set->done.load(std::memory_order_seq_cst);
                    if (step_over(d, s, n)) break;
                    port_cond_wait(pool->cond, pool->mutex);
                }
                pool->sleepers.fetch_sub(1, std::memory_order_seq_cst);
                port_mutex_unlock(pool->mutex);
                return;
            }
        }
#endif
    }

    // Walk the job's steps. Returns false when the job was aborted (caller).
    bool run() {
        for (uint64_t s = base;; s++) {
            bool past = false;
            if (!arrive(s, &past)) return true;  // a late worker: the job is over
            if (past) continue;
            tern_step_set * set = &pool->sets[s % STEP_RING];
            const int32_t node = set->node.load(std::memory_order_relaxed);
            const int32_t phase = set->phase.load(std::memory_order_relaxed);
            const int64_t n = set->n_items.load(std::memory_order_relaxed);
            // The sequence lock's reader side: a worker descheduled since arrive
            // may have read a later step's fields; then step s is over.
            std::atomic_thread_fence(std::memory_order_acquire);
            if (set->init.load(std::memory_order_relaxed) != s << 1) continue;
            if (node < 0) return pool->abort_job.load(std::memory_order_acquire) != id;  // the job's end
            // The items this worker computes are counted into done once, after its
            // last claim (one contended add per worker and step, not per item);
            // until then item_seq is odd, so a waiter sees it busy and, if it is
            // descheduled there, benches it. A claimed, uncounted item holds the
            // step, hence the job: its memory stays.
            tern_claim_cursor cur = { 0 };
            int64_t item, mine = 0;
            while (tern_claim_next(set->claim, s, ith, nth, n, &cur, &item)) {
                if (self && mine == 0) self->item_seq.fetch_add(1, std::memory_order_relaxed);
                ops->run_item(job, ith, nth, node, phase, item, n, mine == 0);
                mine++;
            }
            if (mine > 0) {
                // An older tag counts 0 (done is not reset at set-up); the step
                // cannot be over while this worker's items are uncounted.
                uint64_t d = set->done.load(std::memory_order_relaxed), nd;
                do nd = step_word(s, (uint64_t) (step_done_count(d, s) + mine));
                while (!set->done.compare_exchange_weak(d, nd, std::memory_order_seq_cst, std::memory_order_relaxed));
                d = nd;
                if (self) self->item_seq.fetch_add(1, std::memory_order_relaxed);
#if TERN_WITH_THREADS
                if ((int64_t) step_count(d) == n) wake_sleepers(pool);
#else
                (void) d;
#endif
            }
            wait_done(set, s, n);
            if (!self && ops->abort) {
                if (ops->abort(job, node, phase)) pool->abort_job.store(id, std::memory_order_release);
                pool->abort_checked.store(s, std::memory_order_release);
            }
        }
    }
};

}  // namespace

bool tern_threadpool_run_steps(tern_threadpool * pool, const tern_step_ops * ops, const void * job) {
    if (!pool || pool->n_threads == 1) {
        // One thread: the steps in order, no sets.
        int32_t node = -1, phase = 0;
        int64_t n = 0;
        while (ops->next(job, node, phase, &node, &phase, &n)) {
            for (int64_t i = 0; i < n; i++) ops->run_item(job, 0, 1, node, phase, i, n, i == 0);
            if (ops->abort && ops->abort(job, node, phase)) return false;
        }
        return true;
    }
#if TERN_WITH_THREADS
    const uint64_t id = ++pool->n_jobs;
    const uint64_t base = pool->next_base;
    // Publish the job (a sequence lock: a late worker reads a whole job or retries).
    pool->snap_seq.fetch_add(1, std::memory_order_acq_rel);
    pool->snap_ops.store(ops, std::memory_order_relaxed);
    pool->snap_job.store(job, std::memory_order_relaxed);
    pool->snap_id.store(id, std::memory_order_relaxed);
    pool->snap_base.store(base, std::memory_order_relaxed);
    pool->snap_seq.fetch_add(1, std::memory_order_release);
    pool->job_kind.store(JOB_STEPS, std::memory_order_relaxed);
    pool->active_job.store(id, std::memory_order_seq_cst);
    pool->last_job.store(id, std::memory_order_seq_cst);
    // Benches that ran out of time end with this job.
    int64_t now_us = -1;
    for (int32_t w = 1; w < pool->n_threads; w++) {
        pool_worker * pw = &pool->workers[w];
        if (pw->benched_until.load(std::memory_order_relaxed) <= id) continue;
        if (now_us < 0) now_us = port_time_us();
        if (now_us >= pw->bench_end_us.load(std::memory_order_relaxed)) pw->benched_until.store(id, std::memory_order_relaxed);
    }
    if (pool->bench_sleepers.load(std::memory_order_seq_cst) > 0) {
        // Wake the benched workers whose bench ends with this job.
        bool wake = false;
        for (int32_t w = 1; w < pool->n_threads; w++) wake |= pool->workers[w].benched_until.load(std::memory_order_relaxed) == id;
        if (wake) {
            port_mutex_lock(pool->mutex);
            port_cond_broadcast(pool->cond);
            port_mutex_unlock(pool->mutex);
        }
    }
    if (pool->keep_apart) pool->caller_cpu.store(port_current_cpu(), std::memory_order_relaxed);
    bump(pool, pool->kickoffs);
    step_runner r = { pool, ops, job, id, base, 0, pool->n_threads, NULL };
    const bool done = r.run();
    // The end: no worker may read this job once the caller returns. Close the
    // job, then wait for the windows still open on it (microseconds).
    pool->active_job.store(0, std::memory_order_seq_cst);
    for (int32_t w = 1; w < pool->n_threads; w++) {
        while (pool->workers[w].window.load(std::memory_order_seq_cst) == id) port_thread_yield();
    }
    // The last step's tag: the next job starts past every tag this one used.
    uint64_t last = base;
    for (int32_t k = 0; k < STEP_RING; k++) {
        const uint64_t t = pool->sets[k].init.load(std::memory_order_relaxed) >> 1;
        if (t > last) last = t;
    }
    pool->next_base = last + 1;
    return done;
#else
    return true;
#endif
}

#if TERN_WITH_THREADS

static void run_step_job(pool_worker * w, tern_threadpool * pool) {
    const tern_step_ops * ops;
    const void * job;
    uint64_t id, base;
    for (;;) {
        const uint32_t s0 = pool->snap_seq.load(std::memory_order_acquire);
        if (s0 & 1) {
            port_cpu_relax();
            continue;
        }
        ops = pool->snap_ops.load(std::memory_order_relaxed);
        job = pool->snap_job.load(std::memory_order_relaxed);
        id = pool->snap_id.load(std::memory_order_relaxed);
        base = pool->snap_base.load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (pool->snap_seq.load(std::memory_order_relaxed) == s0) break;
    }
    if (pool->active_job.load(std::memory_order_acquire) != id) return;  // over already
    if (w->benched_until.load(std::memory_order_relaxed) > id) {
        // Sitting out: asleep, not spinning, so the CPU goes to the threads that
        // run (this one was found descheduled: there are more of them than CPUs).
        port_mutex_lock(pool->mutex);
        pool->bench_sleepers.fetch_add(1, std::memory_order_seq_cst);
        while (!pool->stop.load(std::memory_order_seq_cst) && pool->job_kind.load(std::memory_order_seq_cst) == JOB_STEPS &&
               pool->last_job.load(std::memory_order_seq_cst) < w->benched_until.load(std::memory_order_relaxed)) {
            port_cond_wait(pool->cond, pool->mutex);
        }
        pool->bench_sleepers.fetch_sub(1, std::memory_order_seq_cst);
        port_mutex_unlock(pool->mutex);
        return;  // the job in progress now (if any) is joined from worker_main's next kick-off check
    }
    pool->n_worker_jobs.fetch_add(1, std::memory_order_relaxed);
    const uint64_t benched_before = w->benched_until.load(std::memory_order_relaxed);
    step_runner r = { pool, ops, job, id, base, w->ith, pool->n_threads, w };
    r.run();
    // A job done in time: the next bench is shorter again.
    const int32_t b = w->backoff.load(std::memory_order_relaxed);
    if (w->benched_until.load(std::memory_order_relaxed) == benched_before && b > BACKOFF_MIN) w->backoff.store(b / 2, std::memory_order_relaxed);
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
        // and the scheduler may leave it there: then every wait is a context
        // switch (a 45 us stories260K token took 150-400 us). With no more
        // threads than CPUs, a worker that finds itself on the caller's CPU
        // moves to the others. Costs one sched_getcpu per job.
        if (pool->keep_apart) {
            const int32_t cpu = pool->caller_cpu.load(std::memory_order_relaxed);
            if (cpu >= 0 && port_current_cpu() == cpu) port_thread_keep_off_cpu(w->thread, cpu);
        }
        if (pool->job_kind.load(std::memory_order_relaxed) == JOB_STEPS) {
            run_step_job(w, pool);
            continue;
        }
        // A worker that skipped step jobs may see the counter move for one of
        // them while a classic job is being published: it waits for that job's own kick-off.
        if (pool->classic_kick.load(std::memory_order_acquire) != seen) continue;
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
    pool->classic_kick.store(pool->kickoffs.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    pool->job_kind.store(JOB_CLASSIC, std::memory_order_seq_cst);
    if (pool->keep_apart) pool->caller_cpu.store(port_current_cpu(), std::memory_order_relaxed);
    if (pool->bench_sleepers.load(std::memory_order_seq_cst) > 0) {
        // A classic job needs every worker: the benched ones too.
        port_mutex_lock(pool->mutex);
        port_cond_broadcast(pool->cond);
        port_mutex_unlock(pool->mutex);
    }
    bump(pool, pool->kickoffs);
    fn(0, pool->n_threads, arg);
    tern_threadpool_barrier(pool);
}

static void stop_workers(tern_threadpool * pool, int32_t n_started) {
    pool->stop.store(true, std::memory_order_seq_cst);
    pool->kickoffs.fetch_add(1, std::memory_order_seq_cst);
    port_mutex_lock(pool->mutex);
    port_cond_broadcast(pool->cond);   // sleepers on kick-offs and benched ones alike
    port_mutex_unlock(pool->mutex);
    for (int32_t i = 1; i < n_started; i++) port_thread_join(pool->workers[i].thread);
    port_cond_destroy(pool->cond);
    port_mutex_destroy(pool->mutex);
}

#else  // single-threaded pool: same interface, no thread calls

void tern_threadpool_run(tern_threadpool * pool, tern_threadpool_fn fn, void * arg) { (void) pool; fn(0, 1, arg); }

#endif

tern_status tern_threadpool_init_in(void * mem, const tern_threadpool_params * params, tern_threadpool ** out_pool) {
    if (!mem || !params || !out_pool) return tern_fail(TERN_ERR_INVALID_ARG, "threadpool: NULL argument");
    if (params->n_threads < 1 || params->n_threads > TERN_MAX_THREADS) {
        return tern_fail(TERN_ERR_INVALID_ARG, "threadpool: n_threads %" PRId32 " not in [1, %d]", params->n_threads, TERN_MAX_THREADS);
    }
    const int32_t n = effective_threads(params->n_threads);
    uint8_t * p = (uint8_t *) (((uintptr_t) mem + TERN_ARENA_ALIGN - 1) & ~(uintptr_t) (TERN_ARENA_ALIGN - 1));
    // Plain storage: every member is set below (the atomics are trivially constructible).
    tern_threadpool * pool = (tern_threadpool *) p;
    memset((void *) pool, 0, sizeof(*pool));
    p += arena_padded(sizeof(tern_threadpool));
    pool->arrived.store(0);
    pool->generation.store(0);
    pool->kickoffs.store(0);
    pool->sleepers.store(0);
    pool->bench_sleepers.store(0);
    pool->last_job.store(0);
    pool->stop.store(false);
    pool->in_use.store(0);
    pool->caller_cpu.store(-1);
    pool->job_kind.store(JOB_CLASSIC);
    pool->classic_kick.store(-1);
    pool->snap_seq.store(0);
    pool->active_job.store(0);
    pool->abort_job.store(0);
    pool->abort_checked.store(0);
    pool->n_benched.store(0);
    pool->n_worker_jobs.store(0);
    pool->next_base = 1;
    pool->n_jobs = 0;
    pool->n_threads = n;
    pool->keep_apart = false;
    pool->spin_rounds = params->spin_rounds < 0 ? 0 : params->spin_rounds;
    pool->min_step_bytes = params->min_step_bytes;
    pool->fn = NULL;
    pool->arg = NULL;
    pool->owned_mem = NULL;
    pool->workers = (pool_worker *) p;
    p += arena_padded((size_t) n * sizeof(pool_worker));
    for (int32_t i = 0; i < n; i++) {
        pool_worker * w = &pool->workers[i];
        memset((void *) w, 0, sizeof(*w));
        w->pool = pool;
        w->ith = i;
        w->window.store(0);
        w->item_seq.store(0);
        w->benched_until.store(0);
        w->bench_end_us.store(0);
        w->backoff.store(BACKOFF_MIN);
    }
    for (int32_t k = 0; k < STEP_RING; k++) {
        tern_step_set * set = &pool->sets[k];
        set->init.store(0);
        set->n_items.store(0);
        set->node.store(-1);
        set->phase.store(0);
        set->job.store(0);
        set->done.store(0);
        set->claim = (tern_claim_word *) p;
        p += (size_t) n * sizeof(tern_claim_word);
        for (int32_t i = 0; i < n; i++) set->claim[i].v.store(0);
    }
    p = (uint8_t *) (((uintptr_t) p + TERN_ARENA_ALIGN - 1) & ~(uintptr_t) (TERN_ARENA_ALIGN - 1));
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
