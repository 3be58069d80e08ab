// Lookups and accessors over the loaded tables.
#include <string.h>

#include "vocab/vocab_internal.h"

namespace tern {

tern_token vocab_text_to_token(const tern_vocab * v, const char * text, size_t len) {
    if (v->n_tokens == 0) return -1;
    uint32_t mask = v->token_index_cap - 1;
    for (uint32_t h = vocab_fnv1a(VOCAB_FNV_SEED, text, len) & mask;; h = (h + 1) & mask) {
        int32_t id = v->token_index[h];
        if (id < 0) return -1;
        if (vocab_token_len(v, id) == len && memcmp(vocab_token_ptr(v, id), text, len) == 0) return id;
    }
}

int32_t vocab_merge_rank(const tern_vocab * v, const char * left, size_t left_len, const char * right,
                         size_t right_len) {
    if (v->merge_index_cap == 0) return -1;
    uint32_t mask = v->merge_index_cap - 1;
    uint32_t h = vocab_fnv1a(VOCAB_FNV_SEED, left, left_len);
    h = vocab_fnv1a(h, " ", 1);
    h = vocab_fnv1a(h, right, right_len);
    for (h &= mask;; h = (h + 1) & mask) {
        int32_t r = v->merge_index[h];
        if (r < 0) return -1;
        const gguf_str * m = &v->merges[r];
        if (m->len == left_len + 1 + right_len && memcmp(m->data, left, left_len) == 0 &&
            m->data[left_len] == ' ' && memcmp(m->data + left_len + 1, right, right_len) == 0 &&
            // the stored merge splits at its first space after byte 0: so must this pair
            (left_len <= 1 || memchr(m->data + 1, ' ', left_len - 1) == NULL)) {
            return r;
        }
    }
}

int32_t         vocab_n_tokens(const tern_vocab * v) { return v->n_tokens; }
tern_vocab_type vocab_type(const tern_vocab * v) { return v->type; }
const char *    vocab_model_name(const tern_vocab * v) { return v->model_name; }
const char *    vocab_pre_name(const tern_vocab * v) { return v->pre_name; }
tern_token      vocab_bos(const tern_vocab * v) { return v->bos; }
tern_token      vocab_eos(const tern_vocab * v) { return v->eos; }
tern_token      vocab_eot(const tern_vocab * v) { return v->eot; }
bool            vocab_add_bos(const tern_vocab * v) { return v->add_bos; }
bool            vocab_add_eos(const tern_vocab * v) { return v->add_eos; }

bool vocab_is_eog(const tern_vocab * v, tern_token t) {
    for (int32_t i = 0; i < v->n_eog; i++) {
        if (v->eog[i] == t) return true;
    }
    return false;
}

const char * vocab_token_text(const tern_vocab * v, tern_token t) {
    return (t >= 0 && t < v->n_tokens) ? vocab_token_ptr(v, t) : NULL;
}

uint16_t vocab_token_attr(const tern_vocab * v, tern_token t) {
    return (t >= 0 && t < v->n_tokens) ? v->attrs[t] : (uint16_t) VOCAB_ATTR_UNDEFINED;
}

}  // namespace tern
