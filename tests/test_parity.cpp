// Parity with llama.cpp, by the envelope rule of reference-avx512/README.md:
// for every case of BOTH $TERN_SHARED_DIR/reference (a machine with AMX) and
// $TERN_SHARED_DIR/reference-avx512 (AVX-512, no AMX), whose llama.cpp
// outputs differ from each other by as much as any two x86 builds do:
// - prompt tokens identical;
// - F32 models and stories260K: max |logit diff| <= 2e-3 * s,
//   s = max(1, std of the reference logits);
// - F16/BF16 models: mean KL(reference || Tern) over prompt positions <= 1e-5,
//   quantized models <= 5e-4;
// - prompt argmax identical wherever the reference's top-2 gap > 0.1 * s;
// - greedy tokens identical for the real trained models (stories260K,
//   TinyStories-656K-*); for the random-weight ktest models, up to the first
//   step whose greedy margin is <= 0.1 * s (beyond it llama.cpp itself differs
//   between the two machines).
#include <dirent.h>
#include <math.h>
#include <algorithm>
#include <string>
#include <vector>
#include "check.h"
#include "envelope.h"
#include "reference.h"
#include "tern.h"

static void check_case(const std::string & shared, const std::string & set, const std::string & stem, int n_threads) {
    reference_case rc;
    if (!reference_load(shared + "/" + set, stem, rc)) {
        CHECK_MSG(false, "%s: cannot read the reference", stem.c_str());
        return;
    }
    envelope_run run;
    run.n_threads = n_threads;
    envelope_check(rc, set + "/" + stem, shared + "/models/" + rc.model, envelope_rule_for(rc.model), run);
}

// test_parity [N_THREADS [MODEL...]]: with MODEL names (the model file
// without .gguf, e.g. stories260K ktest-llama-Q4_0) only their cases run, and
// each name must have cases in both reference sets (.ci/cross.sh runs a subset
// under qemu).
int main(int argc, char ** argv) {
    const std::string shared = tern_test_shared_dir();
    const int n_threads = argc > 1 ? atoi(argv[1]) : 2;
    const std::vector<std::string> models(argv + (argc > 2 ? 2 : argc), argv + argc);
    printf("kernels: %s\n", tern_kernels_name());
    for (const std::string set : {"reference", "reference-avx512"}) {
        std::vector<std::string> stems;
        DIR * d = opendir((shared + "/" + set).c_str());
        CHECK_MSG(d != NULL, "%s/%s: missing", shared.c_str(), set.c_str());
        if (!d) continue;
        while (struct dirent * e = readdir(d)) {
            std::string name = e->d_name;
            const std::string ext = ".json";
            if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
                stems.push_back(name.substr(0, name.size() - ext.size()));
            }
        }
        closedir(d);
        std::sort(stems.begin(), stems.end());
        if (models.empty()) {
            CHECK_MSG(stems.size() >= 50, "%s: only %zu cases", set.c_str(), stems.size());
            for (const std::string & stem : stems) check_case(shared, set, stem, n_threads);
            continue;
        }
        for (const std::string & model : models) {  // stems are MODEL.N
            int n = 0;
            for (const std::string & stem : stems) {
                if (stem.size() > model.size() + 1 && stem.compare(0, model.size(), model) == 0 && stem[model.size()] == '.' &&
                    stem.find('.', model.size() + 1) == std::string::npos) {
                    check_case(shared, set, stem, n_threads);
                    n++;
                }
            }
            CHECK_MSG(n > 0, "%s: no case of %s", set.c_str(), model.c_str());
        }
    }
    return tern_test_summary();
}
