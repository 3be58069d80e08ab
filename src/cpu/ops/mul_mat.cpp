// MUL_MAT: dst [N, M] = W [K, N] x X [K, M], through the kernel set's tiles.
//
// Phase 0 (unless the dot type is F32): the M activation rows are quantized
// once to the weight's vec_dot_type (kernel set quantize_act) into the work
// buffer, a step of its own whose items are ranges of rows. A small input
// (decode: one row) is instead quantized by every worker into its own slice
// of the work buffer before its first chunk: a few hundred nanoseconds of
// repeated work cost less than a step, and the bytes are the same.
// Then the output is cut into chunks of up to CHUNK_N weight rows x CHUNK_M
// activation rows, one item each: each worker claims the chunks of its own
// contiguous stretch of weight rows, then the others' leftovers, until none
// are left (work_claim.h), so every worker streams one run of the weights and
// a slow or descheduled core leaves its tail to the others.
// A bias (src[2], F32 [N]) is added to a chunk's outputs right after it is
// computed: the floats of a separate ADD node, without its pass and barrier.
// A chunk is one gemm tile call (kernel_set.h), or one vec_dot per output
// where the set has no tile kernel for the type; weights repacked at load
// (layout CPU_LAYOUT_INTERLEAVED) go through the set's gemm_repacked in whole groups,
// the rows past the last group through the file-layout kernels. Either way each output is
// computed by one call from its two rows alone, so the result does not
// depend on the thread count, the chunking or the batch split.
#include "cpu/ops/ops.h"
#include "core/arena.h"
#include "cpu/kernels/kernel_set.h"
#include "cpu/kernels/vec.h"
#include "tensor/types.h"

namespace tern {

namespace {

const int64_t CHUNK_M = 64;

bool needs_conversion(const tern_type_traits * tr) { return tr->vec_dot_type != TERN_TYPE_F32; }

// Inputs of at most this many values are quantized by every worker (no barrier).
const int64_t PRIVATE_QUANT_MAX = 8192;

bool private_quant(int64_t K, int64_t M) { return K * M <= PRIVATE_QUANT_MAX; }

// Weight rows per chunk: at most 64 (a block of weights that stays in L2
// while the activation rows stream past), and small enough that every worker
// gets several chunks of a one-row (decode) product.
// `group`: rows of a repacked group (chunks hold whole groups), else 1.
int64_t chunk_rows(int64_t N, int64_t M, int32_t nth, int64_t group) {
    int64_t rows = 64;
    if (M <= 4) {
        while (rows > 8 && rows > group && N / rows < 4 * (int64_t) nth) rows /= 2;
    }
    return rows < group ? group : (rows + group - 1) / group * group;
}

// X's rows at one stride (2-D, or 3-D with the planes back to back)?
bool rows_uniform(const tern_tensor * x) {
    return x->ne[2] * x->ne[3] == 1 || (x->nb[2] == x->nb[1] * (size_t) x->ne[1] && (x->ne[3] == 1 || x->nb[3] == x->nb[2] * (size_t) x->ne[2]));
}

} // namespace

size_t tern_op_mul_mat_work_size(const tern_tensor * dst, int32_t n_threads) {
    const tern_tensor * w = dst->src[0];
    const tern_tensor * x = dst->src[1];
    const tern_type_traits * tr = tern_type_traits_get(w->type);
    if (!needs_conversion(tr)) return 0;
    // Rising with M, so the plan of the largest batch covers every smaller one:
    // the shared rows, or one private copy per worker of up to the most rows a
    // private input can have.
    const int64_t K = x->ne[0], M = tern_n_rows(x);
    const size_t row = tern_row_size(tr->vec_dot_type, K);
    const int64_t m_private = M < PRIVATE_QUANT_MAX / K ? M : PRIVATE_QUANT_MAX / K;
    const size_t shared = row * (size_t) M;
    const size_t copies = m_private > 0 ? arena_padded(row * (size_t) m_private) * (size_t) n_threads : 0;
    return shared > copies ? shared : copies;
}

namespace {

// The product's chunking, the same for every phase and worker.
struct mm_plan {
    const tern_type_traits * tr;
    int64_t K, N, M;
    bool    convert, own_copy, repacked;
    int64_t group, n_grouped, cn, n_chunks_n, n_chunks_m;
};

mm_plan mm_plan_of(const tern_tensor * dst, int32_t nth) {
    const tern_tensor * w = dst->src[0];
    const tern_tensor * x = dst->src[1];
    const tern_kernel_set * ks = tern_kernels();
    mm_plan p;
    p.tr = tern_type_traits_get(w->type);
    p.K = w->ne[0];
    p.N = w->ne[1];
    p.M = tern_n_rows(x);
    p.convert = needs_conversion(p.tr);
    p.own_copy = p.convert && private_quant(p.K, p.M);
    // Repacked weights: rows [0, n_grouped) in whole groups of the set's layout.
    p.repacked = w->layout == CPU_LAYOUT_INTERLEAVED && p.convert && ks->gemm_repacked[w->type];
    p.group = p.repacked ? ks->repack_rows[w->type] : 1;
    p.n_grouped = p.repacked ? p.N / p.group * p.group : 0;
    p.cn = chunk_rows(p.N, p.M, nth, p.group);
    p.n_chunks_n = (p.N + p.cn - 1) / p.cn;
    p.n_chunks_m = (p.M + CHUNK_M - 1) / CHUNK_M;
    return p;
}

} // namespace

int32_t tern_op_mul_mat_phases(const tern_tensor * dst) {
    const tern_type_traits * tr = tern_type_traits_get(dst->src[0]->type);
    return needs_conversion(tr) && !private_quant(dst->src[1]->ne[0], tern_n_rows(dst->src[1])) ? 2 : 1;
}

size_t tern_op_mul_mat_items_phase(const tern_tensor * dst, int32_t phase, int32_t n_threads) {
    const mm_plan p = mm_plan_of(dst, n_threads);
    if (tern_op_mul_mat_phases(dst) == 2 && phase == 0) return (size_t) tern_rows_items(p.M, n_threads);  // quantize rows
    return (size_t) (p.n_chunks_n * p.n_chunks_m);
}

void tern_op_mul_mat(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * w = dst->src[0];  // [K, N] contiguous, any type
    const tern_tensor * x = dst->src[1];  // F32 [K, M...]
    const tern_kernel_set * ks = tern_kernels();
    const mm_plan p = mm_plan_of(dst, c->nth);
    const int64_t K = p.K, N = p.N, M = p.M;
    const size_t act_row_size = p.convert ? tern_row_size(p.tr->vec_dot_type, K) : 0;
    const tern_from_float_fn quantize = p.convert ? ks->quantize_act[p.tr->vec_dot_type] : nullptr;

    // Phase 0 of a shared input: quantize the item's rows.
    if (p.convert && !p.own_copy && c->phase == 0) {
        int64_t m0, m1;
        tern_op_rows(c, M, &m0, &m1);
        uint8_t * q = (uint8_t *) c->work;
        for (int64_t m = m0; m < m1; m++) quantize((const float *) tern_row_flat(x, m), q + m * act_row_size, K);
        return;
    }
    const uint8_t * act = (const uint8_t *) x->data;
    if (p.convert) {
        uint8_t * q = (uint8_t *) c->work;
        if (p.own_copy) {
            // A small input: every worker quantizes its own copy before its first chunk.
            q += arena_padded(act_row_size * (size_t) M) * (size_t) c->ith;
            if (c->first) for (int64_t m = 0; m < M; m++) quantize((const float *) tern_row_flat(x, m), q + m * act_row_size, K);
        }
        act = q;
    }
    const size_t act_stride = p.convert ? act_row_size : x->nb[1];
    const tern_gemm_fn gemm = (p.convert || rows_uniform(x)) ? ks->gemm[w->type] : nullptr;
    const tern_vec_dot_fn vec_dot = ks->vec_dot[w->type];
    const uint8_t * wdata = (const uint8_t *) w->data;
    const size_t w_stride = w->nb[1];
    float * out = (float *) dst->data;  // contiguous: (n, m) at m * N + n
    const float * bias = dst->src[2] ? (const float *) dst->src[2]->data : nullptr;  // [N] or none

    // The item is one chunk; consecutive chunks share their weight rows (m varies fastest).
    const int64_t chunk = c->item;
    const int64_t chunk_n0 = (chunk / p.n_chunks_m) * p.cn;
    const int64_t m0 = (chunk % p.n_chunks_m) * CHUNK_M;
    const int64_t chunk_nr = N - chunk_n0 < p.cn ? N - chunk_n0 : p.cn;
    const int64_t nc = M - m0 < CHUNK_M ? M - m0 : CHUNK_M;
    int64_t n0 = chunk_n0, nr = chunk_nr;
    if (n0 < p.n_grouped) {
        const int64_t ng = p.n_grouped - n0 < nr ? p.n_grouped - n0 : nr;
        ks->gemm_repacked[w->type](K, ng, nc, wdata + n0 * w_stride, w_stride, act + m0 * act_stride, act_stride,
                                   out + m0 * N + n0, N);
        n0 += ng;  // the rows past the last group, in the file layout
        nr -= ng;
    }
    if (nr > 0 && gemm) {
        gemm(K, nr, nc, wdata + n0 * w_stride, w_stride, act + m0 * act_stride, act_stride, out + m0 * N + n0, N);
    } else if (nr > 0) {
        for (int64_t m = m0; m < m0 + nc; m++) {
            const void * a = p.convert ? (const void *) (act + m * act_stride) : (const void *) tern_row_flat(x, m);
            for (int64_t n = n0; n < n0 + nr; n++) vec_dot(K, &out[m * N + n], wdata + n * w_stride, a);
        }
    }
    if (bias) {
        // [chunk_nr] of each of the chunk's nc output rows, while they are in cache
        for (int64_t m = m0; m < m0 + nc; m++) tern_kadd_f32(chunk_nr, out + m * N + chunk_n0, out + m * N + chunk_n0, bias + chunk_n0);
    }
}

}  // namespace tern
