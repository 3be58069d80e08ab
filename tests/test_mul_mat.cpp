// MUL_MAT for every weight type of the traits table vs dequantized weights
// times F32 activations in double; bit-identical for 1, 2, 3 and 8 threads.
#include <math.h>
#include "cpu_test_util.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

static std::mt19937 g_rng(99);

// Tolerance relative to sum |w x|: the activations are rounded to the dot type.
static double tolerance(tern_type vec_dot_type) {
    switch (vec_dot_type) {
        case TERN_TYPE_F32: return 1e-6;
        case TERN_TYPE_F16: return 2e-3;
        case TERN_TYPE_BF16: return 1.6e-2;
        default: return 1.6e-2;  // 8-bit activation blocks
    }
}

static void test_type(tern_type type, int64_t K, int64_t N, int64_t M, tern_threadpool ** pools) {
    const tern_type_traits * tr = tern_type_traits_get(type);
    const size_t row = tern_row_size(type, K);
    std::vector<float> wf = random_floats(g_rng, K * N), x = random_floats(g_rng, K * M, -2, 2);
    std::vector<uint8_t> w(row * N);
    std::vector<float> wd(K * N);  // dequantized weights
    for (int64_t n = 0; n < N; n++) {
        tr->from_float(&wf[n * K], &w[n * row], K);
        tr->to_float(&w[n * row], &wd[n * K], K);
    }
    const int32_t threads[4] = { 1, 2, 3, 8 };
    std::vector<float> first;
    for (int k = 0; k < 4; k++) {
        test_graph tg;
        int64_t wne[2] = { K, N };
        tern_tensor * xt = test_input(&tg.gb, TERN_TYPE_F32, 2, { K, M });
        tern_tensor * out = tg_mul_mat(&tg.gb, tg_external(&tg.gb, type, 2, wne, w.data()), xt);
        CHECK_MSG(out != NULL, "%s K=%lld: %s", tr->name, (long long) K, tern_last_error());
        if (!out) return;
        out->flags |= TERN_TENSOR_OUTPUT;
        CHECK(tg.plan_for({ out }, threads[k]) == TERN_OK);
        memcpy(xt->data, x.data(), x.size() * sizeof(float));
        CHECK(tg.compute(pools[k]) == TERN_OK);
        std::vector<float> got((float *) out->data, (float *) out->data + N * M);
        if (k == 0) first = got;
        else CHECK_MSG(memcmp(got.data(), first.data(), got.size() * 4) == 0, "%s: %d threads differ", tr->name, threads[k]);
    }
    int bad = 0;
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
            double want = 0, mag = 0;
            for (int64_t i = 0; i < K; i++) {
                want += (double) wd[n * K + i] * x[m * K + i];
                mag += fabs((double) wd[n * K + i] * x[m * K + i]);
            }
            if (!(fabs(first[m * N + n] - want) <= tolerance(tr->vec_dot_type) * mag + 1e-5)) {
                if (bad++ < 3) fprintf(stderr, "%s [%lld, %lld]: got %g want %g\n", tr->name, (long long) n, (long long) m, first[m * N + n], want);
            }
        }
    }
    CHECK_MSG(bad == 0, "%s K=%lld: %d values off", tr->name, (long long) K, bad);
}

// W x + b in one node (tg_mul_mat_bias) equals tg_add of the product, bit for
// bit, for any thread count; a bias of the wrong length is refused.
static void test_bias(tern_type type, int64_t K, int64_t N, int64_t M, tern_threadpool ** pools) {
    const tern_type_traits * tr = tern_type_traits_get(type);
    const size_t row = tern_row_size(type, K);
    std::vector<float> wf = random_floats(g_rng, K * N), x = random_floats(g_rng, K * M, -2, 2), b = random_floats(g_rng, N, -1, 1);
    std::vector<uint8_t> w(row * N);
    for (int64_t n = 0; n < N; n++) tr->from_float(&wf[n * K], &w[n * row], K);
    const int32_t threads[4] = { 1, 2, 3, 8 };
    for (int k = 0; k < 4; k++) {
        test_graph tg;
        int64_t wne[2] = { K, N }, bne[1] = { N }, short_ne[1] = { N - 1 };
        tern_tensor * xt = test_input(&tg.gb, TERN_TYPE_F32, 2, { K, M });
        tern_tensor * wt = tg_external(&tg.gb, type, 2, wne, w.data());
        tern_tensor * bt = tg_external(&tg.gb, TERN_TYPE_F32, 1, bne, b.data());
        tern_tensor * fused = tg_mul_mat_bias(&tg.gb, wt, xt, bt);
        tern_tensor * apart = tg_add(&tg.gb, tg_mul_mat(&tg.gb, wt, xt), bt);
        CHECK_MSG(fused && apart, "%s: %s", tr->name, tern_last_error());
        if (!fused || !apart) return;
        CHECK(tg_mul_mat_bias(&tg.gb, wt, xt, tg_external(&tg.gb, TERN_TYPE_F32, 1, short_ne, b.data())) == NULL);
        fused->flags |= TERN_TENSOR_OUTPUT;
        apart->flags |= TERN_TENSOR_OUTPUT;
        CHECK(tg.plan_for({ fused, apart }, threads[k]) == TERN_OK);
        memcpy(xt->data, x.data(), x.size() * sizeof(float));
        CHECK(tg.compute(pools[k]) == TERN_OK);
        CHECK_MSG(memcmp(fused->data, apart->data, (size_t) (N * M) * sizeof(float)) == 0, "%s: bias fused != add, %d threads",
                  tr->name, threads[k]);
    }
}

int main() {
    tern_threadpool * pools[4] = { test_pool(1), test_pool(2), test_pool(3), test_pool(8) };
    int n_types = 0;
    for (int t = 0; t < TERN_TYPE_COUNT; t++) {
        const tern_type_traits * tr = tern_type_traits_get((tern_type) t);
        if (!tr || !tr->vec_dot || !tr->from_float || !tr->to_float) continue;
        n_types++;
        const int64_t K = tr->blck_size == 256 ? 512 : tr->blck_size == 32 ? 96 : 172;  // 172: not a multiple of 32
        test_type((tern_type) t, K, 37, 5, pools);
        test_type((tern_type) t, K, 19, 1, pools);  // decode: one activation row
        test_type((tern_type) t, K, 11, 8192 / K + 3, pools);  // past the private-quantization size: shared rows + barrier
        test_bias((tern_type) t, K, 37, 1, pools);
        test_bias((tern_type) t, K, 37, 70, pools);  // two chunks of activation rows
    }
    printf("%d weight types\n", n_types);
    CHECK(n_types >= 3);
    for (tern_threadpool * p : pools) tern_threadpool_free(p);
    return tern_test_summary();
}
