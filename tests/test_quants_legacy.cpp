// Legacy formats and IQ4_NL: quantizer bytes on hand-checked blocks, and the
// reference dot products against dequantize-then-dot in double.
#include <math.h>
#include <stdlib.h>
#include <random>
#include <vector>
#include "check.h"
#include "tensor/quants.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

float half_err(float v) { return fmaxf(fabsf(v) * (1.0f / 2048.0f), ldexpf(1, -25)); }

void test_q4_0_bytes() {
    float x[32];
    for (int j = 0; j < 32; j++) x[j] = (j - 16) * 0.5f;  // max = -8: d = 1, level = trunc(x + 8.5)
    block_q4_0 b;
    tern_quantize_row_q4_0(x, &b, 32);
    CHECK(b.d == 0x3c00);
    bool ok = true;
    for (int j = 0; j < 16; j++) {
        const int lo = (j + 1) / 2;                 // x = -7.5 -> 1: halves round up
        const int hi = (j + 17) / 2 > 15 ? 15 : (j + 17) / 2;  // x = 8 would be 16: clamped
        ok &= b.qs[j] == (lo | hi << 4);
    }
    CHECK(ok);
    float y[32];
    tern_dequantize_row_q4_0(&b, y, 32);
    CHECK(y[0] == -8.0f && y[1] == -7.0f && y[2] == -7.0f && y[31] == 7.0f);
}

void test_q4_1_bytes() {
    float x[32];
    for (int j = 0; j < 32; j++) x[j] = j * 0.25f - 1.0f;  // min -1, max 6.75
    block_q4_1 b;
    tern_quantize_row_q4_1(x, &b, 32);
    const float d = 7.75f / 15;
    CHECK(b.d == tern_fp32_to_fp16(d) && b.m == 0xbc00);
    bool ok = true;
    for (int j = 0; j < 16; j++) {
        const int lo = (int) floor(j * 0.25 / d + 0.5), hi = (int) floor((j + 16) * 0.25 / d + 0.5);
        ok &= b.qs[j] == (lo | hi << 4);
    }
    CHECK(ok);
}

void test_q5_bytes() {
    float x[32];
    for (int j = 0; j < 32; j++) x[j] = (float) (j - 16);  // max -16: d = 1, level j
    block_q5_0 b0;
    tern_quantize_row_q5_0(x, &b0, 32);
    CHECK(b0.d == 0x3c00);
    bool ok = true;
    for (int j = 0; j < 16; j++) ok &= b0.qs[j] == (j | j << 4);
    CHECK(ok);
    // bit 4 of level j is bit j of qh: levels 16..31 have it
    CHECK(b0.qh[0] == 0 && b0.qh[1] == 0 && b0.qh[2] == 0xff && b0.qh[3] == 0xff);
    float y[32];
    tern_dequantize_row_q5_0(&b0, y, 32);
    CHECK(memcmp(x, y, sizeof(x)) == 0);

    for (int j = 0; j < 32; j++) x[j] = (float) (2 * (j ^ 5) + 3);  // min 3, d = 62 / 31 = 2, level j ^ 5
    block_q5_1 b1;
    tern_quantize_row_q5_1(x, &b1, 32);
    CHECK(b1.d == 0x4000 && b1.m == 0x4200);
    ok = true;
    for (int j = 0; j < 16; j++) ok &= b1.qs[j] == (((j ^ 5) & 15) | (((j + 16) ^ 5) & 15) << 4);
    CHECK(ok);
    CHECK(b1.qh[0] == 0 && b1.qh[1] == 0 && b1.qh[2] == 0xff && b1.qh[3] == 0xff);
    tern_dequantize_row_q5_1(&b1, y, 32);
    CHECK(memcmp(x, y, sizeof(x)) == 0);
}

void test_q8_bytes() {
    float x[32];
    x[0] = -127.0f;                                          // d = 1
    for (int j = 1; j < 32; j++) x[j] = (float) j - 15.5f;   // halves: roundf, away from zero
    block_q8_0 b0;
    tern_quantize_row_q8_0(x, &b0, 32);
    block_q8_1 b1;
    tern_quantize_row_q8_1(x, &b1, 32);
    CHECK(b0.d == 0x3c00 && b1.d == 0x3c00);
    bool ok = b0.qs[0] == -127 && b1.qs[0] == -127;
    int sum = -127;
    for (int j = 1; j < 32; j++) {
        const int q = j <= 15 ? j - 16 : j - 15;  // -14.5 -> -15, -0.5 -> -1, 0.5 -> 1
        ok &= b0.qs[j] == q && b1.qs[j] == q;
        sum += q;
    }
    CHECK(ok);
    CHECK(b1.s == tern_fp32_to_fp16((float) sum));
}

void test_iq4_nl_bytes() {
    // values that are the table times 0.01: the scale search finds d = 0.01
    float x[32];
    for (int j = 0; j < 32; j++) x[j] = tern_kvalues_iq4nl[(j * 7) % 16] * 0.01f;
    block_iq4_nl b;
    tern_quantize_row_iq4_nl(x, &b, 32);
    CHECK(fabsf(tern_fp16_to_fp32(b.d) - 0.01f) <= half_err(0.01f));
    bool ok = true;
    for (int j = 0; j < 16; j++) ok &= b.qs[j] == (((j * 7) % 16) | (((j + 16) * 7) % 16) << 4);
    CHECK(ok);
    // a zero block: d = 0 and, as llama.cpp, every level is the table's nearest to 0 (index 8)
    float z[32] = {0};
    tern_quantize_row_iq4_nl(z, &b, 32);
    ok = b.d == 0;
    for (int j = 0; j < 16; j++) ok &= b.qs[j] == 0x88;
    CHECK(ok);
    // the table is ascending and decodes as d * value
    ok = true;
    for (int i = 1; i < 16; i++) ok &= tern_kvalues_iq4nl[i - 1] < tern_kvalues_iq4nl[i];
    CHECK(ok && tern_kvalues_iq4nl[0] == -127 && tern_kvalues_iq4nl[15] == 113);
}

std::vector<float> gaussian(size_t n, std::mt19937 & rng) {
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float & x : v) x = dist(rng);
    return v;
}

// vec_dot of a weight row with an activation row, both through the traits table,
// against (1) the dot in double of the two dequantized rows (exact but for float
// rounding and, for Q8_1, the fp16 rounding of s) and (2) the dot in double of the
// dequantized weights with the original activations, within what the activation
// quantization may change: sum |w_j| * (activation error bound of its block).
void test_vec_dot(tern_type type) {
    const tern_type_traits * t = tern_type_traits_get(type);
    const tern_type_traits * a = tern_type_traits_get(t->vec_dot_type);
    const int64_t n = t->blck_size == 1 ? 171 : 9 * 32;
    const int bl = t->blck_size == 1 ? 1 : 32;
    std::mt19937 rng(77 + type);
    int bad_exact = 0, bad_bound = 0;
    for (int trial = 0; trial < 50; trial++) {
        std::vector<float> x = gaussian(n, rng), y = gaussian(n, rng);
        if (trial % 5 == 0) for (float & v : y) v *= 1e-3f;  // small activations: fp16 scales lose bits
        if (trial % 7 == 0) for (float & v : x) v = v + 3.0f;  // offset weights: the min term matters
        std::vector<uint8_t> qx(tern_row_size(type, n)), qy(tern_row_size(t->vec_dot_type, n));
        t->from_float(x.data(), qx.data(), n);
        a->from_float(y.data(), qy.data(), n);
        std::vector<float> xd(n), yd(n);
        t->to_float(qx.data(), xd.data(), n);
        a->to_float(qy.data(), yd.data(), n);
        float s = 0;
        t->vec_dot(n, &s, qx.data(), qy.data());

        double exact = 0, mag = 0, to_orig = 0, bound = 0, s_err = 0;
        for (int64_t b = 0; b < n; b += bl) {
            float amax = 0, sum_w = 0;
            for (int j = 0; j < bl; j++) {
                amax = fmaxf(amax, fabsf(y[b + j]));
                sum_w += fabsf(xd[b + j]);
                exact += (double) xd[b + j] * yd[b + j];
                to_orig += (double) xd[b + j] * y[b + j];
                mag += fabs((double) xd[b + j] * yd[b + j]);
            }
            float err_y = 0;  // activation error bound of this block
            if (t->vec_dot_type == TERN_TYPE_F32) err_y = 0;
            else if (t->vec_dot_type == TERN_TYPE_F16) err_y = half_err(amax);
            else if (t->vec_dot_type == TERN_TYPE_BF16) err_y = amax / 256;
            else err_y = amax / 254 + 127 * half_err(amax / 127) + 1e-6f * amax;
            bound += sum_w * err_y;
            if (t->vec_dot_type == TERN_TYPE_Q8_1) {
                // the m * s term uses s = fp16(d * sum(q)) with d before its own fp16
                // rounding, where the exact dot has fp16(d) * sum(q)
                const block_q8_1 * yb = (const block_q8_1 *) qy.data() + b / 32;
                int sum_q = 0;
                for (int j = 0; j < 32; j++) sum_q += yb->qs[j];
                const float m = type == TERN_TYPE_Q4_1 ? tern_fp16_to_fp32(((const block_q4_1 *) qx.data())[b / 32].m)
                                                       : tern_fp16_to_fp32(((const block_q5_1 *) qx.data())[b / 32].m);
                const float d = tern_fp16_to_fp32(yb->d);
                s_err += fabsf(m) * (half_err(d * sum_q) + abs(sum_q) * half_err(d));
            }
        }
        const double float_eps = 1e-5 * mag + 1e-6 * fabs(exact);
        if (!(fabs(s - exact) <= float_eps + s_err)) bad_exact++;
        if (!(fabs(s - to_orig) <= bound + float_eps + s_err)) bad_bound++;
    }
    CHECK_MSG(bad_exact == 0, "%s: %d dots differ from dequantize-then-dot", t->name, bad_exact);
    CHECK_MSG(bad_bound == 0, "%s: %d dots beyond the activation error bound", t->name, bad_bound);
}

}  // namespace

int main() {
    test_q4_0_bytes();
    test_q4_1_bytes();
    test_q5_bytes();
    test_q8_bytes();
    test_iq4_nl_bytes();
    const tern_type dot_types[] = {TERN_TYPE_F32,  TERN_TYPE_F16,  TERN_TYPE_BF16, TERN_TYPE_Q4_0, TERN_TYPE_Q4_1,
                                   TERN_TYPE_Q5_0, TERN_TYPE_Q5_1, TERN_TYPE_Q8_0, TERN_TYPE_IQ4_NL};
    for (tern_type type : dot_types) test_vec_dot(type);
    return tern_test_summary();
}
