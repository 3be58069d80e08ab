// Architecture registry: what differs between the decoder-only transformers
// Tern runs. All share one forward graph (model/forward.cpp); an entry only
// switches its parts on. Entries exist only for architectures compiled in
// (TERN_ARCHS -> TERN_WITH_ARCH_<NAME>).
#pragma once
#include <stdint.h>

namespace tern {

struct model_arch {
    const char * name;       // general.architecture
    int32_t rope_mode;       // TERN_ROPE_NORMAL (llama) or TERN_ROPE_NEOX (qwen2/qwen3/phi3)
    bool    qkv_bias;        // attn_{q,k,v}.bias required (qwen2)
    bool    qk_norm;         // attn_{q,k}_norm.weight per head (qwen3)
    bool    fused;           // phi3: attn_qkv.weight = q|k|v rows and ffn_up.weight = gate|up
                             // rows, split into row views when bound (model/weights.cpp)
    bool    q_prescale;      // phi3: q scaled by 1/sqrt(head size) before attention (scale 1 there)
    bool    sliding_window;  // phi3: every layer attends the last n_swa positions
                             // (<arch>.attention.sliding_window; model/hparams.h)
};

// NULL when the architecture is unknown or not compiled in.
const model_arch * model_arch_find(const char * name);
// Names compiled in, for error messages ("llama, qwen2, qwen3").
const char * model_arch_list(void);

}  // namespace tern
