// Helpers for the CPU tests: an arena-backed builder + graph, planning and
// compute in one call, seeded random data.
#pragma once
#include <random>
#include <vector>
#include "check.h"
#include "core/arena.h"
#include "core/status.h"
#include "cpu/compute.h"
#include "cpu/threadpool.h"
#include "graph/graph.h"
#include "graph/planner.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

struct test_graph {
    std::vector<uint8_t> mem;
    tern_arena arena;
    tern_graph_builder gb;
    tern_graph g;
    tern_graph_plan plan;
    size_t work_bytes = 0;
    tern_buffer act_buf;
    std::vector<uint8_t> act, work;

    explicit test_graph(int32_t capacity = 512, size_t bytes = 4u << 20) : mem(bytes) {
        arena_init(&arena, mem.data(), mem.size());
        tern_graph_builder_init(&gb, &arena, capacity, TERN_MEM_GRAPH);
        tern_graph_init(&g, &arena, capacity, TERN_MEM_GRAPH);
    }
    // Expand the outputs, plan for n_threads and give every tensor its memory.
    tern_status plan_for(std::initializer_list<tern_tensor *> outs, int32_t n_threads) {
        for (tern_tensor * o : outs) TERN_TRY(tern_graph_expand(&g, o));
        TERN_TRY(tern_graph_plan_make(&g, &gb, NULL, 1, NULL, &arena, &plan));
        work_bytes = tern_graph_work_size(&g, n_threads);
        act.assign(plan.region_bytes[0] + 64, 0);
        work.assign(work_bytes + 64, 0);
        return apply(&gb, &g);
    }
    // Storage of the plan's region 0 (act) for a graph of the planned topology.
    tern_status apply(tern_graph_builder * b, const tern_graph * graph) {
        act_buf = tern_host_buffer(align64(act.data()), plan.region_bytes[0], TERN_BUFFER_ACTIVATIONS);
        tern_buffer * regions[1] = { &act_buf };
        return tern_graph_plan_apply(&plan, b, graph, regions);
    }
    tern_status compute(tern_threadpool * pool) {
        return tern_graph_compute(&g, pool, align64(work.data()), work_bytes, NULL, NULL);
    }
    static void * align64(uint8_t * p) { return (void *) (((uintptr_t) p + 63) & ~(uintptr_t) 63); }
};

static inline std::vector<float> random_floats(std::mt19937 & rng, size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float & x : v) x = d(rng);
    return v;
}

static inline tern_tensor * test_input(tern_graph_builder * gb, tern_type type, int n_dims, std::initializer_list<int64_t> ne) {
    tern_tensor * t = tg_new(gb, type, n_dims, std::vector<int64_t>(ne).data());
    if (t) t->flags |= TERN_TENSOR_INPUT;
    return t;
}

static inline tern_threadpool * test_pool(int32_t n_threads, int32_t spin_rounds = 1 << 10) {
    tern_threadpool_params p = tern_threadpool_default_params(n_threads);
    p.spin_rounds = spin_rounds;
    tern_threadpool * pool = NULL;
    return tern_threadpool_create(&p, &pool) == TERN_OK ? pool : NULL;
}
