// Random-weight GGUF files of an architecture's real structure, small widths,
// with the tokenizer of a shared file (every tokenizer.* key copied), written
// with Tern's own writer. The tests make them at run time; the peer's outputs
// for them are stored (tests/data/<arch>/README.md says how).
//
// Weights: a tensor's values come from splitmix64 streams per (seed, tensor,
// row), each value the sum of four uniform 24-bit draws (Irwin-Hall, mean 0,
// variance 1/3 scaled to 1), so the bytes are the same on every platform
// (integer and exactly rounded float operations only). Norm weights are
// 1 + norm_std * N, matrices std * N with their own std per kind.
//
//   gemma2  Gemma 2's tensors and keys (convert_hf_to_gguf's Gemma2Model):
//           token_embd (tied output), output_norm, per layer attn_norm,
//           attn_q/k/v (head size key_length, not n_embd / n_head, as the 2B),
//           attn_output, post_attention_norm, ffn_norm, ffn_gate/up/down,
//           post_ffw_norm; gemma2.context_length, embedding_length,
//           block_count (26: llama.cpp c392e509 knows the 2B/9B/27B layer
//           counts only), feed_forward_length, attention.head_count(_kv),
//           layer_norm_rms_epsilon, key_length, value_length,
//           attn_logit_softcapping, final_logit_softcapping, sliding_window.
//   qwen3   Qwen3's (Qwen3Model): token_embd (tied, as the 0.6B), output_norm,
//           per layer attn_norm, attn_q/k/v (key_length != n_embd / n_head, as
//           the 0.6B), attn_q_norm, attn_k_norm [key_length], attn_output,
//           ffn_norm, ffn_gate/up/down; qwen3.context_length, embedding_length,
//           block_count, feed_forward_length, attention.head_count(_kv),
//           rope.freq_base, layer_norm_rms_epsilon, key_length, value_length.
//   smollm3 SmolLM3's (a LlamaModel): llama's tensors (tied output, as the 3B),
//           smollm3.context_length, embedding_length, block_count,
//           feed_forward_length, attention.head_count(_kv), rope.freq_base,
//           layer_norm_rms_epsilon, rope.dimension_count, vocab_size (no key for
//           the no-RoPE layers: the peers take every 4th).
//   gemma3  Gemma 3's (Gemma3Model): gemma2's tensors plus attn_q_norm /
//           attn_k_norm [key_length]; gemma2's keys without the soft-capping,
//           plus rope.freq_base (the global layers'), rope.scaling.type linear
//           and rope.scaling.factor (as the 4B: the global layers only).
#pragma once
#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "tools/gguf_rewrite.h"
#include "tensor/types.h"

struct random_model_spec {
    std::string arch = "gemma2";  // gemma2, qwen3, smollm3, gemma3
    uint32_t n_embd = 64, n_layer = 26, n_head = 4, n_head_kv = 2, head_dim = 32, n_ff = 128;
    uint32_t n_swa = 8;
    float attn_softcap = 50.0f, final_softcap = 30.0f, norm_eps = 1e-6f;
    float rope_base = 1.0e6f, rope_linear = 8.0f;  // qwen3 / smollm3 / gemma3; gemma3's global layers
    std::string written_arch;  // general.architecture and key prefix when not arch (the same weights as another architecture)
    tern_type type = TERN_TYPE_F32;  // matrices; norms stay F32
    uint64_t seed = 1;
    // Small enough that the net does not amplify rounding: with q/k at 0.35 and the rest
    // at 0.15 (scores of std ~8, a sharp softmax) two correct F32 summation orders (Tern's
    // scalar double sums, its 16-lane tiles) gave logits 0.02 apart after 26 layers, past
    // the envelope's 2e-3 * s (0.015); at 0.10 / 0.12 they are 0.006 apart, llama.cpp 0.004-0.006 away.
    float std_embd = 1.0f, std_qk = 0.10f, std_other = 0.12f, norm_std = 0.1f;
};

struct random_model_rng {
    uint64_t state;
    static uint64_t mix(uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    random_model_rng(uint64_t seed, uint64_t tensor, uint64_t row)
        : state(mix(mix(mix(seed) + tensor * 0x9e3779b97f4a7c15ull) + row)) {}
    // Irwin-Hall of four uniforms in [0, 1): mean 2, variance 1/3 -> (sum - 2) * sqrt(3).
    float normal() {
        int64_t sum = 0;
        for (int i = 0; i < 4; i++) sum += (int64_t) (mix(state += 0x9e3779b97f4a7c15ull) >> 40);
        return (float) (sum - 2 * (int64_t) (1 << 24)) * (1.7320508f / 16777216.0f);
    }
};

// Returns true on success; *err says why not. vocab_src: a GGUF whose tokenizer.* keys are copied.
static inline bool make_random_model(const random_model_spec & s, const std::string & vocab_src, const std::string & dst,
                                     std::string * err) {
    gguf_source voc;
    if (!voc.open(vocab_src, err)) return false;
    const gguf_kv * tokens = gguf_get_arr(&voc.f, "tokenizer.ggml.tokens", GGUF_TYPE_STRING);
    if (!tokens) { *err = vocab_src + ": no tokenizer.ggml.tokens"; return false; }
    const int64_t n_vocab = (int64_t) tokens->arr_n;

    struct planned { std::string name; int64_t ne0, ne1; float std; bool norm; tern_type type; std::vector<uint8_t> bytes; };
    std::vector<planned> ts;
    auto add = [&](const std::string & name, int64_t ne0, int64_t ne1, float sd, bool norm) {
        tern_type t = norm ? TERN_TYPE_F32 : s.type;
        if (ne0 % tern_type_traits_get(t)->blck_size != 0) t = TERN_TYPE_F16;
        ts.push_back({ name, ne0, ne1, sd, norm, t, {} });
    };
    const bool gemma2 = s.arch == "gemma2", gemma3 = s.arch == "gemma3", qwen3 = s.arch == "qwen3", smollm3 = s.arch == "smollm3";
    if (!gemma2 && !gemma3 && !qwen3 && !smollm3) { *err = "make_random_model: unknown architecture " + s.arch; return false; }
    if (smollm3 && s.head_dim * s.n_head != s.n_embd) { *err = "smollm3: head_dim * n_head must be n_embd (no key_length)"; return false; }
    const int64_t n_q = (int64_t) s.head_dim * s.n_head, n_kv = (int64_t) s.head_dim * s.n_head_kv;
    add("token_embd.weight", s.n_embd, n_vocab, s.std_embd, false);
    add("output_norm.weight", s.n_embd, 1, s.norm_std, true);
    for (uint32_t il = 0; il < s.n_layer; il++) {
        const std::string b = "blk." + std::to_string(il) + ".";
        add(b + "attn_norm.weight", s.n_embd, 1, s.norm_std, true);
        add(b + "attn_q.weight", s.n_embd, n_q, s.std_qk, false);
        add(b + "attn_k.weight", s.n_embd, n_kv, s.std_qk, false);
        add(b + "attn_v.weight", s.n_embd, n_kv, s.std_other, false);
        if (qwen3 || gemma3) {
            add(b + "attn_q_norm.weight", s.head_dim, 1, s.norm_std, true);
            add(b + "attn_k_norm.weight", s.head_dim, 1, s.norm_std, true);
        }
        add(b + "attn_output.weight", n_q, s.n_embd, s.std_other, false);
        if (gemma2 || gemma3) add(b + "post_attention_norm.weight", s.n_embd, 1, s.norm_std, true);
        add(b + "ffn_norm.weight", s.n_embd, 1, s.norm_std, true);
        add(b + "ffn_gate.weight", s.n_embd, s.n_ff, s.std_other, false);
        add(b + "ffn_up.weight", s.n_embd, s.n_ff, s.std_other, false);
        add(b + "ffn_down.weight", s.n_ff, s.n_embd, s.std_other, false);
        if (gemma2 || gemma3) add(b + "post_ffw_norm.weight", s.n_embd, 1, s.norm_std, true);
    }
    std::vector<float> row;
    for (size_t i = 0; i < ts.size(); i++) {
        planned & t = ts[i];
        const tern_type_traits * tr = tern_type_traits_get(t.type);
        const size_t row_bytes = tern_row_size(t.type, t.ne0);
        t.bytes.resize(row_bytes * (size_t) t.ne1);
        row.resize((size_t) t.ne0);
        for (int64_t r = 0; r < t.ne1; r++) {
            random_model_rng rng(s.seed, i, (uint64_t) r);
            for (int64_t j = 0; j < t.ne0; j++) row[(size_t) j] = (t.norm ? 1.0f : 0.0f) + t.std * rng.normal();
            tr->from_float(row.data(), t.bytes.data() + (size_t) r * row_bytes, t.ne0);
        }
    }

    std::vector<uint8_t> writer_buf(arena_buffer_size((size_t) 1 << 20) + (size_t) (voc.f.n_kv + 32) * 512 + ts.size() * 256);
    tern_arena arena;
    arena_init(&arena, writer_buf.data(), writer_buf.size());
    gguf_writer w;
    if (gguf_writer_init(&w, &arena, (uint32_t) voc.f.n_kv + 32, (uint32_t) ts.size()) != TERN_OK) { *err = tern_last_error(); return false; }
    const std::string name = s.written_arch.empty() ? s.arch : s.written_arch, a = name + ".";
    bool ok = gguf_writer_set_str(&w, "general.architecture", name.c_str()) == TERN_OK &&
              gguf_writer_set_str(&w, "general.name", ("tern random " + s.arch).c_str()) == TERN_OK &&
              gguf_writer_set_u32(&w, (a + "context_length").c_str(), 8192) == TERN_OK &&
              gguf_writer_set_u32(&w, (a + "embedding_length").c_str(), s.n_embd) == TERN_OK &&
              gguf_writer_set_u32(&w, (a + "block_count").c_str(), s.n_layer) == TERN_OK &&
              gguf_writer_set_u32(&w, (a + "feed_forward_length").c_str(), s.n_ff) == TERN_OK &&
              gguf_writer_set_u32(&w, (a + "attention.head_count").c_str(), s.n_head) == TERN_OK &&
              gguf_writer_set_u32(&w, (a + "attention.head_count_kv").c_str(), s.n_head_kv) == TERN_OK &&
              gguf_writer_set_f32(&w, (a + "attention.layer_norm_rms_epsilon").c_str(), s.norm_eps) == TERN_OK &&
              gguf_writer_set_u32(&w, "general.file_type", s.type == TERN_TYPE_F32 ? 0 : s.type == TERN_TYPE_F16 ? 1 : 7) == TERN_OK;
    if (ok && !smollm3) {
        ok = gguf_writer_set_u32(&w, (a + "attention.key_length").c_str(), s.head_dim) == TERN_OK &&
             gguf_writer_set_u32(&w, (a + "attention.value_length").c_str(), s.head_dim) == TERN_OK;
    }
    if (ok && gemma2) {
        ok = gguf_writer_set_f32(&w, (a + "attn_logit_softcapping").c_str(), s.attn_softcap) == TERN_OK &&
             gguf_writer_set_f32(&w, (a + "final_logit_softcapping").c_str(), s.final_softcap) == TERN_OK;
    }
    if (ok && (gemma2 || gemma3)) ok = gguf_writer_set_u32(&w, (a + "attention.sliding_window").c_str(), s.n_swa) == TERN_OK;
    if (ok && !gemma2) ok = gguf_writer_set_f32(&w, (a + "rope.freq_base").c_str(), s.rope_base) == TERN_OK;
    if (ok && gemma3 && s.rope_linear != 0.0f) {
        ok = gguf_writer_set_str(&w, (a + "rope.scaling.type").c_str(), "linear") == TERN_OK &&
             gguf_writer_set_f32(&w, (a + "rope.scaling.factor").c_str(), s.rope_linear) == TERN_OK;
    }
    if (ok && smollm3) {
        ok = gguf_writer_set_u32(&w, (a + "rope.dimension_count").c_str(), s.head_dim) == TERN_OK &&
             gguf_writer_set_u32(&w, (a + "vocab_size").c_str(), (uint32_t) n_vocab) == TERN_OK;
    }
    for (uint64_t i = 0; ok && i < voc.f.n_kv; i++) {
        const gguf_kv * kv = &voc.f.kv[i];
        if (kv->key.len > 10 && memcmp(kv->key.data, "tokenizer.", 10) == 0) ok = gguf_writer_copy_kv(&w, kv) == TERN_OK;
    }
    for (size_t i = 0; ok && i < ts.size(); i++) {
        const int64_t ne[2] = { ts[i].ne0, ts[i].ne1 };
        ok = gguf_writer_add_tensor(&w, ts[i].name.c_str(), ts[i].type, ts[i].ne1 == 1 ? 1 : 2, ne, ts[i].bytes.data()) == TERN_OK;
    }
    if (!ok || gguf_writer_write(&w, dst.c_str()) != TERN_OK) { *err = tern_last_error(); return false; }
    return true;
}
