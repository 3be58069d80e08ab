// Graph executor: runs a built graph's nodes in order on a thread pool.
//
// One kick-off per graph: every worker walks the node list, computes its share
// of each node (tern_op_* in cpu/ops/) and meets the others at a barrier after
// it. VIEW nodes and leaves compute nothing. Worker 0 checks the abort callback
// after each node (when another follows) and the decision reaches all workers
// through the barrier; the callback is also checked once before the first node.
//
// Every node and source must have host data (tern_graph_plan_apply: the
// scheduler hands the CPU only nodes whose bytes the host addresses) and
// `work` must hold tern_graph_work_size() bytes; otherwise TERN_ERR_INTERNAL /
// TERN_ERR_NO_MEMORY before anything runs. pool NULL: the calling thread alone.
//
// This is the CPU backend; graphs reach it through the execution door
// (exec/executor.h), which also runs device splits.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "graph/graph.h"

namespace tern {

// Largest node scratch of g's nodes [i0, i1) for n_threads workers (node
// NULL-terminated list `only`, when given, limits it to those nodes).
size_t      tern_graph_work_size(const tern_graph * g, int32_t n_threads);
size_t      tern_node_work_size(const tern_tensor * node, int32_t n_threads);
// Nodes [i0, i1) of g, fork-join on the pool (tern_graph_compute: all of them).
tern_status tern_graph_compute_range(const tern_graph * g, int32_t i0, int32_t i1, tern_threadpool * pool, void * work,
                                     size_t work_size, tern_abort_callback abort_cb, void * abort_data);
tern_status tern_graph_compute(const tern_graph * g, tern_threadpool * pool, void * work, size_t work_size,
                               tern_abort_callback abort_cb, void * abort_data);
// One node on the calling thread alone (a device that runs Tern's CPU kernels:
// hal/sim). work: tern_node_work_size(node, 1) bytes, 64-byte aligned.
void        tern_node_compute(tern_tensor * node, void * work, size_t work_size);
// Does the node compute anything (VIEW nodes and leaves do not)?
bool        tern_node_computes(const tern_tensor * node);

}  // namespace tern
