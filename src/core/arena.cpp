#include "core/arena.h"
#include "core/status.h"

#include <string.h>

namespace tern {

bool arena_init(tern_arena * a, void * buffer, size_t size) {
    memset(a, 0, sizeof(*a));
    uintptr_t p = (uintptr_t) buffer;
    uintptr_t aligned = (p + (TERN_ARENA_ALIGN - 1)) & ~(uintptr_t) (TERN_ARENA_ALIGN - 1);
    if (buffer == NULL || aligned - p >= size) return false;
    a->base = (uint8_t *) aligned;
    // Usable size is a multiple of the alignment so temp allocations from the top stay aligned.
    a->size = (size - (aligned - p)) & ~(size_t) (TERN_ARENA_ALIGN - 1);
    return true;
}

void * arena_alloc(tern_arena * a, size_t bytes, tern_mem_category category) {
    size_t padded = arena_padded(bytes);
    if (padded < bytes || padded > arena_free(a)) {
        tern_fail(TERN_ERR_NO_MEMORY, "arena exhausted: need %zu bytes, %zu free of %zu",
                  padded, arena_free(a), a->size);
        return NULL;
    }
    void * p = a->base + a->head;
    a->head += padded;
    a->by_category[category] += padded;
    if (a->head + a->tail > a->high_water) a->high_water = a->head + a->tail;
    return p;
}

void * arena_calloc(tern_arena * a, size_t bytes, tern_mem_category category) {
    void * p = arena_alloc(a, bytes, category);
    if (p) memset(p, 0, bytes);
    return p;
}

void * arena_alloc_temp(tern_arena * a, size_t bytes) {
    size_t padded = arena_padded(bytes);
    if (padded < bytes || padded > arena_free(a)) {
        tern_fail(TERN_ERR_NO_MEMORY, "arena exhausted (temp): need %zu bytes, %zu free of %zu",
                  padded, arena_free(a), a->size);
        return NULL;
    }
    a->tail += padded;
    if (a->tail > a->temp_peak) a->temp_peak = a->tail;
    if (a->head + a->tail > a->high_water) a->high_water = a->head + a->tail;
    return a->base + a->size - a->tail;
}

void arena_temp_release(tern_arena * a, size_t mark) {
    if (mark <= a->tail) a->tail = mark;
}

}  // namespace tern
