// The ARM interleaved layouts (repack_arm.h): repack and unpack_row, byte
// moves compiled at the baseline, used by the dotprod and i8mm levels.
#include "cpu/kernels/arm/repack_arm.h"
#include "tern_config.h"

#include <string.h>
#include "tensor/quants_k.h"

#if TERN_KSET_DOTPROD || TERN_KSET_I8MM

namespace tern {
namespace repack_arm {
namespace {

// ---- legacy formats ---------------------------------------------------------

// The unit's byte for value v (v < 32) of row r: the chunk byte, and for the
// nibble formats whether it is the high nibble.
inline size_t nibble_at(int r, int v) { return 16 * (size_t) ((v % 16) / 4) + 4 * r + v % 4; }

template <typename F>
void repack_legacy(int64_t k, const void * src, void * dst) {
    typedef typename F::block B;
    const int64_t nb = k / QK;
    const size_t row_bytes = (size_t) nb * sizeof(B);
    uint8_t * out = (uint8_t *) dst;
    for (int64_t b = 0; b < nb; b++, out += F::BYTES) {
        if constexpr (F::H != 0) memset(out + F::H, 0, 16);
        for (int r = 0; r < R; r++) {
            const B * x = (const B *) ((const uint8_t *) src + r * row_bytes) + b;
            memcpy(out + F::D + 2 * r, &x->d, 2);
            if constexpr (F::affine) memcpy(out + F::M + 2 * r, &x->m, 2);
            if constexpr (F::kind == fmt_kind::q8_0) {
                for (int j = 0; j < QK / 4; j++) memcpy(out + F::QS + 16 * j + 4 * r, x->qs + 4 * j, 4);
            } else {
                const uint8_t flip = F::kind == fmt_kind::q4_0 ? 0x88 : 0;
                for (int v = 0; v < 16; v++) out[F::QS + nibble_at(r, v)] = (uint8_t) (x->qs[v] ^ flip);
            }
            if constexpr (F::H != 0) {
                uint32_t qh;
                memcpy(&qh, x->qh, 4);
                if constexpr (F::kind == fmt_kind::q5_0) qh = ~qh;
                for (int v = 0; v < QK; v++) out[F::H + 4 * r + v % 4] |= (uint8_t) (((qh >> v) & 1) << (v / 4));
            }
        }
    }
}

template <typename F>
void unpack_row_legacy(int64_t k, const void * group, int32_t r, void * row) {
    typedef typename F::block B;
    const int64_t nb = k / QK;
    const uint8_t * g = (const uint8_t *) group;
    B * out = (B *) row;
    for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
        B * x = out + b;
        memcpy(&x->d, g + F::D + 2 * r, 2);
        if constexpr (F::affine) memcpy(&x->m, g + F::M + 2 * r, 2);
        if constexpr (F::kind == fmt_kind::q8_0) {
            for (int j = 0; j < QK / 4; j++) memcpy(x->qs + 4 * j, g + F::QS + 16 * j + 4 * r, 4);
        } else {
            const uint8_t flip = F::kind == fmt_kind::q4_0 ? 0x88 : 0;
            for (int v = 0; v < 16; v++) x->qs[v] = (uint8_t) (g[F::QS + nibble_at(r, v)] ^ flip);
        }
        if constexpr (F::H != 0) {
            uint32_t qh = 0;
            for (int v = 0; v < QK; v++) qh |= (uint32_t) ((g[F::H + 4 * r + v % 4] >> (v / 4)) & 1) << v;
            if constexpr (F::kind == fmt_kind::q5_0) qh = ~qh;
            memcpy(x->qh, &qh, 4);
        }
    }
}

// ---- K-quants ------------------------------------------------------------------

#if TERN_WITH_TYPE_Q4_K || TERN_WITH_TYPE_Q5_K
// Q4_K (B = block_q4_K) and Q5_K (block_q5_K: its qh too).
template <typename B, bool HIGH>
void repack_k45(int64_t k, const void * src, void * dst) {
    const size_t QS = HIGH ? Q5K_QS : Q4K_QS;
    const int64_t nb = k / QK_K;
    const size_t row_bytes = (size_t) nb * sizeof(B);
    uint8_t * out = (uint8_t *) dst;
    for (int64_t b = 0; b < nb; b++, out += R * sizeof(B)) {
        for (int r = 0; r < R; r++) {
            const B * x = (const B *) ((const uint8_t *) src + r * row_bytes) + b;
            memcpy(out + K_D + 2 * r, &x->d, 2);
            memcpy(out + K_DMIN + 2 * r, &x->dmin, 2);
            for (int i = 0; i < 12; i++) out[K_SC + 16 * (i / 4) + 4 * (i % 4) + r] = x->scales[i];
            if constexpr (HIGH) {
                for (int t = 0; t < 8; t++) memcpy(out + Q5K_QH + 16 * t + 4 * r, x->qh + 4 * t, 4);
            }
            for (int c = 0; c < 32; c++) memcpy(out + QS + 16 * c + 4 * r, x->qs + 4 * c, 4);
        }
    }
}

template <typename B, bool HIGH>
void unpack_row_k45(int64_t k, const void * group, int32_t r, void * row) {
    const size_t QS = HIGH ? Q5K_QS : Q4K_QS;
    const int64_t nb = k / QK_K;
    const uint8_t * g = (const uint8_t *) group;
    B * out = (B *) row;
    for (int64_t b = 0; b < nb; b++, g += R * sizeof(B)) {
        B * x = out + b;
        memcpy(&x->d, g + K_D + 2 * r, 2);
        memcpy(&x->dmin, g + K_DMIN + 2 * r, 2);
        for (int i = 0; i < 12; i++) x->scales[i] = g[K_SC + 16 * (i / 4) + 4 * (i % 4) + r];
        if constexpr (HIGH) {
            for (int t = 0; t < 8; t++) memcpy(x->qh + 4 * t, g + Q5K_QH + 16 * t + 4 * r, 4);
        }
        for (int c = 0; c < 32; c++) memcpy(x->qs + 4 * c, g + QS + 16 * c + 4 * r, 4);
    }
}
#endif

#if TERN_WITH_TYPE_Q6_K
void repack_q6_K(int64_t k, const void * src, void * dst) {
    const int64_t nb = k / QK_K;
    const size_t row_bytes = (size_t) nb * sizeof(block_q6_K);
    uint8_t * out = (uint8_t *) dst;
    tern_k_superblock sb;
    for (int64_t b = 0; b < nb; b++, out += Q6K_BYTES) {
        memset(out, 0, Q6K_BYTES);
        for (int r = 0; r < R; r++) {
            const block_q6_K * x = (const block_q6_K *) ((const uint8_t *) src + r * row_bytes) + b;
            tern_k_decode_q6_K(x, &sb);
            memcpy(out + Q6K_D + 2 * r, &x->d, 2);
            for (int j = 0; j < 16; j++) out[Q6K_SC + 4 * j + r] = (uint8_t) x->scales[j];
            for (int v = 0; v < QK_K; v++) {
                const int u = sb.q[v] + 32;  // 0..63
                const int q = v / 4, i = v % 4;  // quad q of the super-block
                out[Q6K_QL + 16 * (q % 32) + 4 * r + i] |= (uint8_t) ((u & 15) << (q < 32 ? 0 : 4));
                out[Q6K_QH + 16 * (q % 16) + 4 * r + i] |= (uint8_t) (((u >> 4) ^ 2) << (2 * (q / 16)));
            }
        }
    }
}

// Row r of a group back in the file layout (the inverse of repack_q6_K).
void unpack_row_q6_K(int64_t k, const void * group, int32_t r, void * row) {
    const int64_t nb = k / QK_K;
    const uint8_t * g = (const uint8_t *) group;
    block_q6_K * out = (block_q6_K *) row;
    for (int64_t b = 0; b < nb; b++, g += Q6K_BYTES) {
        block_q6_K * x = out + b;
        memset(x, 0, sizeof(*x));
        memcpy(&x->d, g + Q6K_D + 2 * r, 2);
        for (int j = 0; j < 16; j++) x->scales[j] = (int8_t) g[Q6K_SC + 4 * j + r];
        for (int v = 0; v < QK_K; v++) {
            const int q = v / 4, i = v % 4;
            const int low = (g[Q6K_QL + 16 * (q % 32) + 4 * r + i] >> (q < 32 ? 0 : 4)) & 15;
            const int high = ((g[Q6K_QH + 16 * (q % 16) + 4 * r + i] >> (2 * (q / 16))) & 3) ^ 2;
            // The file's places of value v (tensor/quants_k.h).
            const int h = v / 128, sq = (v / 32) % 4, l = v % 32;
            x->ql[64 * h + 32 * (sq & 1) + l] |= (uint8_t) (low << (4 * (sq / 2)));
            x->qh[32 * h + l] |= (uint8_t) (high << (2 * sq));
        }
    }
}
#endif

template <typename F>
void set_legacy(tern_kernel_set * ks, tern_type t, tern_gemm_fn gemm_repacked) {
    ks->repack[t] = repack_legacy<F>;
    ks->unpack_row[t] = unpack_row_legacy<F>;
    ks->repack_rows[t] = R;
    ks->gemm_repacked[t] = gemm_repacked;
}

}  // namespace
}  // namespace repack_arm

void tern_set_repack_arm(tern_kernel_set * ks, tern_type t, tern_gemm_fn gemm_repacked) {
    using namespace repack_arm;
    switch (t) {
#if TERN_WITH_TYPE_Q4_0
        case TERN_TYPE_Q4_0: set_legacy<fmt_q4_0>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q4_1
        case TERN_TYPE_Q4_1: set_legacy<fmt_q4_1>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q5_0
        case TERN_TYPE_Q5_0: set_legacy<fmt_q5_0>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q5_1
        case TERN_TYPE_Q5_1: set_legacy<fmt_q5_1>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q8_0
        case TERN_TYPE_Q8_0: set_legacy<fmt_q8_0>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_IQ4_NL
        case TERN_TYPE_IQ4_NL: set_legacy<fmt_iq4_nl>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q4_K
        case TERN_TYPE_Q4_K:
            ks->repack[t] = repack_k45<block_q4_K, false>;
            ks->unpack_row[t] = unpack_row_k45<block_q4_K, false>;
            break;
#endif
#if TERN_WITH_TYPE_Q5_K
        case TERN_TYPE_Q5_K:
            ks->repack[t] = repack_k45<block_q5_K, true>;
            ks->unpack_row[t] = unpack_row_k45<block_q5_K, true>;
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
