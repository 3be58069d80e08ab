// tern-tile-bench: the repacked matrix tiles (kernel_set.h gemm_repacked) of
// every kernel set this CPU runs, side by side, on weights that stay in L2:
// what a kernel change does, without the noise of a whole model on a shared
// machine (the fastest of -r timed passes is kept).
//
//   tern-tile-bench [-k K] [-r N] [--kernels avx2,avxvnni]
//
// Per type with a repacked layout: 64 weight rows x K values (a mul_mat
// chunk's rows), against 1 activation row (decode) and 64 (a prompt chunk);
// ns per weight row, activation row and 32 values. Every set's repacked
// outputs are the scalar reference's bits (test_kernel_sets), so they must
// agree here bit for bit; a difference is reported and the exit status is 1.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <chrono>
#include <random>
#include <vector>
#include "cpu/kernels/kernel_set.h"
#include "tensor/types.h"

using namespace tern;

namespace {

const tern_type k_types[] = {TERN_TYPE_Q4_0, TERN_TYPE_Q4_1, TERN_TYPE_Q5_0, TERN_TYPE_Q5_1, TERN_TYPE_Q8_0,
                             TERN_TYPE_IQ4_NL, TERN_TYPE_Q4_K, TERN_TYPE_Q5_K, TERN_TYPE_Q6_K};
const int64_t N = 64, M_PROMPT = 64;

int usage() {
    fprintf(stderr, "usage: tern-tile-bench [-k K (multiple of 256, default 2048)] [-r passes (default 15)] [--kernels SET,...]\n");
    return 2;
}

}  // namespace

int main(int argc, char ** argv) {
    int64_t K = 2048;
    int passes = 15;
    const char * want = nullptr;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        if (!strcmp(argv[i], "-k")) K = atoll(argv[++i]);
        else if (!strcmp(argv[i], "-r")) passes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kernels")) want = argv[++i];
        else return usage();
    }
    if (K <= 0 || K % 256 != 0 || passes < 1) return usage();

    const tern_kernel_set * sets[8];
    int n_sets = 0;
    const char * names[8];
    const int n_compiled = tern_kernels_compiled(names, 8);
    for (int i = 0; i < n_compiled && i < 8; i++) {
        if (!strcmp(names[i], "scalar")) continue;
        if (want) {  // a comma list: names[i] as one of its items
            const size_t n = strlen(names[i]);
            const char * p = strstr(want, names[i]);
            while (p && !((p == want || p[-1] == ',') && (p[n] == ',' || p[n] == 0))) p = strstr(p + 1, names[i]);
            if (!p) continue;
        }
        if (const tern_kernel_set * ks = tern_kernels_by_name(names[i])) sets[n_sets++] = ks;
    }
    if (n_sets == 0) {
        fprintf(stderr, "tern-tile-bench: no SIMD kernel set to run here\n");
        return 1;
    }

    printf("K = %lld, %lld weight rows; ns per weight row, activation row and 32 values (fastest of %d passes)\n\n",
           (long long) K, (long long) N, passes);
    printf("| type | activation rows |");
    for (int s = 0; s < n_sets; s++) printf(" %s |", sets[s]->name);
    printf("\n|---|---:|");
    for (int s = 0; s < n_sets; s++) printf("---:|");
    printf("\n");

    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    int differ = 0;
    for (tern_type t : k_types) {
        const tern_type_traits * tr = tern_type_traits_get(t);
        if (!tr || !tr->from_float) continue;  // not compiled in
        const tern_type_traits * at = tern_type_traits_get(tr->vec_dot_type);
        const size_t ws = tern_row_size(t, K), as = tern_row_size(tr->vec_dot_type, K);
        std::vector<uint8_t> w(ws * N), a(as * M_PROMPT);
        std::vector<float> row((size_t) K);
        for (int64_t i = 0; i < N; i++) {
            for (float & f : row) f = normal(rng);
            tr->from_float(row.data(), w.data() + i * ws, K);
        }
        for (int64_t i = 0; i < M_PROMPT; i++) {
            for (float & f : row) f = normal(rng);
            at->from_float_act(row.data(), a.data() + i * as, K);
        }
        for (int64_t M : {(int64_t) 1, M_PROMPT}) {
            bool any = false;
            std::vector<float> first;
            const char * first_name = "";
            char line[512];
            int at_ = snprintf(line, sizeof line, "| %s | %lld |", tr->name, (long long) M);
            for (int s = 0; s < n_sets; s++) {
                const tern_kernel_set * ks = sets[s];
                const int32_t R = ks->repack_rows[t];
                if (!R || N % R) {
                    at_ += snprintf(line + at_, sizeof line - at_, " - |");
                    continue;
                }
                std::vector<uint8_t> packed(w.size());
                for (int64_t g = 0; g < N / R; g++) ks->repack[t](K, w.data() + g * R * ws, packed.data() + g * R * ws);
                std::vector<float> out((size_t) (N * M));
                const int calls = M == 1 ? 400 : 8;
                double best = 1e30;
                for (int p = 0; p < passes; p++) {
                    const auto t0 = std::chrono::steady_clock::now();
                    for (int c = 0; c < calls; c++) ks->gemm_repacked[t](K, N, M, packed.data(), ws, a.data(), as, out.data(), N);
                    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / calls;
                    if (ns < best) best = ns;
                }
                if (!any) first = out, first_name = ks->name;
                else if (memcmp(first.data(), out.data(), out.size() * sizeof(float)) != 0) {
                    differ++;
                    fprintf(stderr, "tern-tile-bench: %s %s: outputs differ from %s's\n", ks->name, tr->name, first_name);
                }
                any = true;
                at_ += snprintf(line + at_, sizeof line - at_, " %.3f |", best / ((double) N * M * (K / 32)));
            }
            if (any) printf("%s\n", line);
        }
    }
    return differ ? 1 : 0;
}
