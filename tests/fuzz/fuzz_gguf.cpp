// libFuzzer target: gguf_measure, then gguf_parse into an arena of exactly the
// measured size, over arbitrary bytes. Also exercises the prefix protocol
// (measure on the first half of the input) and the value rendering.
#include <stdint.h>
#include <stdlib.h>

#include "core/arena.h"
#include "gguf/gguf.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

static void visit(void *, const gguf_kv * kv) {
    char buf[64];
    gguf_value_to_text(kv, buf, sizeof(buf));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size == 0) return 0;
    gguf_span half = {data, size / 2, size};
    size_t bytes = 0;
    uint64_t need = 0;
    if (gguf_measure(&half, "fuzz", NULL, NULL, NULL, &bytes, &need) != TERN_OK && need > size) abort();
    gguf_span span = {data, size, size};
    if (gguf_measure(&span, "fuzz", visit, NULL, NULL, &bytes, &need) != TERN_OK) return 0;
    if (need != 0) abort();  // a complete span never asks for more
    void * buffer = malloc(arena_buffer_size(bytes));
    tern_arena arena;
    gguf_file f;
    if (arena_init(&arena, buffer, arena_buffer_size(bytes)) && gguf_parse(&span, "fuzz", &arena, &f) == TERN_OK) {
        char text[128];
        for (uint64_t i = 0; i < f.n_kv; i++) gguf_value_to_text(&f.kv[i], text, sizeof(text));
        for (uint64_t i = 0; i < f.n_tensors; i++) {
            if (f.data_offset + f.tensors[i].offset + f.tensors[i].bytes > f.size) abort();
        }
    }
    free(buffer);
    return 0;
}
