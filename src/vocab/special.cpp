// Special tokens: ids found by their text, the end-of-generation set, the list
// of tokens the text is split around, and that split (llama.cpp's
// tokenizer_st_partition).
#include <string.h>

#include <algorithm>

#include "core/log.h"
#include "core/sort.h"
#include "vocab/vocab_internal.h"

namespace tern {

enum special_role {
    ROLE_EOT = 1 << 0, ROLE_EOM = 1 << 1, ROLE_EOG = 1 << 2,
    ROLE_FIM_PRE = 1 << 3, ROLE_FIM_SUF = 1 << 4, ROLE_FIM_MID = 1 << 5,
    ROLE_FIM_PAD = 1 << 6, ROLE_FIM_REP = 1 << 7, ROLE_FIM_SEP = 1 << 8,
};

// Texts llama.cpp recognises (model converters do not always set the ids).
static const struct { const char * text; uint32_t roles; } k_auto_special[] = {
    {"<|eot_id|>", ROLE_EOT | ROLE_EOG},
    {"<|im_end|>", ROLE_EOT | ROLE_EOG},
    {"<|end|>", ROLE_EOT | ROLE_EOG},
    {"<end_of_turn>", ROLE_EOT | ROLE_EOG},
    {"<|endoftext|>", ROLE_EOT | ROLE_EOG},
    {"<|end_of_text|>", ROLE_EOT | ROLE_EOG},
    {"<EOT>", ROLE_EOT | ROLE_EOG},
    {"_<EOT>", ROLE_EOT | ROLE_EOG},
    {"<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>", ROLE_EOT},  // DeepSeek
    {"<|eom_id|>", ROLE_EOM | ROLE_EOG},
    {"<|fim_prefix|>", ROLE_FIM_PRE}, {"<fim-prefix>", ROLE_FIM_PRE}, {"<fim_prefix>", ROLE_FIM_PRE},
    {"<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>", ROLE_FIM_PRE}, {"<PRE>", ROLE_FIM_PRE},
    {"\xe2\x96\x81<PRE>", ROLE_FIM_PRE},
    {"<|fim_suffix|>", ROLE_FIM_SUF}, {"<fim-suffix>", ROLE_FIM_SUF}, {"<fim_suffix>", ROLE_FIM_SUF},
    {"<\xef\xbd\x9c" "fim\xe2\x96\x81hole\xef\xbd\x9c>", ROLE_FIM_SUF}, {"<SUF>", ROLE_FIM_SUF},
    {"\xe2\x96\x81<SUF>", ROLE_FIM_SUF},
    {"<|fim_middle|>", ROLE_FIM_MID}, {"<fim-middle>", ROLE_FIM_MID}, {"<fim_middle>", ROLE_FIM_MID},
    {"<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>", ROLE_FIM_MID}, {"<MID>", ROLE_FIM_MID},
    {"\xe2\x96\x81<MID>", ROLE_FIM_MID},
    {"<|fim_pad|>", ROLE_FIM_PAD}, {"<fim-pad>", ROLE_FIM_PAD}, {"<fim_pad>", ROLE_FIM_PAD},
    {"<PAD>", ROLE_FIM_PAD},
    {"<|fim_repo|>", ROLE_FIM_REP}, {"<|repo_name|>", ROLE_FIM_REP}, {"<fim-repo>", ROLE_FIM_REP},
    {"<REPO>", ROLE_FIM_REP}, {"<reponame>", ROLE_FIM_REP},
    {"<|file_sep|>", ROLE_FIM_SEP},
};
static_assert(sizeof(k_auto_special) / sizeof(k_auto_special[0]) <= VOCAB_AUTO_SPECIAL_MAX,
              "every promoted token needs a place in the special list");

static uint32_t roles_of(const tern_vocab * v, int32_t id) {
    const char * s = vocab_token_ptr(v, id);
    for (size_t i = 0; i < sizeof(k_auto_special) / sizeof(k_auto_special[0]); i++) {
        if (strcmp(s, k_auto_special[i].text) == 0) return k_auto_special[i].roles;
    }
    return 0;
}

static void add_eog(tern_vocab * v, tern_token t) {
    if (t < 0 || vocab_is_eog(v, t) || v->n_eog >= VOCAB_MAX_EOG) return;
    v->eog[v->n_eog++] = t;
}

// A token text that the index maps to another id (a repeated text) is not
// looked at, as llama.cpp walks its text -> id map.
static bool owns_text(const tern_vocab * v, int32_t id) {
    return vocab_text_to_token(v, vocab_token_ptr(v, id), vocab_token_len(v, id)) == id;
}

static void find_by_text(tern_vocab * v, uint16_t * attrs) {
    const struct { uint32_t role; tern_token * id; } k_slots[] = {
        {ROLE_EOT, &v->eot}, {ROLE_EOM, &v->eom}, {ROLE_FIM_PRE, &v->fim_pre}, {ROLE_FIM_SUF, &v->fim_suf},
        {ROLE_FIM_MID, &v->fim_mid}, {ROLE_FIM_PAD, &v->fim_pad}, {ROLE_FIM_REP, &v->fim_rep},
        {ROLE_FIM_SEP, &v->fim_sep},
    };
    for (int32_t id = 0; id < v->n_tokens; id++) {
        uint32_t roles = roles_of(v, id);
        if (!roles || !owns_text(v, id)) continue;
        for (size_t s = 0; s < sizeof(k_slots) / sizeof(k_slots[0]); s++) {
            if ((roles & k_slots[s].role) && *k_slots[s].id < 0) {
                *k_slots[s].id = id;
                attrs[id] |= VOCAB_ATTR_CONTROL;
            }
        }
    }
    add_eog(v, v->fim_pad);
    add_eog(v, v->fim_rep);
    add_eog(v, v->fim_sep);
    for (int32_t id = 0; id < v->n_tokens; id++) {
        if ((roles_of(v, id) & ROLE_EOG) && owns_text(v, id)) {
            add_eog(v, id);
            attrs[id] |= VOCAB_ATTR_CONTROL;
        }
    }
    add_eog(v, v->eos);
    add_eog(v, v->eot);
    add_eog(v, v->eom);
}

static bool name_has(const char * lower_name, const char * needle) { return strstr(lower_name, needle) != NULL; }

static void set_strip_by_text(tern_vocab * v, uint16_t * attrs, const char * text, uint16_t bit, bool on) {
    tern_token t = vocab_text_to_token(v, text, strlen(text));
    if (t < 0) return;
    attrs[t] = (uint16_t) (on ? attrs[t] | bit : attrs[t] & ~bit);
}

static bool str_has(gguf_str s, const char * needle) {
    const size_t n = strlen(needle);
    for (uint64_t i = 0; i + n <= s.len; i++) {
        if (memcmp(s.data + i, needle, n) == 0) return true;
    }
    return false;
}

// Attributes llama.cpp sets by tokenizer or model name:
// - the jina-v2 pre-tokenizers: <mask> eats the spaces before it (LSTRIP);
//   a vocabulary without <mask> gets a warning, as in current llama.cpp;
// - Phi-3 (general.name): special tokens eat following spaces.
static void apply_model_attrs(const gguf_file * f, tern_vocab * v, uint16_t * attrs) {
    gguf_str pre;
    if (gguf_get_str(f, "tokenizer.ggml.pre", &pre) &&
        (str_has(pre, "jina-v2-de") || str_has(pre, "jina-v2-es") || str_has(pre, "jina-v2-code"))) {
        if (vocab_text_to_token(v, "<mask>", 6) < 0) {
            TERN_LOGW("vocab: the %.*s pre-tokenizer expects a <mask> token; this vocabulary has none\n",
                      (int) pre.len, pre.data);
        }
        set_strip_by_text(v, attrs, "<mask>", VOCAB_ATTR_LSTRIP, true);
        return;
    }
    gguf_str name;
    if (!gguf_get_str(f, "general.name", &name)) return;
    char lower[128];
    size_t n = name.len < sizeof(lower) - 1 ? (size_t) name.len : sizeof(lower) - 1;
    for (size_t i = 0; i < n; i++) {
        char c = name.data[i];
        lower[i] = (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
    }
    lower[n] = 0;
    if (name_has(lower, "phi-3") || name_has(lower, "phi3")) {
        for (int32_t i = 0; i < v->n_special; i++) attrs[v->special[i]] |= VOCAB_ATTR_RSTRIP;
        set_strip_by_text(v, attrs, "</s>", VOCAB_ATTR_RSTRIP, true);
        set_strip_by_text(v, attrs, "<unk>", VOCAB_ATTR_RSTRIP, false);
        set_strip_by_text(v, attrs, "<s>", VOCAB_ATTR_RSTRIP, false);
        set_strip_by_text(v, attrs, "<|endoftext|>", VOCAB_ATTR_RSTRIP, false);
    }
}

void vocab_finish_specials(const gguf_file * f, tern_vocab * v, uint16_t * attrs, int32_t * special) {
    find_by_text(v, attrs);
    int32_t n = 0;
    for (int32_t id = 0; id < v->n_tokens; id++) {
        if (attrs[id] & (VOCAB_ATTR_CONTROL | VOCAB_ATTR_USER_DEFINED | VOCAB_ATTR_UNKNOWN)) special[n++] = id;
    }
    const tern_vocab * cv = v;
    tern_heap_sort(special, (size_t) n, [cv](int32_t a, int32_t b) {
        uint32_t la = vocab_token_len(cv, a), lb = vocab_token_len(cv, b);
        return la != lb ? la > lb : a < b;
    });
    v->special = special;
    v->n_special = n;
    apply_model_attrs(f, v, attrs);
}

// ---------------------------------------------------------------------------
// Partition
// ---------------------------------------------------------------------------

static bool ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// First occurrence of needle in hay[0, n), or -1.
static int32_t find_bytes(const char * hay, int32_t n, const char * needle, int32_t m) {
    for (int32_t i = 0; i + m <= n; i++) {
        const char * p = (const char *) memchr(hay + i, needle[0], (size_t) (n - m - i + 1));
        if (!p) return -1;
        i = (int32_t) (p - hay);
        if (memcmp(p, needle, (size_t) m) == 0) return i;
    }
    return -1;
}

// Split each raw fragment of in[] at every occurrence of token t, writing to out[].
static int32_t split_at_token(const tern_vocab * v, const char * text, int32_t t, const vocab_fragment * in,
                              int32_t n_in, vocab_fragment * out) {
    const char * tok = vocab_token_ptr(v, t);
    int32_t tlen = (int32_t) vocab_token_len(v, t);
    uint16_t attr = v->attrs[t];
    int32_t n = 0;
    for (int32_t i = 0; i < n_in; i++) {
        if (in[i].token >= 0) { out[n++] = in[i]; continue; }
        int32_t off = in[i].offset, len = in[i].length;
        for (;;) {
            int32_t m = find_bytes(text + off, len, tok, tlen);
            if (m < 0) {
                if (len > 0) out[n++] = {-1, off, len};
                break;
            }
            int32_t left = m;
            if (attr & VOCAB_ATTR_LSTRIP) while (left > 0 && ascii_space(text[off + left - 1])) left--;
            if (left > 0) out[n++] = {-1, off, left};
            out[n++] = {t, off + m, tlen};
            int32_t roff = off + m + tlen, rlen = off + len - roff;
            if (attr & VOCAB_ATTR_RSTRIP) while (rlen > 0 && ascii_space(text[roff])) { roff++; rlen--; }
            off = roff;
            len = rlen;
        }
    }
    return n;
}

int32_t vocab_partition(const tern_vocab * v, const char * text, int32_t text_len, bool parse_special,
                        vocab_fragment * frags, vocab_fragment * tmp) {
    if (text_len <= 0) return 0;
    int32_t n = 1;
    frags[0] = {-1, 0, text_len};
    for (int32_t i = 0; i < v->n_special; i++) {
        int32_t t = v->special[i];
        // Without parse_special only user-defined tokens split the text.
        if (!parse_special && (v->attrs[t] & (VOCAB_ATTR_CONTROL | VOCAB_ATTR_UNKNOWN))) continue;
        n = split_at_token(v, text, t, frags, n, tmp);
        memcpy(frags, tmp, (size_t) n * sizeof(*frags));
    }
    return n;
}

}  // namespace tern
