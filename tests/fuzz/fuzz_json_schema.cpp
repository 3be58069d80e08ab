// libFuzzer target over the JSON reader and the JSON-schema converter: the
// input is a schema. Convert it strictly and leniently in a fixed arena; a
// grammar that comes out is parsed and checked as the sampler would. Every
// call ends in a status or a grammar, never a crash, a hang or growth.
#include <stdint.h>
#include <string.h>

#include <vector>

#include "core/arena.h"
#include "core/json.h"
#include "sample/grammar.h"
#include "sample/json_schema.h"

using namespace tern;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const char * text = (const char *) data;
    char err[512];
    // The reader alone, and its writer on what it read.
    size_t need = json_measure(text, size, err, sizeof(err));
    if (need > 0) {
        std::vector<uint8_t> mem(need + 64);
        tern_arena a;
        arena_init(&a, mem.data(), mem.size());
        json_node * root = json_parse(text, size, &a, err, sizeof(err));
        if (!root) __builtin_trap();   // measured fine, then failed
        text_out probe = {NULL, 0, 0};
        json_write(&probe, root, 2);
        (void) json_equal(root, root);
    }
    for (uint32_t flags : {0u, (uint32_t) JSON_SCHEMA_LENIENT}) {
        size_t bytes = json_schema_mem_size(text, size);
        if (bytes > ((size_t) 64 << 20)) return 0;
        std::vector<uint8_t> mem(bytes + 64);
        tern_arena a;
        arena_init(&a, mem.data(), mem.size());
        const char * out = NULL;
        size_t out_len = 0;
        if (json_schema_to_gbnf(text, size, flags, &a, &out, &out_len, err, sizeof(err)) != TERN_OK) continue;
        grammar_limits lim = {4096, 1024, 64};
        size_t gneed = grammar_mem_size(out, out_len, &lim, err, sizeof(err));
        if (gneed == 0 || gneed > ((size_t) 64 << 20)) continue;
        std::vector<uint8_t> gmem(gneed + 64);
        tern_arena ga;
        arena_init(&ga, gmem.data(), gmem.size());
        grammar g;
        if (grammar_init(&g, &ga, out, out_len, "root", &lim, err, sizeof(err)) == TERN_OK) {
            (void) grammar_try(&g, (const uint8_t *) "{\"a\": 1}", 8, GRAMMAR_INF);
        }
    }
    return 0;
}
