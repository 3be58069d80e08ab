// The scheduler (see sched.h).
#include "hal/sched.h"
#include "core/sort.h"
#include "core/status.h"
#include "cpu/compute.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

namespace tern {
namespace hal {

namespace {

const int8_t HOST = -1;
const int8_t NONE = -2;     // a VIEW node: runs nowhere
const int8_t PENDING = -3;  // fed by inputs only: takes its first consumer's device
const int8_t OFFLOADED = -4; // OFFLOADED - d: op offload to device d (marked for the count, then d)

bool computes(const tern_tensor * t) { return t->op != TERN_OP_NONE && t->op != TERN_OP_VIEW; }

bool in_graph(const tern_graph * g, const tern_tensor * t) {
    return t->node_index >= 0 && t->node_index < g->n_nodes && g->nodes[t->node_index] == t;
}

// Where the bytes of t live: a leaf's buffer, an input on the host, a node where it runs.
int8_t location(const tern_graph * g, const int8_t * node_device, const tern_tensor * t) {
    const tern_tensor * o = tern_tensor_owner(t);
    if (o->flags & TERN_TENSOR_EXTERNAL) return o->buffer && o->buffer->device >= 0 ? (int8_t) o->buffer->device : HOST;
    if (!in_graph(g, o)) return HOST;  // inputs
    const int8_t d = node_device[o->node_index];
    return d >= 0 ? d : HOST;
}

// The computing node that wrote t's bytes (through views), or NULL for a leaf.
const tern_tensor * producer(const tern_tensor * t) {
    while (t && t->op == TERN_OP_VIEW) t = t->src[0];
    return t && computes(t) ? t : NULL;
}

void to_hal_tensor(const tern_tensor * t, tern_hal_tensor * h) {
    memset(h, 0, sizeof(*h));
    if (!t) {
        h->type = TERN_HAL_TYPE_NONE;
        return;
    }
    h->type = t->type;
    h->layout = t->layout;
    for (int i = 0; i < 4; i++) {
        h->ne[i] = t->ne[i];
        h->nb[i] = t->nb[i];
    }
    h->buffer = t->buffer ? (tern_hal_buffer *) t->buffer->handle : NULL;
    h->offset = t->offset;
}

// A node as a launch sees it (name left out for records: names carry no meaning for a match).
void make_desc(const tern_tensor * node, tern_hal_op_desc * d, bool with_name) {
    memset(d, 0, sizeof(*d));
    d->op = node->op;
    static_assert(sizeof(d->params) == sizeof(node->op_params), "op params fit");
    memcpy(d->params, node->op_params, sizeof(d->params));
    to_hal_tensor(node, &d->dst);
    for (int i = 0; i < TERN_HAL_MAX_SRC; i++) to_hal_tensor(node->src[i], &d->src[i]);
    d->name = with_name ? node->name : NULL;
    d->layer = node->layer;
}

bool supported(const hal_context * hc, int8_t dev, const tern_tensor * node) {
    tern_hal_op_desc d;
    make_desc(node, &d, true);
    const hal_device * dv = &hc->dev[dev];
    return dv->desc->supports_op(dv->dev, &d) != 0;
}

int64_t act_rows(const tern_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

// 1. Every computing node's device.
int32_t assign(const hal_context * hc, const tern_graph * g, bool large, int8_t * dev) {
    int32_t offloaded = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const tern_tensor * t = g->nodes[i];
        if (!computes(t)) {
            dev[i] = NONE;
            continue;
        }
        int8_t d = PENDING;
        bool fixed = false;
        for (int s = 0; s < TERN_MAX_SRC && !fixed; s++) {  // the first weight decides
            if (!t->src[s]) continue;
            const tern_tensor * o = tern_tensor_owner(t->src[s]);
            if (!(o->flags & TERN_TENSOR_WEIGHT)) continue;
            d = location(g, dev, o);
            fixed = true;
            // Op offload: a large matmul of a host weight moves to a device.
            const int32_t layer = t->layer;
            if (d == HOST && large && hc->op_offload && t->op == TERN_OP_MUL_MAT && s == 0 && layer >= 0 && layer < hc->n_layer - 1 &&
                hc->n_dev > 0) {
                const int8_t target = hc->layer_device[layer] >= 0 ? hc->layer_device[layer] : 0;
                const int32_t min_batch = hc->dev[target].caps.op_offload_min_batch;
                if (min_batch > 0 && act_rows(t->src[1]) >= min_batch && supported(hc, target, t)) d = OFFLOADED - target;
            }
        }
        for (int s = 0; s < TERN_MAX_SRC && !fixed; s++) {  // else a KV cache decides
            if (!t->src[s]) continue;
            const tern_tensor * o = tern_tensor_owner(t->src[s]);
            if (!(o->flags & TERN_TENSOR_KV)) continue;
            d = location(g, dev, o);
            fixed = true;
        }
        for (int s = 0; s < TERN_MAX_SRC && !fixed; s++) {  // else the first source that is a node ...
            if (!t->src[s]) continue;
            const tern_tensor * o = tern_tensor_owner(t->src[s]);
            if (!in_graph(g, o) || !computes(o) || dev[o->node_index] == PENDING) continue;
            // ... of its own layer; a source from another layer (the residual
            // stream entering a layer): the layer's placement decides.
            if (o->layer != t->layer && t->layer >= 0 && t->layer <= hc->n_layer) {
                d = hc->layer_device[t->layer] >= 0 ? hc->layer_device[t->layer] : HOST;
            } else {
                d = dev[o->node_index];
            }
            fixed = true;
        }
        if (d <= OFFLOADED) {
            d = (int8_t) (OFFLOADED - d);  // supported: checked with the offload
            offloaded++;
        } else if (d >= 0 && !supported(hc, d, t)) {
            d = HOST;
        }
        dev[i] = d;
    }
    // Nodes fed by inputs only follow their first consumer.
    for (int pass = 0; pass < 4; pass++) {
        bool changed = false;
        for (int32_t j = 0; j < g->n_nodes; j++) {
            const tern_tensor * t = g->nodes[j];
            if (dev[j] == PENDING || dev[j] == NONE) continue;
            for (int s = 0; s < TERN_MAX_SRC; s++) {
                if (!t->src[s]) continue;
                const tern_tensor * o = tern_tensor_owner(t->src[s]);
                if (!in_graph(g, o) || dev[o->node_index] != PENDING) continue;
                int8_t d = dev[j];
                if (d >= 0 && !supported(hc, d, o)) d = HOST;
                dev[o->node_index] = d;
                changed = true;
            }
        }
        if (!changed) break;
    }
    for (int32_t i = 0; i < g->n_nodes; i++) if (dev[i] == PENDING) dev[i] = HOST;
    return offloaded;
}

struct copy_builder {
    const hal_context * hc;
    const tern_graph *  g;
    const int8_t *      dev;
    const int32_t *     split_of;   // [n_nodes] split of each computing node
    sched_plan *        p;
    bool                fill;       // false: count only
    int32_t             n_copies, n_redirects;
    // copy src ids kept while counting too (a small table would do; the plan's arrays are sized by a first pass)
    int32_t find(int32_t key, int8_t to, int32_t split, bool kv) const {
        for (int32_t c = 0; c < n_copies; c++) {
            const sched_copy & x = p->copies[c];
            if (x.key == key && x.to == to && (x.split == split || !kv)) return c;
        }
        return -1;
    }
    int32_t add(int32_t key, int32_t src_id, int8_t from, int8_t to, int32_t split, bool at_end, bool bounce) {
        const int32_t c = n_copies++;
        if (fill) {
            sched_copy & x = p->copies[c];
            x.key = key;
            x.src_id = src_id;
            x.copy_id = -1;
            x.from = from;
            x.to = to;
            x.split = split;
            x.at_end = at_end;
            x.bounce = bounce;
            x.written_at = -1;
            x.live_to = -1;
        }
        return c;
    }
};

}  // namespace

void hal_context_init(hal_context * hc, hal_device * dev, int32_t n_dev, const int8_t * layer_device, int32_t n_layer,
                      bool op_offload, bool capture_prefill, int32_t cache_capacity) {
    memset(hc, 0, sizeof(*hc));
    hc->dev = dev;
    hc->n_dev = n_dev;
    hc->layer_device = layer_device;
    hc->n_layer = n_layer;
    hc->op_offload = op_offload;
    hc->capture_prefill = capture_prefill;
    hc->cache_capacity = cache_capacity;
    hc->staging_dev = -1;
    for (int32_t d = 0; d < n_dev; d++) {
        const int32_t mb = dev[d].caps.op_offload_min_batch;
        if (mb > 0 && (hc->offload_min_batch == 0 || mb < hc->offload_min_batch)) hc->offload_min_batch = mb;
        if (hc->staging_dev < 0 && dev[d].caps.host_visible) hc->staging_dev = d;
    }
}

size_t sched_plan_bound(int32_t n) {
    const size_t nn = (size_t) n + 1;
    const size_t copies = nn * (2 * TERN_MAX_SRC + 1) + 2;
    return 16 * TERN_ARENA_ALIGN + arena_padded(sizeof(sched_plan)) + 2 * arena_padded(nn) + arena_padded(4 * nn) +
           arena_padded(sizeof(sched_split) * nn) + 2 * arena_padded(sizeof(sched_copy) * copies) +
           arena_padded(sizeof(sched_redirect) * nn * TERN_MAX_SRC) + 2 * arena_padded(4 * copies) +
           2 * arena_padded(2 * nn + copies) + arena_padded(4 * (nn + copies));
}

size_t sched_records_size(const sched_plan * p) {
    return p->capturable ? arena_padded(sizeof(gc_record) * ((size_t) p->n_records + 1)) : 0;
}

tern_status sched_records_alloc(sched_plan * p, tern_arena * arena) {
    if (!p->capturable) return TERN_OK;
    p->records = (gc_record *) arena_alloc(arena, sizeof(gc_record) * ((size_t) p->n_records + 1), TERN_MEM_GRAPH);
    return p->records ? TERN_OK : TERN_ERR_NO_MEMORY;
}

tern_status sched_plan_make(hal_context * hc, const tern_graph * g, tern_graph_builder * gb, bool large, bool capturable,
                            tern_arena * arena, sched_plan ** out) {
    *out = NULL;
    const size_t mark = arena_temp_mark(arena);
    tern_status st = TERN_OK;
    sched_plan * p = (sched_plan *) arena_calloc(arena, sizeof(sched_plan), TERN_MEM_GRAPH);
    if (!p) return TERN_ERR_NO_MEMORY;
    const int32_t n = g->n_nodes;
    p->n_nodes = n;
    p->capturable = capturable;
    p->n_base_tensors = gb->n_tensors;
    p->node_device = (int8_t *) arena_alloc(arena, (size_t) n + 1, TERN_MEM_GRAPH);
    int32_t * split_of = (int32_t *) arena_alloc_temp(arena, sizeof(int32_t) * ((size_t) n + 1));
    if (!p->node_device || !split_of) return TERN_ERR_NO_MEMORY;

    // 1. assign
    p->n_offloaded = assign(hc, g, large, p->node_device);

    // 2. split: runs of computing nodes on one device
    int32_t n_splits = 0;
    int8_t prev = NONE;
    for (int32_t i = 0; i < n; i++) {
        split_of[i] = -1;
        if (p->node_device[i] == NONE) continue;
        if (n_splits == 0 || p->node_device[i] != prev) n_splits++;
        prev = p->node_device[i];
        split_of[i] = n_splits - 1;
    }
    p->splits = (sched_split *) arena_calloc(arena, sizeof(sched_split) * ((size_t) n_splits + 1), TERN_MEM_GRAPH);
    if (!p->splits) return TERN_ERR_NO_MEMORY;
    p->n_splits = n_splits;
    for (int32_t i = n - 1; i >= 0; i--) {  // backwards: `first` ends at the run's first node
        if (split_of[i] < 0) continue;
        sched_split & s = p->splits[split_of[i]];
        if (s.last == 0 && s.first == 0) s.last = i;
        s.first = i;
        s.device = p->node_device[i];
        s.entry = -1;
    }
    for (int32_t k = 0; k < n_splits; k++) {
        if (p->splits[k].last < p->splits[k].first) p->splits[k].last = p->splits[k].first;
        if (p->splits[k].device >= 0) p->n_device_splits++;
    }

    // 3. copies: the walk runs twice, counting into a temp table of a bound
    //    first, then into the plan's own tables
    int64_t bound = 2;
    for (int32_t i = 0; i < n; i++) bound += 2 * TERN_MAX_SRC + 1;
    sched_copy * counted = (sched_copy *) arena_alloc_temp(arena, sizeof(sched_copy) * (size_t) bound);
    if (!counted) return TERN_ERR_NO_MEMORY;
    copy_builder cb = { hc, g, p->node_device, split_of, p, true, 0, 0 };
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            p->copies = (sched_copy *) arena_calloc(arena, sizeof(sched_copy) * ((size_t) cb.n_copies + 1), TERN_MEM_GRAPH);
            p->redirects = (sched_redirect *) arena_calloc(arena, sizeof(sched_redirect) * ((size_t) cb.n_redirects + 1), TERN_MEM_GRAPH);
            if (!p->copies || !p->redirects) return TERN_ERR_NO_MEMORY;
        } else {
            p->copies = counted;
        }
        cb.n_copies = cb.n_redirects = 0;
        for (int32_t j = 0; j < n; j++) {
            const tern_tensor * t = g->nodes[j];
            const int8_t d = p->node_device[j];
            if (d == NONE) continue;
            const int32_t sj = split_of[j];
            for (int s = 0; s < TERN_MAX_SRC; s++) {
                const tern_tensor * src = t->src[s];
                if (!src) continue;
                // SET_ROWS writes its destination where it runs: never a copy.
                if (t->op == TERN_OP_SET_ROWS && s == 0) continue;
                const int8_t loc = location(g, p->node_device, src);
                if (loc == d) continue;
                const bool kv = (tern_tensor_owner(src)->flags & TERN_TENSOR_KV) != 0;
                int32_t c = cb.find(src->id, d, sj, kv);
                if (c < 0) {
                    const tern_tensor * prod = producer(src);
                    const int32_t prod_split = prod && in_graph(g, prod) ? split_of[prod->node_index] : -1;
                    if (loc >= 0 && d >= 0) {
                        // device -> device: a host leg at the end of the producer's split, then host -> d.
                        if (prod_split < 0) {
                            arena_temp_release(arena, mark);
                            return tern_fail(TERN_ERR_UNSUPPORTED, "scheduler: '%s' on %s is read by '%s' on %s (a leaf across devices)",
                                             src->name, hc->dev[loc].name, t->name, hc->dev[d].name);
                        }
                        int32_t h = cb.find(src->id, HOST, prod_split, kv);
                        if (h < 0) h = cb.add(src->id, src->id, loc, HOST, prod_split, true, true);
                        c = cb.add(src->id, -1 - h, HOST, d, sj, false, true);  // its source: the host leg
                    } else if (d >= 0) {
                        c = cb.add(src->id, src->id, HOST, d, sj, false, false);
                    } else if (prod_split >= 0) {
                        c = cb.add(src->id, src->id, loc, HOST, prod_split, true, false);
                    } else {
                        c = cb.add(src->id, src->id, loc, HOST, sj, false, false);  // a device leaf, fetched before the host split
                    }
                }
                if (round == 1) p->redirects[cb.n_redirects] = { j, s, c };
                cb.n_redirects++;
            }
            // A graph output on a device ends in a host copy.
            if ((t->flags & TERN_TENSOR_OUTPUT) && d >= 0 && cb.find(t->id, HOST, sj, false) < 0) cb.add(t->id, t->id, d, HOST, sj, true, false);
        }
    }
    p->n_copies = cb.n_copies;
    p->n_redirects = cb.n_redirects;

    // Copies ordered by (split, at the start before at the end, creation), so
    // each split's are two ranges; references follow the order.
    int32_t * order = (int32_t *) arena_alloc_temp(arena, sizeof(int32_t) * ((size_t) p->n_copies + 1));
    int32_t * where = (int32_t *) arena_alloc_temp(arena, sizeof(int32_t) * ((size_t) p->n_copies + 1));
    if (!order || !where) return TERN_ERR_NO_MEMORY;
    for (int32_t c = 0; c < p->n_copies; c++) order[c] = c;
    const sched_copy * cp = p->copies;
    tern_heap_sort(order, (size_t) p->n_copies, [&](int32_t a, int32_t b) {
        if (cp[a].split != cp[b].split) return cp[a].split < cp[b].split;
        if (cp[a].at_end != cp[b].at_end) return !cp[a].at_end;
        return a < b;
    });
    for (int32_t k = 0; k < p->n_copies; k++) {
        counted[k] = p->copies[order[k]];
        where[order[k]] = k;
    }
    for (int32_t k = 0; k < p->n_copies; k++) {
        p->copies[k] = counted[k];
        if (p->copies[k].src_id < 0) p->copies[k].src_id = -1 - where[-1 - p->copies[k].src_id];
    }
    for (int32_t r = 0; r < p->n_redirects; r++) p->redirects[r].copy = where[p->redirects[r].copy];
    for (int32_t k = 0; k < p->n_copies; k++) {
        sched_split & s = p->splits[p->copies[k].split];
        if (p->copies[k].at_end) {
            if (s.n_out++ == 0) s.out0 = k;
        } else {
            if (s.n_in++ == 0) s.in0 = k;
        }
    }
    // A device split waits for the devices whose host legs it reads.
    for (int32_t k = 0; k < n_splits; k++) {
        sched_split & s = p->splits[k];
        for (int32_t c = s.in0; c < s.in0 + s.n_in; c++) {
            const sched_copy & x = p->copies[c];
            if (x.bounce && x.src_id < 0) s.wait_mask |= 1u << (uint32_t) p->copies[-1 - x.src_id].from;
        }
    }

    // 4. regions, and how long host endpoints stay live
    const int32_t n_total = p->n_base_tensors + p->n_copies;
    p->region = (uint8_t *) arena_alloc(arena, (size_t) n_total + 1, TERN_MEM_GRAPH);
    p->live_to = (int32_t *) arena_alloc(arena, sizeof(int32_t) * ((size_t) n_total + 1), TERN_MEM_GRAPH);
    if (!p->region || !p->live_to) return TERN_ERR_NO_MEMORY;
    for (int32_t i = 0; i < n_total; i++) {
        p->region[i] = REGION_HOST;
        p->live_to[i] = -1;
    }
    for (int32_t i = 0; i < p->n_base_tensors; i++) {
        const tern_tensor * t = &gb->tensors[i];
        if (in_graph(g, t) && p->node_device[t->node_index] >= 0) p->region[i] = (uint8_t) (REGION_DEVICE0 + p->node_device[t->node_index]);
    }
    for (int32_t k = 0; k < p->n_copies; k++) {
        sched_copy & x = p->copies[k];
        const sched_split & s = p->splits[x.split];
        x.written_at = x.at_end ? s.last : s.first;
        p->region[p->n_base_tensors + k] = x.to >= 0 ? (uint8_t) (REGION_DEVICE0 + x.to) : (uint8_t) REGION_STAGING;
        if (x.to < 0) {
            // device -> host at the end of a split: its device source is read
            // then, after the split's last node: it lives to there.
            if (x.at_end && x.src_id >= 0) {
                const tern_tensor * owner = tern_tensor_owner(&gb->tensors[x.src_id]);
                if (!(owner->flags & TERN_TENSOR_EXTERNAL) && s.last > p->live_to[owner->id]) p->live_to[owner->id] = s.last;
            }
            continue;
        }
        // host -> device: the host end (a tensor's owner, or a host leg) is
        // read asynchronously: it lives to the next fence (a host split) or the end.
        int32_t fence = n;
        for (int32_t q = x.split + 1; q < n_splits; q++) {
            if (p->splits[q].device == HOST) {
                fence = p->splits[q].first;
                break;
            }
        }
        int32_t slot;
        if (x.src_id >= 0) {
            const tern_tensor * owner = tern_tensor_owner(&gb->tensors[x.src_id]);
            if (owner->flags & TERN_TENSOR_EXTERNAL) continue;  // a host weight: never reused
            slot = owner->id;
        } else {
            slot = p->n_base_tensors + (-1 - x.src_id);
        }
        p->region[slot] = REGION_STAGING;
        if (fence > p->live_to[slot]) p->live_to[slot] = fence;
    }
    // Records of capturable plans: one per input copy, launch and output copy of each device split.
    if (capturable) {
        int32_t total = 0, most = 0;
        for (int32_t k = 0; k < n_splits; k++) {
            sched_split & s = p->splits[k];
            if (s.device < 0) continue;
            int32_t launches = 0;
            for (int32_t i = s.first; i <= s.last; i++) launches += p->node_device[i] == s.device;
            s.rec0 = total;
            s.n_rec = s.n_in + launches + s.n_out;
            total += s.n_rec;
            if (s.n_rec > most) most = s.n_rec;
        }
        p->n_records = total;
        if (most > hc->max_records) hc->max_records = most;
    }
    arena_temp_release(arena, mark);
    if (st != TERN_OK) return st;
    *out = p;
    return sched_bind(p, gb, g);
}

tern_status sched_bind(sched_plan * p, tern_graph_builder * gb, const tern_graph * g) {
    if (g->n_nodes != p->n_nodes || gb->n_tensors != p->n_base_tensors) {
        return tern_fail(TERN_ERR_INTERNAL, "scheduler: graph of %" PRId32 " nodes / %" PRId32 " tensors, planned %" PRId32 " / %" PRId32,
                         g->n_nodes, gb->n_tensors, p->n_nodes, p->n_base_tensors);
    }
    if (gb->n_tensors + p->n_copies > gb->capacity) {
        return tern_fail(TERN_ERR_NO_MEMORY, "scheduler: no room for %" PRId32 " copies in a builder of %" PRId32, p->n_copies, gb->capacity);
    }
    // Copies, in table order (so their ids are the same at every bind).
    p->copy_tensors = &gb->tensors[gb->n_tensors];
    for (int32_t k = 0; k < p->n_copies; k++) {
        const sched_copy & x = p->copies[k];
        const tern_tensor * src = x.src_id >= 0 ? &gb->tensors[x.src_id] : &gb->tensors[p->n_base_tensors + (-1 - x.src_id)];
        tern_tensor * c = &gb->tensors[gb->n_tensors];
        memset(c, 0, sizeof(*c));
        c->id = gb->n_tensors++;
        c->node_index = -1;
        c->type = src->type;
        c->n_dims = src->n_dims;
        memcpy(c->ne, src->ne, sizeof(c->ne));
        memcpy(c->nb, src->nb, sizeof(c->nb));
        c->layout = src->layout;
        c->flags = TERN_TENSOR_COPY;
        c->layer = src->layer;
        c->written_at = x.written_at;
        c->src[0] = (tern_tensor *) src;  // what it copies (not a graph edge: copies are no nodes)
        tg_set_name(c, "%.38s@%s", src->name, x.to >= 0 ? "dev" : "host");
    }
    for (int32_t r = 0; r < p->n_redirects; r++) {
        const sched_redirect & x = p->redirects[r];
        g->nodes[x.node]->src[x.slot] = &gb->tensors[p->n_base_tensors + x.copy];
    }
    return TERN_OK;
}

tern_tensor * sched_host_output(const sched_plan * p, tern_tensor * t) {
    for (int32_t k = 0; k < p->n_copies; k++) {
        if (p->copies[k].src_id == t->id && p->copies[k].to == HOST && p->copies[k].at_end) return &p->copy_tensors[k];
    }
    return t;
}

int32_t sched_describe(const hal_context * hc, const sched_plan * p, const tern_graph * g, char * buf, size_t size) {
    size_t n = 0;
    auto put = [&](const char * fmt, auto... args) {
        const int k = snprintf(buf ? buf + (n < size ? n : size) : NULL, buf && n < size ? size - n : 0, fmt, args...);
        if (k > 0) n += (size_t) k;
    };
    int32_t by_kind[3] = {0, 0, 0};
    for (int32_t k = 0; k < p->n_copies; k++) {
        const sched_copy & x = p->copies[k];
        by_kind[x.bounce ? 2 : x.to >= 0 ? 0 : 1] += !(x.bounce && x.to < 0);
    }
    put("%d splits, %d copies (host->device %d, device->host %d, device->device %d)\n", (int) p->n_splits, (int) p->n_copies,
        (int) by_kind[0], (int) by_kind[1], (int) by_kind[2]);
    for (int32_t k = 0; k < p->n_splits; k++) {
        const sched_split & s = p->splits[k];
        int32_t nodes = 0;
        for (int32_t i = s.first; i <= s.last; i++) nodes += p->node_device[i] == s.device;
        put("  split %d: %-6s %4d nodes  %s .. %s", (int) k, s.device < 0 ? "CPU" : hc->dev[s.device].name, (int) nodes,
            g->nodes[s.first]->name, g->nodes[s.last]->name);
        if (s.n_in) put(", %d in", (int) s.n_in);
        if (s.n_out) put(", %d out", (int) s.n_out);
        put("\n");
    }
    return (int32_t) n;
}

size_t sched_cpu_work(const sched_plan * p, const tern_graph * g, int32_t n_threads) {
    size_t most = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (p->node_device[i] != HOST) continue;
        const size_t w = tern_node_work_size(g->nodes[i], n_threads);
        if (w > most) most = w;
    }
    return most;
}

namespace {

enum emit_mode { EMIT_ISSUE, EMIT_RECORD };

// The commands of a device split, in order (input copies, launches, output
// copies): issued to its device, or written as records (the cache key).
struct emitter {
    hal_context *      hc;
    const sched_plan * p;
    const tern_graph * g;
    emit_mode          mode;
    gc_record *        rec;     // EMIT_RECORD: the next record
    gc_stats           stats;   // what the commands move and launch
    bool               count;   // EMIT_ISSUE outside a capture: count submissions and launches

    tern_status copy(int32_t k, const hal_device * dv) {
        const sched_copy & x = p->copies[k];
        const tern_tensor * dst = &p->copy_tensors[k];
        const tern_tensor * src = dst->src[0];
        const uint64_t size = tern_tensor_nbytes(dst);
        if (size == 0) return TERN_OK;
        if (mode == EMIT_RECORD) {
            memset(rec, 0, sizeof(*rec));
            if (x.to >= 0) {
                rec->kind = GC_H2D;
                rec->dst_buf = (tern_hal_buffer *) dst->buffer->handle;
                rec->dst_off = dst->offset;
                rec->host = src->data;
            } else {
                rec->kind = GC_D2H;
                rec->src_buf = (tern_hal_buffer *) src->buffer->handle;
                rec->src_off = src->offset;
                rec->host = dst->data;
            }
            rec->size = size;
            rec++;
        }
        // The two legs of a device -> device copy count once, as d2d.
        if (x.bounce && x.to >= 0) {
            stats.copies_d2d++;
            stats.bytes_d2d += size;
        } else if (!x.bounce && x.to >= 0) {
            stats.copies_h2d++;
            stats.bytes_h2d += size;
        } else if (!x.bounce) {
            stats.copies_d2h++;
            stats.bytes_d2h += size;
        }
        if (mode == EMIT_RECORD) return TERN_OK;
        if (count) hc->counters.submissions++;
        if (x.to >= 0) return dv->desc->copy_h2d(dv->dev, (tern_hal_buffer *) dst->buffer->handle, dst->offset, src->data, size);
        return dv->desc->copy_d2h(dv->dev, dst->data, (tern_hal_buffer *) src->buffer->handle, src->offset, size);
    }

    tern_status split(const sched_split & s) {
        const hal_device * dv = &hc->dev[s.device];
        for (int32_t k = s.in0; k < s.in0 + s.n_in; k++) TERN_TRY(copy(k, dv));
        for (int32_t i = s.first; i <= s.last; i++) {
            if (p->node_device[i] != s.device) continue;
            stats.launches++;
            if (mode == EMIT_RECORD) {
                memset(rec, 0, sizeof(*rec));
                rec->kind = GC_LAUNCH;
                make_desc(g->nodes[i], &rec->op, false);
                rec++;
                continue;
            }
            tern_hal_op_desc d;
            make_desc(g->nodes[i], &d, true);
            if (count) {
                hc->counters.submissions++;
                hc->counters.launches++;
            }
            TERN_TRY(dv->desc->launch(dv->dev, &d));
        }
        for (int32_t k = s.out0; k < s.out0 + s.n_out; k++) TERN_TRY(copy(k, dv));
        return TERN_OK;
    }
};

void add_stats(hal_counters * c, const gc_stats & s) {
    c->copies_h2d += s.copies_h2d;
    c->copies_d2h += s.copies_d2h;
    c->copies_d2d += s.copies_d2d;
    c->bytes_h2d += s.bytes_h2d;
    c->bytes_d2h += s.bytes_d2h;
    c->bytes_d2d += s.bytes_d2d;
    c->launches_run += s.launches;
}

tern_status wait_device(hal_context * hc, int32_t d) {
    if (!hc->in_flight[d]) return TERN_OK;
    hc->in_flight[d] = false;
    const hal_device * dv = &hc->dev[d];
    tern_status st = hc->events[d] ? dv->desc->event_wait(dv->dev, hc->events[d]) : dv->desc->synchronize(dv->dev);
    if (st != TERN_OK) tern_error_prefix("%s: ", dv->name);
    return st;
}

void release_graph(void * user, int32_t device, tern_hal_graph * graph) {
    hal_context * hc = (hal_context *) user;
    const hal_device * dv = &hc->dev[device];
    dv->desc->graph_release(dv->dev, graph);
}

// A device split, by replay or capture when allowed, else eagerly.
tern_status run_device_split(hal_context * hc, sched_plan * p, const tern_graph * g, sched_split & s, bool capture) {
    const int32_t d = s.device;
    const hal_device * dv = &hc->dev[d];
    if (capture && dv->caps.capture) {
        int32_t e;
        if (s.entry >= 0 && hc->cache.entries[s.entry].generation == s.generation && hc->cache.entries[s.entry].hash == s.hash &&
            hc->cache.entries[s.entry].n_records == s.n_rec) {
            e = s.entry;  // bound to this graph since its last (re)build: the records were compared then
            gc_touch(&hc->cache, e);
        } else {
            e = gc_lookup(&hc->cache, p->records + s.rec0, s.n_rec, s.hash);
        }
        if (e >= 0) {
            hc->counters.hits++;
            s.entry = e;
            s.generation = hc->cache.entries[e].generation;
            const gc_entry & x = hc->cache.entries[e];
            if (x.graph) {
                hc->counters.submissions++;
                hc->counters.replays++;
                add_stats(&hc->counters, x.stats);
                return dv->desc->replay(dv->dev, x.graph);
            }
            // a failed capture: eagerly, below
        } else {
            hc->counters.misses++;
            emitter em = { hc, p, g, EMIT_ISSUE, NULL, {}, false };
            tern_hal_graph * graph = NULL;
            tern_status st = dv->desc->capture_begin(dv->dev);
            if (st == TERN_OK) {
                st = em.split(s);
                const tern_status end = dv->desc->capture_end(dv->dev, &graph);
                if (st == TERN_OK) st = end;
            }
            const uint64_t evicted = hc->cache.evictions;
            if (st == TERN_OK && graph) {
                hc->counters.captures++;
                e = gc_insert(&hc->cache, p->records + s.rec0, s.n_rec, s.hash, d, graph, &em.stats);
                hc->counters.evictions += hc->cache.evictions - evicted;
                if (e >= 0) {
                    s.entry = e;
                    s.generation = hc->cache.entries[e].generation;
                    hc->counters.submissions++;
                    hc->counters.replays++;
                    add_stats(&hc->counters, em.stats);
                    return dv->desc->replay(dv->dev, graph);
                }
                dv->desc->graph_release(dv->dev, graph);  // larger than an entry holds: eager
            } else {
                // A failed capture: this graph runs eagerly from now on.
                if (graph) dv->desc->graph_release(dv->dev, graph);
                hc->counters.capture_failures++;
                tern_error_clear();
                e = gc_insert(&hc->cache, p->records + s.rec0, s.n_rec, s.hash, d, NULL, NULL);
                hc->counters.evictions += hc->cache.evictions - evicted;
                s.entry = e;
                if (e >= 0) s.generation = hc->cache.entries[e].generation;
            }
        }
    }
    emitter em = { hc, p, g, EMIT_ISSUE, NULL, {}, true };
    const tern_status st = em.split(s);
    add_stats(&hc->counters, em.stats);
    return st;
}

}  // namespace

void sched_bind_records(hal_context * hc, sched_plan * p, const tern_graph * g) {
    if (!p->capturable || !p->records) return;
    for (int32_t k = 0; k < p->n_splits; k++) {
        sched_split & s = p->splits[k];
        s.entry = -1;
        if (s.device < 0) continue;
        emitter em = { hc, p, g, EMIT_RECORD, p->records + s.rec0, {}, false };
        em.split(s);
        s.hash = gc_hash(p->records + s.rec0, s.n_rec);
    }
}

tern_status sched_prepare(hal_context * hc, const sched_plan * p, const tern_graph * g) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const int8_t d = p->node_device[i];
        if (d < 0 || !hc->dev[d].desc->prepare) continue;
        tern_hal_op_desc desc;
        make_desc(g->nodes[i], &desc, true);
        const tern_status st = hc->dev[d].desc->prepare(hc->dev[d].dev, &desc);
        if (st != TERN_OK) {
            tern_error_prefix("%s: preparing '%s': ", hc->dev[d].name, g->nodes[i]->name);
            return st;
        }
    }
    return TERN_OK;
}

void hal_drain(hal_context * hc) {
    // The caller's error line (why it drains) stays; what draining reports goes.
    char line[400];
    snprintf(line, sizeof(line), "%s", tern_last_error());
    for (int32_t d = 0; d < hc->n_dev; d++) {
        hc->dev[d].desc->synchronize(hc->dev[d].dev);
        hc->in_flight[d] = false;
    }
    tern_fail(TERN_OK, "%s", line);
}

tern_status sched_run(hal_context * hc, sched_plan * p, const tern_graph * g, tern_threadpool * pool, void * work,
                      size_t work_size, tern_abort_callback abort_cb, void * abort_data, bool capture) {
    tern_status st = TERN_OK;
    uint32_t used = 0;
    capture = capture && p->capturable && hc->cache.capacity > 0;
    for (int32_t k = 0; k < p->n_splits && st == TERN_OK; k++) {
        sched_split & s = p->splits[k];
        hc->counters.splits++;
        if (s.device < 0) {
            // A fence: every device with work in flight finishes first.
            for (int32_t d = 0; d < hc->n_dev && st == TERN_OK; d++) st = wait_device(hc, d);
            // Device leaves the host reads: fetched now.
            for (int32_t c = s.in0; c < s.in0 + s.n_in && st == TERN_OK; c++) {
                const tern_tensor * dst = &p->copy_tensors[c];
                const tern_tensor * src = dst->src[0];
                const hal_device * dv = &hc->dev[p->copies[c].from];
                const uint64_t size = tern_tensor_nbytes(dst);
                hc->counters.submissions++;
                hc->counters.copies_d2h++;
                hc->counters.bytes_d2h += size;
                st = dv->desc->copy_d2h(dv->dev, dst->data, (tern_hal_buffer *) src->buffer->handle, src->offset, size);
                if (st == TERN_OK) st = dv->desc->synchronize(dv->dev);
            }
            if (st == TERN_OK) st = tern_graph_compute_range(g, s.first, s.last + 1, pool, work, work_size, abort_cb, abort_data);
            continue;
        }
        if (abort_cb && abort_cb(abort_data)) {
            st = tern_fail(TERN_ERR_ABORTED, "compute: aborted by the callback");
            break;
        }
        for (int32_t a = 0; a < hc->n_dev && st == TERN_OK; a++) {
            if (s.wait_mask & (1u << (uint32_t) a)) st = wait_device(hc, a);
        }
        if (st != TERN_OK) break;
        used |= 1u << (uint32_t) s.device;
        hc->in_flight[s.device] = true;
        st = run_device_split(hc, p, g, s, capture);
        if (st != TERN_OK) tern_error_prefix("%s: ", hc->dev[s.device].name);
        const hal_device * dv = &hc->dev[s.device];
        if (st == TERN_OK && hc->events[s.device]) st = dv->desc->event_record(dv->dev, hc->events[s.device]);
    }
    // The logits are read next: every device used finishes (and reports errors).
    for (int32_t d = 0; d < hc->n_dev && st == TERN_OK; d++) {
        if (!(used & (1u << (uint32_t) d)) && !hc->in_flight[d]) continue;
        hc->in_flight[d] = false;
        st = hc->dev[d].desc->synchronize(hc->dev[d].dev);
        if (st != TERN_OK) tern_error_prefix("%s: ", hc->dev[d].name);
    }
    if (st != TERN_OK) hal_drain(hc);  // every device idle again: the next run starts clean
    return st;
}

size_t hal_context_reserve(hal_context * hc, tern_arena * arena, uint64_t staging_bytes, bool measure) {
    size_t bytes = 0;
    const bool host_staging = hc->staging_dev < 0 && staging_bytes > 0;
    if (host_staging) bytes += arena_padded((size_t) staging_bytes);
    if (hc->cache_capacity > 0 && hc->max_records > 0) bytes += gc_mem_size(hc->cache_capacity, hc->max_records);
    if (measure) return bytes;
    if (host_staging) {
        // No device offers host-visible memory: plain host memory from the arena.
        hc->staging.host = (uint8_t *) arena_alloc(arena, (size_t) staging_bytes, TERN_MEM_ACTIVATIONS);
        if (!hc->staging.host) return (size_t) -1;
    }
    if (hc->cache_capacity > 0 && hc->max_records > 0 &&
        gc_init(&hc->cache, arena, hc->cache_capacity, hc->max_records, release_graph, hc) != TERN_OK) {
        return (size_t) -1;
    }
    return bytes;
}

tern_status hal_context_alloc(hal_context * hc, const uint64_t * kv_bytes, const uint64_t * act_bytes, uint64_t staging_bytes) {
    for (int32_t d = 0; d < hc->n_dev; d++) {
        hal_device * dv = &hc->dev[d];
        struct { tern_buffer * b; uint64_t bytes; tern_hal_usage usage; const char * what; } want[2] = {
            { &hc->kv[d], kv_bytes[d], TERN_HAL_USAGE_KV, "KV cache" },
            { &hc->act[d], act_bytes[d], TERN_HAL_USAGE_ACTIVATIONS, "activations" },
        };
        for (auto & w : want) {
            if (w.bytes == 0) continue;
            tern_hal_buffer * hb = NULL;
            tern_status st = TERN_ERR_NO_MEMORY;
            if (w.bytes > dv->caps.max_buffer_size) {
                tern_fail(st, "its buffers hold at most %" PRIu64 " bytes", (uint64_t) dv->caps.max_buffer_size);
            } else {
                st = dv->desc->buffer_alloc(dv->dev, w.bytes, w.usage, &hb);
            }
            if (st != TERN_OK) {
                tern_error_prefix("%s: cannot hold the context's %s (%" PRIu64 " bytes): ", dv->name, w.what, w.bytes);
                return st;
            }
            w.b->handle = hb;
        }
        if (dv->caps.events && dv->desc->event_create(dv->dev, &hc->events[d]) != TERN_OK) {
            hc->events[d] = NULL;  // synchronize instead
            tern_error_clear();
        }
    }
    if (staging_bytes > 0 && hc->staging_dev >= 0) {
        hal_device * dv = &hc->dev[hc->staging_dev];
        tern_hal_buffer * hb = NULL;
        tern_status st = dv->desc->buffer_alloc(dv->dev, staging_bytes, TERN_HAL_USAGE_STAGING, &hb);
        if (st != TERN_OK) {
            tern_error_prefix("%s: cannot hold the context's staging buffer (%" PRIu64 " bytes): ", dv->name, staging_bytes);
            return st;
        }
        hc->staging.handle = hb;
        hc->staging.host = (uint8_t *) dv->desc->buffer_host_ptr(dv->dev, hb);
        if (!hc->staging.host) return tern_fail(TERN_ERR_INTERNAL, "%s: its staging buffer has no host address", dv->name);
    }
    return TERN_OK;
}

void hal_context_free(hal_context * hc) {
    if (!hc->dev) return;
    hal_drain(hc);
    gc_clear(&hc->cache);
    for (int32_t d = 0; d < hc->n_dev; d++) {
        hal_device * dv = &hc->dev[d];
        if (hc->kv[d].handle) dv->desc->buffer_free(dv->dev, (tern_hal_buffer *) hc->kv[d].handle);
        if (hc->act[d].handle) dv->desc->buffer_free(dv->dev, (tern_hal_buffer *) hc->act[d].handle);
        if (hc->events[d]) dv->desc->event_destroy(dv->dev, hc->events[d]);
        hc->kv[d].handle = hc->act[d].handle = NULL;
        hc->events[d] = NULL;
    }
    if (hc->staging.handle) {
        hal_device * dv = &hc->dev[hc->staging_dev];
        dv->desc->buffer_free(dv->dev, (tern_hal_buffer *) hc->staging.handle);
        hc->staging.handle = NULL;
    }
}

}  // namespace hal
}  // namespace tern
