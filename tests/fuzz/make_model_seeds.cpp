// Writes the seed corpus of fuzz_model: tiny complete models that load and
// decode (llama with an SPM vocabulary in F32, F16, Q8_0 and Q4_0; qwen2 with
// a BPE vocabulary, merges and q/k/v biases), a few KB each so that the fuzzer
// mutates hyper-parameters, vocabularies and tensor tables quickly.
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "gguf/writer.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

const int64_t kEmbd = 32, kFf = 64, kHead = 2, kHeadKv = 1, kLayers = 1;

struct tensor_store {
    std::vector<std::vector<uint8_t>> bufs;
    uint32_t seed = 7;
    float next() {
        seed = seed * 1664525u + 1013904223u;
        return ((float) (seed >> 8) / 16777216.0f - 0.5f) * 0.2f;
    }
    // A tensor [ne0, ne1] of `type`, random values (norms: 1).
    const void * make(tern_type type, int64_t ne0, int64_t ne1, bool ones) {
        std::vector<float> f((size_t) (ne0 * ne1));
        for (float & x : f) x = ones ? 1.0f : next();
        const tern_type_traits * tr = tern_type_traits_get(type);
        std::vector<uint8_t> b(tern_row_size(type, ne0) * (size_t) ne1);
        for (int64_t r = 0; r < ne1; r++) {
            tr->from_float(f.data() + r * ne0, b.data() + tern_row_size(type, ne0) * (size_t) r, ne0);
        }
        bufs.push_back(b);
        return bufs.back().data();
    }
};

bool write_model(const std::string & path, const char * arch, tern_type type, bool bpe) {
    std::vector<uint8_t> mem(1 << 20);
    tern_arena arena;
    arena_init(&arena, mem.data(), mem.size());
    gguf_writer w;
    if (gguf_writer_init(&w, &arena, 32, 64) != TERN_OK) return false;
    std::string a = arch;
    gguf_writer_set_str(&w, "general.architecture", arch);
    gguf_writer_set_u32(&w, (a + ".context_length").c_str(), 64);
    gguf_writer_set_u32(&w, (a + ".embedding_length").c_str(), kEmbd);
    gguf_writer_set_u32(&w, (a + ".block_count").c_str(), kLayers);
    gguf_writer_set_u32(&w, (a + ".feed_forward_length").c_str(), kFf);
    gguf_writer_set_u32(&w, (a + ".attention.head_count").c_str(), kHead);
    gguf_writer_set_u32(&w, (a + ".attention.head_count_kv").c_str(), kHeadKv);
    gguf_writer_set_f32(&w, (a + ".attention.layer_norm_rms_epsilon").c_str(), 1e-5f);
    gguf_writer_set_f32(&w, (a + ".rope.freq_base").c_str(), 10000.0f);
    std::vector<const char *> toks;
    std::vector<int32_t> types;
    if (!bpe) {
        gguf_writer_set_str(&w, "tokenizer.ggml.model", "llama");
        toks = {"<unk>", "<s>", "</s>", "<0x0A>", "\xe2\x96\x81", "\xe2\x96\x81" "a", "a", "b", "c", "ab", "\xe2\x96\x81" "ab",
                "H", "e", "l", "o", "\xe2\x96\x81" "w", "r", "d"};
        types.assign(toks.size(), 1);
        types[0] = 2; types[1] = 3; types[2] = 3; types[3] = 6;
        std::vector<float> scores(toks.size());
        for (size_t i = 0; i < scores.size(); i++) scores[i] = -(float) i;
        gguf_writer_set_arr(&w, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores.data(), scores.size());
        gguf_writer_set_u32(&w, "tokenizer.ggml.bos_token_id", 1);
        gguf_writer_set_u32(&w, "tokenizer.ggml.eos_token_id", 2);
    } else {
        gguf_writer_set_str(&w, "tokenizer.ggml.model", "gpt2");
        gguf_writer_set_str(&w, "tokenizer.ggml.pre", "qwen2");
        toks = {"a", "b", "c", "H", "e", "l", "o", "\xc4\xa0", "w", "r", "d", "ab", "\xc4\xa0w", "ll", "<|endoftext|>",
                "<|im_start|>", "<|im_end|>"};
        types.assign(toks.size(), 1);
        types[14] = types[15] = types[16] = 3;
        const char * merges[] = {"a b", "\xc4\xa0 w", "l l"};
        gguf_writer_set_arr_str(&w, "tokenizer.ggml.merges", merges, 3);
        gguf_writer_set_u32(&w, "tokenizer.ggml.eos_token_id", 14);
        gguf_writer_set_bool(&w, "tokenizer.ggml.add_bos_token", false);
    }
    gguf_writer_set_arr_str(&w, "tokenizer.ggml.tokens", toks.data(), toks.size());
    gguf_writer_set_arr(&w, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types.data(), types.size());
    const int64_t n_vocab = (int64_t) toks.size(), head = kEmbd / kHead, kv = head * kHeadKv;
    tensor_store st;
    auto add = [&](const char * name, tern_type t, int64_t ne0, int64_t ne1, bool ones) {
        int64_t ne[2] = {ne0, ne1};
        gguf_writer_add_tensor(&w, name, t, ne1 > 1 ? 2 : 1, ne, st.make(t, ne0, ne1, ones));
    };
    add("token_embd.weight", type, kEmbd, n_vocab, false);
    add("output_norm.weight", TERN_TYPE_F32, kEmbd, 1, true);
    if (!bpe) add("output.weight", type, kEmbd, n_vocab, false);  // qwen2: tied embeddings
    for (int il = 0; il < kLayers; il++) {
        char n[64];
        auto name = [&](const char * s) { snprintf(n, sizeof(n), "blk.%d.%s", il, s); return n; };
        add(name("attn_norm.weight"), TERN_TYPE_F32, kEmbd, 1, true);
        add(name("attn_q.weight"), type, kEmbd, kEmbd, false);
        add(name("attn_k.weight"), type, kEmbd, kv, false);
        add(name("attn_v.weight"), type, kEmbd, kv, false);
        add(name("attn_output.weight"), type, kEmbd, kEmbd, false);
        if (bpe) {
            add(name("attn_q.bias"), TERN_TYPE_F32, kEmbd, 1, false);
            add(name("attn_k.bias"), TERN_TYPE_F32, kv, 1, false);
            add(name("attn_v.bias"), TERN_TYPE_F32, kv, 1, false);
        }
        add(name("ffn_norm.weight"), TERN_TYPE_F32, kEmbd, 1, true);
        add(name("ffn_gate.weight"), type, kEmbd, kFf, false);
        add(name("ffn_up.weight"), type, kEmbd, kFf, false);
        add(name("ffn_down.weight"), type, kFf, kEmbd, false);
    }
    return gguf_writer_write(&w, path.c_str()) == TERN_OK;
}

}  // namespace

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_model_seeds DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    bool ok = write_model(dir + "/llama-f32.gguf", "llama", TERN_TYPE_F32, false) &&
              write_model(dir + "/llama-f16.gguf", "llama", TERN_TYPE_F16, false) &&
              write_model(dir + "/llama-q8_0.gguf", "llama", TERN_TYPE_Q8_0, false) &&
              write_model(dir + "/llama-q4_0.gguf", "llama", TERN_TYPE_Q4_0, false) &&
              write_model(dir + "/qwen2-f32.gguf", "qwen2", TERN_TYPE_F32, true) &&
              write_model(dir + "/qwen2-q8_0.gguf", "qwen2", TERN_TYPE_Q8_0, true);
    if (!ok) fprintf(stderr, "make_model_seeds: cannot write the seeds in %s\n", dir.c_str());
    return ok ? 0 : 1;
}
