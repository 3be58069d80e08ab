// The scheduler: one graph, run by the CPU and the model's devices.
//
// Once per graph kind and shape class (at context creation, on the
// worst-case graph; never per token) sched_plan_make decides:
//
//   1. assign   every computing node gets a device (-1: the host):
//               - a node reading a weight runs where the weight is (the first
//                 weight among its sources); op offload: a matmul of a host
//                 weight over at least op_offload_min_batch rows runs on the
//                 layer's device (or the first device) instead, the weight
//                 copied there per run (prompt plans only; never the rows kept
//                 for the logits: the last layer's matmuls and the output);
//               - a node writing or reading a KV cache runs where the cache is;
//               - other nodes follow their first source that is a node of their
//                 own layer (data affinity: the device run extends over
//                 neighbouring ops), or their layer's placement when that
//                 source is another layer's (the residual stream); nodes fed
//                 only by inputs (the rope cache) follow their first consumer;
//               - a device that refuses the op (supports_op) leaves it to the CPU.
//   2. split    maximal runs of consecutive computing nodes on one device.
//   3. copies   a source whose bytes live elsewhere gets a copy tensor where
//               the consumer runs: host -> device at the start of the first
//               split on that device that reads it; device -> host at the end of
//               the split that produced it (or, for a device leaf, right before
//               the host split); device A -> device B through a host copy (both
//               legs, counted as one device-to-device copy). Consumers are
//               redirected to the copy. A graph output on a device gets a host
//               copy at the end of its split (the logits).
//   4. regions  device d's tensors and copies in region 2 + d, host tensors
//               that a device reads or writes (copy endpoints, inputs read by
//               a device) in region 1 (the staging buffer, host-visible), the
//               rest in region 0 (host activations). Copies run asynchronously
//               on their device: a host source of a host -> device copy stays
//               live until the host next waits for the devices (the next host
//               split, or the end), and a device source of a copy at a split's
//               end stays live to that end.
//
// After each (re)build of a graph of the plan's kind, sched_bind makes the
// copy tensors again (same ids) and redirects the consumers; once the memory
// plan is applied, sched_bind_records computes each capturable device split's
// command records (the capture cache's key, graph_cache.h).
//
// sched_run, per split in order:
//   host split    wait for every device with work in flight (a fence; the
//                 device -> host copies the split reads are done then), then
//                 the nodes fork-join on the CPU pool;
//   device split  wait for the devices whose copies it reads (cross-device),
//                 then: captured and cached -> replay (one submission); capture
//                 wanted and not cached -> capture_begin, issue, capture_end,
//                 insert, replay; else issue eagerly: input copies, launches,
//                 output copies; then record the device's event.
//   end           synchronize every device used (the logits are read next;
//                 errors of work in flight surface here).
// A failed device call ends the run with its status after draining every
// device, so the next run starts clean.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "tern_hal.h"
#include "core/arena.h"
#include "cpu/threadpool.h"
#include "graph/graph.h"
#include "hal/device.h"
#include "hal/graph_cache.h"

namespace tern {
namespace hal {

// Plan regions.
enum { REGION_HOST = 0, REGION_STAGING = 1, REGION_DEVICE0 = 2 };

struct hal_counters {
    uint64_t splits;
    uint64_t copies_h2d, copies_d2h, copies_d2d, bytes_h2d, bytes_d2h, bytes_d2d;  // performed (replays included)
    uint64_t launches;       // eager launches
    uint64_t launches_run;   // ops the devices ran (eager and replayed)
    uint64_t captures, replays, hits, misses, evictions, capture_failures, submissions;
};

// A context's devices and device memory.
struct hal_context {
    int32_t          n_dev;
    hal_device *     dev;                       // the model's devices
    const int8_t *   layer_device;              // [n_layer + 1] (model_devices)
    int32_t          n_layer;
    bool             op_offload;
    bool             capture_prefill;
    int32_t          offload_min_batch;         // the smallest device threshold (0: none)
    int32_t          cache_capacity;
    tern_buffer      act[TERN_MAX_DEVICES];     // region 2 + d
    tern_buffer      staging;                   // region 1
    int32_t          staging_dev;               // whose host-visible buffer staging is (-1: host memory)
    tern_buffer      kv[TERN_MAX_DEVICES];      // each device's KV cache layers
    tern_hal_event * events[TERN_MAX_DEVICES];
    bool             in_flight[TERN_MAX_DEVICES];  // work issued since the last wait
    graph_cache      cache;
    int32_t          max_records;               // commands of the largest capturable split
    hal_counters     counters;
};

struct sched_split {
    int8_t   device;        // -1 the host
    int32_t  first, last;   // node index range (computing nodes of it in between)
    int32_t  in0, n_in;     // copies issued at its start: copies[in0 .. in0 + n_in)
    int32_t  out0, n_out;   // copies issued at its end
    uint32_t wait_mask;     // device split: devices whose copies it reads (they finish first)
    int32_t  rec0, n_rec;   // its records (capturable plans), in the plan's record table
    uint64_t hash;
    int32_t  entry;         // cache entry it matched (-1 none) and that entry's generation
    uint32_t generation;
};

struct sched_copy {
    int32_t key;            // the graph tensor whose bytes it carries (both legs of a device -> device copy)
    int32_t src_id;         // the tensor copied (its id in the builder; < 0: the host leg -1 - src_id)
    int32_t copy_id;        // the copy (made by sched_bind, after the graph's own tensors)
    int8_t  from, to;       // -1 the host
    int32_t split;          // the split that issues it
    bool    at_end;         // issued at the end of `split` (device -> host), else at its start
    bool    bounce;         // a host leg of a device -> device copy
    int32_t written_at;     // node index the planner takes as its first use
    int32_t live_to;        // node index it must live to (host endpoints: the next fence), -1: its readers decide
};

struct sched_redirect {
    int32_t node;           // node index
    int32_t slot;           // source slot
    int32_t copy;           // index in copies
};

struct sched_plan {
    tern_tensor *    copy_tensors;   // the copies in the builder (after its own tensors), set by sched_bind
    int32_t          n_nodes;
    int8_t *         node_device;   // [n_nodes]
    sched_split *    splits;
    int32_t          n_splits;
    sched_copy *     copies;
    int32_t          n_copies;
    sched_redirect * redirects;
    int32_t          n_redirects;
    int32_t          n_base_tensors; // the graph's own tensors (copies come after)
    uint8_t *        region;         // [n_base_tensors + n_copies] for the planner
    int32_t *        live_to;        // [same] extended last use (-1: none)
    bool             capturable;     // records are kept (forward plans)
    gc_record *      records;        // [n_records]
    int32_t          n_records;
    int32_t          n_device_splits;
    int32_t          n_offloaded;    // matmuls of host weights moved to a device (op offload)
};

// The devices of a context. Memory (buffers, events, the cache) comes later:
// hal_context_alloc.
void        hal_context_init(hal_context * hc, hal_device * dev, int32_t n_dev, const int8_t * layer_device, int32_t n_layer,
                             bool op_offload, bool capture_prefill, int32_t cache_capacity);
// Plan the graph g (gb's worst case of its kind): `large` allows op offload.
// Copies are made in gb. capturable: its device splits get command records
// for the cache, allocated after every plan is made (sched_records_alloc).
tern_status sched_plan_make(hal_context * hc, const tern_graph * g, tern_graph_builder * gb, bool large, bool capturable,
                            tern_arena * arena, sched_plan ** out);
// Bytes of a plan's records (0 unless capturable); allocate them.
size_t      sched_records_size(const sched_plan * p);
tern_status sched_records_alloc(sched_plan * p, tern_arena * arena);
// A bound on the arena bytes (tables and temporaries, records apart)
// sched_plan_make takes for a graph of n tensors (the sizing scratch).
size_t      sched_plan_bound(int32_t n_tensors);
// After a rebuild: the copies again (same ids), consumers redirected.
tern_status sched_bind(sched_plan * p, tern_graph_builder * gb, const tern_graph * g);
// After the memory plan is applied: the records of capturable splits.
void        sched_bind_records(hal_context * hc, sched_plan * p, const tern_graph * g);
// The host-addressable tensor a graph output ends in (its host copy, or itself).
tern_tensor * sched_host_output(const sched_plan * p, tern_tensor * t);
// The splits and copies, one line each, snprintf-style (returns the full length).
int32_t     sched_describe(const hal_context * hc, const sched_plan * p, const tern_graph * g, char * buf, size_t size);
// CPU scratch the host nodes need.
size_t      sched_cpu_work(const sched_plan * p, const tern_graph * g, int32_t n_threads);
// Every device node's description, with its buffers, to the device's prepare (creation).
tern_status sched_prepare(hal_context * hc, const sched_plan * p, const tern_graph * g);
tern_status sched_run(hal_context * hc, sched_plan * p, const tern_graph * g, tern_threadpool * pool, void * work,
                      size_t work_size, tern_abort_callback abort_cb, void * abort_data, bool capture);

// Host memory of the device side, from the context arena: the graph cache
// and, when no device offers host-visible memory, the staging buffer. measure:
// only count the bytes (returned).
size_t      hal_context_reserve(hal_context * hc, tern_arena * arena, uint64_t staging_bytes, bool measure);
// Device memory of a context, each once: KV and activation buffers of the
// given sizes per device (0: none), the staging buffer, events. A failure
// names the device and the bytes; hal_context_free releases what was obtained.
tern_status hal_context_alloc(hal_context * hc, const uint64_t * kv_bytes, const uint64_t * act_bytes, uint64_t staging_bytes);
void        hal_context_free(hal_context * hc);
// Wait for every device, ignoring errors (after a failure).
void        hal_drain(hal_context * hc);

}  // namespace hal
}  // namespace tern
