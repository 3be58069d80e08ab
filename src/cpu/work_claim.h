// Steps and items: how the workers of the pool share a graph so that
// progress depends on the work being done, not on every worker arriving.
//
// A graph run is a sequence of steps, one per phase of each computing node
// (mul_mat with a shared quantized input has two: quantize, then the
// products). A step's work is n_items items (rows, chunks of a product,
// attention units), each computed by one worker from its inputs alone, so
// which worker computes an item never changes a bit: logits stay the same for
// any thread count and any way the items fall.
//
// Every step has a global, increasing tag (40 bits: never reused in a
// process's life). A ring of STEP_RING sets holds the steps in flight:
//   init   tag << 1 | busy: which step the set holds; the first worker to
//          arrive at a step whose set holds an older tag sets it up (busy
//          while it does: node, phase, n_items, the counters)
//   claim  [n_threads] words, tag << 24 | count: worker i owns the home range
//          [n * i / nth, n * (i + 1) / nth) of the items and claims them in
//          order, then the others' leftovers (a slow or absent worker's range
//          is done by the others). A claim is a compare-and-swap that checks
//          the tag, so a late worker can never claim an item of a step it
//          does not know; a word with an older tag counts 0 (words are not
//          reset at set-up: each stays in its owner's cache).
//   done   tag << 24 | items completed (an older tag: 0), added by each
//          worker once, after its last claim: a step is over when done
//          reaches n_items; whoever is left waits for that, not for the others.
// Decode of a small model is a few microseconds a step, so a step costs as few
// cache lines moved between cores as possible: the set-up writes one (init and
// the step's fields), each worker adds to done once.
// A worker that finds its step's set holding a newer tag knows the step is
// over and moves on without waiting; a descheduled worker thus catches up
// through the steps it missed at a few loads each. Tags run on from one job
// to the next, so a set also names its job: a worker whose job is over may
// walk into the next job's tags, and stops at the first set of another job.
//
// Why home ranges: with one counter for all, consecutive chunks go to
// alternating workers, and each worker's reads jump by a chunk every chunk.
// Decode reads the weights from DRAM, and those broken streams measured 20%
// slower than one stretch per worker (qwen2.5-0.5b Q4_0, 2 threads).
#pragma once
#include "cpu/pool_atomic.h"
#include <stdint.h>

namespace tern {

#define STEP_RING 4                 // sets in the ring (steps in flight: one, plus late readers)
#define STEP_COUNT_BITS 24          // items per step < 2^24
#define STEP_MAX_ITEMS ((int64_t) 1 << STEP_COUNT_BITS)

static inline uint64_t step_word(uint64_t tag, uint64_t count) { return (tag << STEP_COUNT_BITS) | count; }
static inline uint64_t step_tag(uint64_t w) { return w >> STEP_COUNT_BITS; }
static inline uint64_t step_count(uint64_t w) { return w & (((uint64_t) 1 << STEP_COUNT_BITS) - 1); }

struct alignas(64) tern_claim_word {
    pool_atomic<uint64_t> v;
};

struct tern_step_set {
    alignas(64) pool_atomic<uint64_t> init;   // tag << 1 | busy; the fields below under it, as a sequence lock
    pool_atomic<int64_t>  n_items;
    pool_atomic<int32_t>  node;               // -1: the job's end
    pool_atomic<int32_t>  phase;
    pool_atomic<uint64_t> job;                // the id of the job the step belongs to
    tern_claim_word *     claim;              // [n_threads]
    alignas(64) pool_atomic<uint64_t> done;   // step_word(tag, items completed)
};

// Items of step `tag` completed so far, from a done word.
static inline int64_t step_done_count(uint64_t d, uint64_t tag) {
    return step_tag(d) == tag ? (int64_t) step_count(d) : 0;
}

// One worker's progress through the home ranges of one step; start at {0}.
struct tern_claim_cursor {
    int32_t visited;   // ranges found exhausted so far (own range first)
};

// Next item of step `tag` (n items) for worker ith of nth: true with *item
// set; false when every range is exhausted or the set moved past the step.
static inline bool tern_claim_next(tern_claim_word * claim, uint64_t tag, int32_t ith, int32_t nth, int64_t n,
                                   tern_claim_cursor * cur, int64_t * item) {
    while (cur->visited < nth) {
        const int32_t r = (ith + cur->visited) % nth;
        const int64_t lo = n * r / nth, hi = n * (r + 1) / nth;
        uint64_t w = claim[r].v.load(std::memory_order_acquire);
        for (;;) {
            // An older tag: nobody claimed in this range yet (words are not reset
            // when a step is set up, so a worker's own word stays in its cache).
            if (step_tag(w) > tag) return false;
            const int64_t k = step_tag(w) == tag ? (int64_t) step_count(w) : 0;
            if (lo + k >= hi) break;
            if (claim[r].v.compare_exchange_weak(w, step_word(tag, (uint64_t) k + 1), std::memory_order_acq_rel,
                                                 std::memory_order_acquire)) {
                *item = lo + k;
                return true;
            }
        }
        cur->visited++;
    }
    return false;
}

}  // namespace tern
