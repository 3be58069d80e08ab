// The execution door: every graph a context runs (decode, the K-shift, KV
// defragmentation) goes through here, and so does every byte the host reads
// or writes in storage it may not address (state save/load of the KV cache).
//
// Lifecycle, per graph kind (the forward graph, the K-shift, the defrag):
//   exec_plan_make   at context creation, on the worst-case graph: who runs
//                    each node (the CPU; with devices, the scheduler's splits),
//                    the memory plan per region, the CPU's scratch;
//   exec_bind        after each (re)build of a graph of that kind: storage of
//                    every planned tensor (and, with devices, the scheduler's
//                    split-input copies), the plan's topology checked;
//   exec_run         run it: CPU nodes fork-join on the pool (cpu/compute.h),
//                    device splits on their queues (hal/sched.h).
//
// Behind the door: the CPU backend (the pool and its work buffer) and, in
// builds with devices (TERN_DEVICES) and a model placed on some, the
// scheduler (hal/sched.h): regions 0 (host activations), 1 (staging) and
// 2 + d (device d's activations). Without devices every node runs on the CPU
// and every tensor lives in region 0.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "core/arena.h"
#include "cpu/threadpool.h"
#include "graph/buffer.h"
#include "graph/graph.h"
#include "graph/planner.h"
#if TERN_WITH_HAL
#include "hal/sched.h"
#endif

namespace tern {

// Region 0 of every plan: the host's activations.
#define EXEC_REGION_HOST 0

struct exec_plan {
    tern_graph_plan   mem;        // offsets of the planned tensors, per region
    size_t            cpu_work;   // scratch bytes the CPU's nodes need
#if TERN_WITH_HAL
    hal::sched_plan * sched;      // NULL: the CPU runs every node
#endif
};

struct tern_executor {
    tern_threadpool *  pool;       // the CPU backend
    void *             work;       // its scratch, the largest plan's cpu_work
    size_t             work_size;
    tern_buffer *      regions[TERN_PLAN_MAX_REGIONS];  // the buffer of each plan region
    int32_t            n_regions;
#if TERN_WITH_HAL
    hal::hal_context * hal;        // the devices (NULL: none)
#endif
};

// How a plan is made: `large` lets the scheduler offload matmuls of host
// weights (a plan for batches at or past the devices' threshold);
// `capturable`: its device splits may be captured (forward graphs).
struct exec_plan_kind {
    bool large;
    bool capturable;
};

// Plan the graph g (built with gb, the worst case of its kind): tables from
// `arena`. n_threads: the CPU backend's workers (its scratch grows with them).
tern_status exec_plan_make(const tern_executor * ex, const tern_graph * g, tern_graph_builder * gb, int32_t n_threads,
                           exec_plan_kind kind, tern_arena * arena, exec_plan * out);
// Does the plan move matmuls of host weights to a device (op offload)?
bool        exec_plan_offloads(const exec_plan * plan);
// Bytes of what a plan keeps beside its tables (the capture records), and
// their allocation, after every plan is made (measure: count only).
size_t      exec_plan_extra_size(const exec_plan * plan);
tern_status exec_plan_extra_alloc(exec_plan * plan, tern_arena * arena);
// Storage for a graph of the plan's kind now in gb / g (and its copies).
tern_status exec_bind(const tern_executor * ex, const exec_plan * plan, tern_graph_builder * gb, const tern_graph * g);
// Run g (bound). abort_cb is checked between nodes (NULL: never). capture:
// device splits may be captured and replayed (decode batches).
tern_status exec_run(tern_executor * ex, const exec_plan * plan, const tern_graph * g, tern_abort_callback abort_cb,
                     void * abort_data, bool capture);
// The host-addressable tensor holding a graph output after exec_run (a
// device's output arrives in a host copy).
tern_tensor * exec_output(const exec_plan * plan, tern_tensor * t);
// The devices' work of a graph node (tern_hal.h prepare), at creation.
tern_status exec_prepare(const tern_executor * ex, const exec_plan * plan, const tern_graph * g);

// Bytes [offset, offset + n) of a storage, to host memory and back: a memcpy
// for host buffers, the device's copies (then a wait) for device memory.
tern_status exec_storage_read(tern_executor * ex, tern_storage st, size_t offset, void * dst, size_t n);
tern_status exec_storage_write(tern_executor * ex, tern_storage st, size_t offset, const void * src, size_t n);

}  // namespace tern
