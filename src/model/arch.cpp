#include "model/arch.h"
#include "graph/graph.h"

#include <string.h>

namespace tern {

namespace {

struct arch_entry {
    model_arch arch;
    bool compiled;  // TERN_ARCHS lists it
};

// Every architecture Tern knows; those compiled out keep their name and needs
// only (for the refusal), never a code path.
const arch_entry k_archs[] = {
    { { "llama", TERN_ROPE_NORMAL, ARCH_ROPE_FREQS,
        "RMS norm, SwiGLU, NORMAL RoPE (+ Llama 3 frequency factors)" }, TERN_WITH_ARCH_LLAMA },
    { { "qwen2", TERN_ROPE_NEOX, ARCH_QKV_BIAS,
        "q/k/v biases, NEOX RoPE" }, TERN_WITH_ARCH_QWEN2 },
    { { "qwen3", TERN_ROPE_NEOX, ARCH_QK_NORM,
        "q/k RMS norms, NEOX RoPE" }, TERN_WITH_ARCH_QWEN3 },
    { { "phi3", TERN_ROPE_NEOX, ARCH_FUSED | ARCH_Q_PRESCALE | ARCH_LONGROPE | ARCH_SLIDING_WINDOW,
        "fused q|k|v and gate|up, sliding window on every layer, LongRoPE factors" }, TERN_WITH_ARCH_PHI3 },
    { { "granite", TERN_ROPE_NORMAL, ARCH_ROPE_FREQS | ARCH_SCALES,
        "llama with embedding, residual, attention and logit scales" }, TERN_WITH_ARCH_GRANITE },
    { { "gemma2", TERN_ROPE_NEOX, ARCH_Q_PRESCALE | ARCH_GEMMA | ARCH_SLIDING_WINDOW,
        "GELU FFN, post-norms, attention and final soft-capping, sliding window on even layers (two masks)" },
      TERN_WITH_ARCH_GEMMA2 },
    { { "smollm3", TERN_ROPE_NORMAL, ARCH_NOROPE_LAYERS,
        "llama without RoPE on every 4th layer" }, TERN_WITH_ARCH_SMOLLM3 },
    { { "gemma3", TERN_ROPE_NEOX, ARCH_QK_NORM | ARCH_GEMMA | ARCH_SLIDING_WINDOW,
        "q/k RMS norms, GELU FFN, post-norms, sliding window on 5 of 6 layers (two masks) with a RoPE base of their own" },
      TERN_WITH_ARCH_GEMMA3 },
};

const arch_entry * entry_of(const char * name) {
    for (const arch_entry & e : k_archs) {
        if (strcmp(e.arch.name, name) == 0) return &e;
    }
    return NULL;
}

}  // namespace

static const char k_arch_list[] = ""
#if TERN_WITH_ARCH_LLAMA
    " llama"
#endif
#if TERN_WITH_ARCH_QWEN2
    " qwen2"
#endif
#if TERN_WITH_ARCH_QWEN3
    " qwen3"
#endif
#if TERN_WITH_ARCH_PHI3
    " phi3"
#endif
#if TERN_WITH_ARCH_GRANITE
    " granite"
#endif
#if TERN_WITH_ARCH_GEMMA2
    " gemma2"
#endif
#if TERN_WITH_ARCH_SMOLLM3
    " smollm3"
#endif
#if TERN_WITH_ARCH_GEMMA3
    " gemma3"
#endif
    ;

const model_arch * model_arch_find(const char * name) {
    const arch_entry * e = entry_of(name);
    return e && e->compiled ? &e->arch : NULL;
}

const char * model_arch_needs(const char * name) {
    const arch_entry * e = entry_of(name);
    return e ? e->arch.needs : NULL;
}

const char * model_arch_list(void) { return k_arch_list[0] ? k_arch_list + 1 : "(none)"; }

}  // namespace tern
