// vocab_load: the tokenizer.* keys of a GGUF file -> tern_vocab tables.
//
// Tables, in allocation order (vocab_tables_size adds the same padded sizes):
//   texts        [sum(len + 1)]         token texts, NUL-terminated copies
//   text_off     [n_tokens + 1] u32
//   scores       [n_tokens] f32
//   attrs        [n_tokens] u16
//   token_index  [cap(n_tokens)] i32    open addressing, FNV-1a of the text
//   merge_index  [cap(n_merges)] i32    (BPE only; absent when there are no merges)
//   special      [n_typed_special + VOCAB_AUTO_SPECIAL_MAX] i32
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"
#include "vocab/vocab_internal.h"

namespace tern {

#define KEY_MODEL        "tokenizer.ggml.model"
#define KEY_PRE          "tokenizer.ggml.pre"
#define KEY_TOKENS       "tokenizer.ggml.tokens"
#define KEY_SCORES       "tokenizer.ggml.scores"
#define KEY_TOKEN_TYPE   "tokenizer.ggml.token_type"
#define KEY_MERGES       "tokenizer.ggml.merges"
#define KEY_ADD_BOS      "tokenizer.ggml.add_bos_token"
#define KEY_ADD_EOS      "tokenizer.ggml.add_eos_token"
#define KEY_ADD_PREFIX   "tokenizer.ggml.add_space_prefix"

// GGUF token types (gguf-py TokenType).
enum { TOKEN_TYPE_NORMAL = 1, TOKEN_TYPE_UNKNOWN = 2, TOKEN_TYPE_CONTROL = 3, TOKEN_TYPE_USER_DEFINED = 4,
       TOKEN_TYPE_UNUSED = 5, TOKEN_TYPE_BYTE = 6 };

// ---------------------------------------------------------------------------
// Sizing
// ---------------------------------------------------------------------------

// llama.cpp replaces an empty token text by "[EMPTY_<id>]".
static size_t empty_token_len(uint64_t id) {
    return (size_t) snprintf(NULL, 0, "[EMPTY_%llu]", (unsigned long long) id);
}

static bool key_is(const gguf_kv * kv, const char * key) { return gguf_str_eq(kv->key, key); }

static uint64_t load_u64(const uint8_t * p) { uint64_t x; memcpy(&x, p, 8); return x; }
static int32_t  load_i32(const uint8_t * p) { int32_t x; memcpy(&x, p, 4); return x; }

static bool is_string_array(const gguf_kv * kv) {
    return kv->type == GGUF_TYPE_ARRAY && kv->arr_type == GGUF_TYPE_STRING;
}

static uint64_t count_typed_special(const gguf_kv * kv) {
    if (kv->type != GGUF_TYPE_ARRAY || kv->arr_type != GGUF_TYPE_INT32) return 0;
    uint64_t n = 0;
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        int32_t t = load_i32(kv->data + 4 * i);
        n += (t == TOKEN_TYPE_UNKNOWN || t == TOKEN_TYPE_CONTROL || t == TOKEN_TYPE_USER_DEFINED);
    }
    return n;
}

void vocab_sizer_init(vocab_sizer * s) { memset(s, 0, sizeof(*s)); }

void vocab_sizer_visit(void * user, const gguf_kv * kv) {
    vocab_sizer * s = (vocab_sizer *) user;
    if (key_is(kv, KEY_TOKENS) && is_string_array(kv)) {
        s->n_tokens = kv->arr_n;
        s->text_bytes = 0;
        // While measuring, the string views may not exist yet: walk the file's
        // (validated) array, each element a u64 length and its bytes.
        const uint8_t * p = kv->data;
        for (uint64_t i = 0; i < kv->arr_n; i++) {
            uint64_t len = kv->strs ? kv->strs[i].len : load_u64(p);
            if (!kv->strs) p += 8 + len;
            s->text_bytes += (len ? len : empty_token_len(i)) + 1;
        }
    } else if (key_is(kv, KEY_MERGES) && is_string_array(kv)) {
        s->n_merges = kv->arr_n;
    } else if (key_is(kv, KEY_TOKEN_TYPE)) {
        s->n_typed_special = count_typed_special(kv);
    }
}

size_t vocab_tables_size(const vocab_sizer * s) {
    size_t n = (size_t) s->n_tokens;
    size_t total = arena_padded((size_t) s->text_bytes) + arena_padded((n + 1) * sizeof(uint32_t)) +
                   arena_padded(n * sizeof(float)) + arena_padded(n * sizeof(uint16_t)) +
                   arena_padded(vocab_index_cap(n) * sizeof(int32_t)) +
                   arena_padded((size_t) (s->n_typed_special + VOCAB_AUTO_SPECIAL_MAX) * sizeof(int32_t));
    if (s->n_merges > 0) total += arena_padded(vocab_index_cap(s->n_merges) * sizeof(int32_t));
    return total;
}

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------

static void copy_name(char * dst, const gguf_str * s) {
    size_t n = s->len < VOCAB_NAME_MAX - 1 ? (size_t) s->len : VOCAB_NAME_MAX - 1;
    memcpy(dst, s->data, n);
    dst[n] = 0;
}

// tokenizer.ggml.pre names, as llama.cpp c392e509's llama_vocab::impl::load
// (src/llama-vocab.cpp), with the flags it sets along.
enum { PRE_IGNORE_MERGES = 1, PRE_ADD_BOS = 2, PRE_NO_BOS = 4 };
struct pre_name {
    const char * name;
    vocab_pre    pre;
    int          flags;
};
static const pre_name k_pre_names[] = {
    {"default", VOCAB_PRE_DEFAULT, 0},
    {"llama3", VOCAB_PRE_LLAMA3, PRE_IGNORE_MERGES | PRE_ADD_BOS},
    {"llama-v3", VOCAB_PRE_LLAMA3, PRE_IGNORE_MERGES | PRE_ADD_BOS},
    {"llama-bpe", VOCAB_PRE_LLAMA3, PRE_IGNORE_MERGES | PRE_ADD_BOS},
    {"falcon3", VOCAB_PRE_LLAMA3, PRE_IGNORE_MERGES | PRE_ADD_BOS},
    {"dbrx", VOCAB_PRE_LLAMA3, 0},
    {"smaug-bpe", VOCAB_PRE_LLAMA3, 0},
    {"chatglm-bpe", VOCAB_PRE_LLAMA3, PRE_NO_BOS},
    {"deepseek-llm", VOCAB_PRE_DEEPSEEK_LLM, 0},
    {"deepseek-coder", VOCAB_PRE_DEEPSEEK_CODER, 0},
    {"deepseek-v3", VOCAB_PRE_DEEPSEEK3, 0},
    {"falcon", VOCAB_PRE_FALCON, 0},
    {"gpt-2", VOCAB_PRE_GPT2, 0},
    {"phi-2", VOCAB_PRE_GPT2, 0},
    {"jina-es", VOCAB_PRE_GPT2, 0},
    {"jina-de", VOCAB_PRE_GPT2, 0},
    {"gigachat", VOCAB_PRE_GPT2, 0},
    {"jina-v1-en", VOCAB_PRE_GPT2, 0},
    {"jina-v2-es", VOCAB_PRE_GPT2, 0},
    {"jina-v2-de", VOCAB_PRE_GPT2, 0},
    {"jina-v2-code", VOCAB_PRE_GPT2, 0},
    {"roberta-bpe", VOCAB_PRE_GPT2, 0},
    {"mpt", VOCAB_PRE_GPT2, 0},
    {"olmo", VOCAB_PRE_GPT2, 0},
    {"jais", VOCAB_PRE_GPT2, 0},
    {"starcoder", VOCAB_PRE_STARCODER, 0},
    {"refact", VOCAB_PRE_STARCODER, 0},
    {"command-r", VOCAB_PRE_STARCODER, 0},
    {"smollm", VOCAB_PRE_STARCODER, 0},
    {"codeshell", VOCAB_PRE_STARCODER, 0},
    {"exaone", VOCAB_PRE_STARCODER, 0},
    {"minerva-7b", VOCAB_PRE_STARCODER, 0},
    {"qwen2", VOCAB_PRE_QWEN2, 0},
    {"deepseek-r1-qwen", VOCAB_PRE_QWEN2, 0},
    {"stablelm2", VOCAB_PRE_QWEN2, 0},
    {"megrez", VOCAB_PRE_QWEN2, 0},
    {"poro-chat", VOCAB_PRE_BLOOM, 0},
    {"bloom", VOCAB_PRE_BLOOM, 0},
    {"gpt3-finnish", VOCAB_PRE_BLOOM, 0},
    {"viking", VOCAB_PRE_VIKING, 0},
    {"tekken", VOCAB_PRE_TEKKEN, PRE_IGNORE_MERGES | PRE_ADD_BOS},
    {"chameleon", VOCAB_PRE_CHAMELEON, PRE_ADD_BOS},
};

static const pre_name * find_pre(const gguf_str * name) {
    for (size_t i = 0; i < sizeof(k_pre_names) / sizeof(k_pre_names[0]); i++) {
        if (gguf_str_eq(*name, k_pre_names[i].name)) return &k_pre_names[i];
    }
    return NULL;
}

// Type and defaults from tokenizer.ggml.model / .pre, as llama.cpp's load().
// An unknown model or pre-tokenizer name sets *unsupported (the error is
// raised once the tables are loaded, see vocab_load) and types the vocabulary
// TERN_VOCAB_NONE, so that nothing tokenizes with it.
static tern_status read_model(const gguf_file * f, tern_vocab * v, bool * unsupported) {
    gguf_str model, pre = {"", 0};
    v->bos = v->eos = v->eot = v->eom = v->unk = v->sep = v->pad = -1;
    v->fim_pre = v->fim_suf = v->fim_mid = v->fim_pad = v->fim_rep = v->fim_sep = -1;
    v->pre = VOCAB_PRE_DEFAULT;
    v->type = TERN_VOCAB_NONE;
    if (!gguf_get_str(f, KEY_MODEL, &model)) return tern_fail(TERN_ERR_FORMAT, "%s: missing or not a string", KEY_MODEL);
    if (gguf_find_key(f, KEY_PRE) >= 0 && !gguf_get_str(f, KEY_PRE, &pre)) {
        return tern_fail(TERN_ERR_FORMAT, "%s: not a string", KEY_PRE);
    }
    copy_name(v->model_name, &model);
    copy_name(v->pre_name, &pre);
    if (gguf_str_eq(model, "llama")) {
        v->type = TERN_VOCAB_SPM;
        v->bos = 1; v->eos = 2; v->unk = 0;
        v->add_space_prefix = true;
        v->add_bos = true;
    } else if (gguf_str_eq(model, "gpt2")) {
        v->type = TERN_VOCAB_BPE;
        v->bos = 11; v->eos = 11;
        if (pre.len == 0) {  // missing or empty: llama.cpp warns and takes the default
            TERN_LOGW("vocab: %s missing, using the default pre-tokenizer (tokenization may differ)\n", KEY_PRE);
        } else if (const pre_name * p = find_pre(&pre)) {
            v->pre = p->pre;
            v->ignore_merges = (p->flags & PRE_IGNORE_MERGES) != 0;
            v->add_bos = (p->flags & PRE_ADD_BOS) != 0;
            if (p->flags & PRE_NO_BOS) v->bos = -1;
        } else {
            tern_fail(TERN_ERR_UNSUPPORTED, "%s: unknown pre-tokenizer '%s'", KEY_PRE, v->pre_name);
            v->type = TERN_VOCAB_NONE;
            *unsupported = true;
        }
    } else if (gguf_str_eq(model, "bert")) {
        v->type = TERN_VOCAB_WPM;
        v->bos = 101; v->unk = 100; v->sep = 102; v->pad = 0;
        v->add_bos = true;
    } else if (gguf_str_eq(model, "no_vocab") || gguf_str_eq(model, "none")) {
        v->type = TERN_VOCAB_NONE;
    } else {
        tern_fail(TERN_ERR_UNSUPPORTED, "%s: unknown tokenizer '%s'", KEY_MODEL, v->model_name);
        *unsupported = true;
    }
    if (gguf_find_key(f, KEY_ADD_PREFIX) >= 0 && !gguf_get_bool(f, KEY_ADD_PREFIX, &v->add_space_prefix)) {
        return tern_fail(TERN_ERR_FORMAT, "%s: not a bool", KEY_ADD_PREFIX);
    }
    return TERN_OK;
}

// An optional per-token array: absent (NULL), or exactly n_tokens of one of the given types.
static tern_status find_token_array(const gguf_file * f, const char * key, uint64_t n_tokens,
                                    gguf_value_type t1, gguf_value_type t2, const gguf_kv ** out) {
    *out = NULL;
    int64_t i = gguf_find_key(f, key);
    if (i < 0) return TERN_OK;
    const gguf_kv * kv = &f->kv[i];
    if (kv->type != GGUF_TYPE_ARRAY || (kv->arr_type != t1 && kv->arr_type != t2)) {
        return tern_fail(TERN_ERR_FORMAT, "%s: expected an array of %s, found %s", key, gguf_type_name(t1),
                         gguf_type_name(kv->type == GGUF_TYPE_ARRAY ? kv->arr_type : kv->type));
    }
    if (kv->arr_n != n_tokens) {
        return tern_fail(TERN_ERR_FORMAT, "%s: %llu entries for %llu tokens", key,
                         (unsigned long long) kv->arr_n, (unsigned long long) n_tokens);
    }
    *out = kv;
    return TERN_OK;
}

static uint16_t attr_from_type(int32_t t) {
    switch (t) {
        case TOKEN_TYPE_UNKNOWN:      return VOCAB_ATTR_UNKNOWN;
        case TOKEN_TYPE_UNUSED:       return VOCAB_ATTR_UNUSED;
        case TOKEN_TYPE_NORMAL:       return VOCAB_ATTR_NORMAL;
        case TOKEN_TYPE_CONTROL:      return VOCAB_ATTR_CONTROL;
        case TOKEN_TYPE_USER_DEFINED: return VOCAB_ATTR_USER_DEFINED;
        case TOKEN_TYPE_BYTE:         return VOCAB_ATTR_BYTE;
        default:                      return VOCAB_ATTR_UNDEFINED;
    }
}

static void * take(tern_arena * arena, size_t bytes, tern_status * st) {
    void * p = arena_alloc(arena, bytes, TERN_MEM_VOCAB);
    if (!p && *st == TERN_OK) *st = TERN_ERR_NO_MEMORY;  // arena_alloc set the detail
    return p;
}

// Insert token id into the text index; a repeated text maps to its last id (as llama.cpp).
static void index_token(int32_t * index, uint32_t cap, const tern_vocab * v, int32_t id) {
    const char * s = vocab_token_ptr(v, id);
    uint32_t len = vocab_token_len(v, id);
    for (uint32_t h = vocab_fnv1a(VOCAB_FNV_SEED, s, len) & (cap - 1);; h = (h + 1) & (cap - 1)) {
        int32_t other = index[h];
        if (other < 0 || (vocab_token_len(v, other) == len && memcmp(vocab_token_ptr(v, other), s, len) == 0)) {
            index[h] = id;
            return;
        }
    }
}

static tern_status load_tokens(const gguf_file * f, tern_arena * arena, tern_vocab * v, uint16_t ** out_attrs,
                               int32_t ** out_special) {
    int64_t ki = gguf_find_key(f, KEY_TOKENS);
    if (ki < 0) {
        if (v->type == TERN_VOCAB_NONE) return TERN_OK;
        return tern_fail(TERN_ERR_FORMAT, "%s: missing", KEY_TOKENS);
    }
    const gguf_kv * tokens = &f->kv[ki];
    if (!is_string_array(tokens)) return tern_fail(TERN_ERR_FORMAT, "%s: not an array of strings", KEY_TOKENS);
    if (tokens->arr_n == 0 || tokens->arr_n > (1u << 30)) {
        return tern_fail(TERN_ERR_FORMAT, "%s: %llu tokens", KEY_TOKENS, (unsigned long long) tokens->arr_n);
    }
    const gguf_kv *scores_kv, *types_kv, *merges_kv = NULL;
    uint64_t n = tokens->arr_n;
    TERN_TRY(find_token_array(f, KEY_SCORES, n, GGUF_TYPE_FLOAT32, GGUF_TYPE_INT32, &scores_kv));
    TERN_TRY(find_token_array(f, KEY_TOKEN_TYPE, n, GGUF_TYPE_INT32, GGUF_TYPE_INT32, &types_kv));
    if (v->type == TERN_VOCAB_BPE) {
        int64_t mi = gguf_find_key(f, KEY_MERGES);
        if (mi < 0) return tern_fail(TERN_ERR_FORMAT, "%s: missing (required by a BPE vocabulary)", KEY_MERGES);
        merges_kv = &f->kv[mi];
        if (!is_string_array(merges_kv)) return tern_fail(TERN_ERR_FORMAT, "%s: not an array of strings", KEY_MERGES);
    }

    // Same sizes as vocab_tables_size, from the same inputs.
    vocab_sizer sz;
    vocab_sizer_init(&sz);
    vocab_sizer_visit(&sz, tokens);
    if (merges_kv) vocab_sizer_visit(&sz, merges_kv);
    if (types_kv) vocab_sizer_visit(&sz, types_kv);

    tern_status st = TERN_OK;
    char * texts = (char *) take(arena, (size_t) sz.text_bytes, &st);
    uint32_t * off = (uint32_t *) take(arena, (n + 1) * sizeof(uint32_t), &st);
    float * scores = (float *) take(arena, n * sizeof(float), &st);
    uint16_t * attrs = (uint16_t *) take(arena, n * sizeof(uint16_t), &st);
    uint32_t cap = vocab_index_cap(n);
    int32_t * index = (int32_t *) take(arena, cap * sizeof(int32_t), &st);
    uint32_t mcap = sz.n_merges > 0 ? vocab_index_cap(sz.n_merges) : 0;
    int32_t * merge_index = mcap ? (int32_t *) take(arena, mcap * sizeof(int32_t), &st) : NULL;
    int32_t * special = (int32_t *) take(arena, (sz.n_typed_special + VOCAB_AUTO_SPECIAL_MAX) * sizeof(int32_t), &st);
    if (st != TERN_OK) return st;

    v->n_tokens = (int32_t) n;
    v->texts = texts; v->text_off = off; v->scores = scores; v->attrs = attrs;
    v->token_index = index; v->token_index_cap = cap;
    memset(index, 0xFF, cap * sizeof(int32_t));
    uint32_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        const gguf_str * s = &tokens->strs[i];
        off[i] = pos;
        if (s->len == 0) {
            TERN_LOGW("vocab: %s: empty token at index %llu\n", KEY_TOKENS, (unsigned long long) i);
            pos += (uint32_t) snprintf(texts + pos, empty_token_len(i) + 1, "[EMPTY_%llu]", (unsigned long long) i);
        } else {
            memcpy(texts + pos, s->data, s->len);
            pos += (uint32_t) s->len;
        }
        texts[pos++] = 0;
        uint32_t len = pos - off[i] - 1;
        if ((int32_t) len > v->max_token_len) v->max_token_len = (int32_t) len;
        scores[i] = !scores_kv ? 0.0f
                  : scores_kv->arr_type == GGUF_TYPE_FLOAT32 ? gguf_arr_f32(scores_kv, i)
                  : (float) gguf_arr_i32(scores_kv, i);
        attrs[i] = types_kv ? attr_from_type(gguf_arr_i32(types_kv, i)) : (uint16_t) VOCAB_ATTR_NORMAL;
    }
    off[n] = pos;
    for (uint64_t i = 0; i < n; i++) index_token(index, cap, v, (int32_t) i);

    if (merges_kv) {
        v->merges = merges_kv->strs;
        v->n_merges = (int32_t) merges_kv->arr_n;
        v->merge_index = merge_index;
        v->merge_index_cap = mcap;
        if (mcap) memset(merge_index, 0xFF, mcap * sizeof(int32_t));  // an empty merges array has no index
        for (int32_t r = 0; r < v->n_merges; r++) {
            const gguf_str * m = &v->merges[r];
            // llama.cpp splits at the first space after the first byte; a merge without one never matches.
            const char * sp = m->len > 1 ? (const char *) memchr(m->data + 1, ' ', m->len - 1) : NULL;
            if (!sp) continue;
            size_t left_len = (size_t) (sp - m->data);
            if (vocab_merge_rank(v, m->data, left_len, sp + 1, m->len - left_len - 1) >= 0) continue;  // first wins
            uint32_t h = vocab_fnv1a(VOCAB_FNV_SEED, m->data, m->len) & (mcap - 1);
            while (merge_index[h] >= 0) h = (h + 1) & (mcap - 1);
            merge_index[h] = r;
        }
    }
    *out_attrs = attrs;
    *out_special = special;
    return TERN_OK;
}

// Special ids from their keys. An id outside the vocabulary is ignored with a
// warning, and a default id outside it is dropped (llama.cpp).
static tern_status read_special_ids(const gguf_file * f, tern_vocab * v) {
    const struct { const char * key; tern_token * id; } k_ids[] = {
        {"tokenizer.ggml.bos_token_id", &v->bos},
        {"tokenizer.ggml.eos_token_id", &v->eos},
        {"tokenizer.ggml.eot_token_id", &v->eot},
        {"tokenizer.ggml.eom_token_id", &v->eom},
        {"tokenizer.ggml.unknown_token_id", &v->unk},
        {"tokenizer.ggml.seperator_token_id", &v->sep},
        {"tokenizer.ggml.padding_token_id", &v->pad},
        {"tokenizer.ggml.fim_pre_token_id", &v->fim_pre},
        {"tokenizer.ggml.fim_suf_token_id", &v->fim_suf},
        {"tokenizer.ggml.fim_mid_token_id", &v->fim_mid},
        {"tokenizer.ggml.fim_pad_token_id", &v->fim_pad},
        {"tokenizer.ggml.fim_rep_token_id", &v->fim_rep},
        {"tokenizer.ggml.fim_sep_token_id", &v->fim_sep},
        {"tokenizer.ggml.prefix_token_id", &v->fim_pre},
        {"tokenizer.ggml.suffix_token_id", &v->fim_suf},
        {"tokenizer.ggml.middle_token_id", &v->fim_mid},
    };
    for (size_t i = 0; i < sizeof(k_ids) / sizeof(k_ids[0]); i++) {
        tern_token * id = k_ids[i].id;
        if (*id >= v->n_tokens) *id = -1;
        const int64_t at = gguf_find_key(f, k_ids[i].key);
        if (at < 0) continue;
        // Any integer type: converters write 0xFFFFFFFF (u32) or -1 (i32) for "none".
        int64_t value;
        if (!gguf_kv_int(&f->kv[at], &value)) return tern_fail(TERN_ERR_FORMAT, "%s: not an integer", k_ids[i].key);
        if (value < 0 || value >= (int64_t) v->n_tokens) {
            // llama.cpp warns and keeps the default.
            if (value == 0xFFFFFFFFll || value < 0) {
                TERN_LOGI("%s: none (%lld: no such token), the default kept\n", k_ids[i].key, (long long) value);
            } else {
                TERN_LOGW("%s: token id %lld outside the vocabulary of %" PRId32 " tokens, ignored\n", k_ids[i].key,
                          (long long) value, v->n_tokens);
            }
            continue;
        }
        *id = (tern_token) value;
    }
    const struct { const char * key; bool * flag; } k_flags[] = {
        {KEY_ADD_BOS, &v->add_bos},
        {KEY_ADD_EOS, &v->add_eos},
    };
    for (size_t i = 0; i < sizeof(k_flags) / sizeof(k_flags[0]); i++) {
        if (gguf_find_key(f, k_flags[i].key) >= 0 && !gguf_get_bool(f, k_flags[i].key, k_flags[i].flag)) {
            return tern_fail(TERN_ERR_FORMAT, "%s: not a bool", k_flags[i].key);
        }
    }
    return TERN_OK;
}

// SPM byte fallback: "<0xXX>", else the byte itself as a token.
static void build_byte_tokens(tern_vocab * v) {
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; b++) {
        char name[7] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>', 0};
        tern_token t = vocab_text_to_token(v, name, 6);
        if (t < 0) {
            char c = (char) b;
            t = vocab_text_to_token(v, &c, 1);
        }
        v->byte_token[b] = t;
    }
}

// An unknown tokenizer.ggml.model or .pre is refused (TERN_ERR_UNSUPPORTED
// naming it, as llama.cpp refuses it), after the tables are complete: *out is
// then a TERN_VOCAB_NONE vocabulary whose tokens can be listed, never used to
// tokenize (a metadata-only load may keep it).
tern_status vocab_load(const gguf_file * f, tern_arena * arena, tern_vocab * out) {
    memset(out, 0, sizeof(*out));
    bool unsupported = false;
    TERN_TRY(read_model(f, out, &unsupported));
    char why[160];
    if (unsupported) snprintf(why, sizeof(why), "%s", tern_last_error());
    uint16_t * attrs = NULL;
    int32_t * special = NULL;
    TERN_TRY(load_tokens(f, arena, out, &attrs, &special));
    if (out->n_tokens > 0) {
        TERN_TRY(read_special_ids(f, out));
        vocab_finish_specials(f, out, attrs, special);
        build_byte_tokens(out);
    }
    if (unsupported) return tern_fail(TERN_ERR_UNSUPPORTED, "%s", why);
    return TERN_OK;
}

}  // namespace tern
