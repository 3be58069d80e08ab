// Byte-level BPE tokenizer, as llama.cpp's llm_tokenizer_bpe:
//   1. decode the text to codepoints and split it into words (pretokenize)
//   2. byte-encode each word: every UTF-8 byte of it -> GPT-2's printable codepoint
//   3. one symbol per encoded character; push adjacent pairs that are a merge,
//      keyed by merge rank; pop the best (lowest rank, then leftmost), skip
//      stale pairs, merge, push the new neighbour pairs
//   4. each remaining symbol is a token, or else its single bytes that are tokens.
// With ignore_merges (llama-3), a word that is a token as a whole is taken as is.
#include <string.h>

#include <algorithm>

#include "vocab/pretokenize.h"
#include "vocab/unicode.h"
#include "vocab/vocab_internal.h"

struct bpe_symbol {
    int32_t prev, next;  // list links within the word, -1 at the ends
    int32_t off, n;      // bytes in the encoded word; n == 0 once merged away
};

struct bpe_bigram {
    int32_t left, right;
    int32_t rank;
    int32_t size;  // bytes of the merged text, to detect stale entries
};

// llama.cpp's queue order: the top is the lowest rank, then the lowest left.
static bool bpe_bigram_less(const bpe_bigram & a, const bpe_bigram & b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
}

// An input byte becomes at most 3 encoded characters (an invalid byte is U+FFFD,
// 3 UTF-8 bytes) of at most 2 bytes each.
static size_t max_chars(int32_t len) { return 3 * (size_t) len + 1; }

size_t vocab_bpe_scratch_size(int32_t len) {
    size_t n = (size_t) len + 1, c = max_chars(len);
    return arena_padded(n * sizeof(uint32_t)) + arena_padded(n) + arena_padded(2 * c) +
           arena_padded(c * sizeof(bpe_symbol)) + arena_padded(3 * c * sizeof(bpe_bigram));
}

struct bpe_state {
    const tern_vocab * v;
    const char * word;
    bpe_symbol * sym;
    bpe_bigram * heap;
    int32_t n_heap;
};

static void add_bigram(bpe_state * s, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const bpe_symbol & l = s->sym[left];
    const bpe_symbol & r = s->sym[right];
    int32_t rank = vocab_merge_rank(s->v, s->word + l.off, (size_t) l.n, s->word + r.off, (size_t) r.n);
    if (rank < 0) return;
    s->heap[s->n_heap++] = {left, right, rank, l.n + r.n};
    std::push_heap(s->heap, s->heap + s->n_heap, bpe_bigram_less);
}

static void emit_symbol(const tern_vocab * v, const char * word, const bpe_symbol & sym, vocab_out * o) {
    tern_token t = vocab_text_to_token(v, word + sym.off, (size_t) sym.n);
    if (t >= 0) { vocab_emit(o, t); return; }
    for (int32_t j = 0; j < sym.n; j++) {
        tern_token b = vocab_text_to_token(v, word + sym.off + j, 1);
        if (b >= 0) vocab_emit(o, b);
    }
}

// Merge the encoded word[0, len) and emit its tokens.
static void merge_word(const tern_vocab * v, const char * word, int32_t len, bpe_symbol * sym, bpe_bigram * heap,
                       vocab_out * o) {
    if (v->ignore_merges) {
        tern_token t = vocab_text_to_token(v, word, (size_t) len);
        if (t >= 0) { vocab_emit(o, t); return; }
    }
    int32_t n_sym = 0;
    for (int32_t off = 0; off < len;) {
        int32_t n = std::min(unicode_len_utf8((uint8_t) word[off]), len - off);
        sym[n_sym] = {n_sym - 1, off + n == len ? -1 : n_sym + 1, off, n};
        off += n;
        n_sym++;
    }
    bpe_state s = {v, word, sym, heap, 0};
    for (int32_t i = 1; i < n_sym; i++) add_bigram(&s, i - 1, i);
    while (s.n_heap > 0) {
        std::pop_heap(heap, heap + s.n_heap, bpe_bigram_less);
        bpe_bigram b = heap[--s.n_heap];
        bpe_symbol & l = sym[b.left];
        bpe_symbol & r = sym[b.right];
        if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) sym[r.next].prev = b.left;
        add_bigram(&s, l.prev, b.left);
        add_bigram(&s, b.left, l.next);
    }
    for (int32_t i = 0; i != -1; i = sym[i].next) emit_symbol(v, word, sym[i], o);
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
    bpe_symbol * sym = (bpe_symbol *) arena_alloc_temp(scratch, c * sizeof(bpe_symbol));
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
