// The legacy formats' interleaved layout (repack_legacy.h): repack and
// unpack_row, plain byte moves compiled at the baseline, used by the x86 sets.
#include "cpu/kernels/repack_legacy.h"
#include "tern_config.h"

#include <string.h>

#if TERN_KSET_AVX2 || TERN_KSET_AVX512

namespace tern {
namespace repack_legacy {
namespace {

template <typename F>
void repack(int64_t k, const void * src, void * dst) {
    typedef typename F::block B;
    static_assert(F::BYTES == R * sizeof(B), "same bytes as the file");
    const int64_t nb = k / QK;
    const size_t row_bytes = (size_t) nb * sizeof(B);
    uint8_t * out = (uint8_t *) dst;
    for (int64_t b = 0; b < nb; b++, out += F::BYTES) {
        for (int r = 0; r < R; r++) {
            const B * x = (const B *) ((const uint8_t *) src + r * row_bytes) + b;
            memcpy(out + 2 * r, &x->d, 2);
            if constexpr (F::affine) memcpy(out + F::M_AT + 2 * r, &x->m, 2);
            if constexpr (F::kind == fmt_kind::q8) {  // a quad's 4 bytes at once, offset by 128
                for (int j = 0; j < QK / 4; j++) {
                    uint32_t q;
                    memcpy(&q, x->qs + 4 * j, 4);
                    q ^= 0x80808080u;
                    memcpy(out + at(F::QS_AT, j, r, 0), &q, 4);
                }
            } else if constexpr (F::kind == fmt_kind::q5) {
                uint32_t qh;
                memcpy(&qh, x->qh, 4);
                for (int v = 0; v < 16; v++) {  // v: quad j = v / 4, the high value v + 16: quad 4 + j
                    const int j = v / 4, i = v % 4;
                    const int lo = (x->qs[v] & 15) | ((qh >> v) & 1) << 4;
                    const int hi = (x->qs[v] >> 4) | ((qh >> (v + 16)) & 1) << 4;
                    out[at(F::QS_AT, j, r, i)] = (uint8_t) (lo | (hi & 7) << 5);
                    uint8_t & h = out[F::H_AT + 4 * r + i];
                    if (j == 0) h = 0;
                    h = (uint8_t) (h | (hi >> 3) << (2 * j));
                }
            } else {
                for (int j = 0; j < 4; j++) memcpy(out + at(F::QS_AT, j, r, 0), x->qs + 4 * j, 4);
            }
        }
    }
}

// Row r of a group back in the file layout (the inverse of repack).
template <typename F>
void unpack_row(int64_t k, const void * group, int32_t r, void * row) {
    typedef typename F::block B;
    const int64_t nb = k / QK;
    const uint8_t * g = (const uint8_t *) group;
    B * out = (B *) row;
    for (int64_t b = 0; b < nb; b++, g += F::BYTES) {
        B * x = out + b;
        memcpy(&x->d, g + 2 * r, 2);
        if constexpr (F::affine) memcpy(&x->m, g + F::M_AT + 2 * r, 2);
        if constexpr (F::kind == fmt_kind::q8) {
            for (int v = 0; v < QK; v++) x->qs[v] = (int8_t) (g[at(F::QS_AT, v / 4, r, v % 4)] ^ 0x80);
        } else if constexpr (F::kind == fmt_kind::q5) {
            uint32_t qh = 0;
            for (int v = 0; v < 16; v++) {
                const int j = v / 4, i = v % 4;
                const int z = g[at(F::QS_AT, j, r, i)];
                const int lo = z & 31;
                const int hi = z >> 5 | ((g[F::H_AT + 4 * r + i] >> (2 * j)) & 3) << 3;
                x->qs[v] = (uint8_t) ((lo & 15) | (hi & 15) << 4);
                qh |= (uint32_t) (lo >> 4) << v | (uint32_t) (hi >> 4) << (v + 16);
            }
            memcpy(x->qh, &qh, 4);
        } else {
            for (int v = 0; v < 16; v++) x->qs[v] = g[at(F::QS_AT, v / 4, r, v % 4)];
        }
    }
}

template <typename F>
void set(tern_kernel_set * ks, tern_type t, tern_gemm_fn gemm_repacked) {
    ks->repack_rows[t] = R;
    ks->repack[t] = repack<F>;
    ks->unpack_row[t] = unpack_row<F>;
    ks->gemm_repacked[t] = gemm_repacked;
}

}  // namespace
}  // namespace repack_legacy

void tern_set_repack_legacy(tern_kernel_set * ks, tern_type t, tern_gemm_fn gemm_repacked) {
    using namespace repack_legacy;
    switch (t) {
#if TERN_WITH_TYPE_Q4_0
        case TERN_TYPE_Q4_0: set<fmt_q4_0>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q4_1
        case TERN_TYPE_Q4_1: set<fmt_q4_1>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q5_0
        case TERN_TYPE_Q5_0: set<fmt_q5_0>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q5_1
        case TERN_TYPE_Q5_1: set<fmt_q5_1>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_Q8_0
        case TERN_TYPE_Q8_0: set<fmt_q8_0>(ks, t, gemm_repacked); return;
#endif
#if TERN_WITH_TYPE_IQ4_NL
        case TERN_TYPE_IQ4_NL: set<fmt_iq4_nl>(ks, t, gemm_repacked); return;
#endif
        default: return;
    }
}

}  // namespace tern

#endif
