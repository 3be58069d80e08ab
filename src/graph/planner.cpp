// Memory planner (see planner.h for the algorithm).
#include "graph/planner.h"
#include "core/sort.h"
#include "core/status.h"

#include <inttypes.h>
#include <algorithm>
#include <string.h>

namespace tern {

// Owns its bytes and they are not given (weights, KV cache).
static bool is_planned(const tern_tensor * t) { return !t->view_src && !(t->flags & TERN_TENSOR_EXTERNAL); }

size_t tern_graph_plan_table_size(int32_t n_tensors) {
    return 2 * arena_padded((size_t) n_tensors * sizeof(size_t)) + arena_padded((size_t) n_tensors);
}

namespace {
struct live_range {
    int32_t first, last;  // node indices; first > last: never used
};
struct placed {
    size_t  offset, size;
    int32_t id;
};
} // namespace

size_t tern_graph_plan_temp_size(int32_t n_tensors) {
    return arena_padded((size_t) n_tensors * sizeof(live_range)) + arena_padded((size_t) n_tensors * sizeof(int32_t)) +
           arena_padded((size_t) n_tensors * sizeof(placed));
}

static void use(live_range * r, const tern_tensor * t, int32_t at) {
    const tern_tensor * o = tern_tensor_owner(t);
    live_range * lr = &r[o->id];
    if (at < lr->first) lr->first = at;
    if (at > lr->last) lr->last = at;
}

static bool conflict(const live_range & a, const live_range & b) { return a.first <= b.last && b.first <= a.last; }

tern_status tern_graph_plan_make(const tern_graph * g, const tern_graph_builder * gb, const uint8_t * region,
                                 int32_t n_regions, const int32_t * live_to, tern_arena * arena, tern_graph_plan * out) {
    memset(out, 0, sizeof(*out));
    if (n_regions < 1 || n_regions > TERN_PLAN_MAX_REGIONS) {
        return tern_fail(TERN_ERR_INTERNAL, "planner: %" PRId32 " regions (1 to %d)", n_regions, TERN_PLAN_MAX_REGIONS);
    }
    const int32_t n = gb->n_tensors;
    const size_t mark = arena_temp_mark(arena);
    live_range * range = (live_range *) arena_alloc_temp(arena, (size_t) n * sizeof(live_range));
    int32_t * order = (int32_t *) arena_alloc_temp(arena, (size_t) n * sizeof(int32_t));
    placed * done = (placed *) arena_alloc_temp(arena, (size_t) n * sizeof(placed));
    size_t * offsets = (size_t *) arena_alloc(arena, (size_t) n * sizeof(size_t), TERN_MEM_GRAPH);
    size_t * sizes = (size_t *) arena_alloc(arena, (size_t) n * sizeof(size_t), TERN_MEM_GRAPH);
    uint8_t * regions = (uint8_t *) arena_alloc(arena, (size_t) n, TERN_MEM_GRAPH);
    if (n > 0 && (!range || !order || !done || !offsets || !sizes || !regions)) {
        arena_temp_release(arena, mark);
        return tern_fail(TERN_ERR_NO_MEMORY, "planner: no arena room for the tables of %" PRId32 " tensors", n);
    }

    // 1. live ranges
    const int32_t end = g->n_nodes;
    for (int32_t i = 0; i < n; i++) range[i] = live_range{ INT32_MAX, -1 };
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const tern_tensor * node = g->nodes[i];
        use(range, node, i);
        for (int s = 0; s < TERN_MAX_SRC; s++) if (node->src[s]) use(range, node->src[s], i);
    }
    for (int32_t i = 0; i < n; i++) {
        const tern_tensor * t = &gb->tensors[i];
        live_range * lr = &range[tern_tensor_owner(t)->id];
        if ((t->flags & TERN_TENSOR_COPY) && t->written_at >= 0) {
            // Filled before written_at; a copy no node reads (a host leg of a
            // device-to-device copy) lives from there to its live_to.
            if (t->written_at < lr->first) lr->first = t->written_at;
            if (lr->last < t->written_at) lr->last = t->written_at;
        }
        // Read after its last reader node (by a device's copy): live to live_to.
        if (live_to && live_to[i] >= 0 && t == tern_tensor_owner(t) && live_to[i] > lr->last) {
            if (lr->first > live_to[i]) lr->first = live_to[i];
            lr->last = live_to[i];
        }
        if (lr->last < 0) continue;  // not in this graph
        if (t->flags & TERN_TENSOR_INPUT) lr->first = 0;
        if (t->flags & TERN_TENSOR_OUTPUT) lr->last = end;
    }

    // 2. sizes; the planned tensors in placement order
    int32_t n_planned = 0;
    for (int32_t i = 0; i < n; i++) {
        const tern_tensor * t = &gb->tensors[i];
        offsets[i] = 0;
        sizes[i] = 0;
        regions[i] = region ? region[i] : 0;
        if (regions[i] >= n_regions) {
            arena_temp_release(arena, mark);
            return tern_fail(TERN_ERR_INTERNAL, "planner: tensor %" PRId32 " '%s' in region %d of %" PRId32, i, t->name,
                             (int) regions[i], n_regions);
        }
        if (!is_planned(t) || range[i].last < 0) continue;
        sizes[i] = arena_padded(tern_tensor_nbytes(t));
        if (sizes[i] == 0) continue;
        order[n_planned++] = i;
    }
    tern_heap_sort(order, (size_t) n_planned, [&](int32_t a, int32_t b) {
        if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
        if (range[a].first != range[b].first) return range[a].first < range[b].first;
        return a < b;
    });

    // 3. per region, first fit among the conflicting placed tensors, kept sorted by offset
    for (int32_t r = 0; r < n_regions; r++) {
        int32_t n_done = 0;
        size_t total = 0;
        for (int32_t k = 0; k < n_planned; k++) {
            const int32_t id = order[k];
            if (regions[id] != r) continue;
            size_t offset = 0;
            for (int32_t j = 0; j < n_done; j++) {
                const placed & p = done[j];
                if (!conflict(range[id], range[p.id])) continue;
                if (offset + sizes[id] <= p.offset) break;  // fits in the gap before p
                if (p.offset + p.size > offset) offset = p.offset + p.size;
            }
            offsets[id] = offset;
            if (offset + sizes[id] > total) total = offset + sizes[id];
            placed entry = { offset, sizes[id], id };
            int32_t at = n_done++;
            while (at > 0 && done[at - 1].offset > offset) {
                done[at] = done[at - 1];
                at--;
            }
            done[at] = entry;
        }
        out->region_bytes[r] = total;
    }
    arena_temp_release(arena, mark);

    out->offsets = offsets;
    out->sizes = sizes;
    out->region = regions;
    out->n_tensors = n;
    out->n_regions = n_regions;
    out->topology = tern_graph_topology(g);
    return TERN_OK;
}

tern_status tern_graph_plan_apply(const tern_graph_plan * p, tern_graph_builder * gb, const tern_graph * g,
                                  tern_buffer * const * buffers) {
    if (gb->n_tensors > p->n_tensors) {
        return tern_fail(TERN_ERR_INTERNAL, "planner: graph has %" PRId32 " tensors, the plan %" PRId32, gb->n_tensors, p->n_tensors);
    }
    const uint64_t topology = tern_graph_topology(g);
    if (topology != p->topology) {
        return tern_fail(TERN_ERR_INTERNAL, "planner: the graph's topology (%016llx) is not the planned one (%016llx)",
                         (unsigned long long) topology, (unsigned long long) p->topology);
    }
    for (int32_t i = 0; i < gb->n_tensors; i++) {
        tern_tensor * t = &gb->tensors[i];
        if (!is_planned(t) || p->sizes[i] == 0) continue;
        const size_t bytes = tern_tensor_nbytes(t);
        if (bytes > p->sizes[i]) {
            return tern_fail(TERN_ERR_INTERNAL, "planner: tensor %" PRId32 " '%s' needs %zu bytes, planned %zu", i, t->name, bytes, p->sizes[i]);
        }
        tern_buffer * b = buffers[p->region[i]];
        t->buffer = b;
        t->offset = p->offsets[i];
        t->data = b->host ? b->host + p->offsets[i] : NULL;
    }
    // Views after their owners: an owner's id is always below its views'.
    for (int32_t i = 0; i < gb->n_tensors; i++) {
        tern_tensor * t = &gb->tensors[i];
        if (t->view_src) tern_tensor_follow_owner(t);
    }
    return TERN_OK;
}

uint64_t tern_graph_topology(const tern_graph * g) {
    uint64_t h = 14695981039346656037ull;
    auto mix = [&h](int64_t v) {
        for (int i = 0; i < 8; i++) {
            h = (h ^ (uint64_t) (uint8_t) (v >> (8 * i))) * 1099511628211ull;
        }
    };
    mix(g->n_nodes);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const tern_tensor * t = g->nodes[i];
        mix(t->id);
        mix(t->op);
        mix(t->type);
        mix(t->flags);
        for (int s = 0; s < TERN_MAX_SRC; s++) mix(t->src[s] ? t->src[s]->id : -1);
    }
    return h;
}

}  // namespace tern
