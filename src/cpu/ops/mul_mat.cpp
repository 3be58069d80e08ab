// MUL_MAT: dst [N, M] = W [K, N] x X [K, M], through the weight type's traits.
//
// Phase 1 (unless the dot type is F32): the M activation rows are converted
// once to the weight's vec_dot_type into the work buffer, rows split across
// workers; a barrier. Phase 2: the N weight rows are split across workers and
// each output value dst[m][n] is ONE vec_dot(K, W row n, X row m) call, so the
// result does not depend on the thread count. Tiles of TILE x TILE keep a few
// weight rows hot in cache while the activation rows stream past.
#include "cpu/ops/ops.h"
#include "cpu/kernels/vec_dot.h"
#include "cpu/threadpool.h"
#include "tensor/types.h"

enum { TILE = 16 };

static bool needs_conversion(const tern_type_traits * tr) { return tr->vec_dot_type != TERN_TYPE_F32; }

size_t tern_op_mul_mat_work_size(const tern_tensor * dst, int32_t n_threads) {
    const tern_tensor * w = dst->src[0];
    const tern_tensor * x = dst->src[1];
    const tern_type_traits * tr = tern_type_traits_get(w->type);
    if (!needs_conversion(tr)) return 0;
    return tern_row_size(tr->vec_dot_type, x->ne[0]) * (size_t) tern_n_rows(x);
}

void tern_op_mul_mat(const tern_op_ctx * c, tern_tensor * dst) {
    const tern_tensor * w = dst->src[0];  // [K, N] contiguous, any type
    const tern_tensor * x = dst->src[1];  // F32 [K, M...]
    const tern_type_traits * tr = tern_type_traits_get(w->type);
    const tern_vec_dot_fn vec_dot = tern_cpu_vec_dot(w->type);  // SIMD or reference; once per node
    const int64_t K = w->ne[0], N = w->ne[1], M = tern_n_rows(x);

    const bool convert = needs_conversion(tr);
    const size_t act_row_size = convert ? tern_row_size(tr->vec_dot_type, K) : 0;
    if (convert) {
        const tern_from_float_fn from_float = tern_type_traits_get(tr->vec_dot_type)->from_float_act;
        int64_t m0, m1;
        tern_split_rows(M, c->ith, c->nth, &m0, &m1);
        for (int64_t m = m0; m < m1; m++) {
            from_float((const float *) tern_row_flat(x, m), (uint8_t *) c->work + m * act_row_size, K);
        }
        tern_threadpool_barrier(c->pool);
    }

    int64_t n0, n1;
    tern_split_rows(N, c->ith, c->nth, &n0, &n1);
    float * out = (float *) dst->data;  // contiguous: (n, m) at m * N + n
    for (int64_t nt = n0; nt < n1; nt += TILE) {
        const int64_t nt1 = nt + TILE < n1 ? nt + TILE : n1;
        for (int64_t mt = 0; mt < M; mt += TILE) {
            const int64_t mt1 = mt + TILE < M ? mt + TILE : M;
            for (int64_t m = mt; m < mt1; m++) {
                const void * act = convert ? (const void *) ((const uint8_t *) c->work + m * act_row_size)
                                           : (const void *) tern_row_flat(x, m);
                for (int64_t n = nt; n < nt1; n++) {
                    vec_dot(K, &out[m * N + n], (const uint8_t *) w->data + n * w->nb[1], act);
                }
            }
        }
    }
}
