// Shared pieces of the vocab implementation (not part of its interface).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "vocab/vocab.h"

namespace tern {

// FNV-1a over bytes, continued from `h` (start with VOCAB_FNV_SEED).
#define VOCAB_FNV_SEED 2166136261u
static inline uint32_t vocab_fnv1a(uint32_t h, const char * s, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t) s[i]) * 16777619u;
    return h;
}

// Open-addressing capacity for n keys: a power of two >= 2n (load <= 1/2).
static inline uint32_t vocab_index_cap(uint64_t n) {
    uint32_t cap = 16;
    while (cap < 2 * n && cap < (1u << 31)) cap <<= 1;
    return cap;
}

static inline uint32_t vocab_token_len(const tern_vocab * v, int32_t id) {
    return v->text_off[id + 1] - v->text_off[id] - 1;
}
static inline const char * vocab_token_ptr(const tern_vocab * v, int32_t id) {
    return v->texts + v->text_off[id];
}

// Rank of the merge (left, right), -1 when the vocabulary has none.
int32_t vocab_merge_rank(const tern_vocab * v, const char * left, size_t left_len,
                         const char * right, size_t right_len);

// Special tokens found by their text (llama.cpp's auto-detection): how many at
// most can be promoted to control tokens, which bounds the special list.
#define VOCAB_AUTO_SPECIAL_MAX 40
// Fill eot/eom/fim ids found by text, the EOG set, the special list (longest
// first) and model-specific strip attributes. Called once by vocab_load.
void vocab_finish_specials(const gguf_file * f, tern_vocab * v, uint16_t * attrs, int32_t * special);

// A piece of the text to tokenize: raw bytes [offset, offset + length) or one special token.
struct vocab_fragment {
    int32_t token;   // -1 for raw text
    int32_t offset;
    int32_t length;
};
// Split text around special token texts like llama.cpp's tokenizer_st_partition.
// frags/tmp hold at most 2 * text_len + 1 fragments each; returns the count.
int32_t vocab_partition(const tern_vocab * v, const char * text, int32_t text_len, bool parse_special,
                        vocab_fragment * frags, vocab_fragment * tmp);

// Token appender shared by the tokenizers: counts every token, stores those that fit.
struct vocab_out {
    tern_token * out;
    int32_t n_max;
    int32_t n;
};
static inline void vocab_emit(vocab_out * o, tern_token t) {
    if (o->n < o->n_max) o->out[o->n] = t;
    o->n++;
}

// Tokenize one raw fragment. Working memory from scratch's temp region (the
// caller releases it); false when it runs out (tern_fail set).
bool vocab_tokenize_spm(const tern_vocab * v, const char * text, int32_t len, bool space_prefix,
                        vocab_out * o, tern_arena * scratch);
bool vocab_tokenize_bpe(const tern_vocab * v, const char * text, int32_t len, vocab_out * o,
                        tern_arena * scratch);
size_t vocab_spm_scratch_size(int32_t len);
size_t vocab_bpe_scratch_size(int32_t len);

}  // namespace tern
