// Persistent CPU thread pool, behind the public tern_threadpool_*.
//
// n_threads - 1 workers are created once; the calling thread is worker 0.
// Two kinds of job:
//
// Step jobs (tern_threadpool_run_steps: the graph executor's). A job is a
// sequence of steps, each a number of items (work_claim.h); every worker that
// is running claims items, and a step is over when its items are done, not
// when every worker arrived. The caller returns once the job's last step is
// done. So a worker the OS did not schedule does not hold the others: its
// home range is taken by them, and when it runs again it finds the steps it
// missed over and catches up at a few loads each. Three more rules keep a
// busy neighbour (another process on the same cores) from collapsing decode:
//   - waiting is bounded in time, not only in rounds: a waiter spins ~20 us,
//     then yields its core every round (the worker it waits for may be on
//     this core), and sleeps on the pool's condition variable after ~2 ms;
//   - a worker found inside one item for 300 us while others wait for it
//     is probed: if over the next 300 us it gets under a quarter of that as
//     CPU time (port_thread_cpu_us), it is not running, and it is benched: it
//     sleeps through the next jobs (8, then 16, ... up to 256 while it keeps
//     being late; halved again each job it completes in time), so the pool
//     shrinks to the workers that are running and grows back. A worker busy
//     with a long item (a prompt chunk on a slow core) is waited for;
//   - a late worker never touches a job that is over: it reads the job's
//     graph only inside a window (announced, then checked against the job in
//     progress) or while it holds an unfinished item, and the caller, before
//     returning, waits for the open windows to close (they last microseconds).
// The items of a step are computed the same way whoever computes them:
// results do not depend on which workers ran.
//
// Classic jobs (tern_threadpool_run: tests, tern-make-model): every worker
// calls fn(ith, nth, arg) once and run returns when all have returned; inside
// fn, tern_threadpool_barrier() meets the other workers (two atomics on
// separate cache lines, arrivals and a generation bumped by the last).
//
// One job at a time: a pool runs one job at a time; contexts sharing a pool
// must serialize their decodes. tern_decode takes the pool with
// tern_threadpool_acquire (an atomic flag) for the whole batch, so a second
// decode on the same pool is refused with TERN_ERR_BUSY, never run. With
// TERN_WITH_THREADS == 0 a pool always has one thread and makes no thread calls.
//
// Memory: state, workers, step sets and their claim words, thread handles,
// mutex and condition variable are one block of tern_threadpool_mem_size()
// bytes (any alignment).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "cpu/work_claim.h"

namespace tern {

typedef void (*tern_threadpool_fn)(int32_t ith, int32_t nth, void * arg);

// A step job's callbacks. `job` is the caller's; it is only read by a worker
// inside a window or while it holds an item (see above).
struct tern_step_ops {
    // The step after (prev_node, prev_phase) (-1, 0 at the start): false at
    // the job's end, else its node, phase and number of items (1 .. STEP_MAX_ITEMS - 1).
    bool (*next)(const void * job, int32_t prev_node, int32_t prev_phase, int32_t * node, int32_t * phase, int64_t * n_items);
    // Compute one item. first: the worker's first item of this step.
    void (*run_item)(const void * job, int32_t ith, int32_t nth, int32_t node, int32_t phase, int64_t item, int64_t n_items,
                     bool first);
    // Asked by the caller after each step (node, phase): true stops the job
    // (no step is left half done; one already set up still runs). NULL: never.
    bool (*abort)(const void * job, int32_t node, int32_t phase);
};

size_t      tern_threadpool_mem_size(int32_t n_threads);
// Build a pool inside `mem` (tern_threadpool_mem_size(params->n_threads) bytes);
// release it with tern_threadpool_free(), which then frees no memory.
tern_status tern_threadpool_init_in(void * mem, const tern_threadpool_params * params, tern_threadpool ** out_pool);
// A step job (pool NULL: the calling thread alone). Returns false when abort stopped it.
bool        tern_threadpool_run_steps(tern_threadpool * pool, const tern_step_ops * ops, const void * job);
// A classic job.
void        tern_threadpool_run(tern_threadpool * pool, tern_threadpool_fn fn, void * arg);
// Exclusive use of the pool: true when the caller got it (release it after).
bool        tern_threadpool_acquire(tern_threadpool * pool);
void        tern_threadpool_release(tern_threadpool * pool);
// Only from inside a classic job's fn, by every worker.
void        tern_threadpool_barrier(tern_threadpool * pool);
int32_t     tern_threadpool_n_threads(const tern_threadpool * pool);

// Workers benched so far, and the steps jobs run (tests and diagnostics).
struct tern_threadpool_stats {
    uint64_t jobs;
    uint64_t benched;        // times a worker was benched
    uint64_t worker_jobs;    // jobs workers (not the caller) took part in
};
// tern_threadpool_params.min_step_bytes (0 without a pool).
size_t      tern_threadpool_min_step_bytes(const tern_threadpool * pool);
void        tern_threadpool_get_stats(const tern_threadpool * pool, tern_threadpool_stats * out);

}  // namespace tern
