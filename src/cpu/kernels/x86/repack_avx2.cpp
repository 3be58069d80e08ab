// Interleaved (repacked) legacy weights, avx2 kernel set (kernel_set.h:
// repack_rows, repack, gemm_repacked, unpack_row): Q4_0 Q4_1 Q5_0 Q5_1 Q8_0. Compiled
// with the avx2 target flags (AVX2 + FMA + F16C): static code only.
//
// Why: in the file layout a decode tile reads 16 rows side by side, 16
// streams a few hundred bytes apart, and on this set's one-column path that
// read 15-16 GB/s where the repacked avx512 tiles read the same memory at
// 30+ (qwen2.5-0.5b Q4_0, 2 threads: 43 t/s against llama.cpp's avx2 build's
// 72). Repacked, a group is one contiguous run (repack_legacy.h: 16 rows,
// per quad the rows' four unsigned levels side by side), the same layout the
// avx512 set reads, so one repack serves both.
//
// The tiles are x86/legacy_ymm_x86.h's with maddubs (int_dot_avx2.h): a
// quad's int16 pair sums add up over 8 quads (Q4_0 Q4_1, u <= 15: at most
// 8 * 2 * 15 * 128 = 30720) or 4 (Q5_0 Q5_1, u <= 31: 31744) before one
// madd makes the int32 row totals. Q8_0 has its own tile here (below).
#include "cpu/kernels/kernel_set.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>
#include "cpu/kernels/x86/int_dot_avx2.h"
#include "cpu/kernels/x86/legacy_ymm_x86.h"

namespace tern {

namespace {

using namespace legacy_ymm;

// maddubs, and Q8_0 by the sign trick.
struct dot : int_dot_avx2 {
    static const bool SIGNED_Q8 = true;

    // Q8_0: NH halves from half h0 of one group x C columns over nb blocks,
    // the first nv stored (as tile_halves). q = u ^ 0x80 is the file's level;
    // one maddubs(|q|, sign(a, q)) per quad gives q * a in int16 pairs, exact
    // because |q| <= 128 and |a| <= 127 (quantize_act never writes -128): a
    // pair is at most 2 * 128 * 127 = 32512. One madd per quad makes the int32
    // row sums. (Widening q and a to int16 instead ran prompts 1.5x slower.)
    template <int C, int NH>
    static void tile_q8_0(int64_t nb, const uint8_t * g, int h0, const uint8_t * a, size_t a_stride, float * out, int64_t ldo, int nv) {
        typedef fmt_q8_0 F;
        const __m256i flip = _mm256_set1_epi8((char) 0x80), ones = _mm256_set1_epi16(1);
        const block_q8_0 * col[C];
        for (int c = 0; c < C; c++) col[c] = (const block_q8_0 *) (a + (c < nv ? c : nv - 1) * a_stride);
        __m256 acc[NH][C];
        for (int hh = 0; hh < NH; hh++) {
            for (int c = 0; c < C; c++) acc[hh][c] = _mm256_setzero_ps();
        }
        for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
            for (int hh = 0; hh < NH; hh++) {
                const int h = h0 + hh;
                __m256i s[C];  // int32 row sums of the half
                for (int c = 0; c < C; c++) s[c] = _mm256_setzero_si256();
                for (int l = 0; l < L; l++) {
                    const __m256i q = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (g + F::QS_AT + 64 * l + 32 * h)), flip);
                    const __m256i mag = _mm256_abs_epi8(q);
                    for (int c = 0; c < C; c++) {
                        const __m256i y = _mm256_sign_epi8(bcast4(col[c][b].qs + 4 * l), q);
                        s[c] = _mm256_add_epi32(s[c], _mm256_madd_epi16(_mm256_maddubs_epi16(mag, y), ones));
                    }
                }
                const __m256 dw = half_scales(g, h);
                for (int c = 0; c < C; c++) {
                    acc[hh][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[c]), _mm256_mul_ps(dw, _mm256_set1_ps(f16(col[c][b].d))), acc[hh][c]);
                }
            }
        }
        for (int hh = 0; hh < NH; hh++) {
            for (int c = 0; c < nv; c++) _mm256_storeu_ps(out + c * ldo + hh * HALF, acc[hh][c]);
        }
    }
};

// This set's tiles for tern_set_repack_legacy_all.
struct tiles {
    template <typename F> static constexpr tern_gemm_fn gemm = gemm_repacked<dot, F>;
    static const bool IQ4_NL = false;  // u = table value + 128 overflows maddubs' int16 pairs
};

}  // namespace

void tern_fill_repack_avx2(tern_kernel_set * ks) { tern_set_repack_legacy_all<tiles>(ks); }

}  // namespace tern
