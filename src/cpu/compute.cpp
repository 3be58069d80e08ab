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

int32_t tern_op_phases(const tern_tensor * node) { return node->op == TERN_OP_MUL_MAT ? tern_op_mul_mat_phases(node) : 1; }

int64_t tern_op_items(const tern_tensor * node, int32_t phase, int32_t n_threads) {
    int64_t n = 1;
    switch (node->op) {
        case TERN_OP_MUL_MAT: n = (int64_t) tern_op_mul_mat_items_phase(node, phase, n_threads); break;
        case TERN_OP_ATTN: n = tern_rows_items(tern_op_attn_units(node, n_threads), n_threads); break;
        case TERN_OP_ROPE: n = tern_rows_items(node->src[0]->ne[1] * node->src[0]->ne[2], n_threads); break;
        case TERN_OP_ROPE_CACHE: n = tern_rows_items(node->ne[1], n_threads); break;
        case TERN_OP_SET_ROWS: n = tern_rows_items(node->src[1]->ne[1], n_threads); break;
        case TERN_OP_GET_ROWS:
        case TERN_OP_COPY_ROWS: n = tern_rows_items(node->ne[1], n_threads); break;
        default: n = tern_rows_items(tern_n_rows(node), n_threads); break;
    }
    if (n < 1) n = 1;
    return n < STEP_MAX_ITEMS - 1 ? n : STEP_MAX_ITEMS - 1;
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
        case TERN_OP_GEGLU: tern_op_geglu(c, node); break;
        case TERN_OP_SOFTCAP: tern_op_softcap(c, node); break;
        case TERN_OP_ARGMAX: tern_op_argmax(c, node); break;
        case TERN_OP_COPY_ROWS: tern_op_copy_rows(c, node); break;
        default: break;
    }
}

namespace {

// A graph run as a step job (cpu/threadpool.h): one step per phase of each
// computing node of [first_node, end_node), their items claimed by whichever
// workers run.
struct graph_job {
    const tern_graph *  g;
    int32_t             first_node;
    int32_t             end_node;
    int32_t             nth;
    void *              work;
    size_t              work_size;
    tern_abort_callback abort_cb;
    void *              abort_data;
    bool                aborted;
};

bool job_next(const void * arg, int32_t prev_node, int32_t prev_phase, int32_t * node, int32_t * phase, int64_t * n_items) {
    const graph_job * job = (const graph_job *) arg;
    if (prev_node >= 0 && prev_phase + 1 < tern_op_phases(job->g->nodes[prev_node])) {
        *node = prev_node;
        *phase = prev_phase + 1;
    } else {
        int32_t i = prev_node < 0 ? job->first_node : prev_node + 1;
        while (i < job->end_node && !computes(job->g->nodes[i])) i++;
        if (i >= job->end_node) return false;
        *node = i;
        *phase = 0;
    }
    *n_items = tern_op_items(job->g->nodes[*node], *phase, job->nth);
    return true;
}

void job_run_item(const void * arg, int32_t ith, int32_t nth, int32_t node, int32_t phase, int64_t item, int64_t n_items,
                  bool first) {
    const graph_job * job = (const graph_job *) arg;
    tern_op_ctx ctx = { ith, nth, job->work, job->work_size, item, n_items, phase, first };
    compute_node(&ctx, job->g->nodes[node]);
}

// Between nodes only: not within a node's phases, not after the last node.
bool job_abort(const void * arg, int32_t node, int32_t phase) {
    graph_job * job = (graph_job *) arg;  // the caller's own, asked by the caller alone
    if (node + 1 >= job->end_node || phase + 1 < tern_op_phases(job->g->nodes[node])) return false;
    if (!job->abort_cb || !job->abort_cb(job->abort_data)) return false;
    job->aborted = true;
    return true;
}

// Without a callback the workers need not wait for the caller's question at each step.
const tern_step_ops kGraphSteps = { job_next, job_run_item, job_abort };
const tern_step_ops kGraphStepsNoAbort = { job_next, job_run_item, NULL };

} // namespace

// A graph whose steps are tiny runs on the caller alone. A step costs the pool
// about a microsecond of cache lines moved between cores (set-up, claims, the
// done count) whatever its size; below the pool's min_step_bytes of data a
// step on average (default 64 KiB: a couple of microseconds of work) a second
// thread costs more than it brings: stories260K decode ran 29.6k t/s on one
// thread and 23.7k on two. Items never change bits with the thread count
// (threadpool.h), so the logits are the same.
static bool small_steps(const tern_graph * g, int32_t i0, int32_t i1, size_t min_step_bytes) {
    size_t bytes = 0;
    int64_t steps = 0;
    for (int32_t i = i0; i < i1; i++) {
        const tern_tensor * node = g->nodes[i];
        if (!computes(node)) continue;
        steps += tern_op_phases(node);
        bytes += tern_tensor_nbytes(node);
        for (int s = 0; s < TERN_MAX_SRC; s++) {
            if (node->src[s]) bytes += tern_tensor_nbytes(node->src[s]);
        }
    }
    return steps > 0 && bytes < (size_t) steps * min_step_bytes;
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
    if (tern_threadpool_n_threads(pool) > 1 && small_steps(g, i0, i1, tern_threadpool_min_step_bytes(pool))) pool = nullptr;
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
    job.first_node = i0;
    job.end_node = i1;
    job.nth = nth;
    job.work = work;
    job.work_size = work_size;
    job.abort_cb = abort_cb;
    job.abort_data = abort_data;
    job.aborted = false;
    int32_t last = -1;
    for (int32_t i = i0; i < i1; i++) if (computes(g->nodes[i])) last = i;
    if (last < 0) return TERN_OK;
    // The callback is asked after every step but the last one's (as before: between nodes).
    job.end_node = last + 1;
    tern_threadpool_run_steps(pool, abort_cb ? &kGraphSteps : &kGraphStepsNoAbort, &job);
    if (job.aborted) return tern_fail(TERN_ERR_ABORTED, "compute: aborted by the callback");
    return TERN_OK;
}

void tern_node_compute(tern_tensor * node, void * work, size_t work_size) {
    for (int32_t phase = 0; phase < tern_op_phases(node); phase++) {
        const int64_t n = tern_op_items(node, phase, 1);
        for (int64_t i = 0; i < n; i++) {
            tern_op_ctx ctx = { 0, 1, work, work_size, i, n, phase, i == 0 };
            compute_node(&ctx, node);
        }
    }
}

}  // namespace tern
