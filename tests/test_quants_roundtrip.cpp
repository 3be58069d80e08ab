// Type traits, quantize -> dequantize round trips with per-block error bounds,
// and F16/BF16 conversion edge cases.
#include <math.h>
#include <random>
#include <vector>
#include "check.h"
#include "tensor/quants.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

const float HALF_EPS = 1.0f / 2048.0f;  // relative rounding of a value stored as fp16 (2^-11)

std::vector<float> gaussian(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float & x : v) x = dist(rng);
    return v;
}

std::vector<float> round_trip(tern_type type, const std::vector<float> & x, int64_t rows, int64_t ne0) {
    const tern_type_traits * t = tern_type_traits_get(type);
    const size_t row_bytes = tern_row_size(type, ne0);
    std::vector<uint8_t> q(row_bytes * rows);
    std::vector<float> y(x.size());
    for (int64_t r = 0; r < rows; r++) {
        t->from_float(x.data() + r * ne0, q.data() + r * row_bytes, ne0);
        t->to_float(q.data() + r * row_bytes, y.data() + r * ne0, ne0);
    }
    return y;
}

// Rounding error of v stored as fp16 (relative 2^-11, absolute 2^-25 among the subnormals).
float half_err(float v) { return fmaxf(fabsf(v) * HALF_EPS, ldexpf(1, -25)); }

// Largest error a block of `n` values may have after the round trip.
float error_bound(tern_type type, const float * x, int n) {
    float amax = 0, mn = x[0], mx = x[0];
    for (int j = 0; j < n; j++) {
        amax = fmaxf(amax, fabsf(x[j]));
        mn = fminf(mn, x[j]);
        mx = fmaxf(mx, x[j]);
    }
    const float tiny = 1e-6f * amax;
    switch (type) {
        case TERN_TYPE_F32: return 0.0f;
        case TERN_TYPE_F16: return half_err(amax);
        case TERN_TYPE_BF16: return amax / 256.0f;
        // the level of max is exact; the opposite extreme may clamp one step: error <= d,
        // plus d's fp16 rounding times the largest level
        case TERN_TYPE_Q4_0: return amax / 8 + 8 * half_err(amax / 8) + tiny;
        case TERN_TYPE_Q5_0: return amax / 16 + 16 * half_err(amax / 16) + tiny;
        // half a step, d's rounding over 15 (31) levels, m's rounding
        case TERN_TYPE_Q4_1: return (mx - mn) / 30 + 15 * half_err((mx - mn) / 15) + half_err(mn) + tiny;
        case TERN_TYPE_Q5_1: return (mx - mn) / 62 + 31 * half_err((mx - mn) / 31) + half_err(mn) + tiny;
        case TERN_TYPE_Q8_0:
        case TERN_TYPE_Q8_1: return amax / 254 + 127 * half_err(amax / 127) + tiny;
        // the widest gap of the table is 24 (89..113) with d ~ amax / 113: half of
        // it, with room for the searched scale
        case TERN_TYPE_IQ4_NL: return amax * 0.15f;
        default: return 0.0f;
    }
}

struct type_case {
    tern_type type;
    const char * name;
    int64_t blck;
    size_t bytes;
    tern_type dot;
    bool has_dot;
};

const type_case k_cases[] = {
    {TERN_TYPE_F32, "F32", 1, 4, TERN_TYPE_F32, true},
    {TERN_TYPE_F16, "F16", 1, 2, TERN_TYPE_F32, true},  // F16 weights x F32 activations (llama.cpp prompt path),
    {TERN_TYPE_BF16, "BF16", 1, 2, TERN_TYPE_BF16, true},
    {TERN_TYPE_Q4_0, "Q4_0", 32, 18, TERN_TYPE_Q8_0, true},
    {TERN_TYPE_Q4_1, "Q4_1", 32, 20, TERN_TYPE_Q8_1, true},
    {TERN_TYPE_Q5_0, "Q5_0", 32, 22, TERN_TYPE_Q8_0, true},
    {TERN_TYPE_Q5_1, "Q5_1", 32, 24, TERN_TYPE_Q8_1, true},
    {TERN_TYPE_Q8_0, "Q8_0", 32, 34, TERN_TYPE_Q8_0, true},
    {TERN_TYPE_Q8_1, "Q8_1", 32, 36, TERN_TYPE_Q8_1, false},
    {TERN_TYPE_IQ4_NL, "IQ4_NL", 32, 18, TERN_TYPE_Q8_0, true},
    {TERN_TYPE_Q2_K, "Q2_K", 256, 84, TERN_TYPE_Q8_K, true},
    {TERN_TYPE_Q3_K, "Q3_K", 256, 110, TERN_TYPE_Q8_K, true},
    {TERN_TYPE_Q4_K, "Q4_K", 256, 144, TERN_TYPE_Q8_K, true},
    {TERN_TYPE_Q5_K, "Q5_K", 256, 176, TERN_TYPE_Q8_K, true},
    {TERN_TYPE_Q6_K, "Q6_K", 256, 210, TERN_TYPE_Q8_K, true},
    {TERN_TYPE_Q8_K, "Q8_K", 256, 292, TERN_TYPE_Q8_K, false},
};

void test_traits() {
    for (const type_case & c : k_cases) {
        const tern_type_traits * t = tern_type_traits_get(c.type);
        CHECK_MSG(t != nullptr, "%s compiled in by default", c.name);
        if (!t) continue;
        CHECK_MSG(strcmp(t->name, c.name) == 0 && strcmp(tern_type_name(c.type), c.name) == 0, "%s", c.name);
        CHECK_MSG(t->blck_size == c.blck && t->type_size == c.bytes, "%s block", c.name);
        CHECK_MSG(t->is_quantized == (c.blck > 1), "%s is_quantized", c.name);
        CHECK_MSG(t->vec_dot_type == c.dot, "%s vec_dot_type", c.name);
        CHECK_MSG((t->vec_dot != nullptr) == c.has_dot, "%s vec_dot", c.name);
        CHECK_MSG(t->to_float && t->from_float, "%s converters", c.name);
        CHECK(tern_type_supported((uint32_t) c.type));
        CHECK(tern_row_size(c.type, c.blck * 6) == c.bytes * 6);
        // the dot type of every weight type is itself a type with a quantizer
        const tern_type_traits * d = tern_type_traits_get(t->vec_dot_type);
        CHECK_MSG(d && d->from_float && d->blck_size == t->blck_size, "%s dot type", c.name);
    }
    // ids that are no type (GGUF's removed Q4_2/Q4_3 = 4/5, IQ types not built, out of range)
    const uint32_t unknown[] = {4, 5, 16, 19, 21, 29, 31, 38, 39, 40, 1000, 0xffffffffu};
    for (uint32_t id : unknown) CHECK_MSG(!tern_type_supported(id), "id %u", id);
    CHECK(tern_type_name(TERN_TYPE_COUNT) == nullptr);
    CHECK(tern_type_traits_get(TERN_TYPE_COUNT) == nullptr);
    CHECK(tern_row_size(TERN_TYPE_COUNT, 32) == 0);
    CHECK(tern_row_size(TERN_TYPE_F32, 173) == 692);
    CHECK(tern_row_size(TERN_TYPE_BF16, 173) == 346);
}

const tern_type k_mine[] = {TERN_TYPE_F32, TERN_TYPE_F16, TERN_TYPE_BF16, TERN_TYPE_Q4_0, TERN_TYPE_Q4_1,
                            TERN_TYPE_Q5_0, TERN_TYPE_Q5_1, TERN_TYPE_Q8_0, TERN_TYPE_Q8_1, TERN_TYPE_IQ4_NL};

// RMS error / RMS value on N(0, 1) data, per type (for the ordering check).
double rel_rms[TERN_TYPE_COUNT];

void test_round_trips() {
    for (tern_type type : k_mine) {
        const tern_type_traits * t = tern_type_traits_get(type);
        // 7 rows of 3 blocks (or 173 values for the float types: an odd row length)
        const int64_t rows = 7, ne0 = t->blck_size == 1 ? 173 : 3 * t->blck_size;
        const int bl = t->blck_size == 1 ? 1 : 32;
        for (float scale : {1.0f, 1e-3f, 300.0f}) {
            std::vector<float> x = gaussian(rows * ne0, 1234 + (uint32_t) type, scale);
            std::vector<float> y = round_trip(type, x, rows, ne0);
            int bad = 0;
            double se = 0, sx = 0;
            for (size_t b = 0; b < x.size(); b += bl) {
                const float bound = error_bound(type, &x[b], bl);
                for (int j = 0; j < bl; j++) {
                    const float e = fabsf(x[b + j] - y[b + j]);
                    if (!(e <= bound)) bad++;
                    se += (double) e * e;
                    sx += (double) x[b + j] * x[b + j];
                }
            }
            CHECK_MSG(bad == 0, "%s scale %g: %d values over the error bound", t->name, scale, bad);
            if (scale == 1.0f) rel_rms[type] = sqrt(se / sx);
        }
        // zero blocks come back as zeros
        std::vector<float> z(t->blck_size == 1 ? 5 : 64, 0.0f);
        CHECK_MSG(round_trip(type, z, 1, (int64_t) z.size()) == z, "%s: zero blocks", t->name);
    }
    printf("relative rms error on N(0,1):");
    for (tern_type type : k_mine) printf(" %s %.5f", tern_type_name(type), rel_rms[type]);
    printf("\n");
    // more bits, less error; IQ4_NL's table and scale search beat Q4_0 at 4.5 bits
    CHECK(rel_rms[TERN_TYPE_Q8_0] < rel_rms[TERN_TYPE_Q5_0] && rel_rms[TERN_TYPE_Q8_0] < rel_rms[TERN_TYPE_Q5_1]);
    CHECK(rel_rms[TERN_TYPE_Q5_0] < rel_rms[TERN_TYPE_Q4_0] && rel_rms[TERN_TYPE_Q5_1] < rel_rms[TERN_TYPE_Q4_1]);
    CHECK(rel_rms[TERN_TYPE_IQ4_NL] < rel_rms[TERN_TYPE_Q4_0]);
    CHECK(rel_rms[TERN_TYPE_F16] < 3e-4 && rel_rms[TERN_TYPE_BF16] < 3e-3 && rel_rms[TERN_TYPE_F32] == 0);
}

// Quantizing rows one by one or the whole buffer as one long row gives the same
// bytes: blocks are independent.
void test_rows_independent() {
    for (tern_type type : k_mine) {
        const tern_type_traits * t = tern_type_traits_get(type);
        const int64_t rows = 5, ne0 = 4 * t->blck_size * (t->blck_size == 1 ? 33 : 1);
        std::vector<float> x = gaussian(rows * ne0, 99);
        const size_t rb = tern_row_size(type, ne0);
        std::vector<uint8_t> a(rb * rows), b(rb * rows);
        for (int64_t r = 0; r < rows; r++) t->from_float(&x[r * ne0], &a[r * rb], ne0);
        t->from_float(x.data(), b.data(), rows * ne0);
        CHECK_MSG(a == b, "%s rows", t->name);
    }
}

uint16_t to_f16(float f) {
    uint16_t h;
    tern_quantize_row_f16(&f, &h, 1);
    return h;
}
float from_f16(uint16_t h) {
    float f;
    tern_dequantize_row_f16(&h, &f, 1);
    return f;
}
uint16_t to_bf16(float f) {
    uint16_t h;
    tern_quantize_row_bf16(&f, &h, 1);
    return h;
}
float from_bf16(uint16_t h) {
    float f;
    tern_dequantize_row_bf16(&h, &f, 1);
    return f;
}

void test_f16_edges() {
    // every half converts to float and back unchanged (NaNs stay NaN)
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const float f = from_f16((uint16_t) h);
        const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        if (nan ? !isnan(f) || !((to_f16(f) & 0x7c00) == 0x7c00 && (to_f16(f) & 0x3ff)) : to_f16(f) != h) bad++;
    }
    CHECK_MSG(bad == 0, "%d halves do not round-trip", bad);
    CHECK(from_f16(0x0001) == ldexpf(1, -24));          // smallest subnormal
    CHECK(from_f16(0x03ff) == ldexpf(1023, -24));       // largest subnormal
    CHECK(from_f16(0x0400) == ldexpf(1, -14));          // smallest normal
    CHECK(from_f16(0x7bff) == 65504.0f);
    CHECK(isinf(from_f16(0x7c00)) && from_f16(0xfc00) < 0);
    CHECK(to_f16(ldexpf(1, -25)) == 0x0000);            // tie between 0 and 2^-24: even (0)
    CHECK(to_f16(ldexpf(3, -25)) == 0x0002);            // tie between 1 and 2 (x 2^-24): even (2)
    CHECK(to_f16(ldexpf(1.0001f, -25)) == 0x0001);      // just over the tie
    CHECK(to_f16(ldexpf(1, -26)) == 0x0000);
    CHECK(to_f16(-ldexpf(1, -30)) == 0x8000);           // underflow keeps the sign
    CHECK(to_f16(1.0f + ldexpf(1, -11)) == 0x3c00);     // tie: even mantissa 0
    CHECK(to_f16(1.0f + ldexpf(3, -11)) == 0x3c02);     // tie: even mantissa 2
    CHECK(to_f16(1.0f + ldexpf(1, -11) + ldexpf(1, -20)) == 0x3c01);
    CHECK(to_f16(65519.0f) == 0x7bff);                  // below the tie with 65536
    CHECK(to_f16(65520.0f) == 0x7c00);                  // tie with 65536 rounds to even: inf
    CHECK(to_f16(1e9f) == 0x7c00 && to_f16(-1e9f) == 0xfc00);
    CHECK(to_f16(INFINITY) == 0x7c00 && to_f16(-INFINITY) == 0xfc00);
    CHECK((to_f16(NAN) & 0x7c00) == 0x7c00 && (to_f16(NAN) & 0x3ff) != 0);
    CHECK(to_f16(-0.0f) == 0x8000);
    CHECK(to_f16(ldexpf(1023.5f, -24)) == 0x0400);      // largest subnormal + half step: carries into the normals
}

void test_bf16_edges() {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const float f = from_bf16((uint16_t) h);
        if (isnan(f) ? !isnan(from_bf16(to_bf16(f))) : to_bf16(f) != h) bad++;
    }
    CHECK_MSG(bad == 0, "%d bf16 values do not round-trip", bad);
    CHECK(to_bf16(tern_bits_to_f32(0x3f808000u)) == 0x3f80);  // tie: even
    CHECK(to_bf16(tern_bits_to_f32(0x3f818000u)) == 0x3f82);  // tie: even
    CHECK(to_bf16(tern_bits_to_f32(0x3f808001u)) == 0x3f81);
    CHECK(to_bf16(tern_bits_to_f32(0x7f7fffffu)) == 0x7f80);  // FLT_MAX rounds to inf
    CHECK(to_bf16(tern_bits_to_f32(0x00008000u)) == 0x0000);  // subnormal tie: even
    CHECK(to_bf16(tern_bits_to_f32(0x00018000u)) == 0x0002);
    CHECK(to_bf16(INFINITY) == 0x7f80 && to_bf16(-INFINITY) == 0xff80);
    const uint16_t qn = to_bf16(tern_bits_to_f32(0x7f800001u));  // signalling NaN with only low bits: stays NaN
    CHECK((qn & 0x7f80) == 0x7f80 && (qn & 0x7f) != 0);
    CHECK(to_bf16(-0.0f) == 0x8000);
}

}  // namespace

int main() {
    test_traits();
    test_round_trips();
    test_rows_independent();
    test_f16_edges();
    test_bf16_edges();
    return tern_test_summary();
}
