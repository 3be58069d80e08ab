// The Q4_K / Q5_K / Q6_K interleaved layout (repack_kquant.h): repack and
// unpack_row, byte moves compiled at the baseline, used by the x86 sets.
#include "cpu/kernels/repack_kquant.h"
#include "tern_config.h"

#include <string.h>
#include "tensor/quants_k.h"

#if TERN_KSET_AVX2 || TERN_KSET_AVX512

namespace tern {
namespace repack_kquant {
namespace {

#if TERN_WITH_TYPE_Q6_K
void repack_q6_K(int64_t k, const void * src, void * dst) {
    const int64_t nb = k / QK_K;
    const size_t row_bytes = (size_t) nb * sizeof(block_q6_K);
    uint8_t * out = (uint8_t *) dst;
    tern_k_superblock sb;
    for (int64_t b = 0; b < nb; b++, out += Q6_BYTES) {
        memset(out, 0, Q6_BYTES);
        for (int r = 0; r < R; r++) {
            const block_q6_K * x = (const block_q6_K *) ((const uint8_t *) src + r * row_bytes) + b;
            tern_k_decode_q6_K(x, &sb);
            memcpy(out + Q6_D + 2 * r, &x->d, 2);
            for (int j = 0; j < 16; j++) out[Q6_SCALES + 16 * j + r] = (uint8_t) x->scales[j];
            for (int v = 0; v < QK_K; v++) {
                const int u = sb.q[v] + 32;  // 0..63
                const int g = v / 4, i = v % 4;
                out[Q6_LOW + 64 * (g % 32) + 4 * r + i] |= (uint8_t) ((u & 15) << (g < 32 ? 0 : 4));
                out[Q6_HIGH + 64 * (g % 16) + 4 * r + i] |= (uint8_t) ((u >> 4) << (2 * (g / 16)));
            }
        }
    }
}

// Row r of a group back in the file layout (the inverse of repack_q6_K).
void unpack_row_q6_K(int64_t k, const void * group, int32_t r, void * row) {
    const int64_t nb = k / QK_K;
    const uint8_t * g = (const uint8_t *) group;
    block_q6_K * out = (block_q6_K *) row;
    for (int64_t b = 0; b < nb; b++, g += Q6_BYTES) {
        block_q6_K * x = out + b;
        memset(x, 0, sizeof(*x));
        memcpy(&x->d, g + Q6_D + 2 * r, 2);
        for (int j = 0; j < 16; j++) x->scales[j] = (int8_t) g[Q6_SCALES + 16 * j + r];
        for (int v = 0; v < QK_K; v++) {
            const int gi = v / 4, i = v % 4;
            const int low = (g[Q6_LOW + 64 * (gi % 32) + 4 * r + i] >> (gi < 32 ? 0 : 4)) & 15;
            const int high = (g[Q6_HIGH + 64 * (gi % 16) + 4 * r + i] >> (2 * (gi / 16))) & 3;
            // The file's places of value v (tensor/quants_k.h).
            const int h = v / 128, sq = (v / 32) % 4, l = v % 32;
            x->ql[64 * h + 32 * (sq & 1) + l] |= (uint8_t) (low << (4 * (sq / 2)));
            x->qh[32 * h + l] |= (uint8_t) (high << (2 * sq));
        }
    }
}
#endif

#if TERN_WITH_TYPE_Q4_K || TERN_WITH_TYPE_Q5_K
// Q4_K (B = block_q4_K) and Q5_K (block_q5_K, P = k5_parts: its qh too).
template <typename B, typename P>
void repack_k45(int64_t k, const void * src, void * dst) {
    const int64_t nb = k / QK_K;
    const size_t row_bytes = (size_t) nb * sizeof(B);
    uint8_t * out = (uint8_t *) dst;
    for (int64_t b = 0; b < nb; b++, out += P::BYTES) {
        for (int r = 0; r < R; r++) {
            const B * x = (const B *) ((const uint8_t *) src + r * row_bytes) + b;
            memcpy(out + Q4_D + 2 * r, &x->d, 2);
            memcpy(out + Q4_DMIN + 2 * r, &x->dmin, 2);
            for (int kk = 0; kk < 3; kk++) memcpy(out + Q4_SCALES + 64 * kk + 4 * r, x->scales + 4 * kk, 4);
            if constexpr (P::HIGH) {
                for (int kk = 0; kk < 8; kk++) memcpy(out + P::QH + 64 * kk + 4 * r, x->qh + 4 * kk, 4);
            }
            for (int kk = 0; kk < 32; kk++) memcpy(out + P::QS + 64 * kk + 4 * r, x->qs + 4 * kk, 4);
        }
    }
}

template <typename B, typename P>
void unpack_row_k45(int64_t k, const void * group, int32_t r, void * row) {
    const int64_t nb = k / QK_K;
    const uint8_t * g = (const uint8_t *) group;
    B * out = (B *) row;
    for (int64_t b = 0; b < nb; b++, g += P::BYTES) {
        B * x = out + b;
        memcpy(&x->d, g + Q4_D + 2 * r, 2);
        memcpy(&x->dmin, g + Q4_DMIN + 2 * r, 2);
        for (int kk = 0; kk < 3; kk++) memcpy(x->scales + 4 * kk, g + Q4_SCALES + 64 * kk + 4 * r, 4);
        if constexpr (P::HIGH) {
            for (int kk = 0; kk < 8; kk++) memcpy(x->qh + 4 * kk, g + P::QH + 64 * kk + 4 * r, 4);
        }
        for (int kk = 0; kk < 32; kk++) memcpy(x->qs + 4 * kk, g + P::QS + 64 * kk + 4 * r, 4);
    }
}
#endif

}  // namespace
}  // namespace repack_kquant

void tern_set_repack_kquant(tern_kernel_set * ks, tern_type t, tern_gemm_fn gemm_repacked) {
    using namespace repack_kquant;
    switch (t) {
#if TERN_WITH_TYPE_Q4_K
        case TERN_TYPE_Q4_K:
            ks->repack[t] = repack_k45<block_q4_K, k4_parts>;
            ks->unpack_row[t] = unpack_row_k45<block_q4_K, k4_parts>;
            break;
#endif
#if TERN_WITH_TYPE_Q5_K
        case TERN_TYPE_Q5_K:
            ks->repack[t] = repack_k45<block_q5_K, k5_parts>;
            ks->unpack_row[t] = unpack_row_k45<block_q5_K, k5_parts>;
            break;
#endif
#if TERN_WITH_TYPE_Q6_K
        case TERN_TYPE_Q6_K:
            ks->repack[t] = repack_q6_K;
            ks->unpack_row[t] = unpack_row_q6_K;
            break;
#endif
        default: return;
    }
    ks->repack_rows[t] = R;
    ks->gemm_repacked[t] = gemm_repacked;
}

}  // namespace tern

#endif
