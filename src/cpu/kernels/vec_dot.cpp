// Compile-time choice of the vec_dot kernel per weight type (see vec_dot.h).
// A switch, not a table: no static constructors, and a type not compiled in
// (TERN_TYPES) falls through to its traits, which have no entry for it.
#include "cpu/kernels/vec_dot.h"

static tern_vec_dot_fn reference_vec_dot(tern_type type) {
    const tern_type_traits * tr = tern_type_traits_get(type);
    return tr ? tr->vec_dot : nullptr;
}

tern_vec_dot_fn tern_cpu_vec_dot(tern_type type) {
#if TERN_VEC_DOT_X86
    switch (type) {
#if TERN_WITH_TYPE_Q8_0
        case TERN_TYPE_Q8_0: return tern_vec_dot_q8_0_avx2;
#endif
#if TERN_WITH_TYPE_Q4_0
        case TERN_TYPE_Q4_0: return tern_vec_dot_q4_0_avx2;
#endif
#if TERN_WITH_TYPE_Q5_0
        case TERN_TYPE_Q5_0: return tern_vec_dot_q5_0_avx2;
#endif
#if TERN_WITH_TYPE_IQ4_NL
        case TERN_TYPE_IQ4_NL: return tern_vec_dot_iq4_nl_avx2;
#endif
#if TERN_WITH_TYPE_Q4_1
        case TERN_TYPE_Q4_1: return tern_vec_dot_q4_1_avx2;
#endif
#if TERN_WITH_TYPE_Q5_1
        case TERN_TYPE_Q5_1: return tern_vec_dot_q5_1_avx2;
#endif
#if TERN_WITH_TYPE_Q4_K
        case TERN_TYPE_Q4_K: return tern_vec_dot_q4_K_avx2;
#endif
#if TERN_WITH_TYPE_Q6_K
        case TERN_TYPE_Q6_K: return tern_vec_dot_q6_K_avx2;
#endif
#if TERN_WITH_TYPE_Q5_K
        case TERN_TYPE_Q5_K: return tern_vec_dot_q5_K_avx2;
#endif
#if TERN_WITH_TYPE_Q3_K
        case TERN_TYPE_Q3_K: return tern_vec_dot_q3_K_avx2;
#endif
#if TERN_WITH_TYPE_Q2_K
        case TERN_TYPE_Q2_K: return tern_vec_dot_q2_K_avx2;
#endif
        default: break;
    }
#endif
    return reference_vec_dot(type);
}
