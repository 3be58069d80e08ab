// Memory planner: fixed offsets for every planned tensor of a graph, per
// region (TensorFlow Lite Micro's greedy planner, run once per region).
//
// Regions are the buffers a graph's intermediates live in: the host's
// activations, and with accelerators (hal/) each device's activations and
// the host-visible staging buffer. Who runs which node, and so which region a
// tensor belongs to, is not the planner's business: the caller passes a
// region per tensor (NULL: all in region 0). Nor is the executor's scratch:
// the planner knows no executor (the work size is asked of the CPU backend).
//
// Planned tensors: every tensor that owns its bytes (no view_src) and whose
// bytes are not given (TERN_TENSOR_EXTERNAL: weights, KV cache): INPUT
// leaves, op results and the scheduler's split-input copies. Views and
// SET_ROWS results use their owner's bytes and are not planned.
//
// 1. Live ranges over node order: a node's index counts as a use of the
//    owner of the node and of the owner of each of its sources (so reading a
//    view keeps the viewed tensor alive). first = first use, last = last use;
//    INPUT tensors start at 0, a copy (TERN_TENSOR_COPY) at written_at (it is
//    filled before that node, ahead of its first reader), OUTPUT tensors
//    (flag on the tensor or a view of it) live to the end. Two tensors
//    conflict when their [first, last] ranges intersect (a node's result
//    never shares bytes with its sources).
// 2. Sizes are tern_tensor_nbytes rounded up to 64 bytes.
// 3. Per region, greedy placement, largest first (ties: earlier first use,
//    then id): each tensor takes the lowest 64-aligned offset where it
//    overlaps no already-placed tensor of its region it conflicts with (first
//    fit over the gaps between the conflicting tensors sorted by offset).
// region_bytes[r] is region r's largest end offset. Plan once for the worst
// case (most tokens, most KV cells); tern_graph_plan_apply then places a graph
// of the same topology (the plan's signature, checked) with smaller shapes at
// the same offsets.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "core/arena.h"
#include "graph/graph.h"

namespace tern {

// Regions a plan may have: the host's activations, then staging and the
// activations of up to TERN_MAX_DEVICES devices (hal/).
#define TERN_PLAN_MAX_REGIONS (2 + TERN_MAX_DEVICES)

struct tern_graph_plan {
    size_t * offsets;          // [n_tensors], by tensor id; unplanned: 0 with sizes[id] == 0
    size_t * sizes;            // [n_tensors] planned bytes (0: not planned)
    uint8_t * region;          // [n_tensors] region of each planned tensor
    int32_t  n_tensors;        // the builder's tensor count when planned
    int32_t  n_regions;
    size_t   region_bytes[TERN_PLAN_MAX_REGIONS];  // size each region's buffer needs
    uint64_t topology;         // tern_graph_topology of the planned graph
};

// Bytes of a plan's own tables (arena-padded, as tern_graph_plan_make allocates them).
size_t tern_graph_plan_table_size(int32_t n_tensors);
// Bytes of arena temp space tern_graph_plan_make needs (released before it returns).
size_t tern_graph_plan_temp_size(int32_t n_tensors);
// Plan g (built with gb). region: [gb->n_tensors] region of each tensor (NULL:
// all in region 0), n_regions <= TERN_PLAN_MAX_REGIONS; live_to: [gb->n_tensors]
// a node index each tensor must stay live to at least (-1: its uses decide;
// NULL: none), for bytes read after their last reader node (a device's
// asynchronous copy). Tables from `arena` (persistent, category GRAPH),
// temporaries from its temp region.
tern_status tern_graph_plan_make(const tern_graph * g, const tern_graph_builder * gb, const uint8_t * region,
                                 int32_t n_regions, const int32_t * live_to, tern_arena * arena, tern_graph_plan * out);
// Give gb's planned tensors their storage (buffers[region] + offsets[id]; data
// where that buffer has a host address) and every view its owner's. g must be
// what gb holds now: its topology must be the plan's (TERN_ERR_INTERNAL
// otherwise, as for a tensor larger than planned).
tern_status tern_graph_plan_apply(const tern_graph_plan * p, tern_graph_builder * gb, const tern_graph * g,
                                  tern_buffer * const * buffers);

// Signature of a graph's topology: per node its id, op, type, flags and
// its sources' ids (not shapes, strides or addresses: those change with the
// batch and the plan moves them). Graphs of one builder with equal
// signatures can share one plan. FNV-1a, 64 bits.
uint64_t tern_graph_topology(const tern_graph * g);

}  // namespace tern
