// The scalar kernel set: the references themselves (see kernel_set.h). Every
// other set starts from this one and overrides what it does better.
#include "cpu/kernels/kernel_set.h"
#include "cpu/kernels/vec.h"

namespace tern {

void tern_fill_scalar(tern_kernel_set * ks) {
    ks->name = "scalar";
    ks->dot_f32 = tern_kdot_f32_ref;
    ks->dot_f16 = tern_kdot_f16_ref;
    ks->sumsq_f32 = tern_ksumsq_f32_ref;
    ks->mad_f32 = tern_kmad_f32_ref;
    ks->mad_f16 = tern_kmad_f16_ref;
    ks->scale_mul_f32 = tern_kscale_mul_f32_ref;
    ks->add_f32 = tern_kadd_f32_ref;
    ks->mul_f32 = tern_kmul_f32_ref;
    ks->fp32_to_fp16 = tern_kfp32_to_fp16_ref;
    ks->fp16_to_fp32 = tern_kfp16_to_fp32_ref;
    ks->dot_f16_rows = tern_kdot_f16_rows_ref;
    ks->mad_f16_rows = tern_kmad_f16_rows_ref;
    ks->scale_mask_max_f32 = tern_kscale_mask_max_f32_ref;
    ks->exp_sum_f32 = tern_kexp_sum_f32_ref;
    ks->swiglu_f32 = tern_kswiglu_f32_ref;
#if TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3
    ks->geglu_f32 = tern_kgeglu_f32_ref;  // gelu_table.cpp; NULL where no GELU architecture is compiled in
#endif
    for (int t = 0; t < TERN_TYPE_COUNT; t++) {
        const tern_type_traits * tr = tern_type_traits_get((tern_type) t);
        ks->vec_dot[t] = tr ? tr->vec_dot : nullptr;
        ks->gemm[t] = nullptr;
        ks->quantize_act[t] = tr ? tr->from_float_act : nullptr;
        ks->repack_rows[t] = 0;
        ks->repack[t] = nullptr;
        ks->gemm_repacked[t] = nullptr;
        ks->unpack_row[t] = nullptr;
    }
}

}  // namespace tern
