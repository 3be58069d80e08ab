/*
 * tern_hal.h — the accelerator HAL: the op-level device vtable a vendor
 * implements, C99, with an ABI version of its own. Present in builds with
 * devices (TERN_DEVICES: sim, vulkan; TERN_WITH_HAL in tern_config.h).
 *
 * A device only runs ops. Everything else lives once in Tern's core
 * (src/hal/): placement (-ngl, --tensor-split, -ot, KV and op offload), the
 * scheduler that cuts a graph into CPU and device splits and copies split
 * inputs, the captured-graph LRU cache and its matching, and every counter.
 * docs/PORTING.md ("Writing a device") walks through the sim device as the
 * worked example.
 *
 * Lifecycle, as the core drives a device:
 *
 *   tern_hal_register(&desc)      out-of-tree vendors, before a model names it
 *                                 (in-tree devices are registered at build time)
 *   desc->count()                 instances present ("sim0", "sim1", ...)
 *   desc->open(i, params, &dev)   when a model's device list names instance i
 *   get_caps                      memory, UMA, host-visible staging, import,
 *                                 capture, alignment, limits, op-offload batch
 *   model load:   buffer_alloc(WEIGHTS) once per device, copy_h2d of each
 *                 weight placed there (file layout), synchronize; or
 *                 buffer_import_host over the mapped file (UMA: held once)
 *   context:      buffer_alloc(KV), (ACTIVATIONS), (STAGING), each once,
 *                 sized exactly; supports_op and prepare for every node of
 *                 the worst-case graphs (at plan time, never per token)
 *   per graph run, per device split:
 *     eager:      copy_h2d of the split's inputs, launch (or launch_seq) of
 *                 its nodes in order, copy_d2h of its outputs, event_record
 *     captured:   (first use) capture_begin, the same calls, capture_end ->
 *                 graph; (every use) replay(graph): one submission
 *     the host:   event_wait / synchronize at split boundaries and for the logits
 *   graph_release on eviction from the cache and at context free;
 *   buffer_free at context / model free; close when the model is freed.
 *
 * Rules a device keeps:
 *   - Addresses are buffer + offset, never raw device pointers.
 *   - copy_*, launch, launch_seq, replay and event_record are stream-ordered
 *     and may return before the work is done; an error of work already
 *     accepted is reported by the next synchronize (or event_wait).
 *   - Between capture_begin and capture_end the calls are recorded, not run;
 *     host memory named by a recorded copy stays at its address and is read
 *     (or written) at each replay: the core refills it in place.
 *   - supports_op is pure (same answer for the same description) and cheap;
 *     an op it refuses runs on the CPU.
 *   - Functions marked optional may be NULL.
 *   - Every entry point returns a tern_status; tern_hal_error() records the
 *     detail line that tern_last_error() then shows.
 */
#ifndef TERN_HAL_H
#define TERN_HAL_H

#include <stddef.h>
#include <stdint.h>
#include "tern.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TERN_HAL_ABI_VERSION 1

/* Ops, numbered as Tern's graph numbers them (src/graph/graph.h); shapes and
 * parameters as documented there. */
typedef enum tern_hal_op {
    TERN_HAL_OP_GET_ROWS = 2,    /* src0 table [ne0, rows] any type, src1 I32 ids -> F32 */
    TERN_HAL_OP_RMS_NORM = 3,    /* params[0] eps (float bits); src1 F32 weight or absent */
    TERN_HAL_OP_ADD = 4,         /* F32 + F32, src1 repeating into src0 */
    TERN_HAL_OP_MUL = 5,
    TERN_HAL_OP_SCALE = 6,       /* params[0] scale */
    TERN_HAL_OP_MUL_MAT = 7,     /* src0 weight [K, N], src1 F32 [K, M] -> F32 [N, M]; src2 F32 bias [N] or absent */
    TERN_HAL_OP_ROPE_CACHE = 8,  /* src0 I32 positions -> F32 [n_rot, n] (cos, sin); params: tern_hal_rope_params;
                                    src1 F32 [n_rot/2] frequency factors (each pair's angle divided) or absent */
    TERN_HAL_OP_ROPE = 9,        /* src0 F32 [hd, n_head, n], src1 ROPE_CACHE's result */
    TERN_HAL_OP_SET_ROWS = 10,   /* dst rows idx[i] of src0 = src1 row i (F32 converted, or src0's type copied) */
    TERN_HAL_OP_ATTN = 11,       /* q, k, v, mask, bounds (I32 [n_tokens]); params[0] scale, params[1] soft cap
                                    (float bits; 0: none, else q.k -> tanh(q.k / c) * c before the scale) */
    TERN_HAL_OP_SWIGLU = 12,     /* silu(src0) * src1 */
    TERN_HAL_OP_ARGMAX = 13,
    TERN_HAL_OP_COPY_ROWS = 14,  /* src0 rows ids[i] copied byte for byte */
    TERN_HAL_OP_GEGLU = 15,      /* gelu(src0) * src1, GELU's tanh form on F16-rounded values (src/cpu/kernels/vec.h) */
    TERN_HAL_OP_SOFTCAP = 16     /* tanh(src0 / c) * c, params[0] c */
} tern_hal_op;

/* ROPE_CACHE / ROPE params[] (the first 9 slots, floats by bit pattern). */
typedef struct tern_hal_rope_params {
    int32_t n_rot, mode, n_ctx_orig; /* mode: 0 normal (adjacent pairs), 2 neox (halves) */
    float   freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
} tern_hal_rope_params;

typedef struct tern_hal_buffer tern_hal_buffer;  /* the device's own */
typedef struct tern_hal_graph tern_hal_graph;    /* a captured graph */
typedef struct tern_hal_event tern_hal_event;

typedef enum tern_hal_usage {
    TERN_HAL_USAGE_WEIGHTS = 0,
    TERN_HAL_USAGE_KV = 1,
    TERN_HAL_USAGE_ACTIVATIONS = 2,
    TERN_HAL_USAGE_STAGING = 3    /* host-visible: buffer_host_ptr must give its address */
} tern_hal_usage;

typedef struct tern_hal_caps {
    uint64_t mem_total;            /* bytes of memory the device may use */
    uint64_t mem_free;
    int32_t  uma;                  /* its memory is the host's (integrated GPU, SoC NPU) */
    int32_t  host_visible;         /* can allocate STAGING buffers the host maps */
    int32_t  import_host;          /* buffer_import_host works */
    int32_t  capture;              /* capture_begin / capture_end / replay work */
    int32_t  events;               /* event_* work (else the core synchronizes) */
    uint64_t alignment;            /* offsets the core gives tensors in its buffers are multiples */
    uint64_t max_buffer_size;      /* one buffer_alloc at most */
    uint64_t max_binding_size;     /* bytes one op may address in one buffer (0: max_buffer_size) */
    int32_t  op_offload_min_batch; /* a host weight's matmul of at least this many rows may move
                                      here (op offload: prompts); 0: never */
    int32_t  software;             /* runs on the host's CPU (a software driver such as lavapipe):
                                      -ngl without --device passes it over */
} tern_hal_caps;

/* A tensor as a launch sees it: fully resolved. layout 0 is the file's block
 * layout; other values are a backend's own (1: the CPU's interleaved rows,
 * which only a device running Tern's CPU kernels reads: the sim). An absent
 * source (a norm without weight, an attention without mask) has type
 * TERN_HAL_TYPE_NONE. supports_op sees buffer NULL (asked at plan time, before
 * memory exists); prepare and launch see every present tensor's buffer. */
#define TERN_HAL_TYPE_NONE (-1)
typedef struct tern_hal_tensor {
    int32_t           type;    /* tern_type, or TERN_HAL_TYPE_NONE */
    int32_t           layout;
    int64_t           ne[4];
    uint64_t          nb[4];   /* byte strides */
    tern_hal_buffer * buffer;
    uint64_t          offset;
} tern_hal_tensor;

#define TERN_HAL_MAX_SRC 5
#define TERN_HAL_MAX_PARAMS 16

typedef struct tern_hal_op_desc {
    int32_t         op;                          /* tern_hal_op */
    int32_t         params[TERN_HAL_MAX_PARAMS];
    tern_hal_tensor dst;
    tern_hal_tensor src[TERN_HAL_MAX_SRC];
    const char *    name;                        /* the node's name ("kqv_out-3"), for messages */
    int32_t         layer;
} tern_hal_op_desc;

/* A device's own counts, for the core to cross-check its counters with. */
typedef struct tern_hal_counters {
    uint64_t submissions;   /* queue entries: eager copies and launches, replays */
    uint64_t launches;      /* ops run (eager and replayed) */
    uint64_t copies_h2d, copies_d2h, copies_d2d;
    uint64_t bytes_h2d, bytes_d2h, bytes_d2d;
    uint64_t captures, replays;
} tern_hal_counters;

typedef struct tern_hal_device_desc {
    uint32_t     abi_version;   /* TERN_HAL_ABI_VERSION */
    const char * name;          /* the kind: "sim", "vulkan"; instances are name0, name1, ... */
    int32_t      implicit;      /* used by -ngl without --device (an accelerator: 1; the sim: 0) */

    int32_t      (*count)(void);
    tern_status  (*open)(int32_t index, const char * params, void ** out_dev);
    void         (*close)(void * dev);
    const char * (*describe)(void * dev);        /* one line: "lavapipe (LLVM 15), UMA, 8 GiB" */
    void         (*get_caps)(void * dev, tern_hal_caps * out);

    tern_status  (*buffer_alloc)(void * dev, uint64_t size, tern_hal_usage usage, tern_hal_buffer ** out);
    void         (*buffer_free)(void * dev, tern_hal_buffer * buf);
    void *       (*buffer_host_ptr)(void * dev, tern_hal_buffer * buf);   /* NULL: not host-visible */
    tern_status  (*buffer_import_host)(void * dev, void * host, uint64_t size, tern_hal_buffer ** out); /* optional */

    tern_status  (*copy_h2d)(void * dev, tern_hal_buffer * dst, uint64_t dst_offset, const void * src, uint64_t size);
    tern_status  (*copy_d2h)(void * dev, void * dst, tern_hal_buffer * src, uint64_t src_offset, uint64_t size);
    tern_status  (*copy_d2d)(void * dev, tern_hal_buffer * dst, uint64_t dst_offset, tern_hal_buffer * src,
                             uint64_t src_offset, uint64_t size);

    int          (*supports_op)(void * dev, const tern_hal_op_desc * op);
    tern_status  (*prepare)(void * dev, const tern_hal_op_desc * op);                    /* optional */
    tern_status  (*launch)(void * dev, const tern_hal_op_desc * op);
    tern_status  (*launch_seq)(void * dev, const tern_hal_op_desc * ops, int32_t n_ops); /* optional */
    tern_status  (*synchronize)(void * dev);

    tern_status  (*event_create)(void * dev, tern_hal_event ** out);                     /* optional */
    void         (*event_destroy)(void * dev, tern_hal_event * ev);
    tern_status  (*event_record)(void * dev, tern_hal_event * ev);
    tern_status  (*event_wait)(void * dev, tern_hal_event * ev);   /* the host waits for the event */

    tern_status  (*capture_begin)(void * dev);                                            /* optional */
    tern_status  (*capture_end)(void * dev, tern_hal_graph ** out);
    tern_status  (*replay)(void * dev, tern_hal_graph * graph);
    void         (*graph_release)(void * dev, tern_hal_graph * graph);

    void         (*get_counters)(void * dev, tern_hal_counters * out);                    /* optional */
} tern_hal_device_desc;

/* Register a device kind (out-of-tree vendors). The table must outlive every
 * model using it. TERN_ERR_INVALID_ARG for another ABI version, a missing
 * required entry or a name already registered; TERN_ERR_NO_MEMORY past
 * TERN_MAX_DEVICE_KINDS kinds. */
tern_status tern_hal_register(const tern_hal_device_desc * desc);

/* Record a device's error detail (printf format): tern_last_error() shows it. Returns status. */
tern_status tern_hal_error(tern_status status, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The device instances present, in registration order: writes up to n names
 * ("sim0", "vulkan0", ...) into names[i] (buffers of name_size bytes) and
 * returns how many there are. Kinds whose count() is 0 list nothing. */
int32_t tern_hal_list_devices(char (*names)[32], int32_t n);

/* One line about a device instance, its describe() ("vulkan0: llvmpipe (CPU,
 * Vulkan 1.3), UMA, ...; fp16 yes, int8 yes, ..."), written into buf like
 * snprintf: opens the instance, asks, closes it (tern --version, -v). A
 * device spec as tern_model_params.devices takes ("vulkan0", "sim1"). */
tern_status tern_hal_describe_device(const char * name, char * buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TERN_HAL_H */
