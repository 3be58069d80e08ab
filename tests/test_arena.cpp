// The fixed arena: alignment, exhaustion without abort, temp mark/release,
// exact sizing by padded sums, and the per-category audit.
#include <stdint.h>
#include <string.h>
#include <vector>
#include "check.h"
#include "core/arena.h"
#include "core/status.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

int main(void) {
    std::vector<unsigned char> buf(4096 + 7);
    tern_arena a;
    // An unaligned buffer is aligned; the usable size is a multiple of the alignment.
    CHECK(arena_init(&a, buf.data() + 3, 4096));
    CHECK(((uintptr_t) a.base % TERN_ARENA_ALIGN) == 0);
    CHECK(a.size % TERN_ARENA_ALIGN == 0 && a.size <= 4096 && a.size + TERN_ARENA_ALIGN > 4096 - 3 - 63);
    CHECK(!arena_init(&a, NULL, 100));
    unsigned char tiny[8];
    CHECK(!arena_init(&a, tiny, sizeof(tiny)) || a.size == 0);

    CHECK(arena_init(&a, buf.data(), buf.size()));
    const size_t size = a.size;
    // Persistent allocations: aligned, padded, audited per category.
    void * p1 = arena_alloc(&a, 10, TERN_MEM_KV);
    void * p2 = arena_alloc(&a, 100, TERN_MEM_ACTIVATIONS);
    CHECK(p1 && p2);
    CHECK(((uintptr_t) p1 % TERN_ARENA_ALIGN) == 0 && ((uintptr_t) p2 % TERN_ARENA_ALIGN) == 0);
    CHECK((unsigned char *) p2 - (unsigned char *) p1 == 64);
    CHECK(a.head == arena_padded(10) + arena_padded(100));
    CHECK(a.by_category[TERN_MEM_KV] == 64 && a.by_category[TERN_MEM_ACTIVATIONS] == 128);
    unsigned char * z = (unsigned char *) arena_calloc(&a, 64, TERN_MEM_OTHER);
    CHECK(z && z[0] == 0 && z[63] == 0);

    // Temp region: LIFO, from the top, never overlapping persistent memory.
    const size_t mark = arena_temp_mark(&a);
    unsigned char * t1 = (unsigned char *) arena_alloc_temp(&a, 200);
    CHECK(t1 != NULL && t1 + arena_padded(200) == a.base + a.size);
    unsigned char * t2 = (unsigned char *) arena_alloc_temp(&a, 1);
    CHECK(t2 && t2 + 64 == t1);
    CHECK(arena_used(&a) == a.head + a.tail);
    arena_temp_release(&a, mark);
    CHECK(a.tail == 0);
    CHECK(a.temp_peak == arena_padded(200) + 64);

    // Exhaustion returns NULL with TERN_ERR_NO_MEMORY detail, and leaves the arena usable.
    tern_error_clear();
    const size_t head_before = a.head;
    CHECK(arena_alloc(&a, size, TERN_MEM_OTHER) == NULL);
    CHECK(strstr(tern_last_error(), "arena exhausted") != NULL);
    CHECK(a.head == head_before);
    CHECK(arena_alloc(&a, (size_t) -1, TERN_MEM_OTHER) == NULL);  // padding overflow
    CHECK(arena_alloc_temp(&a, size) == NULL);
    // Exactly the free bytes fit; one more byte does not.
    const size_t free_bytes = arena_free(&a);
    const size_t m2 = arena_temp_mark(&a);
    CHECK(arena_alloc_temp(&a, free_bytes) != NULL);
    CHECK(arena_alloc(&a, 1, TERN_MEM_OTHER) == NULL);
    arena_temp_release(&a, m2);
    CHECK(arena_alloc(&a, free_bytes + 1, TERN_MEM_OTHER) == NULL);
    CHECK(arena_alloc(&a, free_bytes, TERN_MEM_OTHER) != NULL);
    CHECK(arena_free(&a) == 0);
    CHECK(arena_used(&a) == a.size);

    // Sizing: a sequence of allocations needs the sum of padded sizes (+ alignment slack).
    const size_t sizes[] = { 1, 63, 64, 65, 1000, 4096 };
    size_t need = 0;
    for (size_t s : sizes) need += arena_padded(s);
    std::vector<unsigned char> exact(arena_buffer_size(need));
    tern_arena e;
    CHECK(arena_init(&e, exact.data(), exact.size()));
    bool all = true;
    for (size_t s : sizes) all = all && arena_alloc(&e, s, TERN_MEM_OTHER) != NULL;
    CHECK(all);
    return tern_test_summary();
}
