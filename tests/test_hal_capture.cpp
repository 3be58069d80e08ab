// Capture and replay, counters, fallbacks and failures on the sim device (issue 20):
// 1. 64 decode steps fully offloaded, n_kv growing through three of the old
//    32-cell pads (the graph spans every cell: one shape): after the first
//    token exactly one device submission per token, hits >= 62, captures <= 2,
//    and the core's counters equal the device's own (deltas over the run).
// 2. End to end LRU: graph cache of 2 and three decode shapes alternating
//    (batches of 1, 2 and 3 sequences): every lookup misses and evicts; with
//    room for three, every graph after the first round hits. Logits equal the
//    CPU path's either way.
// 3. A sim refusing ATTN: the same logits, the attention on the CPU, the extra
//    splits and copies in tern_context_describe; two sims with
//    --tensor-split 1,1: the same logits, device-to-device copies counted.
// 4. A capture that cannot be made (a pool of 4 commands): counted as failed,
//    the graph runs eagerly from then on, the same logits.
// 5. Failures: a device that cannot hold the weights, or a context's KV
//    cache, is a clear error naming the device and the bytes (nothing leaks:
//    the sanitizer builds run this too); a launch failing in the middle of a
//    decode returns an error and the context goes on with the right logits.
#include <string>
#include <vector>
#include "check.h"
#include "tern.h"
#include "context/context.h"

namespace {

struct session {
    tern_model * m = NULL;
    tern_context * ctx = NULL;
    std::string error;

    bool open(const std::string & path, const char * devices, int32_t ngl, int32_t graph_cache = -1, uint32_t n_seq = 1,
              const float * split = NULL) {
        tern_model_params mp = tern_model_default_params();
        mp.devices = devices;
        mp.n_gpu_layers = ngl;
        mp.tensor_split = split;
        if (tern_model_load_file(path.c_str(), &mp, &m) != TERN_OK) {
            error = tern_last_error();
            return false;
        }
        tern_context_params cp = tern_context_default_params();
        cp.n_ctx = 256;
        cp.n_batch = 64;
        cp.n_seq_max = n_seq;
        cp.n_threads = 2;
        cp.graph_cache = graph_cache;
        if (tern_context_create(m, &cp, &ctx) != TERN_OK) {
            error = tern_last_error();
            return false;
        }
        return true;
    }
    ~session() {
        tern_context_free(ctx);
        tern_model_free(m);
    }
    tern_hal_counters device(int d) const {
        tern_hal_counters c;
        memset(&c, 0, sizeof(c));
        const hal::hal_device * dv = &ctx->hal.dev[d];
        if (dv->desc->get_counters) dv->desc->get_counters(dv->dev, &c);
        return c;
    }
};

int argmax(const float * l, int n) {
    int b = 0;
    for (int i = 1; i < n; i++) if (l[i] > l[b]) b = i;
    return b;
}

// A prompt of n tokens then `steps` greedy decodes, every row's logits appended.
bool generate(tern_context * ctx, int nv, int n, int steps, std::vector<float> * out, std::vector<uint64_t> * subm = NULL,
              const session * s = NULL) {
    std::vector<tern_token> p(n);
    for (int i = 0; i < n; i++) p[i] = (tern_token) ((i * 29 + 3) % nv);
    if (tern_decode(ctx, tern_batch_get_one(p.data(), n)) != TERN_OK) return false;
    const float * l = tern_get_logits_ith(ctx, -1);
    out->insert(out->end(), l, l + nv);
    for (int k = 0; k < steps; k++) {
        tern_token t = argmax(l, nv);
        const uint64_t before = s ? s->device(0).submissions : 0;
        if (tern_decode(ctx, tern_batch_get_one(&t, 1)) != TERN_OK) return false;
        if (subm) subm->push_back(s->device(0).submissions - before);
        l = tern_get_logits_ith(ctx, -1);
        out->insert(out->end(), l, l + nv);
    }
    return true;
}

bool same(const std::vector<float> & a, const std::vector<float> & b) {
    return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void test_decode_capture(const std::string & path) {
    session cpu, dev;
    CHECK(cpu.open(path, NULL, 0));
    CHECK_MSG(dev.open(path, "sim0", -1), "%s", dev.error.c_str());
    if (!cpu.ctx || !dev.ctx) return;
    const int nv = tern_model_n_vocab(cpu.m);
    std::vector<float> a, b;
    CHECK(generate(cpu.ctx, nv, 20, 0, &a));  // the prompt
    // Device: the prompt, then 64 steps counted from the first token on (20 .. 84 cells: n_kv 32, 64, 96).
    std::vector<tern_token> p(20);
    for (int i = 0; i < 20; i++) p[i] = (tern_token) ((i * 29 + 3) % nv);
    CHECK(tern_decode(dev.ctx, tern_batch_get_one(p.data(), 20)) == TERN_OK);
    const float * l = tern_get_logits_ith(dev.ctx, -1);
    b.insert(b.end(), l, l + nv);
    tern_perf_context_reset(dev.ctx);
    const tern_hal_counters d0 = dev.device(0);
    std::vector<uint64_t> subm;
    const float * lc = tern_get_logits_ith(cpu.ctx, -1);
    for (int k = 0; k < 64; k++) {
        tern_token tc = argmax(lc, nv), td = argmax(l, nv);
        CHECK(tern_decode(cpu.ctx, tern_batch_get_one(&tc, 1)) == TERN_OK);
        const uint64_t before = dev.device(0).submissions;
        CHECK(tern_decode(dev.ctx, tern_batch_get_one(&td, 1)) == TERN_OK);
        subm.push_back(dev.device(0).submissions - before);
        lc = tern_get_logits_ith(cpu.ctx, -1);
        l = tern_get_logits_ith(dev.ctx, -1);
        a.insert(a.end(), lc, lc + nv);
        b.insert(b.end(), l, l + nv);
    }
    CHECK_MSG(same(a, b), "fully offloaded decode: logits differ from the CPU path's");
    int one = 0;
    for (size_t k = 1; k < subm.size(); k++) one += subm[k] == 1;
    CHECK_MSG(one == 63, "after the first token, %d of 63 tokens took exactly one device submission", one);
    tern_perf_data pd;
    tern_perf_context(dev.ctx, &pd);
    const tern_hal_counters d1 = dev.device(0);
    printf("64 steps: %llu captures, %llu hits, %llu misses, %llu replays, %llu submissions (device: %llu), %llu graphs built\n",
           (unsigned long long) pd.captures, (unsigned long long) pd.hits, (unsigned long long) pd.misses,
           (unsigned long long) pd.replays, (unsigned long long) pd.submissions,
           (unsigned long long) (d1.submissions - d0.submissions), (unsigned long long) pd.graphs_built);
    CHECK(pd.hits >= 62);
    CHECK(pd.captures <= 2);
    CHECK(pd.capture_failures == 0);
    // The core's counters and the device's own.
    CHECK(pd.submissions == d1.submissions - d0.submissions);
    CHECK(pd.replays == d1.replays - d0.replays);
    CHECK(pd.captures == d1.captures - d0.captures);
    CHECK(pd.copies_h2d == d1.copies_h2d - d0.copies_h2d);
    CHECK(pd.copies_d2h == d1.copies_d2h - d0.copies_d2h);
    CHECK(pd.bytes_h2d == d1.bytes_h2d - d0.bytes_h2d);
    CHECK(pd.bytes_d2h == d1.bytes_d2h - d0.bytes_d2h);
    CHECK(dev.ctx->hal.counters.launches_run == d1.launches - d0.launches);
    CHECK(pd.graphs_built <= 1);  // one decode shape for the whole run
}

// Decode batches of 1, 2 and 3 sequences in turn: three graphs.
bool rounds(tern_context * ctx, int nv, int n_rounds, std::vector<float> * out) {
    std::vector<tern_pos> pos(3, 0);
    for (int r = 0; r < n_rounds; r++) {
        for (int n = 1; n <= 3; n++) {
            tern_batch b = tern_batch_init(n, 1);
            for (int i = 0; i < n; i++) {
                b.token[i] = (tern_token) ((r * 7 + i * 13 + n) % nv);
                b.pos[i] = pos[i]++;
                b.n_seq_id[i] = 1;
                b.seq_id[i][0] = i;
                b.logits[i] = 1;
            }
            b.n_tokens = n;
            const tern_status st = tern_decode(ctx, b);
            for (int i = 0; i < n && st == TERN_OK; i++) {
                const float * l = tern_get_logits_ith(ctx, i);
                out->insert(out->end(), l, l + nv);
            }
            tern_batch_free(b);
            if (st != TERN_OK) return false;
        }
    }
    return true;
}

void test_lru_end_to_end(const std::string & path) {
    session cpu;
    CHECK(cpu.open(path, NULL, 0, -1, 3));
    if (!cpu.ctx) return;
    const int nv = tern_model_n_vocab(cpu.m);
    std::vector<float> want;
    CHECK(rounds(cpu.ctx, nv, 4, &want));
    for (int cap : { 2, 3 }) {
        session dev;
        CHECK_MSG(dev.open(path, "sim0", -1, cap, 3), "%s", dev.error.c_str());
        if (!dev.ctx) continue;
        std::vector<float> got;
        CHECK(rounds(dev.ctx, nv, 4, &got));
        CHECK_MSG(same(got, want), "graph cache %d: logits differ from the CPU path's", cap);
        tern_perf_data pd;
        tern_perf_context(dev.ctx, &pd);
        printf("graph cache %d, three alternating shapes x 4: %llu hits, %llu misses, %llu evictions, %llu graphs built\n", cap,
               (unsigned long long) pd.hits, (unsigned long long) pd.misses, (unsigned long long) pd.evictions,
               (unsigned long long) pd.graphs_built);
        if (cap == 2) {
            CHECK(pd.hits == 0 && pd.misses == 12 && pd.evictions == 10);
        } else {
            CHECK(pd.hits == 9 && pd.misses == 3 && pd.evictions == 0);
        }
    }
}

void test_fallback_and_two_devices(const std::string & path) {
    session cpu;
    CHECK(cpu.open(path, NULL, 0));
    if (!cpu.ctx) return;
    const int nv = tern_model_n_vocab(cpu.m);
    std::vector<float> want;
    CHECK(generate(cpu.ctx, nv, 12, 8, &want));
    // ATTN refused: it runs on the CPU.
    {
        session dev;
        CHECK_MSG(dev.open(path, "sim0:refuse=ATTN", -1), "%s", dev.error.c_str());
        if (dev.ctx) {
            std::vector<float> got;
            CHECK(generate(dev.ctx, nv, 12, 8, &got));
            CHECK_MSG(same(got, want), "sim refusing ATTN: logits differ from the CPU path's");
            std::vector<char> text(1 << 16);
            CHECK(tern_context_describe(dev.ctx, text.data(), text.size()) > 0);
            const std::string d = text.data();
            printf("%s", d.c_str());
            CHECK_MSG(d.find("CPU       1 nodes  kqv_out-0 .. kqv_out-0") != std::string::npos, "no CPU split for the attention");
            tern_perf_data pd;
            tern_perf_context(dev.ctx, &pd);
            CHECK(pd.copies_d2h > 8 && pd.copies_h2d > 8);
            const int32_t n_layer = tern_model_n_layer(dev.m);
            CHECK(pd.splits >= (uint64_t) (9 * (2 * n_layer + 2)));  // per run: CPU, then device and CPU (attention) per layer
        }
    }
    // Two devices, half the layers each.
    {
        const float split[2] = { 1.0f, 1.0f };
        session dev;
        CHECK_MSG(dev.open(path, "sim0,sim1", -1, -1, 1, split), "%s", dev.error.c_str());
        if (dev.ctx) {
            std::vector<float> got;
            CHECK(generate(dev.ctx, nv, 12, 8, &got));
            CHECK_MSG(same(got, want), "two sims: logits differ from the CPU path's");
            tern_perf_data pd;
            tern_perf_context(dev.ctx, &pd);
            printf("two sims: %llu device->device copies (%llu bytes)\n", (unsigned long long) pd.copies_d2d,
                   (unsigned long long) pd.bytes_d2d);
            CHECK(pd.copies_d2d >= 9);  // the residual stream, once per run at least
            tern_device_usage u[3];
            CHECK(tern_context_devices(dev.ctx, u, 3) == 3);
            CHECK(u[1].layers + u[2].layers == tern_model_n_layer(dev.m) && u[1].layers > 0 && u[2].layers > 0);
        }
    }
    // A capture pool too small: the graph runs eagerly.
    {
        session dev;
        CHECK_MSG(dev.open(path, "sim0:cmds=4", -1), "%s", dev.error.c_str());
        if (dev.ctx) {
            std::vector<float> got;
            CHECK(generate(dev.ctx, nv, 12, 8, &got));
            CHECK_MSG(same(got, want), "failed capture: logits differ from the CPU path's");
            tern_perf_data pd;
            tern_perf_context(dev.ctx, &pd);
            CHECK(pd.capture_failures == 1 && pd.captures == 0 && pd.replays == 0);
            CHECK(pd.launches > 0);
        }
    }
}

void test_failures(const std::string & path) {
    // The weights (the first allocation), then the context's KV cache (the second).
    {
        session s;
        CHECK(!s.open(path, "sim0:fail_alloc=1", -1));
        printf("weights refused: %s\n", s.error.c_str());
        CHECK(s.error.find("sim0") != std::string::npos && s.error.find("bytes of weights") != std::string::npos);
    }
    {
        session s;
        CHECK(!s.open(path, "sim0:fail_alloc=2", -1));
        printf("KV refused: %s\n", s.error.c_str());
        CHECK(s.error.find("sim0") != std::string::npos && s.error.find("KV cache") != std::string::npos &&
              s.error.find("bytes") != std::string::npos);
    }
    {
        session s;
        CHECK(!s.open(path, "sim0:mem=64K", -1));
        printf("small device: %s\n", s.error.c_str());
        CHECK(s.error.find("sim0") != std::string::npos && s.error.find("1040128 bytes") != std::string::npos);
    }
    // A launch failing mid-decode (capture off: each launch is its own), then the same decode again.
    session cpu, dev;
    CHECK(cpu.open(path, NULL, 0));
    CHECK(dev.open(path, "sim0:fail_launch=150", -1, 0));
    if (!cpu.ctx || !dev.ctx) return;
    const int nv = tern_model_n_vocab(cpu.m);
    std::vector<float> want, got;
    CHECK(generate(cpu.ctx, nv, 12, 6, &want));
    std::vector<tern_token> p(12);
    for (int i = 0; i < 12; i++) p[i] = (tern_token) ((i * 29 + 3) % nv);
    CHECK(tern_decode(dev.ctx, tern_batch_get_one(p.data(), 12)) == TERN_OK);
    const float * l = tern_get_logits_ith(dev.ctx, -1);
    got.insert(got.end(), l, l + nv);
    int failed = 0;
    for (int k = 0; k < 6;) {
        tern_token t = argmax(l, nv);
        const tern_status st = tern_decode(dev.ctx, tern_batch_get_one(&t, 1));
        if (st != TERN_OK) {
            failed++;
            printf("launch failure: %s: %s\n", tern_status_str(st), tern_last_error());
            CHECK(strstr(tern_last_error(), "injected failure") != NULL);
            CHECK(failed == 1);
            if (failed > 1) break;
            continue;  // the batch was rolled back: decode the same token again
        }
        l = tern_get_logits_ith(dev.ctx, -1);
        got.insert(got.end(), l, l + nv);
        k++;
    }
    CHECK(failed == 1);
    CHECK_MSG(same(got, want), "after a failed launch the logits differ from the CPU path's");
}

}  // namespace

int main() {
    const std::string shared = tern_test_shared_dir();
    const std::string path = shared + "/models/stories260K.gguf";
    test_decode_capture(path);
    test_lru_end_to_end(path);
    test_fallback_and_two_devices(path);
    test_fallback_and_two_devices(shared + "/models/ktest-llama-Q4_K_M.gguf");
    test_failures(path);
    return tern_test_summary();
}
