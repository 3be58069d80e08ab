#include "model/arch.h"
#include "graph/graph.h"

#include <string.h>

namespace tern {

static const model_arch k_archs[] = {
#if TERN_WITH_ARCH_LLAMA
    { "llama", TERN_ROPE_NORMAL, false, false, false, false, false },
#endif
#if TERN_WITH_ARCH_QWEN2
    { "qwen2", TERN_ROPE_NEOX, true, false, false, false, false },
#endif
#if TERN_WITH_ARCH_QWEN3
    { "qwen3", TERN_ROPE_NEOX, false, true, false, false, false },
#endif
#if TERN_WITH_ARCH_PHI3
    { "phi3", TERN_ROPE_NEOX, false, false, true, true, true },
#endif
};

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
    ;

const model_arch * model_arch_find(const char * name) {
    for (const model_arch & a : k_archs) {
        if (strcmp(a.name, name) == 0) return &a;
    }
    return NULL;
}

const char * model_arch_list(void) { return k_arch_list[0] ? k_arch_list + 1 : "(none)"; }

}  // namespace tern
