// Extend a GGUF file with Tern's own reader and writer: every key/value and
// tensor of the source, the architecture optionally renamed (general.
// architecture and every "<old>." key moved to "<new>."), some u32/f32 keys set
// (in place, or appended), and some F32 vectors added in front of the tensors
// (as convert_hf_to_gguf writes rope_freqs.weight first), some tensors copied
// under another name (an untied output.weight). The tests turn the
// shared trained llama files into the layouts of newer llama-family files
// (Llama 3.x's rope_freqs, granite's scales, phi3's LongRoPE factors) with it,
// at run time, so no rewritten copy is stored; tests/data/<arch>/README.md says
// how the peer's outputs for them were made.
//
// llama3_rope_factors() gives the factors convert_hf_to_gguf.py writes for a
// "llama3" rope_scaling (factor, low_freq_factor, high_freq_factor,
// original_max_position_embeddings): for each pair i of n_rot dims with
// frequency base^(-2i/n_rot) and wavelength w = 2 pi / frequency,
//   w < old_ctx / high          -> 1
//   w > old_ctx / low           -> factor
//   else, s = (old_ctx / w - low) / (high - low): 1 / ((1 - s) / factor + s)
#pragma once
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <utility>
#include <vector>

#include "tools/gguf_rewrite.h"

struct gguf_extension {
    std::string arch;  // "": keep the source's
    std::vector<std::pair<std::string, uint32_t>> set_u32;  // keys without the "<arch>." prefix
    std::vector<std::pair<std::string, float>> set_f32;     // likewise
    std::vector<std::pair<std::string, std::vector<float>>> add_f32;  // 1-D F32 tensors
    std::vector<std::pair<std::string, std::string>> copy_tensors;   // new name, existing tensor (same bytes), appended
};

static inline std::vector<float> llama3_rope_factors(float base, int n_rot, float factor, float low, float high, float old_ctx) {
    std::vector<float> out;
    const double two_pi = 6.283185307179586;
    for (int i = 0; i < n_rot; i += 2) {
        const double freq = 1.0 / pow((double) base, (double) i / n_rot);
        const double w = two_pi / freq;
        if (w < old_ctx / high) {
            out.push_back(1.0f);
        } else if (w > old_ctx / low) {
            out.push_back(factor);
        } else {
            const double s = (old_ctx / w - low) / (high - low);
            out.push_back((float) (1.0 / ((1.0 - s) / factor + s)));
        }
    }
    return out;
}

// Returns true on success; *err says why not.
static inline bool gguf_extend(const std::string & src, const std::string & dst, const gguf_extension & ext, std::string * err) {
    gguf_source in;
    if (!in.open(src, err)) return false;
    const gguf_file & f = in.f;
    gguf_str arch_str;
    if (!gguf_get_str(&f, "general.architecture", &arch_str)) { *err = src + ": no general.architecture"; return false; }
    const std::string old_arch(arch_str.data, (size_t) arch_str.len);
    const std::string arch = ext.arch.empty() ? old_arch : ext.arch;

    const uint32_t max_kv = (uint32_t) (f.n_kv + ext.set_u32.size() + ext.set_f32.size() + 1);
    const uint32_t max_tensors = (uint32_t) (f.n_tensors + ext.add_f32.size() + ext.copy_tensors.size());
    std::vector<uint8_t> writer_buf(arena_buffer_size((size_t) 1 << 20) + (size_t) max_kv * 512 + (size_t) max_tensors * 256);
    tern_arena writer_arena;
    arena_init(&writer_arena, writer_buf.data(), writer_buf.size());
    gguf_writer w;
    if (gguf_writer_init(&w, &writer_arena, max_kv, max_tensors) != TERN_OK) { *err = tern_last_error(); return false; }
    std::vector<std::string> renamed;  // keys the writer views (kept alive until the write)
    renamed.reserve((size_t) f.n_kv);
    const std::string old_prefix = old_arch + ".";
    for (uint64_t i = 0; i < f.n_kv; i++) {
        gguf_kv kv = f.kv[i];
        const std::string key(kv.key.data, (size_t) kv.key.len);
        if (key == "general.architecture") {
            if (gguf_writer_set_str(&w, "general.architecture", arch.c_str()) != TERN_OK) { *err = tern_last_error(); return false; }
            continue;
        }
        if (arch != old_arch && key.compare(0, old_prefix.size(), old_prefix) == 0) {
            renamed.push_back(arch + "." + key.substr(old_prefix.size()));
            kv.key.data = renamed.back().c_str();
            kv.key.len = renamed.back().size();
        }
        if (gguf_writer_copy_kv(&w, &kv) != TERN_OK) { *err = tern_last_error(); return false; }
    }
    for (const auto & k : ext.set_u32) {
        if (gguf_writer_set_u32(&w, (arch + "." + k.first).c_str(), k.second) != TERN_OK) { *err = tern_last_error(); return false; }
    }
    for (const auto & k : ext.set_f32) {
        if (gguf_writer_set_f32(&w, (arch + "." + k.first).c_str(), k.second) != TERN_OK) { *err = tern_last_error(); return false; }
    }
    for (const auto & t : ext.add_f32) {
        const int64_t ne[1] = { (int64_t) t.second.size() };
        if (gguf_writer_add_tensor(&w, t.first.c_str(), TERN_TYPE_F32, 1, ne, t.second.data()) != TERN_OK) {
            *err = tern_last_error();
            return false;
        }
    }
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const gguf_tensor_info * t = &f.tensors[i];
        if (gguf_writer_add_tensor(&w, t->name, t->type, t->n_dims, t->ne, f.base + f.data_offset + t->offset) != TERN_OK) {
            *err = tern_last_error();
            return false;
        }
    }
    for (const auto & c : ext.copy_tensors) {
        const gguf_tensor_info * t = NULL;
        for (uint64_t i = 0; i < f.n_tensors && !t; i++) if (c.second == f.tensors[i].name) t = &f.tensors[i];
        if (!t) { *err = src + ": no tensor " + c.second; return false; }
        if (gguf_writer_add_tensor(&w, c.first.c_str(), t->type, t->n_dims, t->ne, f.base + f.data_offset + t->offset) != TERN_OK) {
            *err = tern_last_error();
            return false;
        }
    }
    if (gguf_writer_write(&w, dst.c_str()) != TERN_OK) { *err = tern_last_error(); return false; }
    return true;
}

// The Llama 3.x layout the tests give a llama file of head size n_rot (rotated
// entirely) and n_vocab tokens: rope_freqs.weight by the llama3 formula with
// factor 32, low 1, high 4 and an original context of 128 (so that short
// prompts see every regime: with n_rot 16 and base 10000 the pairs get
// 1, 1, 2.7, 32, .., 32), and the keys a Llama 3.2 GGUF has beyond the
// shared files' (key/value lengths, rope dimension count, vocab size).
static inline gguf_extension gguf_extension_llama3(int n_rot, float base, uint32_t n_vocab) {
    gguf_extension e;
    e.add_f32.push_back({ "rope_freqs.weight", llama3_rope_factors(base, n_rot, 32.0f, 1.0f, 4.0f, 128.0f) });
    e.set_u32 = { { "attention.key_length", (uint32_t) n_rot }, { "attention.value_length", (uint32_t) n_rot },
                  { "rope.dimension_count", (uint32_t) n_rot }, { "vocab_size", n_vocab } };
    return e;
}

// Phi-3.5-mini's layout (convert_hf_to_gguf's Phi3MiniModel) for a phi3 rewrite
// (tools/phi3_from_llama.h) of head size n_rot
// with its sliding_window (262144, past any context), an output.weight of its
// own (a copy of the tied embedding: llama.cpp's phi3 requires one), context_length 131072,
// rope.scaling.original_context_length, Phi-3.5-mini's rope.scaling.
// attn_factor (sqrt(1 + ln(32) / ln(4096)): 131072 over an original 4096), and
// the two factor tensors (made up here, distinct per pair and between the sets:
// short 1 + i/4, long 40^(i/7)). llama.cpp picks the long factors when
// n_ctx / n_seq_max passes the original context: at the peer's n_ctx of 512,
// original 4096 picks the short ones, 256 the long ones.
static inline gguf_extension gguf_extension_phi35(int n_rot, uint32_t original) {
    gguf_extension e;
    std::vector<float> short_f, long_f;
    for (int i = 0; i < n_rot / 2; i++) {
        short_f.push_back(1.0f + 0.25f * (float) i);
        long_f.push_back(powf(40.0f, (float) i / 7.0f));
    }
    e.add_f32 = { { "rope_factors_long.weight", long_f }, { "rope_factors_short.weight", short_f } };
    e.copy_tensors = { { "output.weight", "token_embd.weight" } };  // phi3 has its own output matrix
    e.set_u32 = { { "context_length", 131072 }, { "rope.scaling.original_context_length", original } };
    e.set_f32 = { { "rope.scaling.attn_factor", sqrtf(1.0f + logf(32.0f) / logf(4096.0f)) } };
    return e;
}

// Granite 3.x's keys (convert_hf_to_gguf's GraniteModel), with values the
// trained network still speaks through (granite-3.x-2b's 12 / 0.22 / 8 turn it
// into "eeee"): embeddings * 2, each block's output * 0.8 before its residual
// add, attention scale 0.2 (1/sqrt(16) = 0.25 by default), logits / 1.5.
static inline gguf_extension gguf_extension_granite() {
    gguf_extension e;
    e.arch = "granite";
    e.set_f32 = { { "embedding_scale", 2.0f }, { "residual_scale", 0.8f }, { "attention.scale", 0.2f }, { "logit_scale", 1.5f } };
    return e;
}
