// SentencePiece (BPE-by-score) tokenizer, as llama.cpp's llm_tokenizer_spm:
//   1. escape: optional leading space, every ' ' -> U+2581 ("▁")
//   2. merge UTF-8 characters pairwise (symbol_merge.h): a pair merges when its
//      concatenation is a token, best first by that token's score (highest, then leftmost)
//   3. each remaining symbol is a token, or else its bytes (<0xXX>, or unk).
// A merged symbol always is a token (a pair is only pushed when its text is one),
// so llama.cpp's rev_merge re-splitting never finds anything to split.
#include <string.h>

#include <functional>

#include "core/status.h"
#include "vocab/symbol_merge.h"
#include "vocab/vocab_internal.h"

namespace tern {

typedef merge_bigram<float> spm_bigram;  // keyed by the merged token's score

static size_t escaped_cap(int32_t len) { return 3 * ((size_t) len + 1); }

size_t vocab_spm_scratch_size(int32_t len) {
    size_t n = escaped_cap(len);
    return arena_padded(n) + arena_padded(n * sizeof(merge_symbol)) + arena_padded(3 * n * sizeof(spm_bigram));
}

static void emit_symbol(const tern_vocab * v, const char * text, const merge_symbol & sym, vocab_out * o) {
    tern_token t = vocab_text_to_token(v, text + sym.off, (size_t) sym.n);
    if (t >= 0) { vocab_emit(o, t); return; }
    for (int32_t j = 0; j < sym.n; j++) {
        tern_token b = v->byte_token[(uint8_t) text[sym.off + j]];
        vocab_emit(o, b >= 0 ? b : v->unk);
    }
}

bool vocab_tokenize_spm(const tern_vocab * v, const char * text, int32_t len, bool space_prefix, vocab_out * o,
                        tern_arena * scratch) {
    size_t cap = escaped_cap(len);
    char * esc = (char *) arena_alloc_temp(scratch, cap);
    merge_symbol * sym = (merge_symbol *) arena_alloc_temp(scratch, cap * sizeof(merge_symbol));
    spm_bigram * heap = (spm_bigram *) arena_alloc_temp(scratch, 3 * cap * sizeof(spm_bigram));
    if (!esc || !sym || !heap) return false;

    static const char k_space[] = "\xe2\x96\x81";
    int32_t n_esc = 0;
    if (space_prefix) { memcpy(esc, k_space, 3); n_esc = 3; }
    for (int32_t i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(esc + n_esc, k_space, 3); n_esc += 3; }
        else esc[n_esc++] = text[i];
    }
    // Adjacent symbols lie side by side in esc, so their concatenation is esc + l.off.
    auto propose = [&](const merge_symbol & l, const merge_symbol & r, float * score) {
        tern_token t = vocab_text_to_token(v, esc + l.off, (size_t) (l.n + r.n));
        if (t < 0) return false;
        *score = v->scores[t];
        return true;
    };
    symbol_merge(esc, n_esc, sym, heap, std::greater<float>(), propose,
                 [&](const merge_symbol & s) { emit_symbol(v, esc, s, o); });
    return true;
}

}  // namespace tern
