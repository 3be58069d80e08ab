// Sampler chain on hand-made logits: greedy, top-k/top-p/min-p cut sets,
// seeded reproducibility, the temp-1 distribution against softmax, penalties,
// and exact memory sizing.
#include <math.h>
#include <stdint.h>

#include <set>
#include <vector>

#include "check.h"
#include "sample/sampler.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

static tern_sampler_params greedy_params() {
    tern_sampler_params p = tern_sampler_default_params();
    p.temp = 0.0f;
    return p;
}

// Only temperature: the draw follows softmax(logits / temp).
static tern_sampler_params plain_params(float temp, uint32_t seed) {
    tern_sampler_params p = tern_sampler_default_params();
    p.temp = temp;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

// A sampler in its own heap block (freed with the vector).
struct test_sampler {
    std::vector<uint8_t> mem;
    tern_sampler * s = nullptr;
    test_sampler(int32_t n_vocab, const tern_sampler_params & p) {
        mem.resize(sampler_mem_size(n_vocab, &p));
        tern_status st = sampler_init(n_vocab, &p, mem.data(), mem.size(), &s);
        CHECK_MSG(st == TERN_OK && s, "sampler_init: %s", tern_last_error());
    }
};

// Set of tokens drawn in `n` samples.
static std::set<tern_token> drawn_set(const tern_sampler_params & p, const std::vector<float> & logits, int n) {
    test_sampler t((int32_t) logits.size(), p);
    std::set<tern_token> seen;
    for (int i = 0; i < n && t.s; i++) seen.insert(sampler_sample_logits(t.s, logits.data(), (int32_t) logits.size()));
    return seen;
}

static void test_greedy() {
    std::vector<float> logits = {0.1f, 2.0f, -1.0f, 3.5f, 3.5f, 0.0f};
    test_sampler t(6, greedy_params());
    CHECK(sampler_sample_logits(t.s, logits.data(), 6) == 3);   // first of the two maxima
    // NaN and +inf logits do not crash; +inf wins, greedy or not.
    std::vector<float> odd = {NAN, 1.0f, INFINITY, NAN};
    CHECK(sampler_sample_logits(t.s, logits.data(), 5) == -1);   // wrong n_vocab is refused
    test_sampler t4(4, greedy_params());
    CHECK(sampler_sample_logits(t4.s, odd.data(), 4) == 2);
    tern_sampler_params hot = plain_params(1.0f, 1);
    test_sampler h(4, hot);
    std::set<tern_token> seen;
    for (int i = 0; i < 10; i++) seen.insert(sampler_sample_logits(h.s, odd.data(), 4));
    CHECK((seen == std::set<tern_token>{2}));
}

static void test_top_k_one_is_greedy() {
    std::vector<float> logits(1000);
    for (size_t i = 0; i < logits.size(); i++) logits[i] = sinf((float) i * 0.37f) * 5.0f;
    int best = 0;
    for (size_t i = 1; i < logits.size(); i++) if (logits[i] > logits[best]) best = (int) i;
    tern_sampler_params p = plain_params(1.5f, 42);
    p.top_k = 1;
    std::set<tern_token> seen = drawn_set(p, logits, 50);
    CHECK(seen.size() == 1 && *seen.begin() == best);
}

static void test_seeds_reproduce() {
    std::vector<float> logits(500);
    for (size_t i = 0; i < logits.size(); i++) logits[i] = cosf((float) i * 0.11f) * 3.0f;
    tern_sampler_params p = tern_sampler_default_params();
    p.seed = 1234;
    auto run = [&](const tern_sampler_params & q) {
        test_sampler t(500, q);
        std::vector<tern_token> out;
        for (int i = 0; i < 100; i++) out.push_back(sampler_sample_logits(t.s, logits.data(), 500));
        return out;
    };
    std::vector<tern_token> a = run(p), b = run(p);
    CHECK(a == b);
    p.seed = 1235;
    CHECK(run(p) != a);
    // reset re-seeds: the draws repeat.
    p.seed = 1234;
    test_sampler t(500, p);
    std::vector<tern_token> first, second;
    for (int i = 0; i < 20; i++) first.push_back(sampler_sample_logits(t.s, logits.data(), 500));
    tern_sampler_reset(t.s);
    for (int i = 0; i < 20; i++) second.push_back(sampler_sample_logits(t.s, logits.data(), 500));
    CHECK(first == second);
}

// Draw counts at temp 1 against softmax: each count within 5 standard
// deviations of n*p, and a chi-square statistic below a loose bound.
static void test_distribution() {
    std::vector<float> logits = {1.0f, 0.0f, 2.0f, -1.0f, 0.5f, 1.5f, -3.0f, 0.0f};
    const int k = (int) logits.size();
    const int n = 200000;
    for (float temp : {1.0f, 0.5f}) {
        double sum = 0.0;
        std::vector<double> prob(k);
        for (int i = 0; i < k; i++) sum += prob[i] = exp(logits[i] / temp);
        for (int i = 0; i < k; i++) prob[i] /= sum;
        test_sampler t(k, plain_params(temp, 7));
        std::vector<int> count(k, 0);
        int out_of_range = 0;
        for (int i = 0; i < n; i++) {
            tern_token tok = sampler_sample_logits(t.s, logits.data(), k);
            if (tok >= 0 && tok < k) count[tok]++; else out_of_range++;
        }
        CHECK(out_of_range == 0);
        double chi2 = 0.0;
        for (int i = 0; i < k; i++) {
            double expect = n * prob[i];
            double sd = sqrt(n * prob[i] * (1.0 - prob[i]));
            CHECK_MSG(fabs(count[i] - expect) < 5.0 * sd, "temp %g token %d: %d draws, expected %.0f",
                      temp, i, count[i], expect);
            chi2 += (count[i] - expect) * (count[i] - expect) / expect;
        }
        CHECK_MSG(chi2 < 30.0, "chi2 %.1f with 7 degrees of freedom", chi2);   // p ~ 1e-4
    }
}

static void test_cut_sets() {
    // softmax of {ln .5, ln .25, ln .15, ln .1}: p = .5 .25 .15 .1, listed out of order.
    std::vector<float> logits = {logf(0.15f), logf(0.5f), logf(0.1f), logf(0.25f)};
    const int draws = 2000;
    tern_sampler_params p = plain_params(1.0f, 3);

    p.top_k = 2;
    CHECK((drawn_set(p, logits, draws) == std::set<tern_token>{1, 3}));
    p.top_k = 0;

    p.top_p = 0.74f;   // .5 + .25 reaches it: two tokens
    CHECK((drawn_set(p, logits, draws) == std::set<tern_token>{1, 3}));
    p.top_p = 0.76f;   // needs the third
    CHECK((drawn_set(p, logits, draws) == std::set<tern_token>{0, 1, 3}));
    p.top_p = 0.0f;    // keeps at least one
    CHECK((drawn_set(p, logits, draws) == std::set<tern_token>{1}));
    p.top_p = 1.0f;

    p.min_p = 0.29f;   // p >= .145: .15 stays, .1 goes
    CHECK((drawn_set(p, logits, draws) == std::set<tern_token>{0, 1, 3}));
    p.min_p = 0.6f;    // p >= .3: only .5
    CHECK((drawn_set(p, logits, draws) == std::set<tern_token>{1}));
    p.min_p = 2.0f;    // nothing passes: the best is kept
    CHECK((drawn_set(p, logits, draws) == std::set<tern_token>{1}));
    p.min_p = 0.0f;

    // top-k then top-p renormalises over the survivors: among {.5, .25, .15}
    // (sum .9) the first two hold .833 >= .8.
    p.top_k = 3;
    p.top_p = 0.8f;
    CHECK((drawn_set(p, logits, draws) == std::set<tern_token>{1, 3}));
    // All filters off: every token shows up.
    CHECK(drawn_set(plain_params(1.0f, 3), logits, draws).size() == 4);
}

static void test_penalties() {
    // Greedy probes: a penalty changes the argmax only where it should.
    const int32_t nv = 5;
    std::vector<float> logits = {2.0f, 1.9f, -1.0f, -1.1f, 0.0f};
    auto greedy_after = [&](tern_sampler_params p, std::vector<tern_token> history, const std::vector<float> & l) {
        test_sampler t(nv, p);
        for (tern_token tok : history) tern_sampler_accept(t.s, tok);
        return sampler_sample_logits(t.s, l.data(), nv);
    };
    tern_sampler_params p = greedy_params();
    CHECK(greedy_after(p, {0, 0, 0}, logits) == 0);   // penalties off
    p.repeat_penalty = 1.1f;                          // 2.0/1.1 = 1.82 < 1.9
    CHECK(greedy_after(p, {0}, logits) == 1);
    CHECK(greedy_after(p, {1}, logits) == 0);
    // Negative logits are multiplied: -1.0*1.2 = -1.2 < -1.1.
    std::vector<float> neg = {-1.0f, -1.1f, -5.0f, -5.0f, -5.0f};
    p.repeat_penalty = 1.2f;
    CHECK(greedy_after(p, {0}, neg) == 1);
    p.repeat_penalty = 1.0f;
    // Frequency scales with the count: 2.0 - 3*0.05 = 1.85 < 1.9, but one
    // occurrence (1.95) is not enough.
    p.frequency_penalty = 0.05f;
    CHECK(greedy_after(p, {0, 0, 0}, logits) == 1);
    CHECK(greedy_after(p, {0}, logits) == 0);
    p.frequency_penalty = 0.0f;
    // Presence does not scale: 0.15 once is enough, 0.05 five times is not.
    p.presence_penalty = 0.15f;
    CHECK(greedy_after(p, {0}, logits) == 1);
    p.presence_penalty = 0.05f;
    CHECK(greedy_after(p, {0, 0, 0, 0, 0}, logits) == 0);
    p.presence_penalty = 0.0f;
    // Only the last penalty_last_n tokens count.
    p.repeat_penalty = 1.1f;
    p.penalty_last_n = 2;
    CHECK(greedy_after(p, {0, 4, 4}, logits) == 0);
    CHECK(greedy_after(p, {4, 0, 4}, logits) == 1);
    // sample accepts its own choice: with a strong penalty greedy alternates.
    p.penalty_last_n = 1;
    p.repeat_penalty = 2.0f;
    test_sampler t(nv, p);
    tern_token a = sampler_sample_logits(t.s, logits.data(), nv);
    tern_token b = sampler_sample_logits(t.s, logits.data(), nv);
    tern_token c = sampler_sample_logits(t.s, logits.data(), nv);
    CHECK(a == 0 && b == 1 && c == 0);
    // reset forgets the history.
    tern_sampler_reset(t.s);
    CHECK(sampler_sample_logits(t.s, logits.data(), nv) == 0);
    // Out-of-range tokens are ignored, not written past the candidates.
    tern_sampler_accept(t.s, -5);
    tern_sampler_accept(t.s, nv);
    CHECK(sampler_sample_logits(t.s, logits.data(), nv) == 1);   // still penalised by its own 0
}

static void test_mem_size() {
    const int32_t nv = 1001;
    tern_sampler_params p = tern_sampler_default_params();
    size_t need = sampler_mem_size(nv, &p);
    CHECK(need > nv * sizeof(float) * 3);
    std::vector<uint8_t> buf(need + 128);
    // Exactly `need` bytes work at every alignment of the buffer.
    bool all_ok = true;
    for (size_t off = 0; off < 64; off++) {
        tern_sampler * s = nullptr;
        all_ok &= sampler_init(nv, &p, buf.data() + off, need, &s) == TERN_OK && s != nullptr;
    }
    CHECK(all_ok);
    // One byte fewer fails at the worst alignment (one past a 64-byte boundary).
    uint8_t * base = buf.data() + ((64 - ((uintptr_t) buf.data() & 63)) & 63) + 1;
    tern_sampler * s = (tern_sampler *) 1;
    CHECK(sampler_init(nv, &p, base, need - 1, &s) == TERN_ERR_NO_MEMORY);
    CHECK(s == nullptr);
    CHECK(strstr(tern_last_error(), "sampler") != nullptr);
    // And a sampler made at the edge works.
    CHECK(sampler_init(nv, &p, base, need, &s) == TERN_OK);
    std::vector<float> logits(nv, 0.0f);
    logits[777] = 10.0f;
    tern_token tok = sampler_sample_logits(s, logits.data(), nv);
    CHECK(tok >= 0 && tok < nv);
    // The ring size counts: a longer look-back needs more.
    tern_sampler_params q = p;
    q.penalty_last_n = 1000;
    CHECK(sampler_mem_size(nv, &q) > need);
    // mem NULL: one block obtained and released by free.
    tern_sampler * owned = nullptr;
    CHECK(sampler_init(nv, &p, nullptr, 0, &owned) == TERN_OK && owned);
    CHECK(sampler_sample_logits(owned, logits.data(), nv) >= 0);
    tern_sampler_free(owned);
    // Bad parameters are refused, not crashed on.
    q = p;
    q.repeat_penalty = 0.0f;
    CHECK(sampler_mem_size(nv, &q) == 0);
    CHECK(sampler_init(nv, &q, nullptr, 0, &owned) == TERN_ERR_INVALID_ARG);
    q = p;
    q.temp = INFINITY;
    CHECK(sampler_init(nv, &q, nullptr, 0, &owned) == TERN_ERR_INVALID_ARG);
    q = p;
    q.penalty_last_n = -1;
    CHECK(sampler_init(nv, &q, nullptr, 0, &owned) == TERN_ERR_INVALID_ARG);
    CHECK(sampler_init(0, &p, nullptr, 0, &owned) == TERN_ERR_INVALID_ARG);
    CHECK(sampler_sample_logits(nullptr, logits.data(), nv) == -1);
    // NULL params mean the defaults.
    CHECK(sampler_mem_size(nv, nullptr) == need);
}

int main() {
    test_greedy();
    test_top_k_one_is_greedy();
    test_seeds_reproduce();
    test_distribution();
    test_cut_sets();
    test_penalties();
    test_mem_size();
    return tern_test_summary();
}
