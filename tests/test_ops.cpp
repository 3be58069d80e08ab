// CPU ops vs naive double-precision references on random data with odd sizes;
// results bit-identical for 1, 2, 3 and 8 threads (the kernel sets against
// their references: test_kernel_sets).
#include <functional>
#include <math.h>
#include "cpu_test_util.h"
#include "cpu/kernels/vec.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

static std::mt19937 g_rng(1234);
static tern_threadpool * g_pools[4];
static const int32_t g_threads[4] = { 1, 2, 3, 8 };

typedef std::function<tern_tensor *(tern_graph_builder *)> build_fn;
typedef std::function<void()> fill_fn;

// Build, plan and compute one graph per thread count; returns the output bytes
// (of the 1-thread run) after checking that all thread counts agree bit for bit.
static std::vector<uint8_t> run_op(const char * what, const build_fn & build, const fill_fn & fill) {
    std::vector<uint8_t> first;
    for (int k = 0; k < 4; k++) {
        test_graph tg;
        tern_tensor * out = build(&tg.gb);
        CHECK_MSG(out != NULL, "%s: build failed: %s", what, tern_last_error());
        if (!out) return first;
        out->flags |= TERN_TENSOR_OUTPUT;
        CHECK(tg.plan_for({ out }, g_threads[k]) == TERN_OK);
        fill();
        CHECK_MSG(tg.compute(g_pools[k]) == TERN_OK, "%s: %s", what, tern_last_error());
        std::vector<uint8_t> bytes((uint8_t *) out->data, (uint8_t *) out->data + tern_tensor_nbytes(out));
        if (k == 0) first = bytes;
        else CHECK_MSG(bytes == first, "%s: %d threads differ from 1 thread", what, g_threads[k]);
    }
    return first;
}

static const float * as_f32(const std::vector<uint8_t> & b) { return (const float *) b.data(); }

static void check_close(const char * what, const float * got, const std::vector<double> & want, double tol) {
    int bad = 0;
    for (size_t i = 0; i < want.size(); i++) {
        double err = fabs(got[i] - want[i]);
        if (!(err <= tol * (1.0 + fabs(want[i])))) {
            if (bad++ < 3) fprintf(stderr, "%s[%zu]: got %.7g want %.7g\n", what, i, got[i], want[i]);
        }
    }
    CHECK_MSG(bad == 0, "%s: %d of %zu values off", what, bad, want.size());
}

// Copy v into tensor t's data (t contiguous).
template <typename T> static void put(tern_tensor * t, const std::vector<T> & v) { memcpy(t->data, v.data(), v.size() * sizeof(T)); }

static void test_get_rows() {
    for (tern_type type : { TERN_TYPE_F32, TERN_TYPE_F16, TERN_TYPE_Q8_0 }) {
        const int64_t ne0 = type == TERN_TYPE_Q8_0 ? 96 : 172, n_rows = 7;
        const tern_type_traits * tr = tern_type_traits_get(type);
        std::vector<float> vals = random_floats(g_rng, ne0 * n_rows);
        std::vector<uint8_t> table(tern_row_size(type, ne0) * n_rows);
        for (int64_t r = 0; r < n_rows; r++) tr->from_float(&vals[r * ne0], &table[r * tern_row_size(type, ne0)], ne0);
        std::vector<int32_t> ids = { 3, 0, 6, 3, 99 };  // 99: out of range -> zeros
        tern_tensor * idt = NULL;
        auto out = run_op("get_rows", [&](tern_graph_builder * gb) {
            int64_t ne[2] = { ne0, n_rows };
            idt = test_input(gb, TERN_TYPE_I32, 1, { (int64_t) ids.size() });
            return tg_get_rows(gb, tg_external(gb, type, 2, ne, table.data()), idt);
        }, [&] { put(idt, ids); });
        std::vector<double> want;
        for (int32_t id : ids) {
            for (int64_t i = 0; i < ne0; i++) {
                if (id >= n_rows) { want.push_back(0.0); continue; }
                double v = vals[id * ne0 + i];
                if (type == TERN_TYPE_F16) v = tern_fp16_to_fp32(tern_fp32_to_fp16((float) v));
                want.push_back(v);
            }
        }
        check_close("get_rows", as_f32(out), want, type == TERN_TYPE_Q8_0 ? 1e-2 : 0.0);
    }
}

static void test_rms_norm() {
    const int64_t ne0 = 172, n = 7;
    const float eps = 1e-6f;
    std::vector<float> x = random_floats(g_rng, ne0 * n, -3, 3), w = random_floats(g_rng, ne0);
    tern_tensor * xt = NULL;
    auto out = run_op("rms_norm", [&](tern_graph_builder * gb) {
        xt = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
        return tg_rms_norm(gb, xt, tg_external(gb, TERN_TYPE_F32, 1, &ne0, w.data()), eps);
    }, [&] { put(xt, x); });
    std::vector<double> want;
    for (int64_t r = 0; r < n; r++) {
        double ss = 0;
        for (int64_t i = 0; i < ne0; i++) ss += (double) x[r * ne0 + i] * x[r * ne0 + i];
        double scale = 1.0 / sqrt(ss / ne0 + eps);
        for (int64_t i = 0; i < ne0; i++) want.push_back(x[r * ne0 + i] * scale * w[i]);
    }
    check_close("rms_norm", as_f32(out), want, 1e-5);
}

static void test_elementwise() {
    const int64_t ne0 = 172, n = 7;
    std::vector<float> a = random_floats(g_rng, ne0 * n, -4, 4), b = random_floats(g_rng, ne0 * n, -4, 4);
    tern_tensor *at = NULL, *bt = NULL;
    // b shapes: full, bias [ne0], a repeating piece [43]
    for (int64_t bne0 : { ne0, (int64_t) 43 }) {
        for (int64_t bn : { n, (int64_t) 1 }) {
            for (int op = 0; op < 2; op++) {
                auto out = run_op(op ? "mul" : "add", [&](tern_graph_builder * gb) {
                    at = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
                    bt = test_input(gb, TERN_TYPE_F32, 2, { bne0, bn });
                    return op ? tg_mul(gb, at, bt) : tg_add(gb, at, bt);
                }, [&] { put(at, a); memcpy(bt->data, b.data(), bne0 * bn * sizeof(float)); });
                std::vector<double> want;
                for (int64_t r = 0; r < n; r++) {
                    for (int64_t i = 0; i < ne0; i++) {
                        double x = a[r * ne0 + i], y = b[(r % bn) * bne0 + i % bne0];
                        want.push_back(op ? x * y : x + y);
                    }
                }
                check_close(op ? "mul" : "add", as_f32(out), want, 1e-7);
            }
        }
    }
    auto sc = run_op("scale", [&](tern_graph_builder * gb) {
        at = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
        return tg_scale(gb, at, 0.37f);
    }, [&] { put(at, a); });
    std::vector<double> want_scale, want_swiglu;
    for (int64_t i = 0; i < ne0 * n; i++) {
        want_scale.push_back(a[i] * 0.37);
        want_swiglu.push_back(a[i] / (1.0 + exp(-(double) a[i])) * b[i]);
    }
    check_close("scale", as_f32(sc), want_scale, 1e-7);
    auto sw = run_op("swiglu", [&](tern_graph_builder * gb) {
        at = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
        bt = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
        return tg_swiglu(gb, at, bt);
    }, [&] { put(at, a); put(bt, b); });
    check_close("swiglu", as_f32(sw), want_swiglu, 1e-6);
    // GEGLU: GELU's tanh form through llama.cpp's F16 table (input and result
    // rounded to F16; one F16 step, 2^-11 relative, where float tanhf and the
    // double here round apart); SOFTCAP: tanh(x / c) * c.
    std::vector<double> want_geglu, want_softcap;
    for (int64_t i = 0; i < ne0 * n; i++) {
        const double h = tern_fp16_to_fp32(tern_fp32_to_fp16(a[i]));
        const double g = tern_fp16_to_fp32(tern_fp32_to_fp16((float) (0.5 * h * (1.0 + tanh(0.7978845608028654 * h * (1.0 + 0.044715 * h * h))))));
        want_geglu.push_back(g * b[i]);
        want_softcap.push_back(tanh(a[i] / 3.0) * 3.0);
    }
#if TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3  // the GELU table exists with a GELU architecture only
    auto ge = run_op("geglu", [&](tern_graph_builder * gb) {
        at = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
        bt = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
        return tg_geglu(gb, at, bt);
    }, [&] { put(at, a); put(bt, b); });
    check_close("geglu", as_f32(ge), want_geglu, 1e-3);
#endif
    auto cap = run_op("softcap", [&](tern_graph_builder * gb) {
        at = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
        return tg_softcap(gb, at, 3.0f);
    }, [&] { put(at, a); });
    check_close("softcap", as_f32(cap), want_softcap, 1e-6);
}

static void test_argmax() {
    const int64_t ne0 = 172, n = 7;
    std::vector<float> x = random_floats(g_rng, ne0 * n);
    x[2 * ne0 + 10] = 5.0f;  // a tie: the first index wins
    x[2 * ne0 + 90] = 5.0f;
    tern_tensor * xt = NULL;
    auto out = run_op("argmax", [&](tern_graph_builder * gb) {
        xt = test_input(gb, TERN_TYPE_F32, 2, { ne0, n });
        return tg_argmax(gb, xt);
    }, [&] { put(xt, x); });
    for (int64_t r = 0; r < n; r++) {
        int64_t best = 0;
        for (int64_t i = 1; i < ne0; i++) if (x[r * ne0 + i] > x[r * ne0 + best]) best = i;
        CHECK(((const int32_t *) out.data())[r] == best);
    }
    CHECK(((const int32_t *) out.data())[2] == 10);
}

// rope on a strided slice of a fused [q | k | v] tensor, vs cos/sin of the
// direct formula (theta = p * base^(-2i/n_rot) * freq_scale, times attn_factor).
static void test_rope(int mode, float ext_factor) {
    const int64_t hd = 12, n_rot = 8, n_head = 3, n_tok = 5, fused = 3 * hd * n_head;
    tern_rope_params p = { (int32_t) n_rot, mode, 4096, 10000.0f, 0.5f, ext_factor, 1.3f, 32.0f, 1.0f };
    std::vector<float> x = random_floats(g_rng, fused * n_tok);
    std::vector<int32_t> pos = { 0, 1, 7, 100, 2047 };
    tern_tensor *xt = NULL, *pt = NULL;
    auto out = run_op("rope", [&](tern_graph_builder * gb) {
        xt = test_input(gb, TERN_TYPE_F32, 2, { fused, n_tok });
        pt = test_input(gb, TERN_TYPE_I32, 1, { n_tok });
        int64_t ne[3] = { hd, n_head, n_tok };
        size_t nb[3] = { 4, 4 * hd, 4 * fused };
        tern_tensor * k = tg_view(gb, xt, 3, ne, nb, 4 * hd * n_head);  // the k slice
        return tg_rope(gb, k, tg_rope_cache(gb, pt, &p));
    }, [&] { put(xt, x); put(pt, pos); });
    // YaRN: the ramp of ggml's rope_yarn, in double.
    double lo = 0, hi = 0;
    if (ext_factor != 0) {
        auto corr = [&](double beta) { return n_rot * log(p.n_ctx_orig / (beta * 2 * M_PI)) / (2 * log((double) p.freq_base)); };
        lo = fmax(0.0, floor(corr(p.beta_fast)));
        hi = fmin(n_rot - 1.0, ceil(corr(p.beta_slow)));
    }
    std::vector<double> want;
    for (int64_t t = 0; t < n_tok; t++) {
        for (int64_t h = 0; h < n_head; h++) {
            const float * src = &x[t * fused + hd * n_head + h * hd];
            std::vector<double> row(src, src + hd);
            for (int64_t i = 0; i < n_rot / 2; i++) {
                double extrap = pos[t] * pow((double) p.freq_base, -2.0 * i / n_rot), theta = extrap * p.freq_scale;
                double mscale = p.attn_factor;
                if (ext_factor != 0) {
                    double ramp = (1 - fmin(1.0, fmax(0.0, (i - lo) / fmax(0.001, hi - lo)))) * ext_factor;
                    theta = theta * (1 - ramp) + extrap * ramp;
                    mscale *= 1 + 0.1 * log(1 / p.freq_scale);
                }
                int64_t a = mode == TERN_ROPE_NEOX ? i : 2 * i, b = mode == TERN_ROPE_NEOX ? i + n_rot / 2 : 2 * i + 1;
                row[a] = (src[a] * cos(theta) - src[b] * sin(theta)) * mscale;
                row[b] = (src[a] * sin(theta) + src[b] * cos(theta)) * mscale;
            }
            want.insert(want.end(), row.begin(), row.end());
        }
    }
    check_close(mode == TERN_ROPE_NEOX ? "rope neox" : "rope normal", as_f32(out), want, 2e-3);
}

static void test_set_rows() {
    const int64_t row_len = 20, n_cells = 10;
    std::vector<float> rows = random_floats(g_rng, row_len * 4, -70000, 70000);  // some round to inf in F16
    std::vector<int32_t> idx = { 7, 2, 9, 10 };  // 10: out of range, ignored
    for (tern_type type : { TERN_TYPE_F16, TERN_TYPE_F32 }) {
        const size_t es = type == TERN_TYPE_F16 ? 2 : 4;
        std::vector<uint8_t> cache(row_len * n_cells * es, 0xAB);
        tern_tensor *rt = NULL, *it = NULL;
        run_op("set_rows", [&](tern_graph_builder * gb) {
            int64_t ne[2] = { row_len, n_cells };
            rt = test_input(gb, TERN_TYPE_F32, 2, { row_len, 4 });
            it = test_input(gb, TERN_TYPE_I32, 1, { 4 });
            return tg_set_rows(gb, tg_external(gb, type, 2, ne, cache.data()), rt, it);
        }, [&] { put(rt, rows); put(it, idx); });
        bool ok = true;
        for (int64_t c = 0; c < n_cells; c++) {
            int64_t i = c == 7 ? 0 : c == 2 ? 1 : c == 9 ? 2 : -1;
            for (int64_t j = 0; j < row_len; j++) {
                const uint8_t * cell = &cache[(c * row_len + j) * es];
                if (i < 0) { ok = ok && cell[0] == 0xAB && cell[1] == 0xAB; continue; }
                float v = rows[i * row_len + j];
                if (type == TERN_TYPE_F16) ok = ok && *(const tern_fp16 *) cell == tern_fp32_to_fp16(v);
                else ok = ok && memcmp(cell, &v, 4) == 0;
            }
        }
        CHECK_MSG(ok, "set_rows type %d", (int) type);
    }
}

// attention vs naive softmax(q k^T * scale + causal mask) v in double, GQA 4:2.
// hd and n_kv multiples of 16 take the tinyBLAS-order path, others ggml's vec_dot order.
static void test_attn(tern_type kv_type, int64_t hd, int64_t n_kv) {
    const int64_t n_head = 4, n_head_kv = 2, n_tok = 3, n_cells = n_kv + 3;
    const size_t es = kv_type == TERN_TYPE_F16 ? 2 : 4;
    const float scale = 1.0f / sqrtf((float) hd);
    std::vector<float> q = random_floats(g_rng, hd * n_head * n_tok, -2, 2);
    std::vector<float> kf = random_floats(g_rng, hd * n_head_kv * n_cells, -2, 2), vf = random_floats(g_rng, hd * n_head_kv * n_cells);
    std::vector<uint8_t> kc(kf.size() * es), vc(vf.size() * es);
    for (size_t i = 0; i < kf.size(); i++) {
        if (kv_type == TERN_TYPE_F16) {
            ((tern_fp16 *) kc.data())[i] = tern_fp32_to_fp16(kf[i]);
            ((tern_fp16 *) vc.data())[i] = tern_fp32_to_fp16(vf[i]);
            kf[i] = tern_fp16_to_fp32(tern_fp32_to_fp16(kf[i]));
            vf[i] = tern_fp16_to_fp32(tern_fp32_to_fp16(vf[i]));
        } else {
            ((float *) kc.data())[i] = kf[i];
            ((float *) vc.data())[i] = vf[i];
        }
    }
    // the tokens are the last three positions: token t sees cells 0..n_kv-3+t
    std::vector<float> mask(n_kv * n_tok);
    for (int64_t t = 0; t < n_tok; t++) for (int64_t j = 0; j < n_kv; j++) mask[t * n_kv + j] = j <= n_kv - 3 + t ? 0.0f : -INFINITY;
    tern_tensor *qt = NULL, *mt = NULL;
    auto out = run_op("attn", [&](tern_graph_builder * gb) {
        int64_t cne[2] = { hd * n_head_kv, n_cells };
        int64_t vne[3] = { hd, n_head_kv, n_kv };
        size_t vnb[3] = { es, es * hd, es * hd * n_head_kv };
        qt = test_input(gb, TERN_TYPE_F32, 3, { hd, n_head, n_tok });
        mt = test_input(gb, TERN_TYPE_F32, 2, { n_kv, n_tok });
        tern_tensor * k = tg_view(gb, tg_external(gb, kv_type, 2, cne, kc.data()), 3, vne, vnb, 0);
        tern_tensor * v = tg_view(gb, tg_external(gb, kv_type, 2, cne, vc.data()), 3, vne, vnb, 0);
        return tg_attn(gb, qt, k, v, mt, NULL, scale);
    }, [&] { put(qt, q); put(mt, mask); });
    std::vector<double> want;
    for (int64_t t = 0; t < n_tok; t++) {
        for (int64_t h = 0; h < n_head; h++) {
            const int64_t hk = h / (n_head / n_head_kv);
            std::vector<double> s(n_kv), o(hd, 0.0);
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < n_kv; j++) {
                double d = 0;
                for (int64_t i = 0; i < hd; i++) {
                    float qi = q[(t * n_head + h) * hd + i];
                    if (kv_type == TERN_TYPE_F16) qi = tern_fp16_to_fp32(tern_fp32_to_fp16(qi));
                    d += (double) qi * kf[(j * n_head_kv + hk) * hd + i];
                }
                s[j] = d * scale + mask[t * n_kv + j];
                mx = fmax(mx, s[j]);
            }
            for (int64_t j = 0; j < n_kv; j++) sum += exp(s[j] - mx);
            for (int64_t j = 0; j < n_kv; j++) {
                double p = exp(s[j] - mx) / sum;
                // With an F16 V the probabilities are rounded to F16 first (llama.cpp does).
                if (kv_type == TERN_TYPE_F16) p = tern_fp16_to_fp32(tern_fp32_to_fp16((float) p));
                for (int64_t i = 0; i < hd; i++) o[i] += p * vf[(j * n_head_kv + hk) * hd + i];
            }
            for (int64_t i = 0; i < hd; i++) want.push_back(o[i]);
        }
    }
    // F16: a probability computed in float may land on the other side of an F16
    // rounding boundary than the double one (one F16 ulp, ~5e-4 relative).
    check_close(kv_type == TERN_TYPE_F16 ? "attn f16" : "attn f32", as_f32(out), want,
                kv_type == TERN_TYPE_F16 ? 1e-3 : 2e-5);
}

int main() {
    printf("kernels: %s\n", tern_kernels_name());
    for (int k = 0; k < 4; k++) g_pools[k] = test_pool(g_threads[k]);
    test_get_rows();
    test_rms_norm();
    test_elementwise();
    test_argmax();
    test_rope(TERN_ROPE_NORMAL, 0.0f);
    test_rope(TERN_ROPE_NEOX, 0.0f);
    test_rope(TERN_ROPE_NEOX, 1.0f);
    test_set_rows();
    test_attn(TERN_TYPE_F16, 20, 9);
    test_attn(TERN_TYPE_F32, 20, 9);
    test_attn(TERN_TYPE_F16, 32, 32);
    test_attn(TERN_TYPE_F32, 32, 32);
    for (tern_threadpool * p : g_pools) tern_threadpool_free(p);
    return tern_test_summary();
}
