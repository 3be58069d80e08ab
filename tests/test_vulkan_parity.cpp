// End to end on the Vulkan device (lavapipe in CI): every model of the shared
// references by the envelope rule of reference-avx512/README.md (the rule
// test_parity checks the CPU path by, tests/envelope.h), against both
// reference sets, in one placement per run:
//   all      -ngl all: every layer and the output on vulkan0, KV there too
//   partial  -ngl 1: the last layer and the output on vulkan0, the rest on the CPU
//   nkvo     -ngl all with every KV cache on the host (-nkvo)
// and for the real trained models (stories260K, TinyStories-656K-*) the greedy
// tokens equal the CPU path's, token for token.
//
// Tern's logits do not depend on the reference set, so each (model, prompt)
// is decoded once (the prompt in one batch with every position's logits, then
// greedy steps) and the result checked against both sets; greedy decoding
// stops where every set's check has stopped (a random-weight model's check
// ends at its first low-margin step).
// test_vulkan_parity CONFIG [MODEL...] (models: file names without .gguf).
#include <dirent.h>
#include <algorithm>
#include <string>
#include <vector>
#include "check.h"
#include "envelope.h"
#include "reference.h"
#include "tern.h"
#include "vulkan_test_util.h"

namespace {

struct decoded {
    std::vector<float> prompt_logits;   // [n][n_vocab]
    std::vector<int>   greedy;          // Tern's greedy tokens
    std::vector<std::vector<float>> step_logits;   // the logits each greedy token was chosen from
};

tern_model * load(const std::string & path, const envelope_run & run) {
    tern_model * m = NULL;
    tern_model_params mp = tern_model_default_params();
    mp.devices = run.devices;
    mp.n_gpu_layers = run.n_gpu_layers;
    tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
    CHECK_MSG(st == TERN_OK, "%s: load: %s", path.c_str(), tern_last_error());
    return st == TERN_OK ? m : NULL;
}

// The prompt, then max_steps greedy tokens (each chosen from the logits before it).
bool decode(tern_model * m, const reference_case & rc, const envelope_run & run, int max_steps, decoded & out,
            const char * what) {
    tern_status st = TERN_OK;
    std::vector<tern_token> toks(rc.prompt.size() + 8);
    const int n = tern_tokenize(m, rc.prompt.c_str(), (int) rc.prompt.size(), toks.data(), (int) toks.size(), 1, 0);
    toks.resize(n > 0 ? n : 0);
    CHECK_MSG(toks == std::vector<tern_token>(rc.prompt_tokens.begin(), rc.prompt_tokens.end()), "%s: prompt tokens differ", what);
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = run.n_ctx;
    cp.n_batch = 512;
    cp.n_threads = run.n_threads;
    cp.logits_all = 1;
    cp.offload_kqv = run.offload_kqv;
    tern_context * ctx = NULL;
    st = tern_context_create(m, &cp, &ctx);
    CHECK_MSG(st == TERN_OK, "%s: context: %s", what, tern_last_error());
    if (st == TERN_OK) st = tern_decode(ctx, tern_batch_get_one(toks.data(), n));
    CHECK_MSG(st == TERN_OK, "%s: decode: %s", what, tern_last_error());
    const int nv = rc.n_vocab;
    for (int i = 0; i < n && st == TERN_OK; i++) {
        const float * lg = tern_get_logits_ith(ctx, i);
        out.prompt_logits.insert(out.prompt_logits.end(), lg, lg + nv);
    }
    int last = n - 1;
    for (int k = 0; k < max_steps && st == TERN_OK; k++) {
        const float * lg = tern_get_logits_ith(ctx, last);
        out.step_logits.push_back(std::vector<float>(lg, lg + nv));
        tern_token t = envelope_argmax(lg, nv);
        out.greedy.push_back(t);
        if (k + 1 == max_steps) break;
        st = tern_decode(ctx, tern_batch_get_one(&t, 1));
        CHECK_MSG(st == TERN_OK, "%s: step %d: %s", what, k, tern_last_error());
        last = 0;
    }
    tern_context_free(ctx);
    return st == TERN_OK;
}

// Greedy steps the rule reads of this reference: through the first mismatch or low margin.
int steps_needed(const reference_case & rc, const envelope_rule & rule, double s) {
    if (rule.real_model) return (int) rc.greedy_tokens.size();
    for (size_t k = 0; k < rc.greedy_tokens.size(); k++) {
        if (rc.greedy_margin[k] <= 0.1 * s) return (int) k + 1;
    }
    return (int) rc.greedy_tokens.size();
}

double ref_scale(const reference_case & rc) {
    double mean = 0, var = 0;
    for (float v : rc.prompt_logits) mean += v;
    mean /= rc.prompt_logits.size();
    for (float v : rc.prompt_logits) var += (v - mean) * (v - mean);
    return std::max(1.0, sqrt(var / rc.prompt_logits.size()));
}

// The envelope rule (envelope.h) for one reference over a decoded run.
void check(const reference_case & rc, const envelope_rule & rule, const decoded & got, const std::string & label) {
    const char * what = label.c_str();
    const int nv = rc.n_vocab, n = (int) rc.prompt_tokens.size();
    const double s = ref_scale(rc);
    const double max_tol = 2e-3 * s, kl_tol = rule.f16_model ? 1e-5 : 5e-4;
    double max_diff = 0, kl_sum = 0;
    for (int i = 0; i < n && (size_t) (i + 1) * nv <= got.prompt_logits.size(); i++) {
        const float * g = &got.prompt_logits[(size_t) i * nv];
        const float * r = &rc.prompt_logits[(size_t) i * nv];
        for (int j = 0; j < nv; j++) max_diff = std::max(max_diff, (double) fabsf(g[j] - r[j]));
        kl_sum += envelope_kl(r, g, nv);
        if (envelope_top2_gap(r, nv) > 0.1 * s) {
            CHECK_MSG(envelope_argmax(g, nv) == rc.prompt_argmax[i], "%s: prompt argmax at %d", what, i);
        }
    }
    const double kl_mean = n > 0 ? kl_sum / n : 0.0;
    if (rule.f32_model) CHECK_MSG(max_diff <= max_tol, "%s: max |logit diff| %.3g > %.3g", what, max_diff, max_tol);
    else CHECK_MSG(kl_mean <= kl_tol, "%s: mean KL %.3g > %.3g", what, kl_mean, kl_tol);
    int matched = 0;
    for (size_t k = 0; k < rc.greedy_tokens.size() && k < got.greedy.size(); k++) {
        if (got.greedy[k] != rc.greedy_tokens[k]) {
            CHECK_MSG(!rule.real_model && rc.greedy_margin[k] <= 0.1 * s, "%s: greedy token %zu: %d vs %d (margin %.4f)", what, k,
                      got.greedy[k], rc.greedy_tokens[k], rc.greedy_margin[k]);
            break;
        }
        matched++;
        if (!rule.real_model && rc.greedy_margin[k] <= 0.1 * s) break;
    }
    if (rule.real_model) CHECK_MSG(matched == (int) rc.greedy_tokens.size(), "%s: greedy %d of %zu", what, matched, rc.greedy_tokens.size());
    printf("%-52s max|diff| %.2e  KL mean %.2e (tol %s %.0e)  greedy %d/%zu\n", what, max_diff, kl_mean,
           rule.f32_model ? "max|diff|" : "KL", rule.f32_model ? max_tol : kl_tol, matched, rc.greedy_tokens.size());
}

std::vector<std::string> stems_of(const std::string & dir) {
    std::vector<std::string> stems;
    DIR * d = opendir(dir.c_str());
    if (!d) return stems;
    while (struct dirent * e = readdir(d)) {
        const std::string name = e->d_name, ext = ".json";
        if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
            stems.push_back(name.substr(0, name.size() - ext.size()));
        }
    }
    closedir(d);
    std::sort(stems.begin(), stems.end());
    return stems;
}

}  // namespace

int main(int argc, char ** argv) {
    const std::string shared = tern_test_shared_dir();
    vulkan_test_require_device();
    const std::string config = argc > 1 ? argv[1] : "all";
    if (config != "all" && config != "partial" && config != "nkvo") {
        fprintf(stderr, "usage: test_vulkan_parity all|partial|nkvo [MODEL...]\n");
        return 2;
    }
    envelope_run run;
    run.devices = "vulkan0";
    run.n_gpu_layers = config == "partial" ? 1 : -1;
    run.offload_kqv = config == "nkvo" ? 0 : 1;
    const std::vector<std::string> models(argv + (argc > 2 ? 2 : argc), argv + argc);
    const char * sets[2] = { "reference", "reference-avx512" };
    // Every case of either set (a case one set lacks is checked against the other alone).
    const std::vector<std::string> in_set[2] = { stems_of(shared + "/" + sets[0]), stems_of(shared + "/" + sets[1]) };
    std::vector<std::string> stems = in_set[0];
    for (const std::string & x : in_set[1]) if (std::find(stems.begin(), stems.end(), x) == stems.end()) stems.push_back(x);
    std::sort(stems.begin(), stems.end());
    CHECK_MSG(in_set[0].size() >= 50 && in_set[1].size() >= 50, "reference sets of %zu and %zu cases", in_set[0].size(), in_set[1].size());
    printf("vulkan0, %s\n", config.c_str());
    int n_cases = 0;
    // Cases in model order: each model is loaded (and the device opened) once for its prompts.
    std::string loaded_model;
    tern_model * dev_model = NULL, * cpu_model = NULL;
    for (const std::string & stem : stems) {
        const std::string model = stem.substr(0, stem.rfind('.'));
        if (!models.empty() && std::find(models.begin(), models.end(), model) == models.end()) continue;
        reference_case rc[2];
        bool have[2], ok = true;
        int first = -1, steps = 0;
        for (int k = 0; k < 2; k++) {
            have[k] = std::find(in_set[k].begin(), in_set[k].end(), stem) != in_set[k].end();
            if (!have[k]) continue;
            ok = ok && reference_load(shared + "/" + sets[k], stem, rc[k]);
            if (first < 0) first = k;
        }
        CHECK_MSG(ok, "%s: cannot read the references", stem.c_str());
        if (!ok) continue;
        const envelope_rule rule = envelope_rule_for(rc[first].model);
        for (int k = 0; k < 2; k++) if (have[k]) steps = std::max(steps, steps_needed(rc[k], rule, ref_scale(rc[k])));
        decoded dev;
        const std::string path = shared + "/models/" + rc[first].model;
        if (rc[first].model != loaded_model) {
            tern_model_free(dev_model);
            tern_model_free(cpu_model);
            envelope_run cpu;
            dev_model = load(path, run);
            cpu_model = rule.real_model ? load(path, cpu) : NULL;
            loaded_model = rc[first].model;
        }
        if (!dev_model || !decode(dev_model, rc[first], run, steps, dev, stem.c_str())) continue;
        for (int k = 0; k < 2; k++) if (have[k]) check(rc[k], rule, dev, std::string(sets[k]) + "/" + stem);
        if (rule.real_model && cpu_model) {   // greedy text: token for token the CPU path's
            envelope_run cpu;
            decoded host;
            if (decode(cpu_model, rc[first], cpu, steps, host, (stem + " (CPU)").c_str())) {
                CHECK_MSG(dev.greedy == host.greedy, "%s: greedy tokens differ from the CPU path's", stem.c_str());
            }
        }
        n_cases++;
    }
    tern_model_free(dev_model);
    tern_model_free(cpu_model);
    CHECK_MSG(n_cases > 0, "no case ran");
    printf("%d cases, each against every reference set that has it\n", n_cases);
    return tern_test_summary();
}
