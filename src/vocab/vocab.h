// Vocabulary and tokenizers: SentencePiece (SPM, "llama") and byte-level BPE
// ("gpt2") with the pre-tokenizers of llama.cpp; WordPiece ("bert") is loaded
// but not tokenized. Behaviour matches llama.cpp's llama-vocab.cpp (Feb 2025).
//
// Memory: vocab_load() takes the tables from the model's arena in one pass
// whose size vocab_tables_size() computes from the GGUF header alone (the
// loader feeds every key/value pair to vocab_sizer_visit while measuring).
// Token texts are copied once (NUL-terminated); merges stay views into the
// GGUF bytes, which must outlive the vocabulary. vocab_tokenize() works in the
// temp region of a scratch arena and gives it back before returning.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "core/arena.h"
#include "gguf/gguf.h"

namespace tern {

// Token attributes (bit set), as llama.cpp's llama_token_attr.
enum vocab_attr {
    VOCAB_ATTR_UNDEFINED    = 0,
    VOCAB_ATTR_UNKNOWN      = 1 << 0,
    VOCAB_ATTR_UNUSED       = 1 << 1,
    VOCAB_ATTR_NORMAL       = 1 << 2,
    VOCAB_ATTR_CONTROL      = 1 << 3,
    VOCAB_ATTR_USER_DEFINED = 1 << 4,
    VOCAB_ATTR_BYTE         = 1 << 5,
    VOCAB_ATTR_LSTRIP       = 1 << 7,
    VOCAB_ATTR_RSTRIP       = 1 << 8,
};

// Pre-tokenizer (BPE only): which regex sequence splits text into words.
// vocab_load.cpp maps every tokenizer.ggml.pre name llama.cpp knows to one of
// these (a missing key gives DEFAULT; an unknown name is refused).
enum vocab_pre {
    VOCAB_PRE_DEFAULT = 0,  // llama.cpp's default sequence
    VOCAB_PRE_GPT2,
    VOCAB_PRE_LLAMA3,       // also dbrx, smaug-bpe, chatglm-bpe
    VOCAB_PRE_QWEN2,        // also stablelm2, megrez
    VOCAB_PRE_DEEPSEEK_LLM,
    VOCAB_PRE_STARCODER,    // also refact, command-r, smollm, codeshell, exaone, minerva-7b
    VOCAB_PRE_FALCON,
    VOCAB_PRE_DEEPSEEK_CODER,
    VOCAB_PRE_DEEPSEEK3,    // "deepseek-v3"
    VOCAB_PRE_BLOOM,        // also poro-chat, gpt3-finnish
    VOCAB_PRE_VIKING,
    VOCAB_PRE_TEKKEN,
    VOCAB_PRE_CHAMELEON,
};

#define VOCAB_MAX_EOG 16
#define VOCAB_NAME_MAX 48

struct tern_vocab {
    tern_vocab_type type;
    vocab_pre       pre;
    int32_t         n_tokens;

    const char *     texts;     // every token's text, each NUL-terminated
    const uint32_t * text_off;  // [n_tokens + 1] offset of token i in texts (length = off[i+1] - off[i] - 1)
    const float *    scores;    // [n_tokens] (0 when the file has none)
    const uint16_t * attrs;     // [n_tokens] vocab_attr bits
    const int32_t *  token_index;  // [token_index_cap] open addressing text -> id, -1 empty
    uint32_t         token_index_cap;  // power of two

    const gguf_str * merges;    // [n_merges] "left right" views into the GGUF bytes (BPE)
    int32_t          n_merges;
    const int32_t *  merge_index;  // [merge_index_cap] open addressing (left, right) -> rank, -1 empty
    uint32_t         merge_index_cap;

    const int32_t *  special;   // [n_special] control/user-defined/unknown ids, longest text first
    int32_t          n_special;

    tern_token bos, eos, eot, eom, unk, sep, pad;
    tern_token fim_pre, fim_suf, fim_mid, fim_pad, fim_rep, fim_sep;
    tern_token eog[VOCAB_MAX_EOG];
    int32_t    n_eog;
    tern_token byte_token[256];  // SPM byte fallback: "<0xXX>" (or the byte itself), -1 when absent

    bool add_bos, add_eos, add_space_prefix, ignore_merges;
    int32_t max_token_len;
    char model_name[VOCAB_NAME_MAX];  // tokenizer.ggml.model ("" when absent)
    char pre_name[VOCAB_NAME_MAX];    // tokenizer.ggml.pre ("" when absent)
};

// Sizing from the header alone.
struct vocab_sizer {
    uint64_t n_tokens;        // tokenizer.ggml.tokens length
    uint64_t text_bytes;      // sum of token text lengths (+ NUL), with llama.cpp's "[EMPTY_i]" for empty ones
    uint64_t n_merges;        // tokenizer.ggml.merges length
    uint64_t n_typed_special; // tokens typed control / user-defined / unknown
};
void   vocab_sizer_init(vocab_sizer * s);
void   vocab_sizer_visit(void * user /* vocab_sizer* */, const gguf_kv * kv);
// Exact: the sum of arena_padded() of what vocab_load allocates.
size_t vocab_tables_size(const vocab_sizer * s);

// Fill *out from the tokenizer.* keys. TERN_ERR_FORMAT names the key at fault
// (missing tokens, per-token arrays of the wrong length or type, missing BPE
// merges); a special id outside the vocabulary is ignored with a warning.
// TERN_ERR_UNSUPPORTED names an unknown tokenizer.ggml.model or .pre; *out is
// then complete but typed TERN_VOCAB_NONE (listed, never tokenized with).
tern_status vocab_load(const gguf_file * f, tern_arena * arena, tern_vocab * out);

// Temp bytes vocab_tokenize may take for text_len bytes of text.
size_t  vocab_tokenize_scratch_size(const tern_vocab * v, int32_t text_len);
// Returns tokens written, -(needed) if n_max too small, INT32_MIN on error (tern_fail detail set).
// Working memory only from scratch's temp region (arena_alloc_temp), released before returning.
int32_t vocab_tokenize(const tern_vocab * v, const char * text, int32_t text_len, tern_token * out,
                       int32_t n_max, bool add_special, bool parse_special, tern_arena * scratch);
// Bytes of one token: returns the count written, -(needed) when buf_size is too small,
// 0 for control/unknown tokens unless `special`.
int32_t vocab_token_to_piece(const tern_vocab * v, tern_token t, char * buf, int32_t buf_size, bool special);

// Queries.
int32_t         vocab_n_tokens(const tern_vocab * v);
tern_vocab_type vocab_type(const tern_vocab * v);
const char *    vocab_model_name(const tern_vocab * v);
const char *    vocab_pre_name(const tern_vocab * v);
tern_token      vocab_bos(const tern_vocab * v);   // -1 when absent
tern_token      vocab_eos(const tern_vocab * v);
tern_token      vocab_eot(const tern_vocab * v);
bool            vocab_add_bos(const tern_vocab * v);
bool            vocab_add_eos(const tern_vocab * v);
bool            vocab_is_eog(const tern_vocab * v, tern_token t);
// NUL-terminated text of a token; NULL when out of range.
const char *    vocab_token_text(const tern_vocab * v, tern_token t);
uint16_t        vocab_token_attr(const tern_vocab * v, tern_token t);
// Id of a token text, -1 when the vocabulary has none.
tern_token      vocab_text_to_token(const tern_vocab * v, const char * text, size_t len);

}  // namespace tern
