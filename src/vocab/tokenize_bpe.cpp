// Byte-level BPE tokenizer, as llama.cpp's llm_tokenizer_bpe:
//   1. decode the text to codepoints and split it into words (pretokenize)
//   2. byte-encode each word: every UTF-8 byte of it -> GPT-2's printable codepoint
//   3. merge the encoded characters pairwise (symbol_merge.h): a pair merges when
//      the vocabulary has that merge, best first by merge rank (lowest, then leftmost)
//   4. each remaining symbol is a token, or else its single bytes that are tokens.
// With ignore_merges (llama-3), a word that is a token as a whole is taken as is.
#include <string.h>

#include <functional>

#include "vocab/pretokenize.h"
#include "vocab/symbol_merge.h"
#include "vocab/unicode.h"
#include "vocab/vocab_internal.h"

namespace tern {

typedef merge_bigram<int32_t> bpe_bigram;  // keyed by merge rank

// An input byte becomes at most 3 encoded characters (an invalid byte is U+FFFD,
// 3 UTF-8 bytes) of at most 2 bytes each.
static size_t max_chars(int32_t len) { return 3 * (size_t) len + 1; }

size_t vocab_bpe_scratch_size(int32_t len) {
    size_t n = (size_t) len + 1, c = max_chars(len);
    return arena_padded(n * sizeof(uint32_t)) + arena_padded(n) + arena_padded(2 * c) +
           arena_padded(c * sizeof(merge_symbol)) + arena_padded(3 * c * sizeof(bpe_bigram));
}

static void emit_symbol(const tern_vocab * v, const char * word, const merge_symbol & sym, vocab_out * o) {
    tern_token t = vocab_text_to_token(v, word + sym.off, (size_t) sym.n);
    if (t >= 0) { vocab_emit(o, t); return; }
    for (int32_t j = 0; j < sym.n; j++) {
        tern_token b = vocab_text_to_token(v, word + sym.off + j, 1);
        if (b >= 0) vocab_emit(o, b);
    }
}

// Merge the encoded word[0, len) and emit its tokens.
static void merge_word(const tern_vocab * v, const char * word, int32_t len, merge_symbol * sym, bpe_bigram * heap,
                       vocab_out * o) {
    if (v->ignore_merges) {
        tern_token t = vocab_text_to_token(v, word, (size_t) len);
        if (t >= 0) { vocab_emit(o, t); return; }
    }
    auto propose = [&](const merge_symbol & l, const merge_symbol & r, int32_t * rank) {
        *rank = vocab_merge_rank(v, word + l.off, (size_t) l.n, word + r.off, (size_t) r.n);
        return *rank >= 0;
    };
    symbol_merge(word, len, sym, heap, std::less<int32_t>(), propose,
                 [&](const merge_symbol & s) { emit_symbol(v, word, s, o); });
}

// GPT-2 byte encoding of codepoints [b, e): returns the bytes written to out.
static int32_t byte_encode(const uint32_t * cpts, int32_t b, int32_t e, char * out) {
    int32_t n = 0;
    for (int32_t i = b; i < e; i++) {
        char utf8[4];
        int k = unicode_encode(cpts[i], utf8);
        for (int j = 0; j < k; j++) n += unicode_encode(unicode_byte_to_cpt((uint8_t) utf8[j]), out + n);
    }
    return n;
}

bool vocab_tokenize_bpe(const tern_vocab * v, const char * text, int32_t len, vocab_out * o, tern_arena * scratch) {
    size_t c = max_chars(len);
    uint32_t * cpts = (uint32_t *) arena_alloc_temp(scratch, ((size_t) len + 1) * sizeof(uint32_t));
    uint8_t * cut = (uint8_t *) arena_alloc_temp(scratch, (size_t) len + 1);
    char * word = (char *) arena_alloc_temp(scratch, 2 * c);
    merge_symbol * sym = (merge_symbol *) arena_alloc_temp(scratch, c * sizeof(merge_symbol));
    bpe_bigram * heap = (bpe_bigram *) arena_alloc_temp(scratch, 3 * c * sizeof(bpe_bigram));
    if (!cpts || !cut || !word || !sym || !heap) return false;

    int32_t n = 0;
    for (size_t pos = 0; pos < (size_t) len;) cpts[n++] = unicode_decode((const uint8_t *) text, (size_t) len, &pos);
    pretokenize(v->pre, cpts, n, cut);
    for (int32_t b = 0; b < n;) {
        int32_t e = b + 1;
        while (e < n && !cut[e]) e++;
        merge_word(v, word, byte_encode(cpts, b, e, word), sym, heap, o);
        b = e;
    }
    return true;
}

}  // namespace tern
