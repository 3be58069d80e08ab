// Architecture registry: what differs between the decoder-only transformers
// Tern runs. All share one forward graph (model/forward.cpp); an entry only
// switches its parts on. Entries exist only for architectures compiled in
// (TERN_ARCHS -> TERN_WITH_ARCH_<NAME>); the names and needs of every
// architecture Tern knows stay listed (model_arch_needs) so that a file of one
// compiled out is refused naming what it needs.
//
//   arch     differs from llama by
//   llama    (rope_freqs.weight: Llama 3.1/3.2's frequency factors, optional)
//   qwen2    q/k/v biases, NEOX rope
//   qwen3    per-head q/k RMS norms, NEOX rope
//   phi3     fused q|k|v and gate|up matrices, q scaled before the attention,
//            sliding window on every layer, LongRoPE factors (optional)
//   granite  llama with embedding, residual, attention and logit scales
//   gemma2   embeddings * sqrt(n_embd), GELU gated FFN, norms before and after
//            attention and FFN, attention and final soft-capping, q scaled before
//            the attention, sliding window on the even layers (a second mask), NEOX rope
//   smollm3  llama without RoPE on every 4th layer
//   gemma3   gemma2's embedding scale, GELU FFN and post-norms, q/k RMS norms, no
//            soft-capping, sliding window on 5 of every 6 layers with a RoPE base of their own
#pragma once
#include <stdint.h>
#include "tern_config.h"

// 0 for the architectures TERN_ARCHS leaves out.
#ifndef TERN_WITH_ARCH_LLAMA
#define TERN_WITH_ARCH_LLAMA 0
#endif
#ifndef TERN_WITH_ARCH_QWEN2
#define TERN_WITH_ARCH_QWEN2 0
#endif
#ifndef TERN_WITH_ARCH_QWEN3
#define TERN_WITH_ARCH_QWEN3 0
#endif
#ifndef TERN_WITH_ARCH_PHI3
#define TERN_WITH_ARCH_PHI3 0
#endif
#ifndef TERN_WITH_ARCH_GRANITE
#define TERN_WITH_ARCH_GRANITE 0
#endif
#ifndef TERN_WITH_ARCH_GEMMA2
#define TERN_WITH_ARCH_GEMMA2 0
#endif
#ifndef TERN_WITH_ARCH_SMOLLM3
#define TERN_WITH_ARCH_SMOLLM3 0
#endif
#ifndef TERN_WITH_ARCH_GEMMA3
#define TERN_WITH_ARCH_GEMMA3 0
#endif

namespace tern {

// Features only some architecture uses: their code folds away when it is not
// compiled in (`if (k_arch_phi3 && ...)`).
constexpr bool k_arch_phi3 = TERN_WITH_ARCH_PHI3;
constexpr bool k_arch_granite = TERN_WITH_ARCH_GRANITE;
constexpr bool k_arch_gemma = TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3;
constexpr bool k_arch_gemma3 = TERN_WITH_ARCH_GEMMA3;
constexpr bool k_arch_smollm3 = TERN_WITH_ARCH_SMOLLM3;

enum {
    ARCH_QKV_BIAS   = 1 << 0,   // attn_{q,k,v}.bias required (qwen2)
    ARCH_QK_NORM    = 1 << 1,   // attn_{q,k}_norm.weight per head (qwen3)
    ARCH_FUSED      = 1 << 2,   // phi3: attn_qkv.weight = q|k|v rows and ffn_up.weight = gate|up
                                // rows, split into row views when bound (model/weights.cpp)
    ARCH_Q_PRESCALE = 1 << 3,   // q * hparams.attn_scale after RoPE, then attention with scale 1
                                // (phi3: llama.cpp rounds the scaled q to F16)
    ARCH_ROPE_FREQS = 1 << 4,   // llama: rope_freqs.weight [n_rot/2] divides each pair's frequency
    ARCH_LONGROPE   = 1 << 5,   // phi3: rope_factors_long/short.weight [n_rot/2], chosen by context length
    ARCH_SLIDING_WINDOW = 1 << 6,  // phi3: every layer attends the last n_swa positions
                                   // (<arch>.attention.sliding_window; model/hparams.h)
    ARCH_SCALES     = 1 << 7,   // granite: embedding, residual, attention and logit scales (model/hparams.h)
    ARCH_GEMMA      = 1 << 8,   // gemma2, gemma3: embeddings * sqrt(n_embd), GELU FFN, post_attention_norm /
                                // post_ffw_norm on each block's output, a window on some layers
                                // (gemma2: soft-capping, even layers; gemma3: 5 of 6, their own RoPE base)
    ARCH_NOROPE_LAYERS = 1 << 9,  // smollm3: every 4th layer without RoPE (model/hparams.h)
};

struct model_arch {
    const char * name;       // general.architecture
    int32_t rope_mode;       // TERN_ROPE_NORMAL (llama) or TERN_ROPE_NEOX
    uint32_t flags;          // ARCH_*
    const char * needs;      // what running it takes, for messages
};

// NULL when the architecture is unknown or not compiled in.
const model_arch * model_arch_find(const char * name);
// Names compiled in, for error messages ("llama, qwen2, qwen3").
const char * model_arch_list(void);
// What an architecture Tern knows needs (compiled in or not), NULL for one it does not know.
const char * model_arch_needs(const char * name);

}  // namespace tern
