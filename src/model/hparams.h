// Hyper-parameters read from the GGUF keys "<arch>.*" (llama.cpp's names).
#pragma once
#include <stdint.h>
#include "tern.h"
#include "gguf/gguf.h"

namespace tern {

struct model_hparams {
    uint32_t n_vocab;
    uint32_t n_ctx_train;
    uint32_t n_embd;
    uint32_t n_layer;
    uint32_t n_head;
    uint32_t n_head_kv;
    uint32_t n_ff;
    uint32_t n_embd_head_k;   // attention.key_length, default n_embd / n_head
    uint32_t n_embd_head_v;   // attention.value_length, default n_embd / n_head
    uint32_t n_rot;           // rope.dimension_count, default n_embd_head_k
    float    norm_rms_eps;
    float    rope_freq_base;
    float    rope_freq_scale; // 1 / rope.scaling.factor
    int32_t  rope_scaling;    // 0 none, 1 linear, 2 yarn
    uint32_t n_ctx_orig_yarn; // rope.scaling.original_context_length, default n_ctx_train
    uint32_t n_swa;           // attention.sliding_window: a token at position p attends the
                              // cells with p - pos < n_swa; 0 = no window
    float    rope_attn_factor; // rope.scaling.attn_factor (1): multiplies RoPE's cos and sin
    float    attn_scale;       // q.k scale: 1/sqrt(n_embd_head_k), granite's attention.scale
    float    embd_scale;       // granite: token embeddings * this (0: none)
    float    residual_scale;   // granite: attention and FFN outputs * this before each residual add (0: none)
    float    logit_scale;      // granite: logits / this (0: none)
    uint32_t swa_period;       // 0: the window applies to every layer (phi3); P: to the layers with
                               // (il + 1) % P != 0, the others attend globally (gemma2: P = 2, the even layers)
    float    attn_softcap;     // gemma2: scores -> c * tanh(scores / c) before the softmax (0: none)
    float    final_softcap;    // gemma2: logits -> c * tanh(logits / c) (0: none)
    uint32_t norope_period;    // smollm3: the layers with (il + 1) % P == 0 skip RoPE (0: every layer rotates)
    float    rope_freq_base_swa;  // gemma3: the windowed layers' RoPE base (0: the global one for every layer)
    float    rope_freq_scale_swa; // gemma3: the windowed layers' frequency scale (the global layers take
                                  // rope_freq_scale, the file's linear scaling)
};

// Whether layer il attends through the sliding window; whether some layers do
// not (then they have a mask of their own and no cell may be dropped).
static inline bool hparams_layer_swa(const model_hparams * h, int32_t il) {
    return h->n_swa > 0 && (h->swa_period == 0 || (il + 1) % (int32_t) h->swa_period != 0);
}
static inline bool hparams_swa_mixed(const model_hparams * h) { return h->n_swa > 0 && h->swa_period > 0; }
// Whether layer il rotates q and k at all (smollm3 skips every 4th); whether it
// takes the windowed layers' RoPE parameters (gemma3's local layers).
static inline bool hparams_layer_rope(const model_hparams * h, int32_t il) {
    return h->norope_period == 0 || (il + 1) % (int32_t) h->norope_period != 0;
}
static inline bool hparams_layer_rope_swa(const model_hparams * h, int32_t il) {
    return h->rope_freq_base_swa != 0.0f && hparams_layer_swa(h, il);
}

static inline uint32_t hparams_n_embd_k_gqa(const model_hparams * h) { return h->n_embd_head_k * h->n_head_kv; }
static inline uint32_t hparams_n_embd_v_gqa(const model_hparams * h) { return h->n_embd_head_v * h->n_head_kv; }

// Read and check the hyper-parameters of architecture `arch` (a NUL-terminated
// name). Missing required keys or inconsistent values: TERN_ERR_FORMAT naming
// the key. n_vocab comes from the vocabulary size passed in (or <arch>.vocab_size).
tern_status hparams_load(const gguf_file * f, const char * arch, uint32_t n_vocab, model_hparams * out);

struct model_arch;

// The keys only some architectures have, as llama.cpp reads them: phi3's
// <arch>.attention.sliding_window (0: no window, as Phi-4 writes it); without
// the key, the value of the Phi-3 model the shape names (2047 for the 4k
// mini/medium, 262144 / 131072 for the 128k ones), TERN_ERR_FORMAT when it
// names none. granite's embedding_scale, residual_scale, attention.scale and
// logit_scale (all four required, as llama.cpp reads them). gemma2:
// embeddings * sqrt(n_embd); attention.sliding_window (4096 without the key)
// on the even layers; attn_logit_softcapping (50) and final_logit_softcapping
// (30); q scaled by 1/sqrt(key_length), except the 27B shape (46 layers):
// 1/sqrt(n_embd / n_head) (no GGUF carries query_pre_attn_scalar; llama.cpp
// derives it from the layer count and refuses counts other than 26, 42, 46).
// gemma3 (as ik_llama.cpp reads it): gemma2's embedding scale and post-norms
// without soft-capping; attention.sliding_window (required) on 5 of every 6
// layers ((il + 1) % 6 != 0), whose RoPE takes base 10000 and no scaling (a
// constant in ik_llama: no GGUF key); the global layers take rope.freq_base and
// the file's linear scaling; q.k scaled by 1/sqrt(key_length), 1/sqrt(n_embd /
// n_head) for the 27B's 62 layers. smollm3: no RoPE on every 4th layer
// (HF's no_rope_layer_interval; ik_llama's constant, no GGUF key).
tern_status hparams_load_arch(const gguf_file * f, const char * arch, const model_arch * a, model_hparams * h);

}  // namespace tern
