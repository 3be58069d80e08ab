// Every KV cache feature with the cache on the sim device (issue 20): one
// script of batches and cache operations runs on the CPU path and on each
// device configuration, and every logit row it produces is bit-identical:
//   multi-sequence batches, seq_cp (a shared prefix), seq_rm, seq_add (the
//   K-shift graph), seq_div (Self-Extend's grouping), seq_keep, defrag (the
//   defrag graph, explicit and past defrag_thold), state save/load to memory
//   and to a file (into a fresh context), one sequence's state, a full cache
//   continued by llama-cli's context shift, Q8_0 and Q4_0 caches, and a
//   sliding-window phi3 model in a context so small that the window's cells
//   are reused.
// Configurations: every layer and its cache on the device; half the layers;
// every layer on the device with the caches on the host (-nkvo); two devices
// (--tensor-split 1,1); capture off.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string>
#include <vector>
#include "check.h"
#include "tern.h"
#include "tools/phi3_from_llama.h"

namespace {

struct setup {
    const char * devices;   // NULL: the CPU path
    int32_t      ngl;       // -2: half
    int          nkvo;
    int32_t      graph_cache;
};

struct script_run {
    std::vector<float> logits;   // every row, in order
    std::string        errors;
};

struct runner {
    tern_model *   m = NULL;
    tern_context * ctx = NULL;
    int32_t        nv = 0;
    script_run *   out = NULL;
    tern_context_params cp;

    bool open(const std::string & path, const setup & s, tern_type kv_type, uint32_t n_ctx, float defrag_thold) {
        tern_model_params mp = tern_model_default_params();
        mp.devices = s.devices;
        if (s.devices) {
            mp.n_gpu_layers = s.ngl;
            if (s.ngl == -2) {
                tern_model_params vp = tern_model_default_params();
                vp.vocab_only = 1;
                tern_model * v = NULL;
                CHECK(tern_model_load_file(path.c_str(), &vp, &v) == TERN_OK);
                mp.n_gpu_layers = v ? (tern_model_n_layer(v) + 1) / 2 : 1;
                tern_model_free(v);
            }
        }
        static const float split[2] = { 1.0f, 1.0f };
        mp.tensor_split = s.devices && strchr(s.devices, ',') ? split : NULL;
        tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
        CHECK_MSG(st == TERN_OK, "load %s: %s", path.c_str(), tern_last_error());
        if (st != TERN_OK) return false;
        nv = tern_model_n_vocab(m);
        cp = tern_context_default_params();
        cp.n_ctx = n_ctx;
        cp.n_batch = 32;
        cp.n_seq_max = 4;
        cp.n_threads = 2;
        cp.type_k = kv_type;
        cp.type_v = kv_type;
        cp.defrag_thold = defrag_thold;
        cp.offload_kqv = !s.nkvo;
        cp.graph_cache = s.graph_cache;
        st = tern_context_create(m, &cp, &ctx);
        CHECK_MSG(st == TERN_OK, "context: %s", tern_last_error());
        return st == TERN_OK;
    }
    void close() {
        tern_context_free(ctx);
        tern_model_free(m);
        ctx = NULL;
        m = NULL;
    }
    void keep(int32_t i) {
        const float * l = tern_get_logits_ith(ctx, i);
        CHECK(l != NULL);
        if (l) out->logits.insert(out->logits.end(), l, l + nv);
    }
    tern_token next(int32_t i) {
        const float * l = tern_get_logits_ith(ctx, i);
        int best = 0;
        for (int k = 1; l && k < nv; k++) if (l[k] > l[best]) best = k;
        return best;
    }
    // One token per listed sequence, all in one batch, each kept.
    void step(const std::vector<tern_seq_id> & seqs, std::vector<tern_pos> & pos, std::vector<tern_token> & tok) {
        tern_batch b = tern_batch_init((int32_t) seqs.size(), 1);
        for (size_t i = 0; i < seqs.size(); i++) {
            b.token[i] = tok[seqs[i]];
            b.pos[i] = pos[seqs[i]]++;
            b.n_seq_id[i] = 1;
            b.seq_id[i][0] = seqs[i];
            b.logits[i] = 1;
        }
        b.n_tokens = (int32_t) seqs.size();
        const tern_status st = tern_decode(ctx, b);
        CHECK_MSG(st == TERN_OK, "decode: %s", tern_last_error());
        for (size_t i = 0; i < seqs.size() && st == TERN_OK; i++) {
            keep((int32_t) i);
            tok[seqs[i]] = next((int32_t) i);
        }
        tern_batch_free(b);
    }
    // A prompt of n tokens for one sequence, the last row kept.
    void prompt(tern_seq_id seq, int32_t n, std::vector<tern_pos> & pos, std::vector<tern_token> & tok, int32_t salt) {
        tern_batch b = tern_batch_init(n, 1);
        for (int32_t i = 0; i < n; i++) {
            b.token[i] = (tern_token) ((i * 37 + salt * 11 + 5) % nv);
            b.pos[i] = pos[seq]++;
            b.n_seq_id[i] = 1;
            b.seq_id[i][0] = seq;
            b.logits[i] = i == n - 1;
        }
        b.n_tokens = n;
        const tern_status st = tern_decode(ctx, b);
        CHECK_MSG(st == TERN_OK, "prompt: %s", tern_last_error());
        if (st == TERN_OK) {
            keep(n - 1);
            tok[seq] = next(n - 1);
        }
        tern_batch_free(b);
    }
};

// The script. Returns false when it could not start.
bool script(const std::string & path, const setup & s, tern_type kv_type, const std::string & tmp, script_run * out) {
    runner r;
    r.out = out;
    if (!r.open(path, s, kv_type, 96, 0.0f)) {
        r.close();
        return false;
    }
    std::vector<tern_pos> pos(4, 0);
    std::vector<tern_token> tok(4, 1);
    // Three sequences, prompts of different lengths, then steps in one batch.
    r.prompt(0, 13, pos, tok, 0);
    r.prompt(1, 7, pos, tok, 1);
    r.prompt(2, 5, pos, tok, 2);
    for (int k = 0; k < 3; k++) r.step({0, 1, 2}, pos, tok);
    // A shared prefix: sequence 3 takes sequence 0's first 6 cells.
    CHECK(tern_kv_cache_seq_cp(r.ctx, 0, 3, 0, 6) == 1);
    pos[3] = 6;
    tok[3] = 17;
    for (int k = 0; k < 2; k++) r.step({3, 0}, pos, tok);
    // Remove the tail of sequence 1 and go on where it now ends.
    CHECK(tern_kv_cache_seq_rm(r.ctx, 1, 4, -1) == 1);
    pos[1] = 4;
    r.step({1}, pos, tok);
    // The K-shift: sequence 0 drops positions 4..6, the ones after move back by 3.
    CHECK(tern_kv_cache_seq_rm(r.ctx, 0, 4, 7) == 1);
    CHECK(tern_kv_cache_seq_add(r.ctx, 0, 7, pos[0], -3) == 1);
    pos[0] -= 3;
    r.step({0}, pos, tok);
    // Self-Extend's grouping on sequence 2.
    CHECK(tern_kv_cache_seq_div(r.ctx, 2, 0, pos[2], 2) == 1);
    pos[2] = tern_kv_cache_seq_pos_max(r.ctx, 2) + 1;
    r.step({2}, pos, tok);
    // Keep sequence 0 alone, compact, go on.
    CHECK(tern_kv_cache_seq_keep(r.ctx, 0) == 1);
    CHECK(tern_kv_cache_defrag(r.ctx) == TERN_OK);
    for (int k = 0; k < 2; k++) r.step({0}, pos, tok);
    // State to memory, three steps, back, the same three steps.
    std::vector<uint8_t> state(tern_state_get_size(r.ctx));
    CHECK(tern_state_get_data(r.ctx, state.data(), state.size()) == state.size());
    const std::vector<tern_pos> pos_saved = pos;
    const std::vector<tern_token> tok_saved = tok;
    for (int k = 0; k < 3; k++) r.step({0}, pos, tok);
    CHECK(tern_state_set_data(r.ctx, state.data(), state.size()) == state.size());
    pos = pos_saved;
    tok = tok_saved;
    for (int k = 0; k < 3; k++) r.step({0}, pos, tok);
    // One sequence's state copied into sequence 1.
    std::vector<uint8_t> seq_state(tern_state_seq_get_size(r.ctx, 0));
    CHECK(tern_state_seq_get_data(r.ctx, seq_state.data(), seq_state.size(), 0) == seq_state.size());
    CHECK(tern_state_seq_set_data(r.ctx, seq_state.data(), seq_state.size(), 1) == seq_state.size());
    pos[1] = pos[0];
    tok[1] = tok[0];
    r.step({1, 0}, pos, tok);
    // To a file, into a fresh context of the same model, and on.
    const std::string file = tmp + "/state.bin";
    const tern_token prompt_tokens[3] = { 1, 2, 3 };
    CHECK_MSG(tern_state_save_file(r.ctx, file.c_str(), prompt_tokens, 3) == TERN_OK, "save: %s", tern_last_error());
    tern_context_free(r.ctx);
    r.ctx = NULL;
    CHECK(tern_context_create(r.m, &r.cp, &r.ctx) == TERN_OK);
    tern_token back[8];
    size_t n_back = 0;
    CHECK_MSG(tern_state_load_file(r.ctx, file.c_str(), back, 8, &n_back) == TERN_OK, "load: %s", tern_last_error());
    CHECK(n_back == 3);
    r.keep(1);  // the restored last batch's logits (its second token: sequence 0)
    for (int k = 0; k < 2; k++) r.step({0, 1}, pos, tok);
    // Fill the cache; llama-cli's shift (keep 4, drop half the rest) when full.
    for (int k = 0; k < 90; k++) {
        if (tern_kv_cache_used_cells(r.ctx) + 1 > (int32_t) r.cp.n_ctx) {
            const int32_t n_keep = 4, n_left = pos[0] - n_keep, n_discard = n_left / 2;
            CHECK(tern_kv_cache_seq_rm(r.ctx, 1, -1, -1) == 1);
            CHECK(tern_kv_cache_seq_rm(r.ctx, 0, n_keep, n_keep + n_discard) == 1);
            CHECK(tern_kv_cache_seq_add(r.ctx, 0, n_keep + n_discard, pos[0], -n_discard) == 1);
            pos[0] -= n_discard;
        }
        r.step({0}, pos, tok);
    }
    r.close();
    // A fragmented cache compacted past defrag_thold before a decode.
    if (r.open(path, s, kv_type, 64, 0.1f)) {
        r.prompt(0, 9, pos = {0, 0, 0, 0}, tok, 3);
        r.prompt(1, 9, pos, tok, 4);
        CHECK(tern_kv_cache_seq_rm(r.ctx, 0, -1, -1) == 1);
        for (int k = 0; k < 3; k++) r.step({1}, pos, tok);
        CHECK(tern_kv_cache_fragmentation(r.ctx) == 0.0f);
    }
    r.close();
    return true;
}

// A sliding-window model in a context of prompt + 4 cells: the window's cells are reused.
bool window_script(const std::string & path, const setup & s, script_run * out) {
    runner r;
    r.out = out;
    if (!r.open(path, s, TERN_TYPE_F16, 24, 0.0f)) {
        r.close();
        return false;
    }
    std::vector<tern_pos> pos(4, 0);
    std::vector<tern_token> tok(4, 1);
    r.prompt(0, 20, pos, tok, 5);
    for (int k = 0; k < 40; k++) r.step({0}, pos, tok);
    r.close();
    return true;
}

void compare(const char * what, const setup & s, const script_run & cpu, const script_run & dev) {
    const bool same = cpu.logits.size() == dev.logits.size() &&
                      memcmp(cpu.logits.data(), dev.logits.data(), cpu.logits.size() * sizeof(float)) == 0;
    size_t first = 0;
    while (first < cpu.logits.size() && first < dev.logits.size() && cpu.logits[first] == dev.logits[first]) first++;
    CHECK_MSG(same, "%s, %s -ngl %d%s: logits differ from the CPU path's (%zu vs %zu values, first at %zu)", what,
              s.devices, (int) s.ngl, s.nkvo ? " -nkvo" : "", dev.logits.size(), cpu.logits.size(), first);
    printf("%-40s %-12s -ngl %2d%s%s: %zu logits %s\n", what, s.devices, (int) s.ngl, s.nkvo ? " -nkvo" : "",
           s.graph_cache == 0 ? " capture off" : "", cpu.logits.size(), same ? "bit-identical" : "DIFFER");
}

}  // namespace

int main() {
    const std::string shared = tern_test_shared_dir();
    char tmpl[] = "/tmp/tern_hal_kv_XXXXXX";
    const char * tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL);
    if (!tmp) return tern_test_summary();
    const setup setups[] = {
        { "sim0", -1, 0, -1 }, { "sim0", -2, 0, -1 }, { "sim0", -1, 1, -1 }, { "sim0,sim1", -1, 0, -1 }, { "sim0", -1, 0, 0 },
    };
    const struct { const char * model; tern_type kv; } cases[] = {
        { "stories260K.gguf", TERN_TYPE_F16 }, { "stories260K.gguf", TERN_TYPE_Q8_0 }, { "stories260K.gguf", TERN_TYPE_Q4_0 },
        { "ktest-qwen2-Q4_K_M.gguf", TERN_TYPE_F16 },
    };
    for (const auto & c : cases) {
        const std::string path = shared + "/models/" + c.model;
        char what[96];
        snprintf(what, sizeof(what), "%s, %s cache", c.model, tern_type_name(c.kv));
        script_run cpu;
        if (!script(path, setup{ NULL, 0, 0, -1 }, c.kv, tmp, &cpu)) continue;
        for (const setup & s : setups) {
            script_run dev;
            if (script(path, s, c.kv, tmp, &dev)) compare(what, s, cpu, dev);
        }
    }
    // The sliding window (phi3 made from stories260K, window 12).
    const std::string phi3 = std::string(tmp) + "/stories260K-phi3-swa12.gguf";
    std::string err;
    const bool made = phi3_from_llama(shared + "/models/stories260K.gguf", phi3, 12, &err);
    CHECK_MSG(made, "phi3: %s", err.c_str());
    if (made) {
        script_run cpu;
        if (window_script(phi3, setup{ NULL, 0, 0, -1 }, &cpu)) {
            for (const setup & s : setups) {
                script_run dev;
                if (window_script(phi3, s, &dev)) compare("stories260K-phi3-swa12, window reuse", s, cpu, dev);
            }
        }
        unlink(phi3.c_str());
    }
    unlink((std::string(tmp) + "/state.bin").c_str());
    rmdir(tmp);
    return tern_test_summary();
}
