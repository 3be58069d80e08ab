// The sim device (see sim_device.h). Every open makes an independent
// instance (its own memory, queue and worker), so two models may both use sim0.
#include "hal/sim/sim_device.h"
#include "core/arena.h"
#include "core/status.h"
#include "cpu/compute.h"
#include "graph/graph.h"
#include "port.h"

#include <atomic>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace tern {
namespace hal {

namespace {

const int32_t kMaxInstances = 4;
const int32_t kRingSize = 1024;   // queued commands; a producer waits when it is full

enum cmd_kind : uint8_t { CMD_H2D, CMD_D2H, CMD_D2D, CMD_LAUNCH, CMD_REPLAY };

struct sim_graph;

// One queued or recorded command.
struct sim_cmd {
    cmd_kind         kind;
    uint8_t *        dst;      // copies: resolved addresses (device memory is the sim's own)
    const uint8_t *  src;
    uint64_t         size;
    tern_hal_op_desc op;       // CMD_LAUNCH
    sim_graph *      graph;    // CMD_REPLAY
};

struct sim_graph {
    sim_cmd * cmds;
    int32_t   n;
    int32_t   slot;            // in the pool; -1 free
};

}  // namespace
}  // namespace hal
}  // namespace tern

// The device's buffers (tern_hal.h's opaque types are the sim's own).
struct tern_hal_buffer {
    uint8_t * mem;
    uint64_t  size;
    int32_t   usage;
};
struct tern_hal_event {
    uint64_t seq;   // done once the worker finished the command with this sequence number
};
struct tern_hal_graph {
    tern::hal::sim_graph g;
};

namespace tern {
namespace hal {

namespace {

struct sim_device {
    char            desc[96];
    int32_t         index;
    // knobs
    bool            refuse[64];
    uint64_t        mem_limit;
    int64_t         fail_alloc_at;      // 0: never
    int64_t         fail_launch_at;
    int32_t         min_batch;
    int32_t         n_graphs, max_cmds;
    bool            capture_ok, events_ok;
    // memory
    uint64_t        mem_used;
    int64_t         n_allocs;
    // queue: commands with sequence numbers [done + 1, queued] are pending
    port_mutex *    mutex;
    port_cond *     cond;               // queue changes (work, room, progress)
    port_thread *   thread;
    sim_cmd *       ring;               // [kRingSize]
    uint64_t        queued;             // sequence number of the last queued command
    uint64_t        done;               // ... of the last finished one
    bool            stop;
    tern_status     error;              // first failure since the last synchronize
    char            error_msg[200];
    int64_t         n_run_launches;     // ops the worker ran (fail_launch counts these)
    // capture
    bool            capturing;
    sim_graph *     recording;
    sim_graph *     graphs;             // [n_graphs]
    sim_cmd *       graph_cmds;         // [n_graphs * max_cmds]
    // op scratch (grown by prepare, at plan time only)
    void *          work;
    size_t          work_size;
    // counts (written by the caller's thread and the worker)
    std::atomic<uint64_t> n_submissions, n_launches, n_h2d, n_d2h, n_d2d, b_h2d, b_d2h, b_d2d, n_captures, n_replays;
};

// ---- knobs ---------------------------------------------------------------------

bool parse_u64(const char * s, size_t n, uint64_t * out, bool units) {
    if (n == 0) return false;
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t) (s[i] - '0');
    }
    if (i == 0) return false;
    if (i < n) {
        if (!units || i + 1 != n) return false;
        const char u = s[i];
        const int shift = u == 'K' || u == 'k' ? 10 : u == 'M' || u == 'm' ? 20 : u == 'G' || u == 'g' ? 30 : -1;
        if (shift < 0 || v > (UINT64_MAX >> shift)) return false;
        v <<= shift;
    }
    *out = v;
    return true;
}

int op_by_name(const char * s, size_t n) {
    static const struct { const char * name; int op; } ops[] = {
        {"GET_ROWS", TERN_OP_GET_ROWS}, {"RMS_NORM", TERN_OP_RMS_NORM}, {"ADD", TERN_OP_ADD}, {"MUL", TERN_OP_MUL},
        {"SCALE", TERN_OP_SCALE}, {"MUL_MAT", TERN_OP_MUL_MAT}, {"ROPE_CACHE", TERN_OP_ROPE_CACHE}, {"ROPE", TERN_OP_ROPE},
        {"SET_ROWS", TERN_OP_SET_ROWS}, {"ATTN", TERN_OP_ATTN}, {"SWIGLU", TERN_OP_SWIGLU}, {"ARGMAX", TERN_OP_ARGMAX},
        {"COPY_ROWS", TERN_OP_COPY_ROWS}, {"GEGLU", TERN_OP_GEGLU}, {"SOFTCAP", TERN_OP_SOFTCAP},
    };
    for (const auto & o : ops) {
        if (strlen(o.name) == n && memcmp(o.name, s, n) == 0) return o.op;
    }
    return -1;
}

tern_status parse_params(sim_device * d, const char * params) {
    for (const char * p = params; p && *p;) {
        const char * end = strchr(p, ';');
        const size_t len = end ? (size_t) (end - p) : strlen(p);
        const char * eq = (const char *) memchr(p, '=', len);
        const size_t klen = eq ? (size_t) (eq - p) : len;
        const char * v = eq ? eq + 1 : NULL;
        const size_t vlen = eq ? len - klen - 1 : 0;
        auto key = [&](const char * k) { return strlen(k) == klen && memcmp(k, p, klen) == 0; };
        uint64_t u = 0;
        bool ok = true;
        if (key("refuse") && v) {
            for (const char * o = v; o < v + vlen;) {
                const char * plus = (const char *) memchr(o, '+', (size_t) (v + vlen - o));
                const size_t olen = plus ? (size_t) (plus - o) : (size_t) (v + vlen - o);
                const int op = op_by_name(o, olen);
                if (op < 0) return tern_hal_error(TERN_ERR_INVALID_ARG, "sim: refuse: no op '%.*s'", (int) olen, o);
                d->refuse[op] = true;
                o += olen + (plus ? 1 : 0);
            }
        } else if (key("mem") && v) {
            ok = parse_u64(v, vlen, &d->mem_limit, true);
        } else if (key("fail_alloc") && v) {
            ok = parse_u64(v, vlen, &u, false) && u > 0;
            d->fail_alloc_at = (int64_t) u;
        } else if (key("fail_launch") && v) {
            ok = parse_u64(v, vlen, &u, false) && u > 0;
            d->fail_launch_at = (int64_t) u;
        } else if (key("min_batch") && v) {
            ok = parse_u64(v, vlen, &u, false) && u < INT32_MAX;
            d->min_batch = (int32_t) u;
        } else if (key("graphs") && v) {
            ok = parse_u64(v, vlen, &u, false) && u > 0 && u <= 4096;
            d->n_graphs = (int32_t) u;
        } else if (key("cmds") && v) {
            ok = parse_u64(v, vlen, &u, false) && u > 0 && u <= (1u << 20);
            d->max_cmds = (int32_t) u;
        } else if (key("no_capture") && !v) {
            d->capture_ok = false;
        } else if (key("no_events") && !v) {
            d->events_ok = false;
        } else {
            return tern_hal_error(TERN_ERR_INVALID_ARG, "sim: unknown parameter '%.*s' (refuse, mem, fail_alloc, fail_launch, "
                                  "min_batch, graphs, cmds, no_capture, no_events)", (int) len, p);
        }
        if (!ok) return tern_hal_error(TERN_ERR_INVALID_ARG, "sim: bad value in '%.*s'", (int) len, p);
        p = end ? end + 1 : NULL;
    }
    return TERN_OK;
}

// ---- the worker ------------------------------------------------------------------

void fail(sim_device * d, tern_status st, const char * fmt, const char * what, int64_t n) {
    if (d->error != TERN_OK) return;
    d->error = st;
    snprintf(d->error_msg, sizeof(d->error_msg), fmt, what, (long long) n);
}

// A tensor header over the sim's memory for the CPU kernels.
void to_tensor(const tern_hal_tensor * h, tern_tensor * t) {
    memset(t, 0, sizeof(*t));
    t->type = (tern_type) h->type;
    t->layout = (uint8_t) h->layout;
    t->n_dims = 4;
    for (int i = 0; i < 4; i++) {
        t->ne[i] = h->ne[i];
        t->nb[i] = (size_t) h->nb[i];
    }
    t->data = h->buffer ? h->buffer->mem + h->offset : NULL;  // (supports_op time: no memory yet)
    t->id = -1;
    t->node_index = -1;
}

void run_launch(sim_device * d, const tern_hal_op_desc * op) {
    d->n_run_launches++;
    d->n_launches.fetch_add(1, std::memory_order_relaxed);
    if (d->fail_launch_at > 0 && d->n_run_launches == d->fail_launch_at) {
        fail(d, TERN_ERR_INTERNAL, "sim: injected failure of launch '%s' (the %lld-th)", op->name ? op->name : "?",
             d->n_run_launches);
        return;
    }
    tern_tensor src[TERN_HAL_MAX_SRC], dst;
    to_tensor(&op->dst, &dst);
    dst.op = (tern_op) op->op;
    memcpy(dst.op_params, op->params, sizeof(dst.op_params));
    for (int i = 0; i < TERN_HAL_MAX_SRC; i++) {
        if (op->src[i].type == TERN_HAL_TYPE_NONE) continue;
        to_tensor(&op->src[i], &src[i]);
        dst.src[i] = &src[i];
    }
    const size_t need = tern_node_work_size(&dst, 1);
    if (need > d->work_size) {
        fail(d, TERN_ERR_INTERNAL, "sim: launch '%s' needs %lld bytes of scratch (not prepared)", op->name ? op->name : "?",
             (int64_t) need);
        return;
    }
    tern_node_compute(&dst, d->work, d->work_size);
}

void run(sim_device * d, const sim_cmd * c) {
    if (d->error != TERN_OK) return;  // a failed stream skips the rest until synchronize
    switch (c->kind) {
        case CMD_H2D:
            d->n_h2d.fetch_add(1, std::memory_order_relaxed);
            d->b_h2d.fetch_add(c->size, std::memory_order_relaxed);
            memcpy(c->dst, c->src, c->size);
            break;
        case CMD_D2H:
            d->n_d2h.fetch_add(1, std::memory_order_relaxed);
            d->b_d2h.fetch_add(c->size, std::memory_order_relaxed);
            memcpy(c->dst, c->src, c->size);
            break;
        case CMD_D2D:
            d->n_d2d.fetch_add(1, std::memory_order_relaxed);
            d->b_d2d.fetch_add(c->size, std::memory_order_relaxed);
            memcpy(c->dst, c->src, c->size);
            break;
        case CMD_LAUNCH: run_launch(d, &c->op); break;
        case CMD_REPLAY:
            d->n_replays.fetch_add(1, std::memory_order_relaxed);
            for (int32_t i = 0; i < c->graph->n && d->error == TERN_OK; i++) run(d, &c->graph->cmds[i]);
            break;
    }
}

void * worker_main(void * arg) {
    sim_device * d = (sim_device *) arg;
    port_mutex_lock(d->mutex);
    for (;;) {
        while (!d->stop && d->done == d->queued) port_cond_wait(d->cond, d->mutex);
        if (d->done == d->queued && d->stop) break;
        const sim_cmd c = d->ring[(d->done + 1) % kRingSize];
        port_mutex_unlock(d->mutex);
        run(d, &c);  // the error fields are the worker's until the caller synchronizes (it waits for done)
        port_mutex_lock(d->mutex);
        d->done++;
        port_cond_broadcast(d->cond);
    }
    port_mutex_unlock(d->mutex);
    return NULL;
}

// Queue a command (or record it while capturing).
tern_status submit(sim_device * d, const sim_cmd & c) {
    if (d->capturing) {
        sim_graph * g = d->recording;
        if (!g) return TERN_OK;  // the capture already failed: capture_end reports it
        if (g->n >= d->max_cmds) {
            g->slot = -1;        // give the slot back
            d->recording = NULL;
            return TERN_OK;
        }
        g->cmds[g->n++] = c;
        return TERN_OK;
    }
    port_mutex_lock(d->mutex);
    while (d->queued - d->done >= (uint64_t) kRingSize - 1) port_cond_wait(d->cond, d->mutex);
    d->ring[(d->queued + 1) % kRingSize] = c;
    d->queued++;
    port_cond_broadcast(d->cond);
    port_mutex_unlock(d->mutex);
    d->n_submissions.fetch_add(1, std::memory_order_relaxed);
    return TERN_OK;
}

void wait_until(sim_device * d, uint64_t seq) {
    port_mutex_lock(d->mutex);
    while (d->done < seq) port_cond_wait(d->cond, d->mutex);
    port_mutex_unlock(d->mutex);
}

// The first error since the last call (the worker is idle up to `seq`).
tern_status take_error(sim_device * d) {
    if (d->error == TERN_OK) return TERN_OK;
    const tern_status st = d->error;
    d->error = TERN_OK;
    return tern_hal_error(st, "%s", d->error_msg);
}

// ---- the vtable ------------------------------------------------------------------------

int32_t sim_count(void) { return kMaxInstances; }

void sim_close(void * dev);

tern_status sim_open(int32_t index, const char * params, void ** out) {
    *out = NULL;
    if (index < 0 || index >= kMaxInstances) return tern_hal_error(TERN_ERR_NOT_FOUND, "sim: no instance %d", (int) index);
    sim_device probe;
    memset((void *) &probe, 0, sizeof(probe));
    probe.mem_limit = 2ull << 30;
    probe.min_batch = 32;
    probe.n_graphs = 16;
    probe.max_cmds = 4096;
    probe.capture_ok = probe.events_ok = true;
    TERN_TRY(parse_params(&probe, params));
    // One block: the device, its thread objects, the ring and the capture pool.
    const size_t graph_bytes = (size_t) probe.n_graphs * sizeof(sim_graph);
    const size_t cmd_bytes = (size_t) probe.n_graphs * (size_t) probe.max_cmds * sizeof(sim_cmd);
    const size_t bytes = arena_padded(sizeof(sim_device)) + arena_padded(port_mutex_size()) + arena_padded(port_cond_size()) +
                         arena_padded(port_thread_size()) + arena_padded(kRingSize * sizeof(sim_cmd)) + arena_padded(graph_bytes) +
                         arena_padded(cmd_bytes);
    uint8_t * mem = (uint8_t *) port_alloc(bytes);
    if (!mem) return tern_hal_error(TERN_ERR_NO_MEMORY, "sim: cannot allocate %zu bytes for the device", bytes);
    memset(mem, 0, bytes);
    sim_device * d = (sim_device *) mem;
    memcpy((void *) d, (const void *) &probe, sizeof(probe));
    uint8_t * p = mem + arena_padded(sizeof(sim_device));
    d->mutex = (port_mutex *) p; p += arena_padded(port_mutex_size());
    d->cond = (port_cond *) p; p += arena_padded(port_cond_size());
    d->thread = (port_thread *) p; p += arena_padded(port_thread_size());
    d->ring = (sim_cmd *) p; p += arena_padded(kRingSize * sizeof(sim_cmd));
    d->graphs = (sim_graph *) p; p += arena_padded(graph_bytes);
    d->graph_cmds = (sim_cmd *) p;
    for (int32_t i = 0; i < d->n_graphs; i++) {
        d->graphs[i].cmds = d->graph_cmds + (size_t) i * (size_t) d->max_cmds;
        d->graphs[i].slot = -1;
    }
    d->index = index;
    snprintf(d->desc, sizeof(d->desc), "sim%d: software accelerator, %llu MiB, Tern's CPU kernels on its own thread",
             (int) index, (unsigned long long) (d->mem_limit >> 20));
    port_mutex_init(d->mutex);
    port_cond_init(d->cond);
    tern_status st = port_thread_start(d->thread, worker_main, d);
    if (st != TERN_OK) {
        port_cond_destroy(d->cond);
        port_mutex_destroy(d->mutex);
        port_free(mem);
        return st;
    }
    *out = d;
    return TERN_OK;
}

void sim_close(void * dev) {
    sim_device * d = (sim_device *) dev;
    if (!d) return;
    port_mutex_lock(d->mutex);
    d->stop = true;
    port_cond_broadcast(d->cond);
    port_mutex_unlock(d->mutex);
    port_thread_join(d->thread);
    port_cond_destroy(d->cond);
    port_mutex_destroy(d->mutex);
    if (d->work) port_free(d->work);
    port_free(d);
}

const char * sim_describe(void * dev) { return ((sim_device *) dev)->desc; }

void sim_get_caps(void * dev, tern_hal_caps * c) {
    const sim_device * d = (const sim_device *) dev;
    memset(c, 0, sizeof(*c));
    c->mem_total = d->mem_limit;
    c->mem_free = d->mem_limit - d->mem_used;
    c->host_visible = 1;
    c->capture = d->capture_ok;
    c->events = d->events_ok;
    c->alignment = 64;
    c->max_buffer_size = d->mem_limit;
    c->op_offload_min_batch = d->min_batch;
}

tern_status sim_buffer_alloc(void * dev, uint64_t size, tern_hal_usage usage, tern_hal_buffer ** out) {
    sim_device * d = (sim_device *) dev;
    *out = NULL;
    d->n_allocs++;
    if (d->fail_alloc_at > 0 && d->n_allocs == d->fail_alloc_at) {
        return tern_hal_error(TERN_ERR_NO_MEMORY, "sim%d: injected failure of allocation %lld (%llu bytes)", (int) d->index,
                              (long long) d->n_allocs, (unsigned long long) size);
    }
    if (size > d->mem_limit - d->mem_used) {
        return tern_hal_error(TERN_ERR_NO_MEMORY, "sim%d: out of memory: %llu bytes asked, %llu of %llu free", (int) d->index,
                              (unsigned long long) size, (unsigned long long) (d->mem_limit - d->mem_used),
                              (unsigned long long) d->mem_limit);
    }
    // The header and the bytes in one block; zeroed, as a device clears what it hands out.
    const size_t head = arena_padded(sizeof(tern_hal_buffer));
    uint8_t * mem = (uint8_t *) port_alloc(head + (size_t) size + TERN_ARENA_ALIGN);
    if (!mem) return tern_hal_error(TERN_ERR_NO_MEMORY, "sim%d: cannot allocate %llu bytes", (int) d->index, (unsigned long long) size);
    tern_hal_buffer * b = (tern_hal_buffer *) mem;
    b->mem = (uint8_t *) (((uintptr_t) mem + head + TERN_ARENA_ALIGN - 1) & ~(uintptr_t) (TERN_ARENA_ALIGN - 1));
    memset(b->mem, 0, (size_t) size);
    b->size = size;
    b->usage = usage;
    d->mem_used += size;
    *out = b;
    return TERN_OK;
}

void sim_buffer_free(void * dev, tern_hal_buffer * b) {
    if (!b) return;
    ((sim_device *) dev)->mem_used -= b->size;
    port_free(b);
}

void * sim_buffer_host_ptr(void * dev, tern_hal_buffer * b) { return b->usage == TERN_HAL_USAGE_STAGING ? b->mem : NULL; }

tern_status check_range(const tern_hal_buffer * b, uint64_t offset, uint64_t size, const char * what) {
    if (!b || offset > b->size || size > b->size - offset) {
        return tern_hal_error(TERN_ERR_INTERNAL, "sim: %s of %llu bytes at %llu outside a buffer of %llu", what,
                              (unsigned long long) size, (unsigned long long) offset, (unsigned long long) (b ? b->size : 0));
    }
    return TERN_OK;
}

tern_status sim_copy_h2d(void * dev, tern_hal_buffer * dst, uint64_t off, const void * src, uint64_t size) {
    sim_device * d = (sim_device *) dev;
    TERN_TRY(check_range(dst, off, size, "copy_h2d"));
    sim_cmd c;
    memset(&c, 0, sizeof(c));
    c.kind = CMD_H2D;
    c.dst = dst->mem + off;
    c.src = (const uint8_t *) src;
    c.size = size;
    return submit(d, c);
}

tern_status sim_copy_d2h(void * dev, void * dst, tern_hal_buffer * src, uint64_t off, uint64_t size) {
    sim_device * d = (sim_device *) dev;
    TERN_TRY(check_range(src, off, size, "copy_d2h"));
    sim_cmd c;
    memset(&c, 0, sizeof(c));
    c.kind = CMD_D2H;
    c.dst = (uint8_t *) dst;
    c.src = src->mem + off;
    c.size = size;
    return submit(d, c);
}

tern_status sim_copy_d2d(void * dev, tern_hal_buffer * dst, uint64_t doff, tern_hal_buffer * src, uint64_t soff, uint64_t size) {
    sim_device * d = (sim_device *) dev;
    TERN_TRY(check_range(dst, doff, size, "copy_d2d"));
    TERN_TRY(check_range(src, soff, size, "copy_d2d"));
    sim_cmd c;
    memset(&c, 0, sizeof(c));
    c.kind = CMD_D2D;
    c.dst = dst->mem + doff;
    c.src = src->mem + soff;
    c.size = size;
    return submit(d, c);
}

int sim_supports_op(void * dev, const tern_hal_op_desc * op) {
    const sim_device * d = (const sim_device *) dev;
    if (op->op <= TERN_OP_VIEW || op->op >= TERN_OP_COUNT) return 0;
    return !d->refuse[op->op];
}

// The worst-case descriptions come here at plan time: the scratch grows then, never later.
tern_status sim_prepare(void * dev, const tern_hal_op_desc * op) {
    sim_device * d = (sim_device *) dev;
    tern_tensor src[TERN_HAL_MAX_SRC], dst;
    to_tensor(&op->dst, &dst);
    dst.op = (tern_op) op->op;
    memcpy(dst.op_params, op->params, sizeof(dst.op_params));
    for (int i = 0; i < TERN_HAL_MAX_SRC; i++) {
        if (op->src[i].type == TERN_HAL_TYPE_NONE) continue;
        to_tensor(&op->src[i], &src[i]);
        dst.src[i] = &src[i];
    }
    const size_t need = tern_node_work_size(&dst, 1);
    if (need <= d->work_size) return TERN_OK;
    // Idle while plans are made (context creation): the worker does not touch the scratch.
    void * w = port_alloc(need + TERN_ARENA_ALIGN);
    if (!w) return tern_hal_error(TERN_ERR_NO_MEMORY, "sim%d: cannot allocate %zu bytes of scratch", (int) d->index, need);
    if (d->work) port_free(d->work);
    d->work = w;
    d->work_size = need;
    return TERN_OK;
}

tern_status sim_launch(void * dev, const tern_hal_op_desc * op) {
    sim_cmd c;
    memset(&c, 0, sizeof(c));
    c.kind = CMD_LAUNCH;
    c.op = *op;
    return submit((sim_device *) dev, c);
}

tern_status sim_synchronize(void * dev) {
    sim_device * d = (sim_device *) dev;
    wait_until(d, d->queued);
    return take_error(d);
}

tern_status sim_event_create(void * dev, tern_hal_event ** out) {
    tern_hal_event * e = (tern_hal_event *) port_alloc(sizeof(tern_hal_event));
    if (!e) return tern_hal_error(TERN_ERR_NO_MEMORY, "sim: cannot allocate an event");
    e->seq = 0;
    *out = e;
    return TERN_OK;
}

void sim_event_destroy(void * dev, tern_hal_event * e) { port_free(e); }

tern_status sim_event_record(void * dev, tern_hal_event * e) {
    sim_device * d = (sim_device *) dev;
    port_mutex_lock(d->mutex);
    e->seq = d->queued;
    port_mutex_unlock(d->mutex);
    return TERN_OK;
}

tern_status sim_event_wait(void * dev, tern_hal_event * e) {
    sim_device * d = (sim_device *) dev;
    wait_until(d, e->seq);
    return take_error(d);
}

tern_status sim_capture_begin(void * dev) {
    sim_device * d = (sim_device *) dev;
    if (d->capturing) return tern_hal_error(TERN_ERR_INTERNAL, "sim: capture_begin while capturing");
    d->capturing = true;
    d->recording = NULL;
    for (int32_t i = 0; i < d->n_graphs; i++) {
        if (d->graphs[i].slot < 0) {
            d->recording = &d->graphs[i];
            d->recording->slot = i;
            d->recording->n = 0;
            break;
        }
    }
    return TERN_OK;
}

tern_status sim_capture_end(void * dev, tern_hal_graph ** out) {
    sim_device * d = (sim_device *) dev;
    *out = NULL;
    if (!d->capturing) return tern_hal_error(TERN_ERR_INTERNAL, "sim: capture_end without capture_begin");
    d->capturing = false;
    sim_graph * g = d->recording;
    d->recording = NULL;
    if (!g) {
        return tern_hal_error(TERN_ERR_NO_MEMORY, "sim%d: capture pool full (%d graphs of at most %d commands)", (int) d->index,
                              (int) d->n_graphs, (int) d->max_cmds);
    }
    d->n_captures.fetch_add(1, std::memory_order_relaxed);
    *out = (tern_hal_graph *) g;  // a sim_graph is the first (only) member
    return TERN_OK;
}

tern_status sim_replay(void * dev, tern_hal_graph * graph) {
    sim_cmd c;
    memset(&c, 0, sizeof(c));
    c.kind = CMD_REPLAY;
    c.graph = &graph->g;
    return submit((sim_device *) dev, c);
}

void sim_graph_release(void * dev, tern_hal_graph * graph) {
    sim_device * d = (sim_device *) dev;
    wait_until(d, d->queued);  // a queued replay may still read the list
    graph->g.slot = -1;
    graph->g.n = 0;
}

void sim_get_counters(void * dev, tern_hal_counters * c) {
    const sim_device * d = (const sim_device *) dev;
    c->submissions = d->n_submissions.load();
    c->launches = d->n_launches.load();
    c->copies_h2d = d->n_h2d.load();
    c->copies_d2h = d->n_d2h.load();
    c->copies_d2d = d->n_d2d.load();
    c->bytes_h2d = d->b_h2d.load();
    c->bytes_d2h = d->b_d2h.load();
    c->bytes_d2d = d->b_d2d.load();
    c->captures = d->n_captures.load();
    c->replays = d->n_replays.load();
}

const tern_hal_device_desc kSimDesc = {
    TERN_HAL_ABI_VERSION, "sim", 0,
    sim_count, sim_open, sim_close, sim_describe, sim_get_caps,
    sim_buffer_alloc, sim_buffer_free, sim_buffer_host_ptr, NULL,
    sim_copy_h2d, sim_copy_d2h, sim_copy_d2d,
    sim_supports_op, sim_prepare, sim_launch, NULL, sim_synchronize,
    sim_event_create, sim_event_destroy, sim_event_record, sim_event_wait,
    sim_capture_begin, sim_capture_end, sim_replay, sim_graph_release,
    sim_get_counters,
};

}  // namespace

const tern_hal_device_desc * sim_device_desc(void) { return &kSimDesc; }

}  // namespace hal
}  // namespace tern
