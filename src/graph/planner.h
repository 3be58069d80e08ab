// Memory planner: one activation buffer for all planned tensors of a graph,
// offsets fixed at plan time (TensorFlow Lite Micro's greedy planner).
//
// Planned tensors: every tensor that owns its bytes (no view_src) and has no
// external data: INPUT leaves and op results. Views and SET_ROWS results use
// their owner's bytes and are not planned.
//
// 1. Live ranges over node order: a node's index counts as a use of the
//    owner of the node and of the owner of each of its sources (so reading a
//    view keeps the viewed tensor alive). first = first use, last = last use;
//    INPUT tensors start at 0, OUTPUT tensors (flag on the tensor or a view of
//    it) live to the end. Two tensors conflict when their [first, last]
//    ranges intersect (a node's result never shares bytes with its sources).
// 2. Sizes are tern_tensor_nbytes rounded up to 64 bytes.
// 3. Greedy placement, largest first (ties: earlier first use, then id): each
//    tensor takes the lowest 64-aligned offset where it overlaps no
//    already-placed tensor it conflicts with (first fit over the gaps between
//    the conflicting tensors sorted by offset).
// activation_bytes is the largest end offset. Plan once for the worst case
// (most tokens, most KV cells); tern_graph_plan_apply then places a graph of
// the same topology with smaller shapes at the same offsets.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "core/arena.h"
#include "graph/graph.h"

namespace tern {

struct tern_graph_plan {
    size_t * offsets;          // [n_tensors], by tensor id; unplanned: 0 with sizes[id] == 0
    size_t * sizes;            // [n_tensors] planned bytes (0: not planned)
    int32_t  n_tensors;        // the builder's tensor count when planned
    size_t   activation_bytes; // size of the activation buffer
    size_t   work_bytes;       // largest node scratch for n_threads (tern_graph_work_size)
};

// Bytes of a plan's own tables (arena-padded, as tern_graph_plan_make allocates them).
size_t tern_graph_plan_table_size(int32_t n_tensors);
// Bytes of arena temp space tern_graph_plan_make needs (released before it returns).
size_t tern_graph_plan_temp_size(int32_t n_tensors);
// Plan g (built with gb). Tables from `arena` (persistent, category GRAPH),
// temporaries from its temp region.
tern_status tern_graph_plan_make(const tern_graph * g, const tern_graph_builder * gb, int32_t n_threads, tern_arena * arena,
                                 tern_graph_plan * out);
// Give gb's planned tensors data = activations + offsets[id] and every view
// its owner's data + view_offs. gb must have the planned topology (same ids);
// a tensor larger than planned -> TERN_ERR_INTERNAL.
tern_status tern_graph_plan_apply(const tern_graph_plan * p, tern_graph_builder * gb, void * activations);

}  // namespace tern
