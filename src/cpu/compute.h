// Graph executor: runs a built graph's nodes in order on a thread pool.
//
// One kick-off per graph: every worker walks the node list, computes its share
// of each node (tern_op_* in cpu/ops/) and meets the others at a barrier after
// it. VIEW nodes and leaves compute nothing. Worker 0 checks the abort callback
// after each node (when another follows) and the decision reaches all workers
// through the barrier; the callback is also checked once before the first node.
//
// Every node and source must have data (tern_graph_plan_apply) and `work` must
// hold tern_graph_work_size() bytes; otherwise TERN_ERR_INTERNAL /
// TERN_ERR_NO_MEMORY before anything runs. pool NULL: the calling thread alone.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "graph/graph.h"

namespace tern {

// Largest node scratch of g for n_threads workers.
size_t      tern_graph_work_size(const tern_graph * g, int32_t n_threads);
tern_status tern_graph_compute(const tern_graph * g, tern_threadpool * pool, void * work, size_t work_size,
                               tern_abort_callback abort_cb, void * abort_data);

}  // namespace tern
