// Captured decode on the Vulkan device, counted by the device itself
// (tern_hal_counters: real vkQueueSubmit calls): a model fully offloaded
// decodes 64 tokens one at a time, across n_kv growing past three of the
// 32-cell pads, and after the first token each token is exactly one
// submission (the replay of its captured graph: input copies, every dispatch
// and the logits copy in one command buffer), with at least 62 cache hits of
// 64. Then the same with capture off (graph_cache 0): the eager path records
// a token's dispatches into one frame too (one submission at the core's
// synchronize, recording every dispatch again on the host), and gives the same
// tokens. Then captured again with the discrete parameter (a desktop GPU's
// memory path on a UMA device: buffers unmapped, copies recorded or staged):
// the same tokens, the same one submission a token. Also: the device's
// description names the features it reports.
#include <string.h>
#include <string>
#include <vector>
#include "check.h"
#include "vulkan_test_util.h"
#include "hal/device.h"
#include "model/model.h"
#include "model/placement.h"

using namespace tern;

namespace {

void counters(const tern_model * m, tern_hal_counters * c) {
    const hal::hal_device & d = m->devices->dev[0];
    memset(c, 0, sizeof(*c));
    d.desc->get_counters(d.dev, c);
}

std::vector<tern_token> run(const std::string & path, const char * device, int32_t graph_cache, bool check_submissions) {
    std::vector<tern_token> out;
    tern_model_params mp = tern_model_default_params();
    mp.devices = device;
    mp.n_gpu_layers = -1;
    tern_model * m = NULL;
    tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
    CHECK_MSG(st == TERN_OK, "load: %s", tern_last_error());
    if (st != TERN_OK) return out;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 256;
    cp.graph_cache = graph_cache;
    tern_context * ctx = NULL;
    st = tern_context_create(m, &cp, &ctx);
    CHECK_MSG(st == TERN_OK, "context: %s", tern_last_error());
    if (st != TERN_OK) {
        tern_model_free(m);
        return out;
    }
    tern_token toks[64];
    const char * prompt = "Once upon a time, there was a little dog";
    const int n = tern_tokenize(m, prompt, (int) strlen(prompt), toks, 64, 1, 0);
    st = tern_decode(ctx, tern_batch_get_one(toks, n));
    CHECK(st == TERN_OK);
    const int nv = tern_model_n_vocab(m);
    tern_perf_context_reset(ctx);
    tern_hal_counters c0, c1;
    int one_submission = 0;
    for (int step = 0; step < 64 && st == TERN_OK; step++) {
        const float * lg = tern_get_logits_ith(ctx, -1);
        tern_token t = 0;
        for (int i = 1; i < nv; i++) if (lg[i] > lg[t]) t = i;
        out.push_back(t);
        counters(m, &c0);
        st = tern_decode(ctx, tern_batch_get_one(&t, 1));
        counters(m, &c1);
        if (step > 0) one_submission += c1.submissions - c0.submissions == 1;
    }
    CHECK_MSG(st == TERN_OK, "decode: %s", tern_last_error());
    tern_perf_data pd;
    tern_perf_context(ctx, &pd);
    printf("%s, graph_cache %d: 64 tokens: %llu submissions (device), %llu replays, %llu hits, %llu captures, %llu eager launches; "
           "%d tokens after the first took one submission\n", device, (int) graph_cache, (unsigned long long) (c1.submissions),
           (unsigned long long) pd.replays, (unsigned long long) pd.hits, (unsigned long long) pd.captures,
           (unsigned long long) pd.launches, one_submission);
    if (check_submissions) {
        CHECK_MSG(one_submission == 63, "%d of 63 tokens after the first took one vkQueueSubmit", one_submission);
        CHECK_MSG(pd.hits >= 62, "%llu cache hits of 64", (unsigned long long) pd.hits);
        CHECK_MSG(pd.captures <= 2, "%llu captures", (unsigned long long) pd.captures);
        CHECK(pd.launches == 0);
    }
    tern_context_free(ctx);
    tern_model_free(m);
    return out;
}

}  // namespace

int main(void) {
    const std::string shared = tern_test_shared_dir();
    vulkan_test_require_device();
    char line[512];
    CHECK(tern_hal_describe_device("vulkan0", line, sizeof(line)) == TERN_OK);
    printf("%s\n", line);
    CHECK_MSG(strstr(line, "fp16") && strstr(line, "int8") && strstr(line, "int-dot") && strstr(line, "subgroup"),
              "the description names the features: %s", line);
    const std::string path = shared + "/models/TinyStories-656K-Q8_0.gguf";
    const std::vector<tern_token> captured = run(path, "vulkan0", -1, true);
    const std::vector<tern_token> eager = run(path, "vulkan0", 0, false);
    CHECK_MSG(captured == eager, "captured and eager decodes chose different tokens");
    // A discrete GPU's path (device buffers unmapped, every copy recorded or
    // staged) on the same device: the same tokens, still one submission a token.
    CHECK(tern_hal_describe_device("vulkan0:discrete", line, sizeof(line)) == TERN_OK);
    CHECK_MSG(strstr(line, "discrete memory") != NULL, "vulkan0:discrete: %s", line);
    const std::vector<tern_token> discrete = run(path, "vulkan0:discrete", -1, true);
    CHECK_MSG(captured == discrete, "the discrete-memory path chose different tokens");
    CHECK(captured.size() == 64);
    return tern_test_summary();
}
