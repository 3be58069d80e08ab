// The type traits table and the lookups over it (see tensor/types.h).
// Entries exist only for the types compiled in (TERN_WITH_TYPE_<NAME>), plus
// I32 (graph inputs; no conversions). The public tern_type_name() is in
// src/api_meta.cpp and reads the names from this table.
#include "tensor/types.h"
#include "tensor/quants.h"
#include "tensor/quants_k.h"

namespace tern {

// A weight type works in mul_mat only with its dot type compiled in too.
#if (TERN_WITH_TYPE_Q4_0 || TERN_WITH_TYPE_Q5_0 || TERN_WITH_TYPE_IQ4_NL) && !TERN_WITH_TYPE_Q8_0
#error "TERN_TYPES: Q4_0, Q5_0 and IQ4_NL need Q8_0, their activation type"
#endif
#if (TERN_WITH_TYPE_Q4_1 || TERN_WITH_TYPE_Q5_1) && !TERN_WITH_TYPE_Q8_1
#error "TERN_TYPES: Q4_1 and Q5_1 need Q8_1, their activation type"
#endif
#if (TERN_WITH_TYPE_Q2_K || TERN_WITH_TYPE_Q3_K || TERN_WITH_TYPE_Q4_K || TERN_WITH_TYPE_Q5_K || \
     TERN_WITH_TYPE_Q6_K) && !TERN_WITH_TYPE_Q8_K
#error "TERN_TYPES: the K-quants need Q8_K, their activation type"
#endif

namespace {

struct type_entry {
    tern_type        type;
    tern_type_traits traits;
};

// ENTRY(NAME, fn suffix, values per block, bytes per block, quantized?, dot type, vec_dot or nullptr)
#define ENTRY_ACT(NAME, t, blck, bytes, quantized, DOT, dot_fn, act_fn) \
    {TERN_TYPE_##NAME,                                                  \
     {#NAME, blck, bytes, quantized, tern_dequantize_row_##t, tern_quantize_row_##t, TERN_TYPE_##DOT, dot_fn, act_fn}}
#define ENTRY(NAME, t, blck, bytes, quantized, DOT, dot_fn) \
    ENTRY_ACT(NAME, t, blck, bytes, quantized, DOT, dot_fn, tern_quantize_row_##t)
#define FLOAT_ENTRY(NAME, t, elem) ENTRY(NAME, t, 1, sizeof(elem), false, NAME, tern_vec_dot_##t)
#define BLOCK_ENTRY(NAME, t, blck, DOT) ENTRY(NAME, t, blck, sizeof(block_##t), true, DOT, tern_vec_dot_##t)
#define ACT_ENTRY(NAME, t, blck) ENTRY(NAME, t, blck, sizeof(block_##t), true, NAME, nullptr)

constexpr type_entry k_types[] = {
#if TERN_WITH_TYPE_F32
    FLOAT_ENTRY(F32, f32, float),
#endif
#if TERN_WITH_TYPE_F16
    // F16 weights meet F32 activations: llama.cpp's prompt-time matmul (tinyBLAS)
    // keeps them unrounded, which its reference logits show (F16 == F32 there).
    ENTRY(F16, f16, 1, sizeof(tern_fp16), false, F32, tern_vec_dot_f16),
#endif
#if TERN_WITH_TYPE_BF16
    FLOAT_ENTRY(BF16, bf16, tern_bf16),
#endif
#if TERN_WITH_TYPE_Q4_0
    BLOCK_ENTRY(Q4_0, q4_0, QK4_0, Q8_0),
#endif
#if TERN_WITH_TYPE_Q4_1
    BLOCK_ENTRY(Q4_1, q4_1, QK4_1, Q8_1),
#endif
#if TERN_WITH_TYPE_Q5_0
    BLOCK_ENTRY(Q5_0, q5_0, QK5_0, Q8_0),
#endif
#if TERN_WITH_TYPE_Q5_1
    BLOCK_ENTRY(Q5_1, q5_1, QK5_1, Q8_1),
#endif
#if TERN_WITH_TYPE_Q8_0
    ENTRY_ACT(Q8_0, q8_0, QK8_0, sizeof(block_q8_0), true, Q8_0, tern_vec_dot_q8_0, tern_quantize_act_q8_0),
#endif
#if TERN_WITH_TYPE_Q8_1
    ENTRY_ACT(Q8_1, q8_1, QK8_1, sizeof(block_q8_1), true, Q8_1, nullptr, tern_quantize_act_q8_1),
#endif
#if TERN_WITH_TYPE_IQ4_NL
    BLOCK_ENTRY(IQ4_NL, iq4_nl, QK4_NL, Q8_0),
#endif
#if TERN_WITH_TYPE_Q2_K
    BLOCK_ENTRY(Q2_K, q2_K, QK_K, Q8_K),
#endif
#if TERN_WITH_TYPE_Q3_K
    BLOCK_ENTRY(Q3_K, q3_K, QK_K, Q8_K),
#endif
#if TERN_WITH_TYPE_Q4_K
    BLOCK_ENTRY(Q4_K, q4_K, QK_K, Q8_K),
#endif
#if TERN_WITH_TYPE_Q5_K
    BLOCK_ENTRY(Q5_K, q5_K, QK_K, Q8_K),
#endif
#if TERN_WITH_TYPE_Q6_K
    BLOCK_ENTRY(Q6_K, q6_K, QK_K, Q8_K),
#endif
#if TERN_WITH_TYPE_Q8_K
    ACT_ENTRY(Q8_K, q8_K, QK_K),
#endif
    // Graph inputs only (token ids, positions): always there, nothing to convert.
    {TERN_TYPE_I32, {"I32", 1, sizeof(int32_t), false, nullptr, nullptr, TERN_TYPE_I32, nullptr, nullptr}},
};

#undef ACT_ENTRY
#undef ENTRY_ACT
#undef BLOCK_ENTRY
#undef FLOAT_ENTRY
#undef ENTRY

}  // namespace

const tern_type_traits * tern_type_traits_get(tern_type type) {
    for (const type_entry & e : k_types) {
        if (e.type == type) return &e.traits;
    }
    return nullptr;
}

bool tern_type_supported(uint32_t type_id) {
    return type_id < (uint32_t) TERN_TYPE_COUNT && tern_type_traits_get((tern_type) type_id) != nullptr;
}

size_t tern_row_size(tern_type type, int64_t ne0) {
    const tern_type_traits * t = tern_type_traits_get(type);
    if (!t || ne0 < 0) return 0;
    return t->type_size * (size_t) (ne0 / t->blck_size);
}

size_t tern_type_align(tern_type type) {
    switch (type) {
        case TERN_TYPE_F32:
        case TERN_TYPE_I32:
        case TERN_TYPE_Q8_K: return 4;  // f32 / i32 values, Q8_K's f32 scale
        default: return 2;              // fp16 / bf16 values and block scales
    }
}

}  // namespace tern
