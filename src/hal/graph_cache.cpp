// The captured-graph LRU cache (see graph_cache.h).
#include "hal/graph_cache.h"
#include "core/status.h"

#include <string.h>

namespace tern {
namespace hal {

size_t gc_mem_size(int32_t capacity, int32_t max_records) {
    if (capacity <= 0) return 0;
    return arena_padded((size_t) capacity * sizeof(gc_entry)) +
           arena_padded((size_t) capacity * (size_t) max_records * sizeof(gc_record));
}

tern_status gc_init(graph_cache * c, tern_arena * arena, int32_t capacity, int32_t max_records, gc_release_fn release,
                    void * user) {
    memset(c, 0, sizeof(*c));
    c->front = c->back = -1;
    c->release = release;
    c->release_user = user;
    if (capacity <= 0 || max_records <= 0) return TERN_OK;
    c->entries = (gc_entry *) arena_alloc(arena, (size_t) capacity * sizeof(gc_entry), TERN_MEM_GRAPH);
    c->records = (gc_record *) arena_alloc(arena, (size_t) capacity * (size_t) max_records * sizeof(gc_record), TERN_MEM_GRAPH);
    if (!c->entries || !c->records) return TERN_ERR_NO_MEMORY;
    c->capacity = capacity;
    c->max_records = max_records;
    for (int32_t i = 0; i < capacity; i++) {
        memset(&c->entries[i], 0, sizeof(gc_entry));
        c->entries[i].n_records = -1;
        c->entries[i].prev = c->entries[i].next = -1;
    }
    return TERN_OK;
}

uint64_t gc_hash(const gc_record * r, int32_t n) {
    uint64_t h = 14695981039346656037ull;
    const uint8_t * p = (const uint8_t *) r;
    const size_t bytes = (size_t) n * sizeof(gc_record);
    for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (uint64_t) n;
}

static void unlink(graph_cache * c, int32_t e) {
    gc_entry * x = &c->entries[e];
    if (x->prev >= 0) c->entries[x->prev].next = x->next;
    else c->front = x->next;
    if (x->next >= 0) c->entries[x->next].prev = x->prev;
    else c->back = x->prev;
    x->prev = x->next = -1;
}

static void push_front(graph_cache * c, int32_t e) {
    gc_entry * x = &c->entries[e];
    x->prev = -1;
    x->next = c->front;
    if (c->front >= 0) c->entries[c->front].prev = e;
    c->front = e;
    if (c->back < 0) c->back = e;
}

void gc_touch(graph_cache * c, int32_t e) {
    if (c->front == e) return;
    unlink(c, e);
    push_front(c, e);
}

int32_t gc_lookup(graph_cache * c, const gc_record * r, int32_t n, uint64_t hash) {
    for (int32_t e = c->front; e >= 0; e = c->entries[e].next) {
        const gc_entry * x = &c->entries[e];
        if (x->hash != hash || x->n_records != n) continue;
        if (memcmp(c->records + (size_t) e * (size_t) c->max_records, r, (size_t) n * sizeof(gc_record)) != 0) continue;
        gc_touch(c, e);
        return e;
    }
    return -1;
}

static void empty_entry(graph_cache * c, int32_t e) {
    gc_entry * x = &c->entries[e];
    if (x->graph && c->release) c->release(c->release_user, x->device, x->graph);
    x->graph = NULL;
    x->n_records = -1;
}

int32_t gc_insert(graph_cache * c, const gc_record * r, int32_t n, uint64_t hash, int32_t device, tern_hal_graph * graph,
                  const gc_stats * stats) {
    if (c->capacity <= 0 || n > c->max_records || n < 0) return -1;
    int32_t e;
    if (c->n_used < c->capacity) {
        e = c->n_used++;
    } else {
        e = c->back;  // the least recently used
        unlink(c, e);
        empty_entry(c, e);
        c->evictions++;
    }
    gc_entry * x = &c->entries[e];
    memcpy(c->records + (size_t) e * (size_t) c->max_records, r, (size_t) n * sizeof(gc_record));
    x->hash = hash;
    x->n_records = n;
    x->device = device;
    x->graph = graph;
    if (stats) x->stats = *stats;
    else memset(&x->stats, 0, sizeof(x->stats));
    x->generation++;
    push_front(c, e);
    return e;
}

void gc_clear(graph_cache * c) {
    for (int32_t e = 0; e < c->n_used; e++) empty_entry(c, e);
    c->n_used = 0;
    c->front = c->back = -1;
}

}  // namespace hal
}  // namespace tern
