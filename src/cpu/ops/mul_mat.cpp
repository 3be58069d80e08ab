// MUL_MAT: dst [N, M] = W [K, N] x X [K, M], through the kernel set's tiles.
//
// Phase 1 (unless the dot type is F32): the M activation rows are quantized
// once to the weight's vec_dot_type (kernel set quantize_act) into the work
// buffer, rows split across workers; a barrier. A small input (decode: one
// row) is instead quantized by every worker into its own slice of the work
// buffer: a few hundred nanoseconds of repeated work cost less than the
// barrier and the idle workers behind it, and the bytes are the same.
// Phase 2: the output is cut into chunks of up to CHUNK_N weight rows x
// CHUNK_M activation rows; each worker claims the chunks of its own
// contiguous stretch of weight rows, then the others' leftovers, until none
// are left (work_claim.h), so every worker streams one run of the weights and
// a slow core does not hold the others at the next barrier.
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
#include "cpu/threadpool.h"
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

void tern_op_mul_mat(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * w = dst->src[0];  // [K, N] contiguous, any type
    const tern_tensor * x = dst->src[1];  // F32 [K, M...]
    const tern_type_traits * tr = tern_type_traits_get(w->type);
    const tern_kernel_set * ks = tern_kernels();
    const int64_t K = w->ne[0], N = w->ne[1], M = tern_n_rows(x);

    const bool convert = needs_conversion(tr);
    const size_t act_row_size = convert ? tern_row_size(tr->vec_dot_type, K) : 0;
    const uint8_t * act = (const uint8_t *) x->data;
    if (convert) {
        const tern_from_float_fn quantize = ks->quantize_act[tr->vec_dot_type];
        const bool own_copy = private_quant(K, M);
        uint8_t * q = (uint8_t *) c->work;
        int64_t m0 = 0, m1 = M;
        if (own_copy) {
            q += arena_padded(act_row_size * (size_t) M) * (size_t) c->ith;
        } else {
            tern_split_rows(M, c->ith, c->nth, &m0, &m1);
        }
        for (int64_t m = m0; m < m1; m++) quantize((const float *) tern_row_flat(x, m), q + m * act_row_size, K);
        if (!own_copy) tern_threadpool_barrier(c->pool);
        act = q;
    }
    const size_t act_stride = convert ? act_row_size : x->nb[1];
    const tern_gemm_fn gemm = (convert || rows_uniform(x)) ? ks->gemm[w->type] : nullptr;
    const tern_vec_dot_fn vec_dot = ks->vec_dot[w->type];
    // Repacked weights: rows [0, n_grouped) in whole groups of the set's layout.
    const bool repacked = w->layout == CPU_LAYOUT_INTERLEAVED && convert && ks->gemm_repacked[w->type];
    const int64_t group = repacked ? ks->repack_rows[w->type] : 1;
    const int64_t n_grouped = repacked ? N / group * group : 0;

    const int64_t cn = chunk_rows(N, M, c->nth, group);
    const int64_t n_chunks_n = (N + cn - 1) / cn, n_chunks_m = (M + CHUNK_M - 1) / CHUNK_M;
    const int64_t n_chunks = n_chunks_n * n_chunks_m;
    const uint8_t * wdata = (const uint8_t *) w->data;
    const size_t w_stride = w->nb[1];
    float * out = (float *) dst->data;  // contiguous: (n, m) at m * N + n
    const float * bias = dst->src[2] ? (const float *) dst->src[2]->data : nullptr;  // [N] or none
    tern_claim_cursor cursor = { 0 };
    int64_t chunk;
    while (tern_claim_next(c->claims, c->ith, c->nth, n_chunks, &cursor, &chunk)) {
        // Consecutive chunks share their weight rows (m varies fastest).
        const int64_t chunk_n0 = (chunk / n_chunks_m) * cn;
        const int64_t m0 = (chunk % n_chunks_m) * CHUNK_M;
        const int64_t chunk_nr = N - chunk_n0 < cn ? N - chunk_n0 : cn;
        const int64_t nc = M - m0 < CHUNK_M ? M - m0 : CHUNK_M;
        int64_t n0 = chunk_n0, nr = chunk_nr;
        if (n0 < n_grouped) {
            const int64_t ng = n_grouped - n0 < nr ? n_grouped - n0 : nr;
            ks->gemm_repacked[w->type](K, ng, nc, wdata + n0 * w_stride, w_stride, act + m0 * act_stride, act_stride,
                                       out + m0 * N + n0, N);
            n0 += ng;  // the rows past the last group, in the file layout
            nr -= ng;
        }
        if (nr > 0 && gemm) {
            gemm(K, nr, nc, wdata + n0 * w_stride, w_stride, act + m0 * act_stride, act_stride, out + m0 * N + n0, N);
        } else if (nr > 0) {
            for (int64_t m = m0; m < m0 + nc; m++) {
                const void * a = convert ? (const void *) (act + m * act_stride) : (const void *) tern_row_flat(x, m);
                for (int64_t n = n0; n < n0 + nr; n++) vec_dot(K, &out[m * N + n], wdata + n * w_stride, a);
            }
        }
        if (bias) {
            // [chunk_nr] of each of the chunk's nc output rows, while they are in cache
            for (int64_t m = m0; m < m0 + nc; m++) tern_kadd_f32(chunk_nr, out + m * N + chunk_n0, out + m * N + chunk_n0, bias + chunk_n0);
        }
    }
}

}  // namespace tern
