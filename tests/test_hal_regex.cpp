// The tensor-override regex (src/hal/regex.h) against the patterns llama.cpp
// users give -ot, with std::regex_search's answers as the expectation
// (ECMAScript): search anywhere, greedy quantifiers, classes, groups,
// alternation, anchors; errors at compile time for bad patterns, and a
// bounded match (too many steps: -1) for catastrophic backtracking.
#include <regex>
#include <string>
#include "check.h"
#include "hal/regex.h"

using namespace tern::hal;

static int search(const char * pattern, const char * text) {
    re_prog p;
    char err[160];
    if (re_compile(pattern, strlen(pattern), &p, err, sizeof(err)) != 0) return -2;
    return re_search(&p, text);
}

int main() {
    const char * names[] = {
        "token_embd.weight", "output.weight", "output_norm.weight", "blk.0.attn_q.weight", "blk.3.attn_k.weight",
        "blk.12.ffn_up.weight", "blk.15.ffn_down_exps.weight", "blk.19.ffn_gate_exps.weight", "blk.7.ffn_norm.weight",
        "blk.10.attn_qkv.weight", "blk.1.attn_output.weight", "rope_freqs.weight", "", "aaaa", "ab", "b",
    };
    const char * patterns[] = {
        "ffn_.*", "blk\\.(1[0-9])\\.ffn_.*_exps", "\\.ffn_(up|down)_exps\\.", "^token_embd", "attn_(q|k)\\.",
        "blk\\.[0-9]+\\.attn", "blk\\.\\d{2}\\.", "output$", "weight$", "^blk\\.([0-9]|1[0-4])\\.", "[^a-z.]",
        "a{2,3}", "a{2}b", "(a|b)*$", "^$", "x?", ".", "ffn_(gate|up)_exps", "exps|norm", "(?:attn|ffn)_norm",
        "[a-c]+_", "\\w+\\.weight", "\\s", "blk\\..*\\.ffn_(gate|down)", "a+?b", "[.]weight", "([0-9])\\.",
    };
    int checked = 0;
    for (const char * p : patterns) {
        std::regex rx(p, std::regex::ECMAScript);
        for (const char * n : names) {
            const int want = std::regex_search(n, rx) ? 1 : 0;
            const int got = search(p, n);
            CHECK_MSG(got == want, "'%s' on '%s': %d, std::regex says %d", p, n, got, want);
            checked++;
        }
    }
    printf("%d pattern x name pairs as std::regex_search\n", checked);
    // Bad patterns: an error, never a crash.
    const char * bad[] = { "(ab", "ab)", "[a-", "a**", "*a", "a{3,2}", "\\", "a{", "+" };
    for (const char * p : bad) CHECK_MSG(search(p, "aaa") == -2, "'%s' compiled", p);
    std::string deep;
    for (int i = 0; i < 20; i++) deep += "(";
    deep += "a";
    for (int i = 0; i < 20; i++) deep += ")";
    CHECK(search(deep.c_str(), "a") == -2);  // nesting past 16
    CHECK(search(std::string(300, 'a').c_str(), "a") == -2);  // longer than 256 bytes
    // Catastrophic backtracking stops with -1 instead of running for ages.
    CHECK(search("(a*)*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac") == -1);
    CHECK(search("(a|a)*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac") == -1);
    return tern_test_summary();
}
