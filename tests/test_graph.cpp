// Graph builder: depth-first order, views sharing bytes, SET_ROWS ordering its
// readers after the write, constructor errors.
#include "cpu_test_util.h"

static int index_of(const tern_graph * g, const tern_tensor * t) {
    for (int i = 0; i < g->n_nodes; i++) if (g->nodes[i] == t) return i;
    return -1;
}

static void test_dfs_order() {
    test_graph tg;
    tern_tensor * a = test_input(&tg.gb, TERN_TYPE_F32, 1, { 8 });
    tern_tensor * b = tg_scale(&tg.gb, a, 2.0f);
    tern_tensor * c = tg_scale(&tg.gb, a, 3.0f);
    tern_tensor * d = tg_add(&tg.gb, b, c);
    tern_tensor * e = tg_mul(&tg.gb, d, b);   // b shared: placed once
    CHECK(tern_graph_expand(&tg.g, e) == TERN_OK);
    CHECK(tg.g.n_nodes == 4);  // leaves are not nodes
    CHECK(index_of(&tg.g, b) == 0 && index_of(&tg.g, c) == 1 && index_of(&tg.g, d) == 2 && index_of(&tg.g, e) == 3);
    CHECK(index_of(&tg.g, a) == -1);
    // Expanding again, or expanding a node already placed, adds nothing.
    CHECK(tern_graph_expand(&tg.g, e) == TERN_OK && tern_graph_expand(&tg.g, c) == TERN_OK);
    CHECK(tg.g.n_nodes == 4);
    tern_tensor * f = tg_scale(&tg.gb, c, 1.0f);
    CHECK(tern_graph_expand(&tg.g, f) == TERN_OK && tg.g.n_nodes == 5 && tg.g.nodes[4] == f);

    // A long chain (deeper than any recursion would like) fills the graph exactly.
    test_graph deep(4100);
    tern_tensor * x = test_input(&deep.gb, TERN_TYPE_F32, 1, { 4 });
    for (int i = 0; i < 4000; i++) x = tg_scale(&deep.gb, x, 1.0f);
    CHECK(tern_graph_expand(&deep.g, x) == TERN_OK && deep.g.n_nodes == 4000 && deep.g.nodes[3999] == x);
    // Too small a node table is an error, not an overflow.
    tern_graph small;
    CHECK(tern_graph_init(&small, &deep.arena, 100, TERN_MEM_GRAPH));
    CHECK(tern_graph_expand(&small, x) == TERN_ERR_NO_MEMORY);
}

static void test_views_share_bytes() {
    test_graph tg;
    tern_tensor * a = test_input(&tg.gb, TERN_TYPE_F32, 2, { 6, 4 });
    tern_tensor * s = tg_scale(&tg.gb, a, 1.0f);                 // [6, 4]
    int64_t r3[3] = { 3, 2, 4 };
    tern_tensor * r = tg_reshape(&tg.gb, s, 3, r3);               // [3, 2, 4]
    int64_t rr[1] = { 24 };
    tern_tensor * rr_t = tg_reshape(&tg.gb, r, 1, rr);
    CHECK(r->view_src == s && rr_t->view_src == s);               // views of views resolve to the owner
    // Permute [3, 2, 4] -> [3, 4, 2] (swap dims 1 and 2) via strides.
    int64_t pne[3] = { 3, 4, 2 };
    size_t pnb[3] = { 4, 24, 12 };
    tern_tensor * p = tg_view(&tg.gb, s, 3, pne, pnb, 0);
    int64_t vne[1] = { 6 };
    size_t vnb[1] = { 4 };
    tern_tensor * v = tg_view(&tg.gb, s, 1, vne, vnb, 2 * 6 * 4);  // row 2
    CHECK(!tern_tensor_is_contiguous(p) && tern_tensor_is_contiguous(v));
    tern_tensor * out = tg_scale(&tg.gb, p, 1.0f);
    tern_tensor * out2 = tg_add(&tg.gb, rr_t, rr_t);
    tern_tensor * out3 = tg_scale(&tg.gb, v, 1.0f);
    for (tern_tensor * t : { out, out2, out3 }) t->flags |= TERN_TENSOR_OUTPUT;
    CHECK(tg.plan_for({ out, out2, out3 }, 1) == TERN_OK);
    CHECK(r->data == s->data && rr_t->data == s->data && p->data == s->data);
    CHECK(v->data == (uint8_t *) s->data + 48);
    float * ad = (float *) a->data;
    for (int i = 0; i < 24; i++) ad[i] = (float) i;
    CHECK(tg.compute(NULL) == TERN_OK);
    const float * o = (const float *) out->data;  // o(i, j, k) = s(i, k, j)
    bool ok = true;
    for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) for (int k = 0; k < 2; k++) ok = ok && o[i + 3 * j + 12 * k] == (float) (i + 3 * k + 6 * j);
    CHECK(ok);
    CHECK(((const float *) out2->data)[23] == 46.0f);
    CHECK(((const float *) out3->data)[0] == 12.0f && ((const float *) out3->data)[5] == 17.0f);
    // A reshape of a strided view is refused; a view past its source too.
    int64_t bad[1] = { 24 };
    CHECK(tg_reshape(&tg.gb, p, 1, bad) == NULL && tg.gb.status == TERN_ERR_SHAPE);
    int64_t past[1] = { 7 };
    CHECK(tg_view(&tg.gb, s, 1, past, vnb, 18 * 4) == NULL);
}

// KV-cache pattern: write rows with SET_ROWS, read a view of the result.
static void test_set_rows_orders_readers() {
    test_graph tg;
    std::vector<float> cache(4 * 6, 0.0f);
    int64_t cne[2] = { 4, 6 };
    tern_tensor * kc = tg_external(&tg.gb, TERN_TYPE_F32, 2, cne, cache.data());
    tern_tensor * rows = test_input(&tg.gb, TERN_TYPE_F32, 2, { 4, 2 });
    tern_tensor * idx = test_input(&tg.gb, TERN_TYPE_I32, 1, { 2 });
    tern_tensor * upd = tg_set_rows(&tg.gb, kc, tg_scale(&tg.gb, rows, 1.0f), idx);
    int64_t vne[2] = { 4, 3 };
    size_t vnb[2] = { 4, 16 };
    tern_tensor * view = tg_view(&tg.gb, upd, 2, vne, vnb, 0);  // cells 0..2
    tern_tensor * reader = tg_scale(&tg.gb, view, 1.0f);
    reader->flags |= TERN_TENSOR_OUTPUT;
    CHECK(upd->view_src == kc && view->view_src == kc && upd->data == cache.data());
    CHECK(tg.plan_for({ reader }, 1) == TERN_OK);
    CHECK(index_of(&tg.g, upd) >= 0 && index_of(&tg.g, upd) < index_of(&tg.g, reader));
    CHECK(view->data == cache.data());
    float rv[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    int32_t iv[2] = { 2, 5 };
    memcpy(rows->data, rv, sizeof(rv));
    memcpy(idx->data, iv, sizeof(iv));
    CHECK(tg.compute(NULL) == TERN_OK);
    const float * o = (const float *) reader->data;
    CHECK(o[8] == 1.0f && o[11] == 4.0f && o[0] == 0.0f);  // cell 2 written before the read
    CHECK(cache[5 * 4 + 3] == 8.0f);
}

static void test_errors() {
    test_graph tg(4);
    tern_tensor * a = test_input(&tg.gb, TERN_TYPE_F32, 2, { 8, 2 });
    tern_tensor * b = test_input(&tg.gb, TERN_TYPE_F32, 2, { 3, 2 });
    CHECK(tg_add(&tg.gb, a, b) == NULL);             // 3 does not repeat into 8
    CHECK(tg.gb.status == TERN_ERR_SHAPE);
    CHECK(strstr(tern_last_error(), "add") != NULL);
    CHECK(tg_scale(&tg.gb, NULL, 1.0f) == NULL);     // NULL propagates
    CHECK(tern_graph_expand(&tg.g, NULL) == TERN_ERR_INVALID_ARG);
    tern_graph_builder_reset(&tg.gb);
    a = test_input(&tg.gb, TERN_TYPE_F32, 1, { 8 });
    for (int i = 0; i < 3; i++) a = tg_scale(&tg.gb, a, 1.0f);
    CHECK(a != NULL && tg.gb.status == TERN_OK);
    CHECK(tg_scale(&tg.gb, a, 1.0f) == NULL && tg.gb.status == TERN_ERR_NO_MEMORY);  // pool of 4 full
    int64_t q4[2] = { 40, 2 };
    tern_graph_builder_reset(&tg.gb);
    CHECK(tg_new(&tg.gb, TERN_TYPE_Q4_0, 2, q4) == NULL);  // 40 is not whole Q4_0 blocks
}

int main() {
    test_dfs_order();
    test_views_share_bytes();
    test_set_rows_orders_readers();
    test_errors();
    return tern_test_summary();
}
