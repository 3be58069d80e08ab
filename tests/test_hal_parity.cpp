// The sim device against the CPU path, on every model of ../shared/reference
// (issue 20): with -ngl 0 (every layer on the CPU, large prompt matmuls moved
// to the device by op offload: the sim's threshold is lowered to 4 rows so the
// reference prompts reach it), 1, half and all layers, each with and without
// -nkvo, the prompt logits and every greedy step's logits are bit-identical
// to the CPU path's (the sim runs the same kernel set), and so the envelope
// rule holds against the reference set; with every layer on the device the
// envelope is checked against both reference sets (reference-avx512 too).
//
// test_hal_parity [MODEL...]: only those models (the file without .gguf).
#include <dirent.h>
#include <algorithm>
#include <string>
#include <vector>
#include "check.h"
#include "envelope.h"
#include "reference.h"
#include "tern.h"

namespace {

struct config {
    const char * devices;
    int32_t      ngl;       // -1: all; -2: half
    int          nkvo;
};

void run_model(const std::string & shared, const std::string & stem) {
    reference_case rc;
    if (!reference_load(shared + "/reference", stem, rc)) {
        CHECK_MSG(false, "%s: cannot read the reference", stem.c_str());
        return;
    }
    const std::string path = shared + "/models/" + rc.model;
    const envelope_rule rule = envelope_rule_for(rc.model);
    std::vector<float> cpu;
    envelope_run base;
    base.logits_out = &cpu;
    envelope_check(rc, "reference/" + stem + " CPU", path, rule, base);

    tern_model_params mp = tern_model_default_params();
    mp.vocab_only = 1;
    tern_model * m = NULL;
    int32_t n_layer = 0;
    if (tern_model_load_file(path.c_str(), &mp, &m) == TERN_OK) {
        n_layer = tern_model_n_layer(m);
        tern_model_free(m);
    }
    const config configs[] = {
        { "sim0:min_batch=4", 0, 0 }, { "sim0:min_batch=4", 0, 1 }, { "sim0", 1, 0 }, { "sim0", 1, 1 },
        { "sim0:min_batch=4", -2, 0 }, { "sim0:min_batch=4", -2, 1 }, { "sim0", -1, 0 }, { "sim0", -1, 1 },
    };
    for (const config & c : configs) {
        const int32_t ngl = c.ngl == -2 ? (n_layer + 1) / 2 : c.ngl;
        char label[160];
        snprintf(label, sizeof(label), "reference/%s %s -ngl %d%s", stem.c_str(), c.devices, (int) ngl, c.nkvo ? " -nkvo" : "");
        std::vector<float> dev;
        envelope_run run;
        run.devices = c.devices;
        run.n_gpu_layers = ngl;
        run.offload_kqv = !c.nkvo;
        run.logits_out = &dev;
        envelope_check(rc, label, path, rule, run);
        CHECK_MSG(dev.size() == cpu.size() && memcmp(dev.data(), cpu.data(), cpu.size() * sizeof(float)) == 0,
                  "%s: logits differ from the CPU path's (%zu vs %zu values)", label, dev.size(), cpu.size());
        if (c.ngl == -1 && !c.nkvo) {
            reference_case rc2;
            if (reference_load(shared + "/reference-avx512", stem, rc2)) {
                envelope_run run2;
                run2.devices = c.devices;
                run2.n_gpu_layers = -1;
                envelope_check(rc2, "reference-avx512/" + stem + " sim0 -ngl all", path, rule, run2);
            } else {
                CHECK_MSG(false, "reference-avx512/%s: missing", stem.c_str());
            }
        }
    }
}

}  // namespace

int main(int argc, char ** argv) {
    const std::string shared = tern_test_shared_dir();
    const std::vector<std::string> only(argv + 1, argv + argc);
    printf("kernels: %s\n", tern_kernels_name());
    std::vector<std::string> stems;
    DIR * d = opendir((shared + "/reference").c_str());
    CHECK_MSG(d != NULL, "%s/reference: missing", shared.c_str());
    if (!d) return tern_test_summary();
    while (struct dirent * e = readdir(d)) {
        const std::string name = e->d_name;
        const std::string ext = ".0.json";  // one prompt per model (both prompts' runs cost twice)
        if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
            const std::string model = name.substr(0, name.size() - ext.size());
            if (only.empty() || std::find(only.begin(), only.end(), model) != only.end()) stems.push_back(model + ".0");
        }
    }
    closedir(d);
    std::sort(stems.begin(), stems.end());
    CHECK_MSG(!stems.empty(), "no reference cases");
    if (only.empty()) CHECK_MSG(stems.size() >= 25, "only %zu models", stems.size());
    for (const std::string & stem : stems) run_model(shared, stem);
    return tern_test_summary();
}
