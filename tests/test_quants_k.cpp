// K-quants (Q2_K..Q6_K, Q8_K): round trips on random rows, dot products
// against dequantized data, degenerate blocks (zero, constant, one outlier).
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "check.h"
#include "tensor/quants_k.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

struct kformat {
    const char * name;
    size_t block_bytes;
    void (*quantize)(const float *, void *, int64_t);
    void (*dequantize)(const void *, float *, int64_t);
    void (*vec_dot)(int64_t, float *, const void *, const void *);
    double max_rel_rms;  // bound on rms(error) / rms(data) for Gaussian rows
};

// Bounds sit ~20% above what the reference quantizers reach on Gaussian data;
// a broken fit, a wrong scale packing or a lost bit plane overshoots them by far.
const kformat k_formats[] = {
    {"Q2_K", sizeof(block_q2_K), tern_quantize_row_q2_K, tern_dequantize_row_q2_K, tern_vec_dot_q2_K, 0.36},
    {"Q3_K", sizeof(block_q3_K), tern_quantize_row_q3_K, tern_dequantize_row_q3_K, tern_vec_dot_q3_K, 0.18},
    {"Q4_K", sizeof(block_q4_K), tern_quantize_row_q4_K, tern_dequantize_row_q4_K, tern_vec_dot_q4_K, 0.085},
    {"Q5_K", sizeof(block_q5_K), tern_quantize_row_q5_K, tern_dequantize_row_q5_K, tern_vec_dot_q5_K, 0.043},
    {"Q6_K", sizeof(block_q6_K), tern_quantize_row_q6_K, tern_dequantize_row_q6_K, tern_vec_dot_q6_K, 0.021},
    {"Q8_K", sizeof(block_q8_K), tern_quantize_row_q8_K, tern_dequantize_row_q8_K, nullptr, 0.01},
};

std::vector<float> gaussian(size_t n, float sigma, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, sigma);
    std::vector<float> v(n);
    for (float & x : v) x = dist(rng);
    return v;
}

std::vector<float> round_trip(const kformat & f, const std::vector<float> & x) {
    const int64_t n = (int64_t) x.size();
    std::vector<uint8_t> q((size_t) (n / QK_K) * f.block_bytes);
    f.quantize(x.data(), q.data(), n);
    std::vector<float> y(x.size());
    f.dequantize(q.data(), y.data(), n);
    return y;
}

double rel_rms(const std::vector<float> & x, const std::vector<float> & y) {
    double e = 0, s = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        e += ((double) x[i] - y[i]) * ((double) x[i] - y[i]);
        s += (double) x[i] * x[i];
    }
    return sqrt(e / s);
}

void test_round_trips() {
    for (const kformat & f : k_formats) {
        for (int64_t n : {(int64_t) QK_K, (int64_t) 8 * QK_K}) {
            std::vector<float> x = gaussian((size_t) n, 0.02f, 1234u + (uint32_t) n);
            std::vector<float> y = round_trip(f, x);
            double r = rel_rms(x, y);
            printf("%s n=%lld rel rms %.5f\n", f.name, (long long) n, r);
            CHECK_MSG(r <= f.max_rel_rms, "%s n=%lld: rel rms %.5f > %.5f", f.name, (long long) n, r, f.max_rel_rms);
        }
    }
}

void test_degenerate_blocks() {
    for (const kformat & f : k_formats) {
        std::vector<float> zero(QK_K, 0.0f);
        std::vector<float> y = round_trip(f, zero);
        bool all_zero = true;
        for (float v : y) all_zero = all_zero && v == 0.0f;
        CHECK_MSG(all_zero, "%s: zero block does not come back as zeros", f.name);

        // A constant positive block: the affine formats carry it in the scale,
        // the symmetric ones at their top level; both reproduce it closely.
        std::vector<float> c(QK_K, 0.5f);
        y = round_trip(f, c);
        double max_err = 0;
        for (int i = 0; i < QK_K; ++i) max_err = fmax(max_err, fabs((double) y[i] - 0.5));
        CHECK_MSG(max_err < 0.02, "%s: constant 0.5 block comes back off by %g", f.name, max_err);

        // One large outlier in a small-valued block: finite and the outlier kept.
        std::vector<float> o = gaussian(QK_K, 0.01f, 77u);
        o[100] = -3.0f;
        y = round_trip(f, o);
        bool finite = true;
        for (float v : y) finite = finite && isfinite(v);
        CHECK_MSG(finite, "%s: outlier block gives non-finite values", f.name);
        CHECK_MSG(fabs(y[100] + 3.0) < 0.05, "%s: outlier -3 comes back as %g", f.name, y[100]);
    }
}

void test_q8_K_bsums() {
    std::vector<float> x = gaussian(2 * QK_K, 1.0f, 5u);
    std::vector<block_q8_K> q(2);
    tern_quantize_row_q8_K(x.data(), q.data(), 2 * QK_K);
    for (const block_q8_K & b : q) {
        int max_abs = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += b.qs[16 * j + l];
            CHECK(b.bsums[j] == sum);
        }
        for (int i = 0; i < QK_K; ++i) max_abs = abs(b.qs[i]) > max_abs ? abs(b.qs[i]) : max_abs;
        CHECK(max_abs == 127);  // the largest magnitude maps to +-127
    }
}

// vec_dot(x, q8_K(y)) against sum dequant(x) * dequant(q8_K(y)) in double.
void test_vec_dot() {
    const int64_t n = 4 * QK_K;
    for (const kformat & f : k_formats) {
        if (!f.vec_dot) continue;
        for (uint32_t seed = 1; seed <= 3; ++seed) {
            std::vector<float> x = gaussian((size_t) n, 0.05f, seed);
            std::vector<float> yf = gaussian((size_t) n, 1.0f, seed + 100u);
            std::vector<uint8_t> qx((size_t) (n / QK_K) * f.block_bytes);
            std::vector<block_q8_K> qy((size_t) (n / QK_K));
            f.quantize(x.data(), qx.data(), n);
            tern_quantize_row_q8_K(yf.data(), qy.data(), n);
            std::vector<float> dx((size_t) n), dy((size_t) n);
            f.dequantize(qx.data(), dx.data(), n);
            tern_dequantize_row_q8_K(qy.data(), dy.data(), n);
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < n; ++i) {
                ref += (double) dx[i] * dy[i];
                mag += fabs((double) dx[i] * dy[i]);
            }
            float got = 0;
            f.vec_dot(n, &got, qx.data(), qy.data());
            CHECK_MSG(fabs(got - ref) <= 1e-5 * mag, "%s seed %u: vec_dot %.7g, reference %.7g", f.name, seed, got,
                      ref);
        }
    }
}

}  // namespace

int main() {
    test_round_trips();
    test_degenerate_blocks();
    test_q8_K_bsums();
    test_vec_dot();
    return tern_test_summary();
}
