// vocab_tokenize: split around special tokens, tokenize each raw fragment with
// the vocabulary's tokenizer, add BOS/EOS when asked (llama.cpp's tokenize_impl).
#include <string.h>

#include "core/status.h"
#include "vocab/vocab_internal.h"

namespace tern {

static size_t fragments_bytes(int32_t text_len) {
    return arena_padded(((size_t) 2 * (size_t) text_len + 1) * sizeof(vocab_fragment));
}

size_t vocab_tokenize_scratch_size(const tern_vocab * v, int32_t text_len) {
    if (text_len < 0) text_len = 0;
    // Each raw fragment is tokenized on its own and its memory given back, and
    // none is longer than the text: the largest is the text itself.
    size_t per_fragment = v->type == TERN_VOCAB_BPE ? vocab_bpe_scratch_size(text_len) : vocab_spm_scratch_size(text_len);
    return 2 * fragments_bytes(text_len) + per_fragment;
}

static bool tokenize_fragments(const tern_vocab * v, const char * text, const vocab_fragment * frags, int32_t n,
                               bool add_special, vocab_out * o, tern_arena * scratch) {
    if (add_special && v->add_bos && v->bos >= 0) vocab_emit(o, v->bos);
    // SPM: a space is put before text that starts the input or follows a special token.
    bool prev_special = true;
    for (int32_t i = 0; i < n; i++) {
        if (frags[i].token >= 0) {
            vocab_emit(o, frags[i].token);
            prev_special = true;
            continue;
        }
        size_t mark = arena_temp_mark(scratch);
        const char * s = text + frags[i].offset;
        bool ok = v->type == TERN_VOCAB_SPM
                ? vocab_tokenize_spm(v, s, frags[i].length, v->add_space_prefix && prev_special, o, scratch)
                : vocab_tokenize_bpe(v, s, frags[i].length, o, scratch);
        arena_temp_release(scratch, mark);
        if (!ok) return false;
        prev_special = false;
    }
    if (add_special && v->add_eos && v->eos >= 0) vocab_emit(o, v->eos);
    return true;
}

int32_t vocab_tokenize(const tern_vocab * v, const char * text, int32_t text_len, tern_token * out, int32_t n_max,
                       bool add_special, bool parse_special, tern_arena * scratch) {
    if (!v || !scratch || text_len < 0 || (text_len > 0 && !text) || n_max < 0 || (n_max > 0 && !out)) {
        tern_fail(TERN_ERR_INVALID_ARG, "vocab_tokenize: bad arguments (text_len %d, n_max %d)", (int) text_len,
                  (int) n_max);
        return INT32_MIN;
    }
    if (v->type != TERN_VOCAB_SPM && v->type != TERN_VOCAB_BPE) {
        tern_fail(TERN_ERR_UNSUPPORTED, "vocab_tokenize: tokenizer '%s' is not supported", v->model_name);
        return INT32_MIN;
    }
    size_t mark = arena_temp_mark(scratch);
    vocab_fragment * frags = (vocab_fragment *) arena_alloc_temp(scratch, fragments_bytes(text_len));
    vocab_fragment * tmp = (vocab_fragment *) arena_alloc_temp(scratch, fragments_bytes(text_len));
    vocab_out o = {out, n_max, 0};
    bool ok = frags && tmp;
    if (ok) {
        int32_t n = vocab_partition(v, text, text_len, parse_special, frags, tmp);
        ok = tokenize_fragments(v, text, frags, n, add_special, &o, scratch);
    }
    arena_temp_release(scratch, mark);
    if (!ok) return INT32_MIN;
    return o.n <= n_max ? o.n : -o.n;
}

}  // namespace tern
