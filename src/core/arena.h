// Fixed arena: one buffer, obtained once (or the caller's), carved by bump
// allocation. Never grows, never aborts: exhaustion returns NULL and records
// TERN_ERR_NO_MEMORY for tern_last_error().
//
// Layout (in the spirit of TensorFlow Lite Micro's head/temp/tail):
//
//   base                                                            base+size
//   | persistent --->            free            <--- temp (scoped) |
//   ^ head grows up                                 tail grows down ^
//
// - persistent: lives as long as the arena (tensor tables, KV cache, planned
//   activations). Each allocation is tagged with a category for the audit.
// - temp: scratch that a scope takes and gives back in LIFO order:
//       size_t mark = arena_temp_mark(a);
//       float * tmp = (float *) arena_alloc_temp(a, n * sizeof(float), 64);
//       ...
//       arena_temp_release(a, mark);
//   Persistent and temp allocations cannot overlap: each side checks the
//   other's current edge.
//
// Exact sizing: every allocation is padded to a multiple of TERN_ARENA_ALIGN
// and the base is aligned to it, so the bytes a sequence of allocations needs
// is the sum of arena_padded(size) of each, plus TERN_ARENA_ALIGN - 1 for an
// unaligned caller buffer. Sizing functions (tern_context_mem_size, ...) add
// the same padded sizes that creation allocates.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tern {

#define TERN_ARENA_ALIGN 64

enum tern_mem_category {
    TERN_MEM_MODEL_TABLES,  // GGUF key/value index, tensor table
    TERN_MEM_VOCAB,         // token table, hash index, merges
    TERN_MEM_WEIGHTS,       // weights read into memory (read() path)
    TERN_MEM_KV,            // KV cache
    TERN_MEM_ACTIVATIONS,   // planned graph intermediates
    TERN_MEM_WORK,          // per-node scratch
    TERN_MEM_LOGITS,        // logits output
    TERN_MEM_GRAPH,         // tensor structs, node lists
    TERN_MEM_SAMPLER,       // sampler candidates, penalty ring
    TERN_MEM_OTHER,
    TERN_MEM_CATEGORY_COUNT
};

struct tern_arena {
    uint8_t * base;         // aligned start
    size_t    size;         // usable bytes from base
    size_t    head;         // persistent bytes in use
    size_t    tail;         // temp bytes in use (from the end)
    size_t    temp_peak;    // most temp bytes ever in use
    size_t    high_water;   // most bytes ever in use (head + tail)
    size_t    by_category[TERN_MEM_CATEGORY_COUNT];
};

static inline size_t arena_padded(size_t bytes) {
    return (bytes + (TERN_ARENA_ALIGN - 1)) & ~(size_t) (TERN_ARENA_ALIGN - 1);
}

// Bytes to ask for so that `payload` padded bytes fit in a buffer of unknown alignment.
static inline size_t arena_buffer_size(size_t payload) { return payload + TERN_ARENA_ALIGN - 1; }

// Take a buffer of `size` bytes (any alignment). Returns false when the buffer
// cannot hold even one aligned byte.
bool arena_init(tern_arena * a, void * buffer, size_t size);

// Persistent allocation, aligned to TERN_ARENA_ALIGN.
// Returns NULL when it does not fit.
void * arena_alloc(tern_arena * a, size_t bytes, tern_mem_category category);
// Same, zero-filled.
void * arena_calloc(tern_arena * a, size_t bytes, tern_mem_category category);

// Scoped temporary allocation from the top end.
void * arena_alloc_temp(tern_arena * a, size_t bytes);
static inline size_t arena_temp_mark(const tern_arena * a) { return a->tail; }
void arena_temp_release(tern_arena * a, size_t mark);

// Most bytes ever in use at once (persistent + temp).
static inline size_t arena_used(const tern_arena * a) { return a->high_water; }
static inline size_t arena_free(const tern_arena * a) { return a->size - a->head - a->tail; }

}  // namespace tern
