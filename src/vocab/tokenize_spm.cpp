// SentencePiece (BPE-by-score) tokenizer, as llama.cpp's llm_tokenizer_spm:
//   1. escape: optional leading space, every ' ' -> U+2581 ("▁")
//   2. one symbol per UTF-8 character (a doubly linked list over the text)
//   3. push every adjacent pair whose concatenation is a token, keyed by that
//      token's score; repeatedly pop the best (highest score, then leftmost),
//      skip it if either side changed since, merge, and push the new pairs
//      with the left and right neighbours
//   4. each remaining symbol is a token, or else its bytes (<0xXX>, or unk).
// A merged symbol always is a token (a pair is only pushed when its text is one),
// so llama.cpp's rev_merge re-splitting never finds anything to split.
#include <string.h>

#include <algorithm>

#include "core/status.h"
#include "vocab/unicode.h"
#include "vocab/vocab_internal.h"

struct spm_symbol {
    int32_t prev, next;  // list links, -1 at the ends
    int32_t off, n;      // bytes in the escaped text; n == 0 once merged away
};

struct spm_bigram {
    int32_t left, right;
    float   score;
    int32_t size;  // bytes of the merged text, to detect stale entries
};

// std::priority_queue order of llama.cpp: the top is the highest score, then the lowest left.
static bool spm_bigram_less(const spm_bigram & a, const spm_bigram & b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
}

static size_t escaped_cap(int32_t len) { return 3 * ((size_t) len + 1); }

size_t vocab_spm_scratch_size(int32_t len) {
    size_t n = escaped_cap(len);
    return arena_padded(n) + arena_padded(n * sizeof(spm_symbol)) + arena_padded(3 * n * sizeof(spm_bigram));
}

struct spm_state {
    const tern_vocab * v;
    const char * text;
    spm_symbol * sym;
    spm_bigram * heap;
    int32_t n_heap;
};

static void try_add_bigram(spm_state * s, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const spm_symbol & l = s->sym[left];
    int32_t size = l.n + s->sym[right].n;
    tern_token t = vocab_text_to_token(s->v, s->text + l.off, (size_t) size);
    if (t < 0) return;
    s->heap[s->n_heap++] = {left, right, s->v->scores[t], size};
    std::push_heap(s->heap, s->heap + s->n_heap, spm_bigram_less);
}

static void emit_symbol(const tern_vocab * v, const char * text, const spm_symbol & sym, vocab_out * o) {
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
    spm_symbol * sym = (spm_symbol *) arena_alloc_temp(scratch, cap * sizeof(spm_symbol));
    spm_bigram * heap = (spm_bigram *) arena_alloc_temp(scratch, 3 * cap * sizeof(spm_bigram));
    if (!esc || !sym || !heap) return false;

    static const char k_space[] = "\xe2\x96\x81";
    int32_t n_esc = 0;
    if (space_prefix) { memcpy(esc, k_space, 3); n_esc = 3; }
    for (int32_t i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(esc + n_esc, k_space, 3); n_esc += 3; }
        else esc[n_esc++] = text[i];
    }
    if (n_esc == 0) return true;

    int32_t n_sym = 0;
    for (int32_t off = 0; off < n_esc;) {
        int32_t n = std::min(unicode_len_utf8((uint8_t) esc[off]), n_esc - off);
        sym[n_sym] = {n_sym - 1, off + n == n_esc ? -1 : n_sym + 1, off, n};
        off += n;
        n_sym++;
    }
    spm_state s = {v, esc, sym, heap, 0};
    for (int32_t i = 1; i < n_sym; i++) try_add_bigram(&s, i - 1, i);
    while (s.n_heap > 0) {
        std::pop_heap(heap, heap + s.n_heap, spm_bigram_less);
        spm_bigram b = heap[--s.n_heap];
        spm_symbol & l = sym[b.left];
        spm_symbol & r = sym[b.right];
        if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) sym[r.next].prev = b.left;
        try_add_bigram(&s, l.prev, b.left);
        try_add_bigram(&s, b.left, l.next);
    }
    for (int32_t i = 0; i != -1; i = sym[i].next) emit_symbol(v, esc, sym[i], o);
    return true;
}
