// Memory planner on random DAGs: tensors whose live ranges overlap never share
// bytes (checked from the plan and by computing against private buffers); a
// plan made for the worst case applies to a smaller graph of the same
// topology and refuses a larger one.
#include <map>
#include "cpu_test_util.h"

static std::vector<float> g_weights;  // external F32 weights, shared by every build

struct dag_out {
    std::vector<tern_tensor *> outs;
    tern_tensor * input;
};

// Random graph over [ne0, M] activations: scale, add, rms_norm, mul_mat with
// changing widths, a few views; the same seed gives the same topology.
static dag_out build_dag(tern_graph_builder * gb, uint32_t seed, int64_t M) {
    std::mt19937 r(seed);
    dag_out d;
    d.input = test_input(gb, TERN_TYPE_F32, 2, { 16, M });
    std::vector<tern_tensor *> pool = { d.input };
    const int64_t widths[4] = { 8, 16, 24, 40 };
    for (int i = 0; i < 40; i++) {
        tern_tensor * x = pool[r() % pool.size()];
        tern_tensor * y = NULL;
        switch (r() % 5) {
            case 0: y = tg_scale(gb, x, 0.5f); break;
            case 1: {
                std::vector<tern_tensor *> same;
                for (tern_tensor * t : pool) if (t->ne[0] == x->ne[0]) same.push_back(t);
                y = tg_add(gb, x, same[r() % same.size()]);
                break;
            }
            case 2: y = tg_rms_norm(gb, x, NULL, 1e-5f); break;
            case 3: {
                int64_t wne[2] = { x->ne[0], widths[r() % 4] };
                y = tg_mul_mat(gb, tg_external(gb, TERN_TYPE_F32, 2, wne, g_weights.data()), x);
                break;
            }
            default: {
                int64_t ne[2] = { x->ne[0] / 2, M };  // left half of every row
                size_t nb[2] = { 4, x->nb[1] };
                y = tg_scale(gb, tg_view(gb, x, 2, ne, nb, 0), 1.5f);
                break;
            }
        }
        pool.push_back(y);
    }
    d.outs.push_back(pool.back());
    for (int k = 0; k < 2; k++) d.outs.push_back(pool[1 + r() % (pool.size() - 1)]);
    for (tern_tensor * o : d.outs) o->flags |= TERN_TENSOR_OUTPUT;
    return d;
}

static void expand_all(test_graph & tg, const dag_out & d) {
    for (tern_tensor * o : d.outs) CHECK(tern_graph_expand(&tg.g, o) == TERN_OK);
}

static void fill_input(tern_tensor * in, uint32_t seed) {
    std::mt19937 r(seed);
    std::vector<float> v = random_floats(r, tern_tensor_nelements(in));
    memcpy(in->data, v.data(), v.size() * 4);
}

// Reference: every tensor in its own buffer, no reuse at all.
static std::vector<std::vector<float>> compute_private(uint32_t seed, int64_t M) {
    test_graph tg;
    dag_out d = build_dag(&tg.gb, seed, M);
    expand_all(tg, d);
    std::vector<std::vector<uint8_t>> bufs(tg.gb.n_tensors);
    for (int32_t i = 0; i < tg.gb.n_tensors; i++) {
        tern_tensor * t = &tg.gb.tensors[i];
        if (t->view_src || (t->flags & TERN_TENSOR_WEIGHT)) continue;
        bufs[i].resize(tern_tensor_nbytes(t));
        t->data = bufs[i].data();
    }
    for (int32_t i = 0; i < tg.gb.n_tensors; i++) {
        tern_tensor * t = &tg.gb.tensors[i];
        if (t->view_src) t->data = (uint8_t *) t->view_src->data + t->view_offs;
    }
    fill_input(d.input, seed);
    std::vector<uint8_t> work(tern_graph_work_size(&tg.g, 1) + 64);
    CHECK(tern_graph_compute(&tg.g, NULL, work.data(), work.size(), NULL, NULL) == TERN_OK);
    std::vector<std::vector<float>> res;
    for (tern_tensor * o : d.outs) res.emplace_back((float *) o->data, (float *) o->data + tern_tensor_nelements(o));
    return res;
}

// Live ranges recomputed here, independently of the planner.
static void check_no_overlap(const test_graph & tg) {
    std::map<int32_t, std::pair<int, int>> range;
    auto use = [&](const tern_tensor * t, int at) {
        const tern_tensor * o = t->view_src ? t->view_src : t;
        auto it = range.find(o->id);
        if (it == range.end()) range[o->id] = { at, at };
        else it->second = { std::min(it->second.first, at), std::max(it->second.second, at) };
    };
    for (int i = 0; i < tg.g.n_nodes; i++) {
        use(tg.g.nodes[i], i);
        for (tern_tensor * s : tg.g.nodes[i]->src) if (s) use(s, i);
    }
    int planned = 0, bad = 0;
    for (auto & a : range) {
        const tern_tensor * ta = &tg.gb.tensors[a.first];
        if (ta->flags & TERN_TENSOR_WEIGHT) continue;
        if (ta->flags & TERN_TENSOR_INPUT) a.second.first = 0;
        if (ta->flags & TERN_TENSOR_OUTPUT) a.second.second = tg.g.n_nodes;
    }
    for (auto & a : range) {
        const tern_tensor * ta = &tg.gb.tensors[a.first];
        if (ta->flags & TERN_TENSOR_WEIGHT) continue;
        planned++;
        CHECK(tg.plan.sizes[a.first] >= tern_tensor_nbytes(ta) && tg.plan.offsets[a.first] % 64 == 0);
        CHECK(tg.plan.offsets[a.first] + tg.plan.sizes[a.first] <= tg.plan.region_bytes[0]);
        for (auto & b : range) {
            const tern_tensor * tb = &tg.gb.tensors[b.first];
            if (b.first <= a.first || (tb->flags & TERN_TENSOR_WEIGHT)) continue;
            bool live_together = a.second.first <= b.second.second && b.second.first <= a.second.second;
            const uint8_t *pa = (const uint8_t *) ta->data, *pb = (const uint8_t *) tb->data;
            bool share = pa < pb + tern_tensor_nbytes(tb) && pb < pa + tern_tensor_nbytes(ta);
            if (live_together && share) bad++;
        }
    }
    CHECK_MSG(bad == 0, "%d pairs of live tensors share bytes", bad);
    CHECK(planned >= 4);  // the input, an output and something between
}

static void test_random_dags() {
    size_t sum_planned = 0, sum_naive = 0;
    for (uint32_t seed = 1; seed <= 30; seed++) {
        test_graph tg;
        dag_out d = build_dag(&tg.gb, seed, 8);
        expand_all(tg, d);
        CHECK(tern_graph_plan_make(&tg.g, &tg.gb, NULL, 1, NULL, &tg.arena, &tg.plan) == TERN_OK);
        tg.work_bytes = tern_graph_work_size(&tg.g, 2);
        tg.act.assign(tg.plan.region_bytes[0] + 64, 0);
        tg.work.assign(tg.work_bytes + 64, 0);
        CHECK(tg.apply(&tg.gb, &tg.g) == TERN_OK);
        check_no_overlap(tg);
        for (int32_t i = 0; i < tg.gb.n_tensors; i++) sum_naive += tg.plan.sizes[i];
        sum_planned += tg.plan.region_bytes[0];

        fill_input(d.input, seed);
        CHECK(tg.compute(NULL) == TERN_OK);
        std::vector<std::vector<float>> want = compute_private(seed, 8);
        for (size_t k = 0; k < d.outs.size(); k++) {
            CHECK_MSG(memcmp(d.outs[k]->data, want[k].data(), want[k].size() * 4) == 0, "seed %u output %zu differs", seed, k);
        }

        // The worst-case plan serves the same topology with fewer rows.
        test_graph small;
        dag_out ds = build_dag(&small.gb, seed, 3);
        expand_all(small, ds);
        std::vector<uint8_t> work(tern_graph_work_size(&small.g, 1) + 64);
        CHECK(tg.apply(&small.gb, &small.g) == TERN_OK);
        fill_input(ds.input, seed);
        CHECK(tern_graph_compute(&small.g, NULL, work.data(), work.size(), NULL, NULL) == TERN_OK);
        want = compute_private(seed, 3);
        for (size_t k = 0; k < ds.outs.size(); k++) {
            CHECK_MSG(memcmp(ds.outs[k]->data, want[k].data(), want[k].size() * 4) == 0, "seed %u small output %zu differs", seed, k);
        }
        // ... and refuses more rows, and another topology.
        test_graph big;
        expand_all(big, build_dag(&big.gb, seed, 9));
        CHECK(tg.apply(&big.gb, &big.g) == TERN_ERR_INTERNAL);
        test_graph other;
        expand_all(other, build_dag(&other.gb, seed + 1000, 3));
        CHECK(tg.apply(&other.gb, &other.g) == TERN_ERR_INTERNAL);
    }
    printf("planned %zu bytes for %zu bytes of tensors\n", sum_planned, sum_naive);
    CHECK(sum_planned < sum_naive);  // reuse happens
}

int main() {
    std::mt19937 r(7);
    g_weights = random_floats(r, 40 * 40, -0.3f, 0.3f);
    test_random_dags();
    return tern_test_summary();
}
