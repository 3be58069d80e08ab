// Greedy pair merging, the engine shared by the SentencePiece and byte-level BPE
// tokenizers (llama.cpp's llm_tokenizer_spm and llm_tokenizer_bpe run the same loop):
//   1. split text[0, len) into one symbol per UTF-8 character, kept as a doubly
//      linked list so that merging two neighbours is O(1);
//   2. ask `propose` about every adjacent pair; each pair it accepts goes into a
//      binary heap with the key it returned (SPM: the merged token's score,
//      BPE: the merge rank);
//   3. pop the best pair: the key `better` puts first, ties broken leftmost first.
//      Skip it if stale (a side was merged away, or grew since it was pushed, so
//      the merged size differs); otherwise merge the right symbol into the left
//      and propose the new pairs with the left and right neighbours;
//   4. once the heap is empty, hand the remaining symbols, left to right, to `emit`.
// Memory is the caller's: sym holds len symbols, heap 3 * len bigrams (len - 1
// initial pairs, then at most len - 1 merges each pushing at most 2).
#pragma once
#include <stdint.h>

#include <algorithm>

#include "vocab/unicode.h"

namespace tern {

struct merge_symbol {
    int32_t prev, next;  // list links, -1 at the ends
    int32_t off, n;      // bytes in the text; n == 0 once merged away
};

template <class Key>
struct merge_bigram {
    int32_t left, right;  // symbol indices
    Key     key;
    int32_t size;  // bytes of the merged text, to detect stale entries
};

// better(a, b): key a merges before key b. propose(left, right, &key): false when
// the two adjacent symbols cannot merge. emit(symbol): called per final symbol.
template <class Key, class Better, class Propose, class Emit>
void symbol_merge(const char * text, int32_t len, merge_symbol * sym, merge_bigram<Key> * heap, Better better,
                  Propose propose, Emit emit) {
    // std::*_heap keep the greatest on top: make that the best key, then the lowest left.
    auto heap_less = [&](const merge_bigram<Key> & a, const merge_bigram<Key> & b) {
        return better(b.key, a.key) || (a.key == b.key && a.left > b.left);
    };
    int32_t n_heap = 0;
    auto push_pair = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        Key key;
        if (!propose(sym[left], sym[right], &key)) return;
        heap[n_heap++] = {left, right, key, sym[left].n + sym[right].n};
        std::push_heap(heap, heap + n_heap, heap_less);
    };

    int32_t n_sym = 0;
    for (int32_t off = 0; off < len;) {
        int32_t n = std::min<int32_t>(unicode_len_utf8((uint8_t) text[off]), len - off);
        sym[n_sym] = {n_sym - 1, off + n == len ? -1 : n_sym + 1, off, n};
        off += n;
        n_sym++;
    }
    if (n_sym == 0) return;
    for (int32_t i = 1; i < n_sym; i++) push_pair(i - 1, i);
    while (n_heap > 0) {
        std::pop_heap(heap, heap + n_heap, heap_less);
        merge_bigram<Key> b = heap[--n_heap];
        merge_symbol & l = sym[b.left];
        merge_symbol & r = sym[b.right];
        if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) sym[r.next].prev = b.left;
        push_pair(l.prev, b.left);
        push_pair(b.left, l.next);
    }
    for (int32_t i = 0; i != -1; i = sym[i].next) emit(sym[i]);
}

}  // namespace tern
