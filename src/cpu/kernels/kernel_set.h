// The kernel set: every CPU kernel whose best code depends on the processor,
// gathered in one table per target.
//
// How a set is chosen. The build compiles the scalar set always, plus the
// SIMD sets of its TERN_SIMD setting (tern_config.h, TERN_KSET_*):
//   auto on x86-64  scalar, avx2 (AVX2+FMA+F16C), avxvnni (avx2 + AVX-VNNI:
//                   Alder Lake-N and other cores with VNNI but no AVX-512),
//                   avx512 (F/BW/VL/DQ + VNNI), each SIMD set in its own
//                   translation units compiled with that target's flags
//                   (x86/*_avx2.cpp, *_avxvnni.cpp, *_avx512.cpp); the best
//                   one the CPU runs (in that order) is picked once, at the
//                   first call of tern_kernels() (CPUID, and XCR0 for the
//                   OS-saved AVX / AVX-512 state).
//   auto on AArch64 scalar, neon (ARMv8.0), dotprod (SDOT), i8mm (SMMLA),
//                   each level in its own files with its own flags
//                   (arm/*_neon.cpp, arm/*_dotprod.cpp, arm/*_i8mm.cpp), the
//                   best the CPU runs picked from AT_HWCAP / AT_HWCAP2
//                   (arm/arm_features.h);
//   auto on 32-bit ARM Linux (ARMv7-A): scalar + neon (arm/*_neon.cpp built
//                   with NEON + VFPv4 flags, chosen where AT_HWCAP reports
//                   both): the SMULL integer dots and dot_f32 only
//                   (arm/vec_neon.cpp says why).
//   avx2|avxvnni|avx512|neon|dotprod|i8mm  pinned: that set and those it is
//                   filled over (avxvnni and avx512: avx2; i8mm: dotprod,
//                   neon), no CPU detection; the whole library is compiled
//                   for the target.
//   scalar          the references only.
// The environment variable TERN_KERNELS=<set> forces a set lower than the
// best (for tests, and for users chasing a bug); an unknown or unsupported
// name is ignored with a warning.
//
// A set is filled by chaining: the avx512 and avxvnni fills start from the
// avx2 fill, which starts from the scalar fill (the references); i8mm from
// dotprod from neon from scalar. So each target only overrides what it does
// better. Nothing here allocates; the tables are
// zero-initialized statics filled once (no static constructors).
//
// Numerics: kernels marked exact in vec.h give the reference's bits in every
// set. Matrix tiles (tern_gemm_fn) compute the integer part of each block
// exactly and may sum the float parts in their own order, so sets differ by
// rounding; within one set every output value is computed by the same
// operations wherever its tile falls, so logits do not depend on the thread
// count or the batch split.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern_config.h"
#include "core/fp16.h"
#include "tensor/types.h"

namespace tern {

// The CPU's weight layout (tern_tensor.layout, graph.h): rows interleaved in
// groups of repack_rows[type] by the kernel set in use (model/repack.h).
// Only the CPU writes and reads it; devices get weights in the file layout.
enum { CPU_LAYOUT_INTERLEAVED = 1 };


// mul_mat tile: out[m * ldo + n] = dot(W row n, A row m) for n < nr, m < nc.
//   w: nr weight rows of the weight type, row stride w_stride bytes;
//   a: nc activation rows of the weight type's vec_dot_type, stride a_stride.
// Contract: the value of each output depends only on its two rows (not on
// nr, nc or where the tile starts), so any split of the work gives the same
// bits.
typedef void (*tern_gemm_fn)(int64_t k, int64_t nr, int64_t nc, const void * w, size_t w_stride,
                             const void * a, size_t a_stride, float * out, int64_t ldo);

struct tern_kernel_set {
    const char * name;  // "scalar", "avx2", "avxvnni", "avx512", "neon", "dotprod", "i8mm"

    // Vector kernels behind the ops (vec.h describes each).
    float  (*dot_f32)(int64_t n, const float * x, const float * y);
    float  (*dot_f16)(int64_t n, const tern_fp16 * x, const tern_fp16 * y);
    double (*sumsq_f32)(int64_t n, const float * x);
    void   (*mad_f32)(int64_t n, float * y, const float * x, float s);
    void   (*mad_f16)(int64_t n, float * y, const tern_fp16 * x, float s);
    void   (*scale_mul_f32)(int64_t n, float * y, const float * x, float s, const float * w);
    void   (*add_f32)(int64_t n, float * z, const float * x, const float * y);
    void   (*mul_f32)(int64_t n, float * z, const float * x, const float * y);
    void   (*fp32_to_fp16)(int64_t n, const float * x, tern_fp16 * y);
    void   (*fp16_to_fp32)(int64_t n, const tern_fp16 * x, float * y);
    void   (*dot_f16_rows)(int64_t n, int64_t n_rows, int64_t n_x, const tern_fp16 * x, const tern_fp16 * rows, int64_t stride, float * out, int64_t out_stride);
    void   (*mad_f16_rows)(int64_t n, int64_t n_rows, int64_t n_y, float * y, const tern_fp16 * rows, int64_t stride, const float * p, int64_t p_stride);
    float  (*scale_mask_max_f32)(int64_t n, float * x, float s, const float * mask);
    float  (*exp_sum_f32)(int64_t n, float * x, float max);
    void   (*swiglu_f32)(int64_t n, float * y, const float * g, const float * u);
    void   (*geglu_f32)(int64_t n, float * y, const float * g, const float * u);

    // Matrix multiplication, indexed by tern_type.
    tern_vec_dot_fn    vec_dot[TERN_TYPE_COUNT];       // weight type: one dot product
    tern_gemm_fn       gemm[TERN_TYPE_COUNT];          // weight type: a tile (NULL: vec_dot per output)
    // Activation rows from quantize_act (the only source of the dot and gemm
    // functions' activations) hold int8 levels in [-127, 127], never -128:
    // the avx2 Q8_0 tiles' sign trick relies on it (test_kernel_sets checks it).
    tern_from_float_fn quantize_act[TERN_TYPE_COUNT];  // dot type: one activation row (F32 -> dot type)

    // Row-interleaved weight layouts (repacked once, when a model is loaded):
    // repack_rows[t] rows of a weight matrix form one group in which the
    // blocks of the rows are interleaved the way the set's tile reads them
    // (lanes = rows), in exactly the bytes the rows take in the file, so a
    // matrix is rewritten in place. 0: the set reads type t as the file has it.
    //   repack[t](k, src, dst): one group, src = repack_rows[t] file rows of k
    //     values back to back, dst = the group (distinct from src);
    //   gemm_repacked[t]: tern_gemm_fn over whole groups (nr a multiple of
    //     repack_rows[t], w = the first group, w_stride = bytes of one row);
    //   unpack_row[t](k, group, r, row): row r of a group back in the file
    //     layout (get_rows of a repacked token embedding; NULL: the set does
    //     not repack embeddings of type t).
    // Rows past the last whole group stay in the file layout.
    int32_t      repack_rows[TERN_TYPE_COUNT];
    void         (*repack[TERN_TYPE_COUNT])(int64_t k, const void * src, void * dst);
    tern_gemm_fn gemm_repacked[TERN_TYPE_COUNT];
    void         (*unpack_row[TERN_TYPE_COUNT])(int64_t k, const void * group, int32_t r, void * row);
};

// The set in use (chosen at the first call; thread-safe).
const tern_kernel_set * tern_kernels(void);
// The set called `name` if this build has it and this CPU runs it, else NULL.
const tern_kernel_set * tern_kernels_by_name(const char * name);
// The sets this build has, best last ("scalar", then the SIMD ones), and how many.
int tern_kernels_compiled(const char ** names, int max_names);

// Fills, one per target (kernel_set.cpp chains them). Each file of a target
// contributes its part through its own fill function.
void tern_fill_scalar(tern_kernel_set * ks);
#if TERN_KSET_AVX2
void tern_fill_vec_avx2(tern_kernel_set * ks);
void tern_fill_vec_dot_avx2(tern_kernel_set * ks);       // and the K-quant tiles (Q2_K .. Q6_K)
void tern_fill_quantize_avx2(tern_kernel_set * ks);     // activation quantizers
void tern_fill_gemm_legacy_avx2(tern_kernel_set * ks);   // Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL
void tern_fill_gemm_float_avx2(tern_kernel_set * ks);    // F32 F16 BF16
void tern_fill_repack_avx2(tern_kernel_set * ks);        // interleaved Q4_0 Q4_1 Q5_0 Q5_1 Q8_0
void tern_fill_repack_kquant_avx2(tern_kernel_set * ks);  // interleaved Q4_K Q5_K Q6_K
#endif
#if TERN_KSET_AVXVNNI
void tern_fill_repack_avxvnni(tern_kernel_set * ks);         // interleaved Q4_0 Q4_1 Q5_0 Q5_1 Q8_0
void tern_fill_repack_kquant_avxvnni(tern_kernel_set * ks);  // interleaved Q4_K Q5_K Q6_K
#endif
#if TERN_KSET_AVX512
void tern_fill_vec_avx512(tern_kernel_set * ks);
void tern_fill_gemm_legacy_avx512(tern_kernel_set * ks);
void tern_fill_gemm_kquant_avx512(tern_kernel_set * ks);
void tern_fill_gemm_float_avx512(tern_kernel_set * ks);
void tern_fill_repack_avx512(tern_kernel_set * ks);     // interleaved legacy formats
void tern_fill_repack_kquant_avx512(tern_kernel_set * ks);  // interleaved Q4_K Q5_K Q6_K
#endif
#if TERN_KSET_NEON
// The ARM levels (arm/arm_features.h): neon, then dotprod, then i8mm, each
// filled over the one below it.
void tern_fill_vec_neon(tern_kernel_set * ks);
void tern_fill_vec_dot_neon(tern_kernel_set * ks);         // Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL (SMULL)
void tern_fill_vec_dot_kquant_neon(tern_kernel_set * ks);  // Q2_K .. Q6_K (SMULL)
void tern_fill_quantize_neon(tern_kernel_set * ks);        // activation quantizers
void tern_fill_gemm_float_neon(tern_kernel_set * ks);      // F32 F16 BF16 vec_dot
#endif
#if TERN_KSET_DOTPROD
void tern_fill_vec_dot_dotprod(tern_kernel_set * ks);         // legacy formats (SDOT)
void tern_fill_vec_dot_kquant_dotprod(tern_kernel_set * ks);  // Q2_K .. Q6_K (SDOT)
void tern_fill_repack_dotprod(tern_kernel_set * ks);          // interleaved legacy formats
void tern_fill_repack_kquant_dotprod(tern_kernel_set * ks);   // interleaved Q4_K Q5_K Q6_K
#endif
#if TERN_KSET_I8MM
void tern_fill_gemm_legacy_i8mm(tern_kernel_set * ks);     // SMMLA file-layout tiles: Q4_0 Q4_1 Q8_0
void tern_fill_gemm_kquant_i8mm(tern_kernel_set * ks);     // SMMLA file-layout tiles: Q2_K .. Q6_K
void tern_fill_repack_i8mm(tern_kernel_set * ks);          // interleaved legacy formats
void tern_fill_repack_kquant_i8mm(tern_kernel_set * ks);   // interleaved Q4_K Q5_K Q6_K
#endif

}  // namespace tern
