// Every kernel set this build has and this CPU runs, against the scalar
// references (tern_fill_scalar's set):
// - vector kernels: "exact" ones bit for bit, sums within a relative 1e-5;
// - activation quantizers (quantize_act): identical int8 levels wherever the
//   scale is identical, scales within one float rounding;
// - vec_dot per weight type: within a relative 2e-6 of sum |block terms|
//   (the integer part of a block is exact; only float sums may be reordered);
// - gemm tiles: each output within the same bound of the reference dot, and
//   bit-identical to the same set's tile computed for that one output alone
//   (the contract that makes results independent of threads and batch split).
// Also: TERN_KERNELS picks a lower set; an unknown name falls back to the best.
#include <stddef.h>
#include <string.h>
#include <math.h>
#include <chrono>
#include <random>
#include <vector>
#include "check.h"
#include "cpu/kernels/kernel_set.h"
#include "cpu/kernels/vec.h"
#include "tensor/blocks.h"
#include "tern.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

std::mt19937 g_rng(1234);

const tern_type k_weight_types[] = {
    TERN_TYPE_F32,  TERN_TYPE_F16,  TERN_TYPE_BF16, TERN_TYPE_Q8_0, TERN_TYPE_Q4_0, TERN_TYPE_Q5_0,
    TERN_TYPE_IQ4_NL, TERN_TYPE_Q4_1, TERN_TYPE_Q5_1, TERN_TYPE_Q4_K, TERN_TYPE_Q6_K, TERN_TYPE_Q5_K,
    TERN_TYPE_Q3_K, TERN_TYPE_Q2_K,
};

// Roughly what a layer sees: gaussian values with a few outliers, and rows of
// different magnitude.
std::vector<float> random_row(int64_t n) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    const float scale = 0.01f + 4.0f * uniform(g_rng);
    std::vector<float> v((size_t) n);
    for (float & f : v) f = scale * normal(g_rng) * (uniform(g_rng) < 0.01f ? 20.0f : 1.0f);
    return v;
}

// Sets about a quarter of the int8 levels of a Q8_0 / Q8_1 row to the
// extremes: a weight row (from a file) gets -128 and 127, which the kernels
// must take exactly (no int16 overflow); an activation row (act) -127 and
// 127, the extremes quantize_act writes (test_quantize_act checks it never
// writes -128; the avx2 Q8_0 tiles' sign trick relies on it).
// Block 0 is the worst case of a block total: every activation level 127
// and (for Q4_0 Q4_1 Q5_0 Q5_1 weights) every weight level at its maximum.
void set_extreme_levels(tern_type type, uint8_t * row, int64_t n, bool act) {
    size_t block_size, qs_offset;
    if (type == TERN_TYPE_Q4_0) { memset(row + offsetof(block_q4_0, qs), 0xFF, 16); return; }
    if (type == TERN_TYPE_Q4_1) { memset(row + offsetof(block_q4_1, qs), 0xFF, 16); return; }
    if (type == TERN_TYPE_Q5_0) { memset(row + offsetof(block_q5_0, qh), 0xFF, 4 + 16); return; }
    if (type == TERN_TYPE_Q5_1) { memset(row + offsetof(block_q5_1, qh), 0xFF, 4 + 16); return; }
    if (type == TERN_TYPE_Q8_0) { block_size = sizeof(block_q8_0); qs_offset = offsetof(block_q8_0, qs); }
    else if (type == TERN_TYPE_Q8_1) { block_size = sizeof(block_q8_1); qs_offset = offsetof(block_q8_1, qs); }
    else return;
    for (int64_t b = 0; b < n / 32; b++) {
        int8_t * qs = (int8_t *) (row + b * block_size + qs_offset);
        for (int j = 0; j < 32; j++) {
            const unsigned r = g_rng() % 8;
            if (b == 0 || r == 1) qs[j] = 127;
            else if (r == 0) qs[j] = act ? -127 : -128;
        }
    }
}

// The bound on a reordered float sum: |dot| magnitude from the dequantized rows.
double magnitude(const tern_type_traits * tw, const tern_type_traits * ta, int64_t n, const uint8_t * w, const uint8_t * a) {
    std::vector<float> fw((size_t) n), fa((size_t) n);
    tw->to_float(w, fw.data(), n);
    if (ta->to_float) ta->to_float(a, fa.data(), n);
    else return INFINITY;
    double m = 0;
    for (int64_t i = 0; i < n; i++) m += fabs((double) fw[i] * fa[i]);
    return m;
}

bool close(double got, double want, double mag) { return fabs(got - want) <= 2e-6 * mag + 1e-30; }

void test_vector_kernels(const tern_kernel_set * ks) {
    for (int64_t n : {1, 7, 16, 33, 172, 1000}) {
        std::vector<float> x = random_row(n), y = random_row(n), w = random_row(n);
        std::vector<tern_fp16> xh(n), yh(n), h1(n), h2(n);
        tern_kfp32_to_fp16_ref(n, x.data(), xh.data());
        tern_kfp32_to_fp16_ref(n, y.data(), yh.data());
        auto rel = [](double a, double b, double scale) { return fabs(a - b) <= 1e-5 * scale + 1e-6; };
        double abs_dot = 0;
        for (int64_t i = 0; i < n; i++) abs_dot += fabs(x[i] * y[i]);
        CHECK_MSG(rel(ks->dot_f32(n, x.data(), y.data()), tern_kdot_f32_ref(n, x.data(), y.data()), abs_dot), "%s dot_f32 n=%lld", ks->name, (long long) n);
        CHECK_MSG(rel(ks->dot_f16(n, xh.data(), yh.data()), tern_kdot_f16_ref(n, xh.data(), yh.data()), abs_dot), "%s dot_f16 n=%lld", ks->name, (long long) n);
        CHECK(rel(ks->sumsq_f32(n, x.data()), tern_ksumsq_f32_ref(n, x.data()), 1e-3 * tern_ksumsq_f32_ref(n, x.data())));
        std::vector<float> a1(y), a2(y);
        ks->mad_f32(n, a1.data(), x.data(), 0.7f);
        tern_kmad_f32_ref(n, a2.data(), x.data(), 0.7f);
        CHECK_MSG(a1 == a2, "%s mad_f32 n=%lld", ks->name, (long long) n);
        a1 = y; a2 = y;
        ks->mad_f16(n, a1.data(), xh.data(), -1.3f);
        tern_kmad_f16_ref(n, a2.data(), xh.data(), -1.3f);
        CHECK_MSG(a1 == a2, "%s mad_f16 n=%lld", ks->name, (long long) n);
        for (const float * wp : {(const float *) NULL, (const float *) w.data()}) {
            ks->scale_mul_f32(n, a1.data(), x.data(), 0.3f, wp);
            tern_kscale_mul_f32_ref(n, a2.data(), x.data(), 0.3f, wp);
            CHECK_MSG(a1 == a2, "%s scale_mul n=%lld", ks->name, (long long) n);
        }
        ks->add_f32(n, a1.data(), x.data(), y.data());
        tern_kadd_f32_ref(n, a2.data(), x.data(), y.data());
        CHECK(a1 == a2);
        ks->mul_f32(n, a1.data(), x.data(), y.data());
        tern_kmul_f32_ref(n, a2.data(), x.data(), y.data());
        CHECK(a1 == a2);
        std::uniform_real_distribution<float> wide(-70000.0f, 70000.0f);
        std::vector<float> big((size_t) n);
        for (float & f : big) f = wide(g_rng);
        big[0] = 1e-7f;  // F16 subnormal
        ks->fp32_to_fp16(n, big.data(), h1.data());
        tern_kfp32_to_fp16_ref(n, big.data(), h2.data());
        CHECK_MSG(h1 == h2, "%s fp32_to_fp16 n=%lld", ks->name, (long long) n);
        ks->fp16_to_fp32(n, h1.data(), a1.data());
        tern_kfp16_to_fp32_ref(n, h1.data(), a2.data());
        CHECK(memcmp(a1.data(), a2.data(), n * 4) == 0);
        // scale_mask_max: masked cells (also over a NaN score), mask NULL, a NaN that must come out.
        {
            std::vector<float> m = random_row(n), s1(x), s2(x);
            for (int64_t i = 0; i < n; i += 3) m[i] = -INFINITY;
            if (n > 4) s1[3] = s2[3] = NAN;  // masked: no NaN out
            for (const float * mp : {(const float *) m.data(), (const float *) NULL}) {
                std::vector<float> t1(s1), t2(s2);
                const float m1 = ks->scale_mask_max_f32(n, t1.data(), 0.125f, mp), m2 = tern_kscale_mask_max_f32_ref(n, t2.data(), 0.125f, mp);
                CHECK_MSG(memcmp(t1.data(), t2.data(), n * 4) == 0, "%s scale_mask_max n=%lld", ks->name, (long long) n);
                CHECK_MSG((m1 == m2) || (m1 != m1 && m2 != m2), "%s scale_mask_max n=%lld: max %g vs %g", ks->name, (long long) n, m1, m2);
                CHECK_MSG((mp != NULL || n <= 4) == (m2 == m2), "scale_mask_max ref n=%lld: NaN %s", (long long) n, mp ? "kept" : "lost");
            }
            std::vector<float> t1(x);
            t1[n - 1] = NAN;  // last lane or the tail: still NaN
            CHECK_MSG(ks->scale_mask_max_f32(n, t1.data(), 1.0f, NULL) != ks->scale_mask_max_f32(n, t1.data(), 1.0f, NULL), "%s scale_mask_max n=%lld: NaN lost", ks->name, (long long) n);
        }
        // exp_sum (softmax) with masked cells and a wide range; swiglu with large gates.
        std::vector<float> e1((size_t) n), e2;
        std::uniform_real_distribution<float> range(-100.0f, 0.0f);
        for (float & f : e1) f = range(g_rng);
        e1[0] = -INFINITY;
        if (n > 1) e1[n - 1] = 0.0f;
        e2 = e1;
        const float s1 = ks->exp_sum_f32(n, e1.data(), 0.0f), s2 = tern_kexp_sum_f32_ref(n, e2.data(), 0.0f);
        CHECK_MSG(fabs(s1 - s2) <= 1e-5 * s2 + 1e-30, "%s exp_sum n=%lld: %g vs %g", ks->name, (long long) n, s1, s2);
        for (int64_t i = 0; i < n; i++) {
            CHECK_MSG(fabs(e1[i] - e2[i]) <= 1e-6 * e2[i] + 1e-37, "%s exp n=%lld [%lld]: %g vs %g", ks->name, (long long) n, (long long) i, e1[i], e2[i]);
        }
        std::vector<float> g = random_row(n);
        g[0] = 95.0f;
        if (n > 1) g[1] = -95.0f;
        ks->swiglu_f32(n, a1.data(), g.data(), y.data());
        tern_kswiglu_f32_ref(n, a2.data(), g.data(), y.data());
        for (int64_t i = 0; i < n; i++) {
            CHECK_MSG(fabs(a1[i] - a2[i]) <= 1e-6 * fabs(a2[i]) + 1e-30, "%s swiglu n=%lld [%lld]: %g vs %g", ks->name, (long long) n, (long long) i, a1[i], a2[i]);
        }
#if TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3
        // geglu (exact): random gates around the table's edges, +-10 themselves, inf, NaN.
        for (int64_t i = 0; i < n; i++) g[i] = 12.0f * (2.0f * (float) (i % 97) / 96.0f - 1.0f) + 0.001f * (float) (i % 13);
        g[0] = -10.0f;
        if (n > 3) { g[1] = 10.0f; g[2] = nextafterf(10.0f, 0.0f); g[3] = nextafterf(-10.0f, 0.0f); }
        if (n > 6) { g[4] = INFINITY; g[5] = -INFINITY; g[6] = NAN; }
        ks->geglu_f32(n, a1.data(), g.data(), y.data());
        tern_kgeglu_f32_ref(n, a2.data(), g.data(), y.data());
        for (int64_t i = 0; i < n; i++) {
            CHECK_MSG(memcmp(&a1[i], &a2[i], 4) == 0 || (a1[i] != a1[i] && a2[i] != a2[i]), "%s geglu n=%lld [%lld] g=%g: %g vs %g",
                      ks->name, (long long) n, (long long) i, g[i], a1[i], a2[i]);
        }
#endif
    }
}

// Attention rows (dot_f16_rows, mad_f16_rows) for head sizes that stay in
// registers and sizes that do not; strides wider than the row; groups of 1, 3,
// 8 and 24 query heads (GQA; 24 heads of 64 or more values are converted in
// more than one pass). A head's dot with a row must not depend on the group
// it came in or where the row sits (attention leaves masked cells out): each is
// compared bit for bit with that head and row computed alone.
void test_attention_rows(const tern_kernel_set * ks) {
    for (int64_t n : {8, 16, 24, 32, 64, 80, 128, 256}) {
        for (int64_t n_x : {1, 3, 8, 24}) {
            const int64_t n_rows = 37, stride = n + 16, out_stride = n_rows + 3;
            std::vector<float> x = random_row(n_x * n), rows_f = random_row(n_rows * stride), p = random_row(n_x * out_stride),
                               y0 = random_row(n_x * n);
            std::vector<tern_fp16> xh((size_t) (n_x * n)), rows((size_t) (n_rows * stride));
            tern_kfp32_to_fp16_ref(n_x * n, x.data(), xh.data());
            tern_kfp32_to_fp16_ref(n_rows * stride, rows_f.data(), rows.data());
            for (int64_t j = 0; j < n_x * out_stride; j += 5) p[j] = 0.0f;
            std::vector<float> got((size_t) (n_x * out_stride)), want((size_t) (n_x * out_stride)), alone((size_t) n_rows);
            ks->dot_f16_rows(n, n_rows, n_x, xh.data(), rows.data(), stride, got.data(), out_stride);
            tern_kdot_f16_rows_ref(n, n_rows, n_x, xh.data(), rows.data(), stride, want.data(), out_stride);
            for (int64_t g = 0; g < n_x; g++) {
                for (int64_t j = 0; j < n_rows; j++) ks->dot_f16_rows(n, 1, 1, xh.data() + g * n, rows.data() + j * stride, stride, &alone[j], 1);
                for (int64_t j = 0; j < n_rows; j++) {
                    double mag = 0;
                    for (int64_t i = 0; i < n; i++) mag += fabs(tern_fp16_to_fp32(xh[g * n + i]) * tern_fp16_to_fp32(rows[j * stride + i]));
                    const float v = got[g * out_stride + j];
                    CHECK_MSG(fabs(v - want[g * out_stride + j]) <= 1e-5 * mag + 1e-6, "%s dot_f16_rows n=%lld n_x=%lld head %lld row %lld: %g vs %g",
                              ks->name, (long long) n, (long long) n_x, (long long) g, (long long) j, v, want[g * out_stride + j]);
                    CHECK_MSG(memcmp(&v, &alone[j], sizeof v) == 0, "%s dot_f16_rows n=%lld n_x=%lld head %lld row %lld: %g grouped, %g alone",
                              ks->name, (long long) n, (long long) n_x, (long long) g, (long long) j, v, alone[j]);
                }
            }
            std::vector<float> y1(y0), y2(y0);
            ks->mad_f16_rows(n, n_rows, n_x, y1.data(), rows.data(), stride, p.data(), out_stride);
            tern_kmad_f16_rows_ref(n, n_rows, n_x, y2.data(), rows.data(), stride, p.data(), out_stride);
            CHECK_MSG(y1 == y2, "%s mad_f16_rows n=%lld n_x=%lld", ks->name, (long long) n, (long long) n_x);
        }
    }
}

// Activation quantizers: same bytes as the reference, or (a SIMD reciprocal
// may round the scale differently) the same scale within 1 ulp and levels
// within 1.
void test_quantize_act(const tern_kernel_set * ks) {
    for (tern_type t : {TERN_TYPE_Q8_0, TERN_TYPE_Q8_1, TERN_TYPE_Q8_K, TERN_TYPE_F16, TERN_TYPE_BF16}) {
        const tern_type_traits * tr = tern_type_traits_get(t);
        if (!tr || !tr->from_float_act || !ks->quantize_act[t]) continue;
        int differ = 0;
        for (int64_t blocks : {1, 3, 8}) {
            const int64_t n = blocks * 256;
            const size_t sz = tern_row_size(t, n);
            std::vector<float> x = random_row(n), back1((size_t) n), back2((size_t) n);
            x[5] = 0.0f;
            std::vector<uint8_t> r1(sz), r2(sz);
            ks->quantize_act[t](x.data(), r1.data(), n);
            tr->from_float_act(x.data(), r2.data(), n);
            if (r1 == r2) continue;
            differ++;
            if (!tr->to_float) continue;
            tr->to_float(r1.data(), back1.data(), n);
            tr->to_float(r2.data(), back2.data(), n);
            double amax = 0;
            for (float v : x) amax = fmax(amax, fabs(v));
            for (int64_t i = 0; i < n; i++) {
                CHECK_MSG(fabs(back1[i] - back2[i]) <= amax / 127.0 * 1.01 + 1e-30, "%s quantize_act %s value %lld: %g vs %g",
                          ks->name, tr->name, (long long) i, back1[i], back2[i]);
            }
        }
        // No level -128, whatever the row: ties at +-amax, the largest magnitude
        // negative, values that round up to it.
        size_t qs_at = 0, block_bytes = 0;
        if (t == TERN_TYPE_Q8_0) qs_at = offsetof(block_q8_0, qs), block_bytes = sizeof(block_q8_0);
        if (t == TERN_TYPE_Q8_1) qs_at = offsetof(block_q8_1, qs), block_bytes = sizeof(block_q8_1);
        if (t == TERN_TYPE_Q8_K) qs_at = offsetof(block_q8_K, qs), block_bytes = sizeof(block_q8_K);
        if (block_bytes) {
            const int64_t n = 512;
            std::vector<uint8_t> q(tern_row_size(t, n));
            for (int shape = 0; shape < 4; shape++) {
                std::vector<float> x = random_row(n);
                for (int64_t i = 0; i < n; i++) {
                    if (shape == 1) x[i] = (i & 1) ? -3.0f : 3.0f;
                    if (shape == 2) x[i] = -1.0f - (float) (i % 32) / 31.0f * 1e-6f;
                    if (shape == 3) x[i] = (float) ((i * 37) % 255 - 127) / 127.0f * -0.7f;
                }
                ks->quantize_act[t](x.data(), q.data(), n);
                int low = 0;
                for (size_t b = 0; b < q.size() / block_bytes; b++) {
                    const int8_t * qs = (const int8_t *) (q.data() + b * block_bytes + qs_at);
                    for (int64_t j = 0; j < tr->blck_size; j++) low += qs[j] == -128;
                }
                CHECK_MSG(low == 0, "%s quantize_act %s shape %d: %d levels -128", ks->name, tr->name, shape, low);
            }
        }
        printf("%-7s quantize_act %-7s %s\n", ks->name, tr->name, differ ? "within one level" : "bit-identical");
    }
}

// ns per output of f over rows x one activation row (not asserted).
double ns_per_dot(tern_vec_dot_fn f, int64_t n, const std::vector<uint8_t> & w, size_t w_size, const uint8_t * a) {
    const int n_w = (int) (w.size() / w_size);
    float sink = 0.0f;
    const auto t0 = std::chrono::steady_clock::now();
    int calls = 0;
    for (int rep = 0; rep < 10; rep++) {
        for (int i = 0; i < n_w; i++, calls++) {
            float s;
            f(n, &s, w.data() + i * w_size, a);
            sink += s;
        }
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (sink == 1.2345f) printf(" ");  // keeps the calls
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / calls;
}

void test_matmul_kernels(const tern_kernel_set * ks, const tern_kernel_set * ref_set) {
    const int n_w = 13, n_a = 9;  // odd tile remainders on purpose
    for (tern_type t : k_weight_types) {
        const tern_type_traits * tr = tern_type_traits_get(t);
        if (!tr || !tr->vec_dot) continue;  // not compiled in
        const tern_type_traits * act = tern_type_traits_get(tr->vec_dot_type);
        const tern_vec_dot_fn ref = ref_set->vec_dot[t], dot = ks->vec_dot[t];
        const tern_gemm_fn gemm = ks->gemm[t];
        CHECK_MSG(act && ref && dot, "%s %s: missing dot", ks->name, tr->name);
        if (!act || !ref || !dot) continue;
        int bad_dot = 0, bad_gemm = 0, bad_tile = 0, cases = 0;
        for (int64_t blocks : {1, 2, 7, 8, 33}) {
            const int64_t n = blocks * (tr->is_quantized ? tr->blck_size : 32);
            const size_t w_size = tern_row_size(t, n), a_size = tern_row_size(tr->vec_dot_type, n);
            std::vector<uint8_t> w(w_size * n_w), a(a_size * n_a);
            for (int i = 0; i < n_w; i++) tr->from_float(random_row(n).data(), w.data() + i * w_size, n);
            for (int j = 0; j < n_a; j++) {
                if (act->from_float_act) act->from_float_act(random_row(n).data(), a.data() + j * a_size, n);
                else memcpy(a.data() + j * a_size, random_row(n).data(), a_size);  // F32 activations
            }
            set_extreme_levels(tr->vec_dot_type, a.data() + (n_a - 1) * a_size, n, true);
            for (int i = 0; i < n_w; i++) set_extreme_levels(t, w.data() + i * w_size, n, false);
            std::vector<float> tile((size_t) n_w * n_a, NAN);
            if (gemm) gemm(n, n_w, n_a, w.data(), w_size, a.data(), a_size, tile.data(), n_w);
            if (gemm) {  // a short input (3 activation rows) takes other paths: the same bits
                std::vector<float> few((size_t) n_w * 3, NAN);
                gemm(n, n_w, 3, w.data(), w_size, a.data(), a_size, few.data(), n_w);
                for (size_t i = 0; i < few.size(); i++) {
                    if (memcmp(&few[i], &tile[i], sizeof(float)) != 0 && bad_tile++ < 3) {
                        fprintf(stderr, "%s %s n=%lld: output %zu of a 3-row input %.9g, of 9 rows %.9g\n", ks->name, tr->name, (long long) n, i, few[i], tile[i]);
                    }
                }
            }
            for (int i = 0; i < n_w; i++) {
                for (int j = 0; j < n_a; j++) {
                    const uint8_t * wr = w.data() + i * w_size, * ar = a.data() + j * a_size;
                    const double mag = act->to_float ? magnitude(tr, act, n, wr, ar) : INFINITY;
                    float s_ref = -1.0f, s_dot = -2.0f;
                    ref(n, &s_ref, wr, ar);
                    dot(n, &s_dot, wr, ar);
                    cases++;
                    if (!close(s_dot, s_ref, mag) && bad_dot++ < 3) {
                        fprintf(stderr, "%s %s n=%lld w%d a%d: dot %.9g, reference %.9g\n", ks->name, tr->name, (long long) n, i, j, s_dot, s_ref);
                    }
                    if (!gemm) continue;
                    const float got = tile[(size_t) j * n_w + i];
                    if (!close(got, s_ref, mag) && bad_gemm++ < 3) {
                        fprintf(stderr, "%s %s n=%lld w%d a%d: gemm %.9g, reference %.9g\n", ks->name, tr->name, (long long) n, i, j, got, s_ref);
                    }
                    float alone = NAN;
                    gemm(n, 1, 1, wr, w_size, ar, a_size, &alone, 1);
                    if (memcmp(&alone, &got, sizeof(float)) != 0 && bad_tile++ < 3) {
                        fprintf(stderr, "%s %s n=%lld w%d a%d: in a tile %.9g, alone %.9g\n", ks->name, tr->name, (long long) n, i, j, got, alone);
                    }
                }
            }
        }
        CHECK_MSG(bad_dot == 0, "%s %s: %d of %d dot products off the reference", ks->name, tr->name, bad_dot, cases);
        CHECK_MSG(bad_gemm == 0, "%s %s: %d of %d tile outputs off the reference", ks->name, tr->name, bad_gemm, cases);
        CHECK_MSG(bad_tile == 0, "%s %s: %d of %d tile outputs depend on the tile", ks->name, tr->name, bad_tile, cases);
        // Speed of one dot, a 4096-wide row (not asserted).
        const int64_t n = 4096;
        const size_t w_size = tern_row_size(t, n), a_size = tern_row_size(tr->vec_dot_type, n);
        std::vector<uint8_t> w(w_size * 32), a(a_size);
        for (int i = 0; i < 32; i++) tr->from_float(random_row(n).data(), w.data() + i * w_size, n);
        if (act->from_float_act) act->from_float_act(random_row(n).data(), a.data(), n);
        else memcpy(a.data(), random_row(n).data(), a_size);
        const double ns_ref = ns_per_dot(ref, n, w, w_size, a.data());
        const double ns_dot = dot == ref ? ns_ref : ns_per_dot(dot, n, w, w_size, a.data());
        printf("%-7s %-7s %4d cases%s; n=4096 dot: %7.0f ns reference, %7.0f ns (x%.1f)\n", ks->name, tr->name, cases,
               gemm ? " +gemm" : "", ns_ref, ns_dot, ns_ref / ns_dot);
    }
}

// Repacked layouts: groups rewritten by repack (same bytes), then the tile of
// the repacked rows against the reference dot of the file rows, bit for bit
// (the tiles keep the reference's float steps), and each output the same
// alone as in a tile and as the set's own file-layout dot
// (test_repack's promise: the same logits with and without repacking). The
// matrix has an odd number of rows:
// the rows past the last whole group stay in the file layout and take the
// set's file-layout tile or dot, as mul_mat runs them.
void test_repacked(const tern_kernel_set * ks, const tern_kernel_set * ref_set) {
    for (tern_type t : k_weight_types) {
        const tern_type_traits * tr = tern_type_traits_get(t);
        if (!tr || !ks->repack_rows[t]) continue;
        const int64_t R = ks->repack_rows[t];
        CHECK_MSG(ks->repack[t] && ks->gemm_repacked[t], "%s %s: repack without its tile", ks->name, tr->name);
        if (!ks->repack[t] || !ks->gemm_repacked[t]) continue;
        const tern_type_traits * act = tern_type_traits_get(tr->vec_dot_type);
        int bad = 0, bad_ref_bits = 0, bad_tile = 0, bad_bits = 0, cases = 0;
        // 133 blocks: more than one slice of the ARM tiles' staged activations
        for (int64_t blocks : {1, 3, 8, 133}) {
            // 70 columns: more than one 64-column panel of the staged prompt tiles;
            // 7 and 16: the ARM tiles' last column blocks of 8 and 4
            const int64_t n = blocks * tr->blck_size, n_w = 2 * R + 3, n_grouped = 2 * R;
            const int64_t n_a = blocks == 3 ? 70 : blocks == 8 ? 16 : 7;
            const size_t w_size = tern_row_size(t, n), a_size = tern_row_size(tr->vec_dot_type, n);
            std::vector<uint8_t> w(w_size * n_w), packed(w.size()), a(a_size * n_a);
            for (int64_t i = 0; i < n_w; i++) tr->from_float(random_row(n).data(), w.data() + i * w_size, n);
            for (int64_t i = 0; i < n_w; i++) set_extreme_levels(t, w.data() + i * w_size, n, false);
            for (int64_t j = 0; j < n_a; j++) act->from_float_act(random_row(n).data(), a.data() + j * a_size, n);
            set_extreme_levels(tr->vec_dot_type, a.data() + (n_a - 1) * a_size, n, true);
            packed = w;
            for (int64_t g = 0; g < n_grouped / R; g++) ks->repack[t](n, w.data() + g * R * w_size, packed.data() + g * R * w_size);
            if (ks->unpack_row[t]) {  // every row back in the file layout, byte for byte
                std::vector<uint8_t> row(w_size);
                int bad_rows = 0;
                for (int64_t i = 0; i < n_grouped; i++) {
                    ks->unpack_row[t](n, packed.data() + i / R * R * w_size, (int32_t) (i % R), row.data());
                    bad_rows += memcmp(row.data(), w.data() + i * w_size, w_size) != 0;
                }
                CHECK_MSG(bad_rows == 0, "%s %s: %d rows not given back by unpack_row", ks->name, tr->name, bad_rows);
            }
            // out (n_w x m columns at ldo n_w) as mul_mat computes it.
            auto matmul = [&](int64_t m, const uint8_t * acts, float * out) {
                ks->gemm_repacked[t](n, n_grouped, m, packed.data(), w_size, acts, a_size, out, n_w);
                const uint8_t * tail = packed.data() + n_grouped * w_size;
                if (ks->gemm[t]) {
                    ks->gemm[t](n, n_w - n_grouped, m, tail, w_size, acts, a_size, out + n_grouped, n_w);
                    return;
                }
                for (int64_t j = 0; j < m; j++) {
                    for (int64_t i = n_grouped; i < n_w; i++) ks->vec_dot[t](n, &out[j * n_w + i], packed.data() + i * w_size, acts + j * a_size);
                }
            };
            std::vector<float> tile((size_t) (n_w * n_a), NAN);
            matmul(n_a, a.data(), tile.data());
            for (int64_t j = 0; j < n_a; j++) {
                std::vector<float> col((size_t) n_w, NAN);
                matmul(1, a.data() + j * a_size, col.data());
                for (int64_t i = 0; i < n_w; i++) {
                    float want;
                    ref_set->vec_dot[t](n, &want, w.data() + i * w_size, a.data() + j * a_size);
                    const double mag = magnitude(tr, act, n, w.data() + i * w_size, a.data() + j * a_size);
                    const float got = tile[(size_t) (j * n_w + i)];
                    cases++;
                    if (!close(got, want, mag) && bad++ < 3) {
                        fprintf(stderr, "%s %s repacked n=%lld w%lld a%lld: %.9g, reference %.9g\n", ks->name, tr->name,
                                (long long) n, (long long) i, (long long) j, got, want);
                    }
                    bad_ref_bits += memcmp(&got, &want, sizeof(float)) != 0;
                    if (memcmp(&got, &col[(size_t) i], sizeof(float)) != 0) bad_tile++;
                    float file_layout;
                    ks->vec_dot[t](n, &file_layout, w.data() + i * w_size, a.data() + j * a_size);
                    if (memcmp(&got, &file_layout, sizeof(float)) != 0) bad_bits++;
                }
            }
        }
        CHECK_MSG(bad == 0, "%s %s: %d of %d repacked outputs off the reference", ks->name, tr->name, bad, cases);
        CHECK_MSG(bad_ref_bits == 0, "%s %s: %d of %d repacked outputs not the reference's bits", ks->name, tr->name, bad_ref_bits, cases);
        CHECK_MSG(bad_bits == 0, "%s %s: %d of %d repacked outputs differ from the set's vec_dot", ks->name, tr->name, bad_bits, cases);
        CHECK_MSG(bad_tile == 0, "%s %s: %d of %d repacked outputs depend on the tile", ks->name, tr->name, bad_tile, cases);
        printf("%-7s %-7s repacked in groups of %lld rows (+3 in the file layout): %d cases\n", ks->name, tr->name, (long long) R, cases);
    }
}

}  // namespace

#if TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3
// GEGLU over every F16 input: each set gives the reference's bits, and the
// reference (a table, gelu_table.h) gives llama.cpp's formula evaluated per value.
void test_geglu_every_f16(const tern_kernel_set * ks) {
    std::vector<float> g, u, y1, y2;
    for (uint32_t b = 0; b < 0x10000; b++) {
        const float x = tern_fp16_to_fp32((tern_fp16) b);
        if (x != x) continue;
        g.push_back(x);
        g.push_back(nextafterf(x, 0.0f));  // an F32 value that rounds to this F16 or its neighbour
    }
    u.assign(g.size(), 1.0f);
    u[5] = -3.0f;
    y1.resize(g.size());
    y2.resize(g.size());
    const int64_t n = (int64_t) g.size();
    ks->geglu_f32(n, y1.data(), g.data(), u.data());
    tern_kgeglu_f32_ref(n, y2.data(), g.data(), u.data());
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += memcmp(&y1[i], &y2[i], 4) != 0;
    CHECK_MSG(bad == 0, "%s geglu over every F16 input: %d of %lld differ from the reference", ks->name, bad, (long long) n);
    if (strcmp(ks->name, "scalar") != 0) return;
    const float sqrt_2_over_pi = 0.79788456080286535587989211986876f, coef_a = 0.044715f;
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const float x = g[i];
        float want = x <= -10.0f ? 0.0f : x;
        if (x > -10.0f && x < 10.0f) {
            const float h = tern_fp16_to_fp32(tern_fp32_to_fp16(x));
            // The library is built with -ffp-contract=off, the tests are not: the one
            // product followed by an add goes through memory so no FMA fuses it.
            volatile float q = coef_a * h * h;
            want = tern_fp16_to_fp32(tern_fp32_to_fp16(0.5f * h * (1.0f + tanhf(sqrt_2_over_pi * h * (1.0f + q)))));
        }
        want *= u[i];
        bad += memcmp(&want, &y2[i], 4) != 0;
    }
    CHECK_MSG(bad == 0, "geglu reference: %d of %lld values differ from the formula per value", bad, (long long) n);
}
#endif

int main() {
    const tern_kernel_set * ref_set = tern_kernels_by_name("scalar");
    CHECK(ref_set != nullptr);
    if (!ref_set) return tern_test_summary();
    const char * names[8];
    const int n_sets = tern_kernels_compiled(names, 8);
    printf("compiled: %s; in use: %s\n", tern_kernels_compiled_names(), tern_kernels_name());
    int tested = 0;
    for (int i = 0; i < n_sets && i < 8; i++) {
        const tern_kernel_set * ks = tern_kernels_by_name(names[i]);
        if (!ks) {
            printf("%s: compiled, but this CPU does not run it: not tested here\n", names[i]);
            continue;
        }
        CHECK(strcmp(ks->name, names[i]) == 0);
        test_vector_kernels(ks);
#if TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3
        test_geglu_every_f16(ks);
#endif
        test_attention_rows(ks);
        test_quantize_act(ks);
        test_matmul_kernels(ks, ref_set);
        test_repacked(ks, ref_set);
        tested++;
    }
    CHECK(tested >= 1);
    // The set in use is the best one runnable unless TERN_KERNELS names another.
    const char * forced = getenv("TERN_KERNELS");
    if (forced && tern_kernels_by_name(forced)) CHECK(strcmp(tern_kernels_name(), forced) == 0);
    else {
        const char * best = "scalar";
        for (int i = 0; i < n_sets && i < 8; i++) if (tern_kernels_by_name(names[i])) best = names[i];
        CHECK_MSG(strcmp(tern_kernels_name(), best) == 0, "in use %s, best runnable %s", tern_kernels_name(), best);
    }
    return tern_test_summary();
}
