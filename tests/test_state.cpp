// State save and restore (issue 7 item 8): whole context and one sequence,
// from memory and from files; a restored context continues with the same
// logits, bit for bit; corrupted, truncated and foreign states are refused
// and leave the context exactly as it was.
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "tern.h"

namespace {

std::string g_models;

tern_model * load(const char * name) {
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    if (tern_model_load_file((g_models + "/" + name).c_str(), &mp, &m) != TERN_OK) {
        CHECK_MSG(false, "%s: %s", name, tern_last_error());
        return NULL;
    }
    return m;
}

tern_context * make_ctx(tern_model * m, uint32_t n_seq = 2, tern_type type_k = TERN_TYPE_F16) {
    tern_context_params cp = tern_context_default_params();
    cp.type_k = type_k;
    cp.n_ctx = 96;
    cp.n_batch = 32;
    cp.n_seq_max = n_seq;
    cp.n_threads = 2;
    tern_context * ctx = NULL;
    CHECK_MSG(tern_context_create(m, &cp, &ctx) == TERN_OK, "%s", tern_last_error());
    return ctx;
}

// Decode tokens for one sequence at positions p0..; returns the last logits.
std::vector<float> feed(tern_context * ctx, const tern_model * m, const std::vector<tern_token> & t, tern_pos p0,
                        tern_seq_id s) {
    tern_batch b = tern_batch_init((int32_t) t.size(), 1);
    for (size_t i = 0; i < t.size(); i++) {
        b.token[i] = t[i];
        b.pos[i] = p0 + (tern_pos) i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = s;
        b.logits[i] = i + 1 == t.size();
    }
    b.n_tokens = (int32_t) t.size();
    tern_status st = tern_decode(ctx, b);
    tern_batch_free(b);
    CHECK_MSG(st == TERN_OK, "decode: %s", tern_last_error());
    const float * l = st == TERN_OK ? tern_get_logits_ith(ctx, -1) : NULL;
    return l ? std::vector<float>(l, l + tern_model_n_vocab(m)) : std::vector<float>();
}

bool same(const std::vector<float> & a, const std::vector<float> & b) {
    return !a.empty() && a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

std::vector<uint8_t> state_of(tern_context * ctx) {
    std::vector<uint8_t> s(tern_state_get_size(ctx));
    size_t n = tern_state_get_data(ctx, s.data(), s.size());
    CHECK_MSG(n == s.size(), "get_data: %zu of %zu: %s", n, s.size(), tern_last_error());
    return s;
}

const std::vector<tern_token> kPrompt = {1, 403, 407, 261, 378, 285, 260, 436, 439, 282};
const std::vector<tern_token> kMore = {300, 301, 302};

void test_whole_context(tern_model * m, const char * name, const std::string & dir) {
    tern_context * a = make_ctx(m), * b = make_ctx(m), * c = make_ctx(m);
    if (!a || !b || !c) return;
    feed(a, m, kPrompt, 0, 0);
    feed(a, m, {5, 6}, 0, 1);
    CHECK(tern_kv_cache_seq_add(a, 1, 0, -1, 3) == 1);  // a pending K-shift is applied before saving
    const std::vector<float> last(tern_get_logits_ith(a, -1), tern_get_logits_ith(a, -1) + tern_model_n_vocab(m));
    const std::vector<uint8_t> saved = state_of(a);
    CHECK(tern_state_set_data(b, saved.data(), saved.size()) == saved.size());
    const float * lb = tern_get_logits_ith(b, -1);
    CHECK_MSG(lb && memcmp(lb, last.data(), last.size() * 4) == 0, "%s: last logits not restored", name);
    CHECK(tern_kv_cache_used_cells(b) == tern_kv_cache_used_cells(a));
    // From a file, with the prompt tokens.
    const std::string path = dir + "/ctx.state";
    CHECK_MSG(tern_state_save_file(a, path.c_str(), kPrompt.data(), kPrompt.size()) == TERN_OK, "%s", tern_last_error());
    std::vector<tern_token> toks(64);
    size_t n_toks = 0;
    CHECK_MSG(tern_state_load_file(c, path.c_str(), toks.data(), toks.size(), &n_toks) == TERN_OK, "%s", tern_last_error());
    CHECK(n_toks == kPrompt.size() && std::vector<tern_token>(toks.begin(), toks.begin() + n_toks) == kPrompt);
    // Continue all three: the same logits, bit for bit.
    const std::vector<float> ra = feed(a, m, kMore, (tern_pos) kPrompt.size(), 0);
    const std::vector<float> rb = feed(b, m, kMore, (tern_pos) kPrompt.size(), 0);
    const std::vector<float> rc = feed(c, m, kMore, (tern_pos) kPrompt.size(), 0);
    CHECK_MSG(same(ra, rb) && same(ra, rc), "%s: restored contexts continue differently", name);
    const std::vector<float> sa = feed(a, m, {7}, 5, 1), sb = feed(b, m, {7}, 5, 1);
    CHECK_MSG(same(sa, sb), "%s: restored shifted sequence continues differently", name);
    // A file too small for its tokens' room is refused, the context unchanged.
    const std::vector<uint8_t> before = state_of(c);
    CHECK(tern_state_load_file(c, path.c_str(), toks.data(), 2, &n_toks) == TERN_ERR_NO_MEMORY);
    CHECK(state_of(c) == before);
    tern_context_free(a);
    tern_context_free(b);
    tern_context_free(c);
}

void test_sequence(tern_model * m, const char * name, const std::string & dir) {
    tern_context * a = make_ctx(m), * b = make_ctx(m);
    if (!a || !b) return;
    feed(a, m, {1, 50, 51, 52}, 0, 0);
    feed(a, m, kPrompt, 0, 1);
    std::vector<uint8_t> s(tern_state_seq_get_size(a, 1));
    CHECK(tern_state_seq_get_data(a, s.data(), s.size(), 1) == s.size());
    // Into sequence 0 of a context that holds something else there and in sequence 1.
    feed(b, m, {1, 9, 9}, 0, 0);
    feed(b, m, {1, 70}, 0, 1);
    CHECK_MSG(tern_state_seq_set_data(b, s.data(), s.size(), 0) == s.size(), "%s", tern_last_error());
    CHECK(tern_kv_cache_seq_pos_max(b, 0) == (tern_pos) kPrompt.size() - 1 && tern_kv_cache_seq_pos_max(b, 1) == 1);
    const std::vector<float> ra = feed(a, m, kMore, (tern_pos) kPrompt.size(), 1);
    const std::vector<float> rb = feed(b, m, kMore, (tern_pos) kPrompt.size(), 0);
    CHECK_MSG(same(ra, rb), "%s: restored sequence continues differently", name);
    // Sequence files.
    const std::string path = dir + "/seq.state";
    CHECK(tern_state_seq_save_file(a, path.c_str(), 0, NULL, 0) == TERN_OK);
    tern_context * c = make_ctx(m);
    size_t n = 7;
    CHECK_MSG(tern_state_seq_load_file(c, path.c_str(), 1, NULL, 0, &n) == TERN_OK && n == 0, "%s", tern_last_error());
    const std::vector<float> r0 = feed(a, m, {60}, 4, 0), r1 = feed(c, m, {60}, 4, 1);
    CHECK_MSG(same(r0, r1), "%s: sequence file continues differently", name);
    // A context state is not a sequence state, and the other way round.
    const std::vector<uint8_t> whole = state_of(a);
    CHECK(tern_state_seq_set_data(c, whole.data(), whole.size(), 0) == 0);
    CHECK(tern_state_set_data(c, s.data(), s.size()) == 0);
    tern_context_free(a);
    tern_context_free(b);
    tern_context_free(c);
}

// Every header byte flipped, cuts at every section boundary, a payload byte
// flipped, another model's state: refused, the context exactly as before.
void test_refusals(tern_model * m, tern_model * other, const char * name) {
    tern_context * a = make_ctx(m), * t = make_ctx(m);
    if (!a || !t) return;
    feed(a, m, kPrompt, 0, 0);
    const std::vector<uint8_t> good = state_of(a);
    feed(t, m, {1, 2, 3}, 0, 1);
    const std::vector<uint8_t> before = state_of(t);
    int refused = 0, cases = 0;
    auto expect_refused = [&](const std::vector<uint8_t> & bytes, const char * what, size_t at) {
        cases++;
        const size_t r = tern_state_set_data(t, bytes.data(), bytes.size());
        const bool unchanged = state_of(t) == before;
        CHECK_MSG(r == 0 && unchanged, "%s: %s at %zu accepted (%zu) or changed the context", name, what, at, r);
        refused += r == 0 && unchanged;
    };
    for (size_t i = 0; i < 72; i++) {  // the header
        std::vector<uint8_t> x = good;
        x[i] ^= 0x20;
        expect_refused(x, "header byte flipped", i);
    }
    const size_t n_vocab = (size_t) tern_model_n_vocab(m);
    uint32_t n_cells;
    memcpy(&n_cells, good.data() + 48, 4);  // header field 12
    const size_t cells_end = 72 + n_cells * 12;
    const size_t kv_bytes = (good.size() - cells_end - 4 - n_vocab * 4) / 2;  // one logits row, one output_row
    for (size_t cut : {(size_t) 0, (size_t) 71, (size_t) 72, cells_end - 1, cells_end, cells_end + kv_bytes,
                       cells_end + 2 * kv_bytes, good.size() - n_vocab * 4, good.size() - 1}) {
        expect_refused(std::vector<uint8_t>(good.begin(), good.begin() + (long) cut), "cut", cut);
    }
    std::vector<uint8_t> longer = good;
    longer.push_back(0);
    expect_refused(longer, "one byte more", good.size());
    for (size_t at : {(size_t) 72, cells_end + 5, good.size() - 1}) {
        std::vector<uint8_t> x = good;
        x[at] ^= 1;
        expect_refused(x, "payload byte flipped", at);
    }
    if (other) {
        tern_context * o = make_ctx(other);
        if (o) {
            feed(o, other, {1, 2, 3}, 0, 0);
            expect_refused(state_of(o), "another model's state", 0);
            tern_context_free(o);
        }
    }
    {   // A cache of another K type cannot take it (nor give one to this context).
        tern_context * qk = make_ctx(m, 2, TERN_TYPE_Q8_0);
        if (qk) {
            feed(qk, m, {1, 2}, 0, 0);
            const std::vector<uint8_t> q_before = state_of(qk);
            cases++;
            const bool ok = tern_state_set_data(qk, good.data(), good.size()) == 0 && state_of(qk) == q_before &&
                            strstr(tern_last_error(), "K/V types") != NULL;
            CHECK_MSG(ok, "%s: an F16 state was accepted by a Q8_0 cache: %s", name, tern_last_error());
            refused += ok;
            expect_refused(q_before, "a Q8_0-K state", 0);
            tern_context_free(qk);
        }
    }
    printf("%s: %d of %d bad states refused, the context unchanged\n", name, refused, cases);
    // Still usable.
    CHECK(feed(t, m, {4}, 3, 1).size() == n_vocab);
    tern_context_free(a);
    tern_context_free(t);
}

}  // namespace

int main(void) {
    g_models = std::string(tern_test_shared_dir()) + "/models";
    char dir[] = "/tmp/tern_state_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    tern_model * m = load("stories260K.gguf");
    tern_model * q = load("ktest-qwen2-s08-Q8_0.gguf");
    if (m) {
        test_whole_context(m, "stories260K", dir);
        test_sequence(m, "stories260K", dir);
        test_refusals(m, q, "stories260K");
    }
    if (q) {
        test_whole_context(q, "ktest-qwen2-s08-Q8_0", dir);
        test_sequence(q, "ktest-qwen2-s08-Q8_0", dir);
    }
    tern_model_free(m);
    tern_model_free(q);
    unlink((std::string(dir) + "/ctx.state").c_str());
    unlink((std::string(dir) + "/seq.state").c_str());
    rmdir(dir);
    return tern_test_summary();
}
