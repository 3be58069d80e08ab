// Work claiming: how the workers of one node share its n items (mul_mat's
// chunks) so that each streams one contiguous stretch and none waits idle.
//
// Worker i of nth owns the home range [n * i / nth, n * (i + 1) / nth) and
// claims its items in order from the range's counter (a fetch_add). When its
// range is exhausted it claims from the next workers' ranges (i + 1, i + 2,
// ... mod nth), the same way, until every range is; so a slow or preempted
// core leaves its tail to the others instead of holding the barrier.
//
// Why home ranges: with one counter for all, consecutive chunks go to
// alternating workers, and each worker's reads jump by a chunk every chunk.
// Decode reads the weights from DRAM, and those broken streams measured 20%
// slower than one stretch per worker (qwen2.5-0.5b Q4_0, 2 threads: hardware
// and software prefetch run past each chunk's end into the other worker's
// chunk). One counter per range, each on its own cache line: an owner's claims
// touch no line another worker writes until someone steals.
//
// Which worker computes an item never changes its value (each output is
// computed by one call from its two rows alone), so results stay the same
// for any thread count and any claiming order.
#pragma once
#include <atomic>
#include <stdint.h>

namespace tern {

struct alignas(64) tern_claim_counter {
    std::atomic<intptr_t> next;   // items of the range claimed so far (may pass its size)
};

// One worker's progress through the ranges of one node; start at {0}.
struct tern_claim_cursor {
    int32_t visited;   // ranges found exhausted so far (own range first)
};

// Next item for worker ith, from counters[0..nth) (zero when the node starts):
// true with *item set, or false when every range is exhausted.
static inline bool tern_claim_next(tern_claim_counter * counters, int32_t ith, int32_t nth, int64_t n,
                                   tern_claim_cursor * cur, int64_t * item) {
    while (cur->visited < nth) {
        const int32_t r = (ith + cur->visited) % nth;
        const int64_t lo = n * r / nth, hi = n * (r + 1) / nth;
        const int64_t k = (int64_t) counters[r].next.fetch_add(1, std::memory_order_relaxed);
        if (lo + k < hi) {
            *item = lo + k;
            return true;
        }
        cur->visited++;
    }
    return false;
}

}  // namespace tern
