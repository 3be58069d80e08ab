// tern.h entry points of the vocabulary: special tokens, tokenize, token_to_piece.
#include "tern.h"
#include "core/arena.h"
#include "core/status.h"
#include "model/model.h"
#include "port.h"

#include <inttypes.h>
#include <limits.h>

namespace tern {

extern "C" tern_vocab_type tern_vocab_type_of(const tern_model * m) { return m ? vocab_type(&m->vocab) : TERN_VOCAB_NONE; }
extern "C" const char * tern_vocab_model_name(const tern_model * m) { return m ? vocab_model_name(&m->vocab) : ""; }
extern "C" const char * tern_vocab_pre_name(const tern_model * m) { return m ? vocab_pre_name(&m->vocab) : ""; }
extern "C" tern_token tern_token_bos(const tern_model * m) { return m ? vocab_bos(&m->vocab) : -1; }
extern "C" tern_token tern_token_eos(const tern_model * m) { return m ? vocab_eos(&m->vocab) : -1; }
extern "C" tern_token tern_token_eot(const tern_model * m) { return m ? vocab_eot(&m->vocab) : -1; }
extern "C" int tern_add_bos(const tern_model * m) { return m ? vocab_add_bos(&m->vocab) : 0; }
extern "C" int tern_add_eos(const tern_model * m) { return m ? vocab_add_eos(&m->vocab) : 0; }
extern "C" int tern_token_is_eog(const tern_model * m, tern_token t) { return m ? vocab_is_eog(&m->vocab, t) : 0; }
extern "C" const char * tern_token_get_text(const tern_model * m, tern_token t) {
    return m ? vocab_token_text(&m->vocab, t) : NULL;
}

extern "C" size_t tern_tokenize_scratch_size(const tern_model * m, int32_t text_len) {
    if (!m || text_len < 0) return 0;
    return arena_buffer_size(vocab_tokenize_scratch_size(&m->vocab, text_len));
}

extern "C" int32_t tern_tokenize_in(const tern_model * m, const char * text, int32_t text_len, tern_token * tokens,
                                    int32_t n_tokens_max, int add_special, int parse_special, void * scratch,
                                    size_t scratch_size) {
    if (!m || (!text && text_len > 0) || text_len < 0) {
        tern_fail(TERN_ERR_INVALID_ARG, "tern_tokenize: bad arguments");
        return INT32_MIN;
    }
    const size_t need = tern_tokenize_scratch_size(m, text_len);
    tern_arena arena;
    if (!scratch || scratch_size < need || !arena_init(&arena, scratch, scratch_size)) {
        tern_fail(TERN_ERR_NO_MEMORY, "tern_tokenize: %zu bytes of scratch given, %zu needed for %" PRId32 " bytes of text",
                  scratch_size, need, text_len);
        return INT32_MIN;
    }
    return vocab_tokenize(&m->vocab, text, text_len, tokens, n_tokens_max, add_special != 0, parse_special != 0, &arena);
}

extern "C" int32_t tern_tokenize(const tern_model * m, const char * text, int32_t text_len, tern_token * tokens,
                                 int32_t n_tokens_max, int add_special, int parse_special) {
    if (!m || (!text && text_len > 0) || text_len < 0) {
        tern_fail(TERN_ERR_INVALID_ARG, "tern_tokenize: bad arguments");
        return INT32_MIN;
    }
    // The tokenizer's working memory: one allocation per call, released before returning.
    const size_t bytes = tern_tokenize_scratch_size(m, text_len);
    void * mem = port_alloc(bytes);
    if (!mem) {
        tern_fail(TERN_ERR_NO_MEMORY, "tern_tokenize: cannot allocate %zu bytes of scratch", bytes);
        return INT32_MIN;
    }
    int32_t n = tern_tokenize_in(m, text, text_len, tokens, n_tokens_max, add_special, parse_special, mem, bytes);
    port_free(mem);
    return n;
}

extern "C" int32_t tern_token_to_piece(const tern_model * m, tern_token t, char * buf, int32_t buf_size, int special) {
    if (!m || t < 0 || t >= vocab_n_tokens(&m->vocab) || buf_size < 0 || (!buf && buf_size > 0)) {
        tern_fail(TERN_ERR_INVALID_ARG, "tern_token_to_piece: %s", !m ? "model is NULL"
                  : (t < 0 || t >= vocab_n_tokens(&m->vocab)) ? "token outside the vocabulary" : "bad buffer");
        return INT32_MIN;
    }
    return vocab_token_to_piece(&m->vocab, t, buf, buf_size, special != 0);
}

}  // namespace tern
