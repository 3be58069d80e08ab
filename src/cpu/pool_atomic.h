// pool_atomic<T>: the pool's shared words. With threads, std::atomic<T>.
// Without (TERN_THREADS=OFF: firmware), nothing is shared, and a core without
// 64-bit atomics (Cortex-M: no LDREXD) would call libatomic's __atomic_*_8,
// which a freestanding link does not have: plain values with the same
// interface instead.
#pragma once
#include <atomic>
#include "tern_config.h"

namespace tern {

#if TERN_WITH_THREADS
template <class T> using pool_atomic = std::atomic<T>;
#else
template <class T> struct pool_atomic {
    T v;
    T    load(std::memory_order = std::memory_order_seq_cst) const { return v; }
    void store(T x, std::memory_order = std::memory_order_seq_cst) { v = x; }
    T    fetch_add(T d, std::memory_order = std::memory_order_seq_cst) { T o = v; v = (T) (v + d); return o; }
    T    fetch_sub(T d, std::memory_order = std::memory_order_seq_cst) { T o = v; v = (T) (v - d); return o; }
    T    operator++() { return v = (T) (v + 1); }
    bool compare_exchange_strong(T & expected, T desired, std::memory_order = std::memory_order_seq_cst,
                                 std::memory_order = std::memory_order_seq_cst) {
        if (v == expected) {
            v = desired;
            return true;
        }
        expected = v;
        return false;
    }
    bool compare_exchange_weak(T & expected, T desired, std::memory_order a = std::memory_order_seq_cst,
                               std::memory_order b = std::memory_order_seq_cst) {
        return compare_exchange_strong(expected, desired, a, b);
    }
};
#endif

}  // namespace tern
