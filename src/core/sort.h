// Sorting without recursion: heap sort (std::make_heap + std::sort_heap,
// both iterative), O(n log n) with O(1) stack whatever n is. std::sort's
// introsort recurses up to 2 log2(n) frames; the loader, the planner and the
// vocabulary sort with this instead, so their stack bound (docs/PORTING.md,
// tests/tools/stack_bound.py) does not depend on the tensor or token count.
// Not stable: callers with equal keys break ties themselves.
#pragma once
#include <stddef.h>

#include <algorithm>

namespace tern {

template <typename T, typename Less>
void tern_heap_sort(T * first, size_t n, Less less) {
    std::make_heap(first, first + n, less);
    std::sort_heap(first, first + n, less);
}

}  // namespace tern
