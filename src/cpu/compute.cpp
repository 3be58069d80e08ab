// Graph executor (see compute.h).
#include "cpu/compute.h"
#include "core/status.h"
#include "cpu/ops/ops.h"
#include "cpu/threadpool.h"

#include <inttypes.h>
#include <atomic>

namespace tern {

static bool computes(const tern_tensor * node) { return node->op != TERN_OP_NONE && node->op != TERN_OP_VIEW; }

bool tern_node_computes(const tern_tensor * node) { return computes(node); }

size_t tern_node_work_size(const tern_tensor * node, int32_t n_threads) { return tern_op_work_size(node, n_threads); }

size_t tern_op_work_size(const tern_tensor * node, int32_t n_threads) {
    switch (node->op) {
        case TERN_OP_MUL_MAT: return tern_op_mul_mat_work_size(node, n_threads);
        case TERN_OP_GET_ROWS: return tern_op_get_rows_work_size(node, n_threads);
        case TERN_OP_ATTN: return tern_op_attn_work_size(node, n_threads);
        default: return 0;
    }
}

size_t tern_graph_work_size(const tern_graph * g, int32_t n_threads) {
    size_t most = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        size_t w = tern_op_work_size(g->nodes[i], n_threads);
        if (w > most) most = w;
    }
    return most;
}

static void compute_node(const tern_op_ctx * c, tern_tensor * node) {
    switch (node->op) {
        case TERN_OP_GET_ROWS: tern_op_get_rows(c, node); break;
        case TERN_OP_RMS_NORM: tern_op_rms_norm(c, node); break;
        case TERN_OP_ADD: tern_op_add(c, node); break;
        case TERN_OP_MUL: tern_op_mul(c, node); break;
        case TERN_OP_SCALE: tern_op_scale(c, node); break;
        case TERN_OP_MUL_MAT: tern_op_mul_mat(c, node); break;
        case TERN_OP_ROPE_CACHE: tern_op_rope_cache(c, node); break;
        case TERN_OP_ROPE: tern_op_rope(c, node); break;
        case TERN_OP_SET_ROWS: tern_op_set_rows(c, node); break;
        case TERN_OP_ATTN: tern_op_attn(c, node); break;
        case TERN_OP_SWIGLU: tern_op_swiglu(c, node); break;
        case TERN_OP_ARGMAX: tern_op_argmax(c, node); break;
        case TERN_OP_COPY_ROWS: tern_op_copy_rows(c, node); break;
        default: break;
    }
}

namespace {
struct graph_job {
    const tern_graph *  g;
    tern_threadpool *   pool;
    void *              work;
    size_t              work_size;
    int32_t             first_node;  // index of the first node of the range
    int32_t             last_node;   // index of the last node of the range that computes
    tern_abort_callback abort_cb;
    void *              abort_data;
    // Node after which the graph stops: set by worker 0 before that node's barrier, read by all
    // after it. A node index, not a flag, so that a slow worker leaving the previous barrier
    // cannot see a decision meant for the next one.
    std::atomic<int32_t> abort_after;
    // Claim counters (work_claim.h), [2][nth]: the k-th computing node uses set
    // k % 2. While node k runs, each worker zeroes its own counter of the other
    // set; nobody touches that set then (node k - 1 is behind a barrier, node
    // k + 1 has not started), so node k + 1 finds it zeroed. The pool's, or
    // own_claims without a pool (one worker).
    tern_claim_counter * claims;
    tern_claim_counter   own_claims[2];
};
} // namespace

static void run_graph(int32_t ith, int32_t nth, void * arg) {
    graph_job * job = (graph_job *) arg;
    tern_op_ctx ctx = { ith, nth, job->work, job->work_size, job->pool, nullptr };
    int32_t seq = 0;  // computing nodes so far: the same count in every worker
    for (int32_t i = job->first_node; i <= job->last_node; i++) {
        tern_tensor * node = job->g->nodes[i];
        if (!computes(node)) continue;
        ctx.claims = job->claims + (seq & 1) * nth;
        job->claims[((seq + 1) & 1) * nth + ith].next.store(0, std::memory_order_relaxed);
        seq++;
        compute_node(&ctx, node);
        if (ith == 0 && i < job->last_node && job->abort_cb && job->abort_cb(job->abort_data)) {
            job->abort_after.store(i, std::memory_order_relaxed);
        }
        tern_threadpool_barrier(job->pool);
        if (job->abort_after.load(std::memory_order_relaxed) == i) return;
    }
}

static tern_status check_data(const tern_graph * g, int32_t i0, int32_t i1) {
    for (int32_t i = i0; i < i1; i++) {
        const tern_tensor * node = g->nodes[i];
        if (!computes(node)) continue;
        if (!node->data) return tern_fail(TERN_ERR_INTERNAL, "compute: node %" PRId32 " '%s' has no memory (graph not planned)", i, node->name);
        for (int s = 0; s < TERN_MAX_SRC; s++) {
            const tern_tensor * src = node->src[s];
            if (src && !src->data) {
                return tern_fail(TERN_ERR_INTERNAL, "compute: source %d '%s' of node %" PRId32 " '%s' has no memory", s, src->name, i, node->name);
            }
        }
    }
    return TERN_OK;
}

tern_status tern_graph_compute(const tern_graph * g, tern_threadpool * pool, void * work, size_t work_size,
                               tern_abort_callback abort_cb, void * abort_data) {
    if (!g) return tern_fail(TERN_ERR_INVALID_ARG, "compute: NULL graph");
    return tern_graph_compute_range(g, 0, g->n_nodes, pool, work, work_size, abort_cb, abort_data);
}

tern_status tern_graph_compute_range(const tern_graph * g, int32_t i0, int32_t i1, tern_threadpool * pool, void * work,
                                     size_t work_size, tern_abort_callback abort_cb, void * abort_data) {
    if (!g || i0 < 0 || i1 > g->n_nodes) return tern_fail(TERN_ERR_INVALID_ARG, "compute: NULL graph or a bad node range");
    const int32_t nth = tern_threadpool_n_threads(pool);
    size_t need = 0;
    for (int32_t i = i0; i < i1; i++) {
        const size_t w = tern_op_work_size(g->nodes[i], nth);
        if (w > need) need = w;
    }
    if (work_size < need || (need > 0 && !work)) {
        return tern_fail(TERN_ERR_NO_MEMORY, "compute: work buffer of %zu bytes, graph needs %zu for %" PRId32 " threads", work_size, need, nth);
    }
    TERN_TRY(check_data(g, i0, i1));
    if (abort_cb && abort_cb(abort_data)) return tern_fail(TERN_ERR_ABORTED, "compute: aborted by the callback");

    graph_job job;
    job.g = g;
    job.pool = pool;
    job.work = work;
    job.work_size = work_size;
    job.first_node = i0;
    job.last_node = -1;
    for (int32_t i = i0; i < i1; i++) if (computes(g->nodes[i])) job.last_node = i;
    job.abort_cb = abort_cb;
    job.abort_data = abort_data;
    job.abort_after.store(-1);
    job.claims = pool ? tern_threadpool_claims(pool) : job.own_claims;
    for (int32_t i = 0; i < 2 * nth; i++) job.claims[i].next.store(0);
    if (job.last_node < 0) return TERN_OK;
    tern_threadpool_run(pool, run_graph, &job);
    if (job.abort_after.load() >= 0) return tern_fail(TERN_ERR_ABORTED, "compute: aborted by the callback");
    return TERN_OK;
}

void tern_node_compute(tern_tensor * node, void * work, size_t work_size) {
    tern_claim_counter claims[2];
    claims[0].next.store(0, std::memory_order_relaxed);
    claims[1].next.store(0, std::memory_order_relaxed);
    tern_op_ctx ctx = { 0, 1, work, work_size, nullptr, claims };
    compute_node(&ctx, node);
}

}  // namespace tern
