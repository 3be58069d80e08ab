// The vec_dot kernels mul_mat uses (tern_cpu_vec_dot) give the same bits as the
// scalar references (traits vec_dot) for every weight type, on realistic rows:
// weights quantized with the type's quantizer, activations with the CPU
// backend's activation quantizer, 1, 2, 7 and more blocks. In a build without
// SIMD the dispatch must return the references themselves. Prints a rough
// speed comparison (not asserted).
#include <stddef.h>
#include <chrono>
#include <random>
#include <vector>
#include "check.h"
#include "cpu/kernels/vec_dot.h"
#include "tensor/blocks.h"

namespace {

// Types whose SIMD kernel exists in this build's kernel set.
bool expects_simd_kernel(tern_type t) {
#if TERN_VEC_DOT_X86
    switch (t) {
        case TERN_TYPE_Q8_0: case TERN_TYPE_Q4_0: case TERN_TYPE_Q5_0: case TERN_TYPE_IQ4_NL:
        case TERN_TYPE_Q4_1: case TERN_TYPE_Q5_1: case TERN_TYPE_Q4_K: case TERN_TYPE_Q6_K: case TERN_TYPE_Q5_K:
        case TERN_TYPE_Q3_K: case TERN_TYPE_Q2_K:
            return true;
        default: return false;
    }
#else
    (void) t;
    return false;
#endif
}

const tern_type k_weight_types[] = {
    TERN_TYPE_F32,  TERN_TYPE_F16,  TERN_TYPE_BF16, TERN_TYPE_Q8_0, TERN_TYPE_Q4_0, TERN_TYPE_Q5_0,
    TERN_TYPE_IQ4_NL, TERN_TYPE_Q4_1, TERN_TYPE_Q5_1, TERN_TYPE_Q4_K, TERN_TYPE_Q6_K, TERN_TYPE_Q5_K,
    TERN_TYPE_Q3_K, TERN_TYPE_Q2_K,
};

// Roughly what a layer sees: gaussian values with a few outliers, and rows of
// different magnitude.
std::vector<float> random_row(std::mt19937 & rng, int64_t n) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    const float scale = 0.01f + 4.0f * uniform(rng);
    std::vector<float> v((size_t) n);
    for (float & f : v) f = scale * normal(rng) * (uniform(rng) < 0.01f ? 20.0f : 1.0f);
    return v;
}

// Sets about a quarter of the int8 levels of a Q8_0 / Q8_1 row to the
// extremes -128 and 127: a file can hold them though the quantizers never
// write -128, and the kernels must stay exact there too (no int16 overflow).
void set_extreme_levels(std::mt19937 & rng, tern_type type, uint8_t * row, int64_t n) {
    size_t block_size, qs_offset;
    if (type == TERN_TYPE_Q8_0) { block_size = sizeof(block_q8_0); qs_offset = offsetof(block_q8_0, qs); }
    else if (type == TERN_TYPE_Q8_1) { block_size = sizeof(block_q8_1); qs_offset = offsetof(block_q8_1, qs); }
    else return;
    for (int64_t b = 0; b < n / 32; b++) {
        int8_t * qs = (int8_t *) (row + b * block_size + qs_offset);
        for (int j = 0; j < 32; j++) {
            const unsigned r = rng() % 8;
            if (r == 0) qs[j] = -128;
            else if (r == 1) qs[j] = 127;
        }
    }
}

// ns per call of f over all weight rows against one activation row.
double ns_per_dot(tern_vec_dot_fn f, int64_t n, const std::vector<uint8_t> & w, size_t w_size, const uint8_t * a) {
    const int n_w = (int) (w.size() / w_size);
    float sink = 0.0f;
    const auto t0 = std::chrono::steady_clock::now();
    int calls = 0;
    for (int rep = 0; rep < 20; rep++) {
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

}  // namespace

int main() {
    std::mt19937 rng(1234);
    const int n_w = 12, n_a = 4;
    int n_simd = 0;
    for (tern_type t : k_weight_types) {
        const tern_type_traits * tr = tern_type_traits_get(t);
        if (!tr || !tr->vec_dot) continue;  // not compiled in
        const tern_type_traits * act = tern_type_traits_get(tr->vec_dot_type);
        CHECK_MSG(act != nullptr, "%s: dot type missing", tr->name);
        if (!act) continue;
        const tern_vec_dot_fn ref = tr->vec_dot;
        const tern_vec_dot_fn kernel = tern_cpu_vec_dot(t);
        CHECK_MSG(kernel != nullptr, "%s: no dot function", tr->name);
        if (!kernel) continue;
        if (expects_simd_kernel(t)) {
            CHECK_MSG(kernel != ref, "%s: the %s build should use its SIMD kernel", tr->name, TERN_KERNELS_NAME);
            n_simd++;
        } else {
            CHECK_MSG(kernel == ref, "%s: without a SIMD kernel the dispatch must return the reference", tr->name);
        }

        int mismatches = 0, cases = 0;
        for (int64_t blocks : {1, 2, 7, 8, 33}) {
            const int64_t n = blocks * (tr->is_quantized ? tr->blck_size : 32);
            const size_t w_size = tern_row_size(t, n), a_size = tern_row_size(tr->vec_dot_type, n);
            std::vector<uint8_t> w(w_size * n_w), a(a_size * n_a);
            for (int i = 0; i < n_w; i++) tr->from_float(random_row(rng, n).data(), w.data() + i * w_size, n);
            for (int j = 0; j < n_a; j++) act->from_float_act(random_row(rng, n).data(), a.data() + j * a_size, n);
            // Last activation row and the weight rows of Q8_0 itself: extreme levels.
            set_extreme_levels(rng, tr->vec_dot_type, a.data() + (n_a - 1) * a_size, n);
            for (int i = 0; i < n_w; i++) set_extreme_levels(rng, t, w.data() + i * w_size, n);
            for (int i = 0; i < n_w; i++) {
                for (int j = 0; j < n_a; j++) {
                    float s_ref = -1.0f, s_ker = -2.0f;
                    ref(n, &s_ref, w.data() + i * w_size, a.data() + j * a_size);
                    kernel(n, &s_ker, w.data() + i * w_size, a.data() + j * a_size);
                    cases++;
                    if (memcmp(&s_ref, &s_ker, sizeof(float)) != 0) {
                        if (mismatches++ < 3) {
                            fprintf(stderr, "%s n=%lld w%d a%d: kernel %.9g, reference %.9g\n", tr->name,
                                    (long long) n, i, j, s_ker, s_ref);
                        }
                    }
                }
            }
        }
        CHECK_MSG(mismatches == 0, "%s: %d of %d dot products differ from the reference", tr->name, mismatches, cases);
        // Speed, a 4096-wide row (not asserted).
        const int64_t n = 4096;
        const size_t w_size = tern_row_size(t, n), a_size = tern_row_size(tr->vec_dot_type, n);
        std::vector<uint8_t> w(w_size * 64), a(a_size);
        for (int i = 0; i < 64; i++) tr->from_float(random_row(rng, n).data(), w.data() + i * w_size, n);
        act->from_float_act(random_row(rng, n).data(), a.data(), n);
        const double ns_ref = ns_per_dot(ref, n, w, w_size, a.data());
        const double ns_ker = kernel == ref ? ns_ref : ns_per_dot(kernel, n, w, w_size, a.data());
        printf("%-7s %-9s %4d/%4d bit-identical; n=4096: %7.0f ns reference, %7.0f ns kernel (x%.1f)\n", tr->name,
               kernel == ref ? "reference" : TERN_KERNELS_NAME, cases - mismatches, cases, ns_ref, ns_ker,
               ns_ref / ns_ker);
    }
    if (n_simd == 0) printf("scalar mode (%s build): the dispatch returns the references\n", TERN_KERNELS_NAME);
    return tern_test_summary();
}
