// libFuzzer target over the GBNF parser and the grammar engine: the input is
// a grammar, then (after a \x01 byte) text. Parse and check it with small
// limits; when it builds, feed the text whole and byte by byte, try every
// suffix, and walk a small vocabulary of pieces cut from the text and the
// grammar. Every call ends in a status, never a crash, a hang or growth.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/arena.h"
#include "sample/grammar.h"

using namespace tern;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const uint8_t * sep = (const uint8_t *) memchr(data, 1, size);
    const size_t glen = sep ? (size_t) (sep - data) : size;
    const std::string text(reinterpret_cast<const char *>(data), glen);
    const uint8_t * input = sep ? sep + 1 : data + size;
    const size_t input_len = sep ? size - glen - 1 : 0;
    grammar_limits lim = {2048, 512, 64};
    char err[256];
    const size_t need = grammar_mem_size(text.data(), text.size(), &lim, err, sizeof(err));
    if (need == 0 || need > ((size_t) 64 << 20)) return 0;
    std::vector<uint8_t> mem(need + 64);
    tern_arena a;
    arena_init(&a, mem.data(), mem.size());
    grammar g;
    if (grammar_init(&g, &a, text.data(), text.size(), "root", &lim, err, sizeof(err)) != TERN_OK) return 0;
    (void) grammar_accept(&g, input, input_len);
    grammar_reset(&g);
    for (size_t i = 0; i < input_len; i++) {
        if (grammar_accept(&g, input + i, 1) != TERN_OK) break;
        (void) grammar_can_end(&g);
    }
    grammar_reset(&g);
    // A vocabulary: pieces of the input (lengths 1..8) and the grammar's first bytes.
    std::vector<std::string> pieces;
    for (size_t i = 0; i < input_len && pieces.size() < 48; i += 3) {
        pieces.push_back(std::string((const char *) input + i, std::min<size_t>(1 + i % 8, input_len - i)));
    }
    for (size_t i = 0; i < text.size() && pieces.size() < 64; i += 7) pieces.push_back(text.substr(i, 1 + i % 3));
    if (pieces.empty()) return 0;
    std::sort(pieces.begin(), pieces.end());
    std::vector<uint8_t> bytes;
    std::vector<uint32_t> off, order;
    std::vector<uint16_t> len, lcp;
    for (size_t t = 0; t < pieces.size(); t++) {
        off.push_back((uint32_t) bytes.size());
        len.push_back((uint16_t) pieces[t].size());
        bytes.insert(bytes.end(), pieces[t].begin(), pieces[t].end());
        order.push_back((uint32_t) t);
        size_t k = 0;
        if (t > 0) while (k < pieces[t].size() && k < pieces[t - 1].size() && pieces[t][k] == pieces[t - 1][k]) k++;
        lcp.push_back((uint16_t) k);
    }
    grammar_vocab v = {(uint32_t) pieces.size(), (uint32_t) pieces.size(), order.data(), lcp.data(), off.data(), len.data(),
                       bytes.data(), 8};
    std::vector<uint8_t> allowed(pieces.size());
    for (uint32_t budget : {GRAMMAR_INF, 4u, 0u}) {
        if (grammar_filter(&g, &v, budget, allowed.data()) != TERN_OK) break;
        for (size_t t = 0; t < pieces.size(); t++) {
            int r = grammar_try(&g, (const uint8_t *) pieces[t].data(), pieces[t].size(), budget);
            if (r >= 0 && r != allowed[t]) abort();   // the walk and the per-token check must agree
        }
    }
    return 0;
}
