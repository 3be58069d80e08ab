// Persistent CPU thread pool (fork-join), behind the public tern_threadpool_*.
//
// n_threads - 1 workers are created once; the calling thread is worker 0.
// tern_threadpool_run(pool, fn, arg) is one kick-off: every worker calls
// fn(ith, nth, arg) once, and run returns when all have returned. Inside fn,
// tern_threadpool_barrier() meets the other workers (the graph executor walks
// the nodes and meets at a barrier after each one).
//
// Barrier: two atomics on separate cache lines, `arrived` (count of workers
// at the barrier) and `generation` (bumped by the last one to arrive, which
// first resets `arrived`). Waiters spin on `generation` for spin_rounds rounds
// of port_cpu_relax(), then sleep on the pool's condition variable; whoever
// bumps a generation broadcasts when some worker sleeps. Kick-offs use the same
// wait on a third counter, so idle workers sleep between graphs. The arrival
// RMWs (acq_rel) and the seq_cst bump make every write before a barrier visible
// after it; `sleepers` is incremented (seq_cst) before a sleeper re-checks the
// counter, so a bump either is seen by the sleeper or sees the sleeper.
//
// One job at a time: a pool runs one graph (one tern_threadpool_run) at a time;
// contexts sharing a pool must serialize their decodes. tern_decode takes the
// pool with tern_threadpool_acquire (an atomic flag) for the whole batch, so a
// second decode on the same pool is refused with TERN_ERR_BUSY, never run. With TERN_WITH_THREADS
// == 0 a pool always has one thread and makes no thread calls.
//
// Work claiming (work_claim.h): the pool holds two sets of n_threads claim
// counters, one per computing node in turn (the graph executor's), so that
// node k + 1's set is reset while node k runs.
//
// Memory: state, workers, claim counters, thread handles, mutex and condition
// variable are one block of tern_threadpool_mem_size() bytes (any alignment).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "cpu/work_claim.h"

namespace tern {

typedef void (*tern_threadpool_fn)(int32_t ith, int32_t nth, void * arg);

size_t      tern_threadpool_mem_size(int32_t n_threads);
// Build a pool inside `mem` (tern_threadpool_mem_size(params->n_threads) bytes);
// release it with tern_threadpool_free(), which then frees no memory.
tern_status tern_threadpool_init_in(void * mem, const tern_threadpool_params * params, tern_threadpool ** out_pool);
void        tern_threadpool_run(tern_threadpool * pool, tern_threadpool_fn fn, void * arg);
// Exclusive use of the pool: true when the caller got it (release it after).
bool        tern_threadpool_acquire(tern_threadpool * pool);
void        tern_threadpool_release(tern_threadpool * pool);
// Only from inside a running fn, by every worker.
void        tern_threadpool_barrier(tern_threadpool * pool);
int32_t     tern_threadpool_n_threads(const tern_threadpool * pool);
// The pool's claim counters, [2][n_threads], zero when the pool is made.
tern_claim_counter * tern_threadpool_claims(tern_threadpool * pool);

}  // namespace tern
