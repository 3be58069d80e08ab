// Writes the fuzz seed corpus: small valid GGUF files from the writer (every
// value type, string arrays, a few tensor types, custom alignment, no tensors).
#include <stdio.h>
#include <string>
#include <vector>

#include "gguf/writer.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

static bool write_seed(const std::string & dir, int variant) {
    std::vector<uint8_t> mem(1 << 16);
    tern_arena arena;
    arena_init(&arena, mem.data(), mem.size());
    gguf_writer w;
    if (gguf_writer_init(&w, &arena, 16, 4) != TERN_OK) return false;
    gguf_writer_set_str(&w, "general.architecture", "llama");
    gguf_writer_set_u32(&w, "llama.block_count", 2);
    gguf_writer_set_f32(&w, "llama.rope.freq_base", 10000.0f);
    gguf_writer_set_bool(&w, "tokenizer.ggml.add_bos_token", true);
    const char * toks[] = {"<unk>", "<s>", "</s>", "a", "b"};
    gguf_writer_set_arr_str(&w, "tokenizer.ggml.tokens", toks, 5);
    float scores[] = {0, 0, 0, -1, -2};
    gguf_writer_set_arr(&w, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, 5);
    int64_t i64 = -3;
    double f64 = 2.5;
    gguf_writer_set_val(&w, "x.i64", GGUF_TYPE_INT64, &i64);
    gguf_writer_set_val(&w, "x.f64", GGUF_TYPE_FLOAT64, &f64);
    if (variant == 1) gguf_writer_set_u32(&w, "general.alignment", 64);
    static uint8_t data[4096];
    for (size_t i = 0; i < sizeof(data); i++) data[i] = (uint8_t) (i * 13);
    int64_t ne_f32[2] = {8, 4}, ne_q8[1] = {64}, ne_q4k[1] = {256}, ne_f16[3] = {4, 2, 2};
    if (variant != 2) {
        gguf_writer_add_tensor(&w, "token_embd.weight", TERN_TYPE_F32, 2, ne_f32, data);
        gguf_writer_add_tensor(&w, "blk.0.attn_q.weight", TERN_TYPE_Q8_0, 1, ne_q8, data);
        gguf_writer_add_tensor(&w, "blk.1.ffn_down.weight", TERN_TYPE_Q4_K, 1, ne_q4k, data);
        gguf_writer_add_tensor(&w, "output_norm.weight", TERN_TYPE_F16, 3, ne_f16, data);
    }
    std::string path = dir + "/seed" + std::to_string(variant) + ".gguf";
    return gguf_writer_write(&w, path.c_str()) == TERN_OK;
}

int main(int argc, char ** argv) {
    if (argc != 2) { fprintf(stderr, "usage: make_seeds <dir>\n"); return 2; }
    for (int v = 0; v < 3; v++) {
        if (!write_seed(argv[1], v)) { fprintf(stderr, "cannot write seed %d\n", v); return 1; }
    }
    return 0;
}
