// Saved states after any history (issue 23, items 3 to 6), on stories260K
// and on a phi3 file with a sliding window of 12 made from it at run time:
// 3. Randomized histories of 240 steps (batches for one or two sequences,
//    seq_rm / seq_add / seq_div / seq_cp / seq_keep, context shifts,
//    defragmentation): after every step the whole context saved and loaded
//    into a second context gives the same bytes back, one sequence saved and
//    loaded into a third context (another destination id), and all three then
//    decode the same token with the same status and, bit for bit, the same
//    logits (positions out of cell order and equal ones included).
// 4. A "fine-tune" (the same file with one weight matrix changed, or one norm
//    vector) refuses the base model's state; the same file loaded another way
//    (no repack, read path) takes it.
// 5. States with a NaN logit, an infinite K value, an infinite Q8_0 K scale
//    (checksums made right) are refused with TERN_ERR_NUMERIC, positions out
//    of the batch range with TERN_ERR_FORMAT, the context unchanged.
// 6. Sliding-window rollback on the phi3 file in a context too small to keep
//    every cell: removing the last k tokens and decoding them again gives the
//    first logits bit for bit, or is refused with TERN_ERR_INVALID_ARG, and
//    exactly when k reaches below tern_kv_cache_seq_pos_min + n_swa - 1;
//    the same after a defragmentation.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "check.h"
#include "tern.h"
#include "tools/phi3_from_llama.h"

namespace {

const int kSwa = 12;

struct rng {
    uint64_t s;
    uint32_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return (uint32_t) (s >> 11);
    }
    int below(int n) { return n > 0 ? (int) (next() % (uint32_t) n) : 0; }
};

tern_model * load(const std::string & path, int repack = 1, int mmap = 1) {
    tern_model_params mp = tern_model_default_params();
    mp.repack = repack;
    mp.use_mmap = mmap;
    tern_model * m = NULL;
    CHECK_MSG(tern_model_load_file(path.c_str(), &mp, &m) == TERN_OK, "%s: %s", path.c_str(), tern_last_error());
    return m;
}

tern_context * make_ctx(tern_model * m, uint32_t n_ctx, uint32_t n_seq, tern_type type_k = TERN_TYPE_F16) {
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = 16;
    cp.n_seq_max = n_seq;
    cp.n_threads = 1;
    cp.type_k = type_k;
    tern_context * ctx = NULL;
    CHECK_MSG(tern_context_create(m, &cp, &ctx) == TERN_OK, "%s", tern_last_error());
    return ctx;
}

std::vector<uint8_t> state_of(tern_context * ctx) {
    std::vector<uint8_t> s(tern_state_get_size(ctx));
    CHECK(tern_state_get_data(ctx, s.data(), s.size()) == s.size());
    return s;
}

std::vector<uint8_t> seq_state_of(tern_context * ctx, tern_seq_id seq) {
    std::vector<uint8_t> s(tern_state_seq_get_size(ctx, seq));
    CHECK(tern_state_seq_get_data(ctx, s.data(), s.size(), seq) == s.size());
    return s;
}

// One token for the sequences in `seqs` at position `pos`; the status, and the logits when OK.
int g_n_vocab = 0;

tern_status decode_one(tern_context * ctx, tern_token t, tern_pos pos, const std::vector<tern_seq_id> & seqs,
                       std::vector<float> * logits) {
    tern_batch b = tern_batch_init(1, (int32_t) seqs.size());
    b.token[0] = t;
    b.pos[0] = pos;
    b.n_seq_id[0] = (int32_t) seqs.size();
    for (size_t k = 0; k < seqs.size(); k++) b.seq_id[0][k] = seqs[k];
    b.logits[0] = 1;
    b.n_tokens = 1;
    const tern_status st = tern_decode(ctx, b);
    tern_batch_free(b);
    logits->clear();
    if (st == TERN_OK) {
        const float * l = tern_get_logits_ith(ctx, -1);
        if (l) logits->assign(l, l + g_n_vocab);
    }
    return st;
}

// Tokens [first, first + n) of sequence s in one batch.
tern_status decode_run(tern_context * ctx, rng & r, tern_seq_id s, tern_pos first, int n, int n_vocab) {
    tern_batch b = tern_batch_init(n, 1);
    for (int i = 0; i < n; i++) {
        b.token[i] = 1 + r.below(n_vocab - 1);
        b.pos[i] = first + i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = s;
        b.logits[i] = i == n - 1;
    }
    b.n_tokens = n;
    const tern_status st = tern_decode(ctx, b);
    tern_batch_free(b);
    return st;
}

bool same_bits(const std::vector<float> & a, const std::vector<float> & b) {
    return a.size() == b.size() && (a.empty() || memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

// 3. A randomized history; returns the number of steps whose states round-tripped.
void history(tern_model * m, const char * name, uint64_t seed, int steps) {
    const uint32_t n_ctx = 48, n_seq = 3;
    // c has room for a whole sequence of a besides its own token.
    tern_context * a = make_ctx(m, n_ctx, n_seq), * b = make_ctx(m, n_ctx, n_seq), * c = make_ctx(m, n_ctx + 16, n_seq);
    if (!a || !b || !c) return;
    const int n_vocab = tern_model_n_vocab(m);
    rng r = {seed};
    int ok_steps = 0, probes = 0, refused = 0, shifts = 0, divs = 0;
    for (int step = 0; step < steps; step++) {
        const tern_seq_id s = r.below((int) n_seq), t = (s + 1 + r.below((int) n_seq - 1)) % (int) n_seq;
        const tern_pos top = tern_kv_cache_seq_pos_max(a, s);
        const int op = r.below(13);
        if (op <= 3) {  // a batch for s
            const tern_status st = decode_run(a, r, s, top + 1, 1 + r.below(6), n_vocab);
            if (st == TERN_ERR_CONTEXT_FULL) {  // a context shift of the longest sequence
                tern_seq_id longest = 0;
                for (tern_seq_id q = 1; q < (tern_seq_id) n_seq; q++) {
                    if (tern_kv_cache_seq_pos_max(a, q) > tern_kv_cache_seq_pos_max(a, longest)) longest = q;
                }
                const tern_pos end = tern_kv_cache_seq_pos_max(a, longest) + 1, keep = 2, discard = (end - keep) / 2;
                CHECK(tern_kv_cache_seq_rm(a, longest, keep, keep + discard) == 1);
                CHECK(tern_kv_cache_seq_add(a, longest, keep + discard, -1, -discard) == 1);
                shifts++;
            } else if (st != TERN_OK) {
                CHECK_MSG(st == TERN_ERR_INVALID_ARG, "%s step %d: decode status %d: %s", name, step, (int) st, tern_last_error());
                tern_kv_cache_seq_rm(a, s, -1, -1);  // a window rollback refused: start that sequence again
            }
        } else if (op == 4 && top >= 0) {  // roll back the last few
            CHECK(tern_kv_cache_seq_rm(a, s, top - r.below(5), -1) == 1);
        } else if (op == 5 && top > 2) {  // a hole in the middle
            const tern_pos p0 = r.below(top);
            CHECK(tern_kv_cache_seq_rm(a, s, p0, p0 + 1 + r.below(3)) == 1);
        } else if (op == 6 && top >= 0) {  // move a tail (either way)
            CHECK(tern_kv_cache_seq_add(a, s, r.below(top + 1), -1, r.below(9) - 4) == 1);
        } else if (op == 7 && top > 1) {  // Self-Extend: equal positions
            const tern_pos p0 = r.below(top);
            CHECK(tern_kv_cache_seq_div(a, s, p0, p0 + 2 + r.below(8), 2 + r.below(2)) == 1);
            divs++;
        } else if (op == 8 && top >= 0) {  // share a prefix
            CHECK(tern_kv_cache_seq_rm(a, t, -1, -1) == 1);
            CHECK(tern_kv_cache_seq_cp(a, s, t, 0, r.below(top + 2)) == 1);
        } else if (op == 9 && r.below(4) == 0) {
            CHECK(tern_kv_cache_seq_keep(a, s) == 1);
        } else if (op == 10) {
            CHECK(tern_kv_cache_defrag(a) == TERN_OK);
        } else if (op == 12 && top > 6) {  // a context shift of s (llama-cli's: keep 2, halve the rest)
            const tern_pos keep = 2, discard = (top + 1 - keep) / 2;
            CHECK(tern_kv_cache_seq_rm(a, s, keep, keep + discard) == 1);
            CHECK(tern_kv_cache_seq_add(a, s, keep + discard, -1, -discard) == 1);
            shifts++;
        } else if (op == 11) {  // one token in two sequences
            const tern_pos p = std::max(top, tern_kv_cache_seq_pos_max(a, t)) + 1;
            std::vector<float> ignored;
            const tern_status st = decode_one(a, (tern_token) (1 + r.below(n_vocab - 1)), p, {s, t}, &ignored);
            CHECK_MSG(st == TERN_OK || st == TERN_ERR_CONTEXT_FULL || st == TERN_ERR_INVALID_ARG, "%s step %d: %d", name, step, (int) st);
        }
        // The whole context: saved, loaded, saved again: the same bytes.
        const std::vector<uint8_t> whole = state_of(a);
        const size_t got = tern_state_set_data(b, whole.data(), whole.size());
        CHECK_MSG(got == whole.size(), "%s step %d: whole state refused: %s", name, step, tern_last_error());
        const bool round = got == whole.size() && state_of(b) == whole;
        CHECK_MSG(round, "%s step %d: the whole state does not come back the same", name, step);
        // One sequence, into another id of a context holding something else.
        const tern_seq_id probe = r.below((int) n_seq), dest = (probe + 1) % (int) n_seq;
        tern_kv_cache_clear(c);
        std::vector<float> ignored;
        decode_one(c, 5, 0, {probe}, &ignored);
        const std::vector<uint8_t> seq = seq_state_of(a, probe);
        const size_t got_seq = tern_state_seq_set_data(c, seq.data(), seq.size(), dest);
        CHECK_MSG(got_seq == seq.size(), "%s step %d: sequence state refused: %s", name, step, tern_last_error());
        CHECK(got_seq == 0 || seq_state_of(c, dest) == seq);
        // The same next token everywhere. a is compacted first (keeping its
        // order) so that its new cell comes after the old ones as in b and c:
        // attention sums the cells in index order, and only the same order
        // gives the same bits. A full a frees window cells and may place it
        // lower: then only b (the same layout) is compared.
        CHECK(tern_kv_cache_defrag(a) == TERN_OK);
        const bool a_full = tern_kv_cache_used_cells(a) == (int32_t) n_ctx;
        const tern_pos p = tern_kv_cache_seq_pos_max(a, probe) + 1;
        const tern_token tok = (tern_token) (1 + r.below(n_vocab - 1));
        std::vector<float> la, lb, lc;
        const tern_status sa = decode_one(a, tok, p, {probe}, &la);
        const tern_status sb = decode_one(b, tok, p, {probe}, &lb);
        const tern_status sc = decode_one(c, tok, p, {dest}, &lc);
        CHECK_MSG(sa == sb && same_bits(la, lb), "%s step %d: restored context: status %d/%d, logits %s", name, step,
                  (int) sa, (int) sb, same_bits(la, lb) ? "same" : "differ");
        // c holds fewer cells: it may fit what a could not.
        if (!a_full) {
            CHECK_MSG(sa == sc && same_bits(la, lc), "%s step %d: restored sequence: status %d/%d, logits %s", name, step,
                      (int) sa, (int) sc, same_bits(la, lc) ? "same" : "differ");
        }
        probes += sa == TERN_OK;
        refused += sa == TERN_ERR_INVALID_ARG;
        if (sa == TERN_ERR_INVALID_ARG) tern_kv_cache_seq_rm(a, probe, -1, -1);  // refused by the window: start it again
        ok_steps += round;
    }
    printf("%s: %d steps, %d round trips, %d probes decoded, %d refused by the window, %d context shifts, %d seq_div\n",
           name, steps, ok_steps, probes, refused, shifts, divs);
    CHECK(ok_steps == steps && divs > 5 && shifts > 2 && probes > steps / 2);
    tern_context_free(a);
    tern_context_free(b);
    tern_context_free(c);
}

// 4. Same shape, other weights.
void fingerprint(const std::string & base_path, const std::string & dir) {
    gguf_source src;
    std::string err;
    CHECK_MSG(src.open(base_path, &err), "%s", err.c_str());
    if (src.bytes.empty()) return;
    // A fine-tune: every value of one matrix moved a little; a "norm tune": one vector.
    struct { const char * tensor; const char * file; } tunes[] = {
        {"blk.2.ffn_up.weight", "/tuned-matrix.gguf"},
        {"blk.0.attn_norm.weight", "/tuned-norm.gguf"},
        {"token_embd.weight", "/tuned-embd.gguf"},  // 128 KiB: fingerprinted in sampled runs
    };
    tern_model * base = load(base_path);
    tern_context * cb = base ? make_ctx(base, 32, 1) : NULL;
    if (!cb) return;
    const std::vector<tern_token> prompt = {1, 403, 407, 261, 378};
    CHECK(tern_decode(cb, tern_batch_get_one(const_cast<tern_token *>(prompt.data()), (int32_t) prompt.size())) == TERN_OK);
    const std::vector<uint8_t> saved = state_of(cb);
    for (const auto & tune : tunes) {
        std::vector<uint8_t> bytes = src.bytes;
        bool found = false;
        for (uint64_t i = 0; i < src.f.n_tensors; i++) {
            const gguf_tensor_info & ti = src.f.tensors[i];
            if (strcmp(ti.name, tune.tensor) != 0) continue;
            CHECK(ti.type == TERN_TYPE_F32);
            float * v = (float *) (bytes.data() + src.f.data_offset + ti.offset);
            for (uint64_t k = 0; k < ti.bytes / 4; k++) v[k] *= 1.001f;
            found = true;
        }
        CHECK_MSG(found, "%s not in %s", tune.tensor, base_path.c_str());
        const std::string path = dir + tune.file;
        FILE * f = fopen(path.c_str(), "wb");
        CHECK(f && fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
        if (f) fclose(f);
        tern_model * tuned = load(path);
        tern_context * ct = tuned ? make_ctx(tuned, 32, 1) : NULL;
        if (ct) {
            const std::vector<uint8_t> before = state_of(ct);
            CHECK_MSG(tern_state_set_data(ct, saved.data(), saved.size()) == 0 && strstr(tern_last_error(), "fingerprint"),
                      "%s: the base model's state was taken by a model with another %s (%s)", path.c_str(), tune.tensor,
                      tern_last_error());
            CHECK(state_of(ct) == before);
        }
        tern_context_free(ct);
        tern_model_free(tuned);
        unlink(path.c_str());
    }
    // The same file loaded without the repack, and on the read path: the same model.
    for (int way = 0; way < 2; way++) {
        tern_model * other = load(base_path, way == 0 ? 0 : 1, way == 0 ? 1 : 0);
        tern_context * co = other ? make_ctx(other, 32, 1) : NULL;
        if (co) CHECK_MSG(tern_state_set_data(co, saved.data(), saved.size()) == saved.size(), "%s", tern_last_error());
        tern_context_free(co);
        tern_model_free(other);
    }
    tern_context_free(cb);
    tern_model_free(base);
}

// FNV-1a, 32 bits (the state's checksums).
uint32_t fnv(const uint8_t * p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

// Checksums made right again after an edit (header: 72 bytes, payload sum at 64, header sum at 68).
void reseal(std::vector<uint8_t> & s) {
    const uint32_t payload = fnv(s.data() + 72, s.size() - 72);
    memcpy(s.data() + 64, &payload, 4);
    const uint32_t header = fnv(s.data(), 68);
    memcpy(s.data() + 68, &header, 4);
}

uint32_t field(const std::vector<uint8_t> & s, int i) {
    uint32_t v;
    memcpy(&v, s.data() + 4 * i, 4);
    return v;
}

// 5. Meaning, not only checksums.
void numeric(tern_model * m, const std::string & dir) {
    for (tern_type type_k : {TERN_TYPE_F16, TERN_TYPE_Q8_0}) {
        tern_context * a = make_ctx(m, 32, 2, type_k), * t = make_ctx(m, 32, 2, type_k);
        if (!a || !t) return;
        const std::vector<tern_token> prompt = {1, 403, 407, 261};
        CHECK(tern_decode(a, tern_batch_get_one(const_cast<tern_token *>(prompt.data()), 4)) == TERN_OK);
        std::vector<float> ignored;
        decode_one(t, 7, 0, {1}, &ignored);
        const std::vector<uint8_t> good = state_of(a), before = state_of(t);
        const uint32_t n_cells = field(good, 12), n_layer = field(good, 5), n_embd_k = field(good, 6);
        const size_t cells = 72, k_rows = cells + (size_t) n_cells * 12;
        const size_t k_row_bytes = type_k == TERN_TYPE_F16 ? n_embd_k * 2 : n_embd_k / 32 * 34;
        (void) n_layer;
        const std::string path = dir + "/bad.state";
        auto expect = [&](std::vector<uint8_t> bytes, tern_status want, const char * what) {
            reseal(bytes);
            FILE * f = fopen(path.c_str(), "wb");
            CHECK(f && fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
            if (f) fclose(f);
            const tern_status st = tern_state_load_file(t, path.c_str(), NULL, 0, NULL);
            CHECK_MSG(st == want && state_of(t) == before, "%s (K %s): status %d (want %d): %s", what, tern_type_name(type_k),
                      (int) st, (int) want, tern_last_error());
            CHECK(tern_state_set_data(t, bytes.data(), bytes.size()) == 0 && state_of(t) == before);
        };
        std::vector<uint8_t> x = good;
        const float nan = NAN, inf = INFINITY;
        memcpy(x.data() + x.size() - 4 * 7, &nan, 4);  // a logit of the last row
        expect(x, TERN_ERR_NUMERIC, "a NaN logit");
        x = good;
        memcpy(x.data() + x.size() - 4, &inf, 4);
        expect(x, TERN_ERR_NUMERIC, "an infinite logit");
        x = good;
        const uint16_t h_inf = 0x7c00;  // F16 +Inf: a K value, or a Q8_0 block's scale d (its first two bytes)
        memcpy(x.data() + k_rows + k_row_bytes + (type_k == TERN_TYPE_F16 ? 6 : 34), &h_inf, 2);
        expect(x, TERN_ERR_NUMERIC, type_k == TERN_TYPE_F16 ? "an infinite K value" : "an infinite K block scale");
        x = good;
        const int32_t neg = -1, past = INT32_MAX;
        memcpy(x.data() + cells + 12, &neg, 4);
        expect(x, TERN_ERR_FORMAT, "a cell at position -1");
        x = good;
        memcpy(x.data() + cells + 24, &past, 4);
        expect(x, TERN_ERR_FORMAT, "a cell past the largest position");
        CHECK(tern_state_set_data(t, good.data(), good.size()) == good.size());  // the unedited one loads
        unlink(path.c_str());
        tern_context_free(a);
        tern_context_free(t);
    }
}

// 6. Rollback on a window model.
void rollback(tern_model * m, bool defrag) {
    CHECK(tern_model_n_swa(m) == kSwa);
    const int n_tokens = 40, n_ctx = 20;
    tern_context * ctx = make_ctx(m, n_ctx, 1);
    if (!ctx) return;
    const int n_vocab = tern_model_n_vocab(m);
    std::vector<tern_token> toks;
    std::vector<std::vector<float>> first;
    for (int i = 0; i < n_tokens; i++) {
        toks.push_back((tern_token) (1 + (i * 131 + 7) % (n_vocab - 1)));
        std::vector<float> l;
        CHECK_MSG(decode_one(ctx, toks.back(), i, {0}, &l) == TERN_OK, "token %d: %s", i, tern_last_error());
        first.push_back(l);
    }
    const tern_pos pos_min = tern_kv_cache_seq_pos_min(ctx, 0);
    CHECK_MSG(pos_min > 0, "the window freed nothing (pos_min %d): the case tests nothing", pos_min);
    if (defrag) CHECK(tern_kv_cache_defrag(ctx) == TERN_OK);
    int exact = 0, refused = 0;
    float max_diff = 0.0f;
    for (int k = 1; k <= 16; k++) {
        const std::vector<uint8_t> before = state_of(ctx);
        const tern_pos p = n_tokens - k;
        CHECK(tern_kv_cache_seq_rm(ctx, 0, p, -1) == 1);
        std::vector<float> l;
        const tern_status st = decode_one(ctx, toks[(size_t) p], p, {0}, &l);
        const bool safe = p - kSwa + 1 >= pos_min;
        if (st == TERN_OK) {
            // The new cell may sit elsewhere among the others than the first
            // time (the sum order of the attention): equal up to rounding.
            float diff = l.size() == first[(size_t) p].size() ? 0.0f : INFINITY;
            for (size_t i = 0; i < l.size() && diff < INFINITY; i++) diff = std::max(diff, fabsf(l[i] - first[(size_t) p][i]));
            CHECK_MSG(diff <= 1e-4f, "rollback of %d: OK with other logits (max difference %g)", k, diff);
            max_diff = std::max(max_diff, diff);
            exact++;
        } else {
            CHECK_MSG(st == TERN_ERR_INVALID_ARG && strstr(tern_last_error(), "window"), "rollback of %d: status %d: %s", k,
                      (int) st, tern_last_error());
            refused++;
        }
        CHECK_MSG((st == TERN_OK) == safe, "rollback of %d (to %d, pos_min %d): status %d", k, p, pos_min, (int) st);
        // Back to where it was: the state saved before the rollback.
        CHECK(tern_state_set_data(ctx, before.data(), before.size()) == before.size());
    }
    printf("window rollback%s: pos_min %d, %d exact (max logit difference %g), %d refused\n", defrag ? " (defragmented)" : "",
           pos_min, exact, max_diff, refused);
    CHECK(exact > 0 && refused > 0);
    tern_context_free(ctx);
}

}  // namespace

int main(void) {
    const std::string shared = tern_test_shared_dir();
    char dir[] = "/tmp/tern_state_history_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    const std::string base = shared + "/models/stories260K.gguf", phi3 = std::string(dir) + "/stories260K-phi3-swa12.gguf";
    std::string err;
    CHECK_MSG(phi3_from_llama(base, phi3, kSwa, &err), "%s", err.c_str());
    tern_model * m = load(base);
    tern_model * w = load(phi3);
    g_n_vocab = m ? tern_model_n_vocab(m) : 0;
    if (m) {
        history(m, "stories260K", 0x9e3779b97f4a7c15ull, 240);
        numeric(m, dir);
    }
    if (w) {
        history(w, "stories260K-phi3-swa12", 0x2545f4914f6cdd1dull, 240);
        rollback(w, false);
        rollback(w, true);
    }
    fingerprint(base, dir);
    tern_model_free(m);
    tern_model_free(w);
    unlink(phi3.c_str());
    rmdir(dir);
    return tern_test_summary();
}
