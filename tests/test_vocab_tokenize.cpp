// Tokenizer edge cases on real vocabularies: empty text, invalid UTF-8, long
// words, parse_special, add_special, short output buffers, detokenizer rules,
// end-of-generation tokens, and malformed tokenizer metadata.
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "gguf/writer.h"
#include "test_vocab_util.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

static std::string g_dir;

static bool load(test_vocab * t, const char * name) {
    tern_status st = test_vocab_load(t, g_dir + "/vocab/ggml-vocab-" + name + ".gguf");
    CHECK_MSG(st == TERN_OK, "%s: %s", name, tern_last_error());
    return st == TERN_OK;
}

static void test_spm(const tern_vocab * v) {
    CHECK(v->type == TERN_VOCAB_SPM && vocab_bos(v) == 1 && vocab_eos(v) == 2);
    CHECK(test_tokenize(v, "", false, false).empty());
    std::vector<tern_token> bos_only = test_tokenize(v, "", true, false);
    CHECK(bos_only.size() == 1 && bos_only[0] == 1);
    std::vector<tern_token> hello = test_tokenize(v, "Hello", true, false);
    CHECK(hello.size() >= 2 && hello[0] == 1 && hello.back() != 2);
    // Invalid UTF-8 falls back to byte tokens and comes back byte for byte (a lead
    // byte swallows the bytes it announces, as in llama.cpp, so none is used here
    // but at the very end).
    std::string bad = "ok \x80\xbf end\xc3";
    CHECK(test_detokenize(v, test_tokenize(v, bad, false, false)) == " " + bad);
    // A long word.
    std::string word(20000, 'a');
    CHECK(test_detokenize(v, test_tokenize(v, word, false, false)) == " " + word);
    // Control tokens are text unless parse_special; then no space is put after them.
    std::vector<tern_token> plain = test_tokenize(v, "<s>hi", false, false);
    std::vector<tern_token> parsed = test_tokenize(v, "<s>hi", false, true);
    CHECK(!plain.empty() && plain[0] != 1);
    CHECK(parsed.size() >= 2 && parsed[0] == 1);
    // Detokenizer: control tokens only with special; byte tokens give their byte.
    char buf[16];
    CHECK(vocab_token_to_piece(v, 1, buf, sizeof(buf), false) == 0);
    CHECK(vocab_token_to_piece(v, 1, buf, sizeof(buf), true) == 3 && memcmp(buf, "<s>", 3) == 0);
    tern_token nl = vocab_text_to_token(v, "<0x0A>", 6);
    CHECK(nl >= 0 && vocab_token_to_piece(v, nl, buf, sizeof(buf), false) == 1 && buf[0] == '\n');
    CHECK(vocab_token_to_piece(v, 1, buf, 2, true) == -3);
    CHECK(vocab_is_eog(v, 2) && !vocab_is_eog(v, 1));
}

static void test_bpe(const tern_vocab * v) {
    CHECK(v->type == TERN_VOCAB_BPE && v->pre == VOCAB_PRE_QWEN2 && !vocab_add_bos(v));
    CHECK(test_tokenize(v, "", true, false).empty());
    const std::string chat = "<|im_start|>user\nhi<|im_end|>";
    std::vector<tern_token> parsed = test_tokenize(v, chat, false, true);
    CHECK(parsed.size() >= 3 && parsed.front() == 151644 && parsed.back() == 151645);
    std::vector<tern_token> plain = test_tokenize(v, chat, false, false);
    CHECK(plain.size() > parsed.size() && plain.front() != 151644);
    CHECK(test_detokenize(v, parsed) == "user\nhi");
    CHECK(test_detokenize(v, parsed, true) == chat);
    CHECK(test_detokenize(v, plain) == chat);
    // Invalid bytes become U+FFFD, as llama.cpp decodes them.
    CHECK(test_detokenize(v, test_tokenize(v, "a\xff" "b", false, false)) == "a\xef\xbf\xbd" "b");
    std::string word(20000, 'z');
    CHECK(test_detokenize(v, test_tokenize(v, word, false, false)) == word);
    // Too small an output: -(needed), then the same tokens with room.
    std::vector<uint8_t> buf(arena_buffer_size(vocab_tokenize_scratch_size(v, 64)));
    tern_arena scratch;
    arena_init(&scratch, buf.data(), buf.size());
    tern_token out[64];
    int32_t need = vocab_tokenize(v, chat.data(), (int32_t) chat.size(), out, 1, false, false, &scratch);
    CHECK(need == -(int32_t) plain.size());
    CHECK(vocab_tokenize(v, chat.data(), (int32_t) chat.size(), out, -need, false, false, &scratch) == -need);
    CHECK(std::vector<tern_token>(out, out + plain.size()) == plain);
    CHECK(vocab_tokenize(v, NULL, 3, out, 64, false, false, &scratch) == INT32_MIN);
    CHECK(vocab_is_eog(v, 151645) && vocab_is_eog(v, 151643) && !vocab_is_eog(v, 151644));
    CHECK(strcmp(vocab_token_text(v, 151644), "<|im_start|>") == 0 && vocab_token_text(v, -1) == NULL);
}

static void test_wpm(const tern_vocab * v) {
    CHECK(v->type == TERN_VOCAB_WPM);
    int32_t status;
    test_tokenize(v, "hello", false, false, &status);
    CHECK(status == INT32_MIN && strstr(tern_last_error(), "bert") != NULL);
}

// Rewrite a vocab file with one key dropped or replaced and load it into t.
typedef void (*edit_fn)(gguf_writer * w, const tern_vocab * v);

static tern_status load_edited(const test_vocab & src, const char * drop_key, edit_fn edit, test_vocab * t) {
    std::vector<uint8_t> mem(arena_buffer_size(32u << 20));  // room for a rewritten token array
    tern_arena arena;
    arena_init(&arena, mem.data(), mem.size());
    gguf_writer w;
    CHECK(gguf_writer_init(&w, &arena, (uint32_t) src.file.n_kv + 4, 0) == TERN_OK);
    for (uint64_t i = 0; i < src.file.n_kv; i++) {
        if (!drop_key || !gguf_str_eq(src.file.kv[i].key, drop_key)) gguf_writer_copy_kv(&w, &src.file.kv[i]);
    }
    if (edit) edit(&w, &src.vocab);
    char path[] = "/tmp/tern_vocab_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK(gguf_writer_write(&w, path) == TERN_OK);
    tern_status st = test_vocab_load(t, path);
    remove(path);
    return st;
}

// The load must fail with TERN_ERR_FORMAT naming the key.
static void expect_format_error(const test_vocab & src, const char * drop_key, edit_fn edit, const char * key) {
    test_vocab t;
    tern_status st = load_edited(src, drop_key, edit, &t);
    CHECK_MSG(st == TERN_ERR_FORMAT && strstr(tern_last_error(), key) != NULL, "%s: status %d, '%s'", key, (int) st,
              tern_last_error());
}

static void short_scores(gguf_writer * w, const tern_vocab * v) {
    gguf_writer_set_arr(w, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, v->scores, (uint64_t) v->n_tokens - 1);
}
static void bos_out_of_range(gguf_writer * w, const tern_vocab * v) {
    gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t) v->n_tokens);
}

// The jina-v2 pre-tokenizers give <mask> llama.cpp's LSTRIP attribute: it
// takes the spaces before it. The qwen2 vocabulary rewritten with one rare
// token renamed <mask> (user-defined) and tokenizer.ggml.pre = jina-v2-es.
static const test_vocab * g_mask_src;
static const tern_token k_mask_id = 151642;

static void jina_with_mask(gguf_writer * w, const tern_vocab * v) {
    gguf_writer_set_str(w, "tokenizer.ggml.pre", "jina-v2-es");
    static std::vector<const char *> texts;
    texts.assign((size_t) v->n_tokens, nullptr);
    for (tern_token id = 0; id < v->n_tokens; id++) texts[(size_t) id] = vocab_token_text(v, id);
    texts[(size_t) k_mask_id] = "<mask>";
    CHECK_MSG(gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", texts.data(), (uint64_t) v->n_tokens) == TERN_OK, "%s",
              tern_last_error());
    static std::vector<int32_t> types;
    for (uint64_t i = 0; i < g_mask_src->file.n_kv; i++) {
        const gguf_kv & kv = g_mask_src->file.kv[i];
        if (!gguf_str_eq(kv.key, "tokenizer.ggml.token_type")) continue;
        types.resize((size_t) kv.arr_n);
        memcpy(types.data(), kv.data, types.size() * sizeof(int32_t));
    }
    types[(size_t) k_mask_id] = 4;  // user-defined
    CHECK_MSG(gguf_writer_set_arr(w, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types.data(), (uint64_t) types.size()) ==
                  TERN_OK, "%s", tern_last_error());
}

static void jina_without_mask(gguf_writer * w, const tern_vocab *) { gguf_writer_set_str(w, "tokenizer.ggml.pre", "jina-v2-code"); }
static void pre_gpt2(gguf_writer * w, const tern_vocab *) { gguf_writer_set_str(w, "tokenizer.ggml.pre", "gpt-2"); }

static void test_jina_mask(const test_vocab & bpe) {
    g_mask_src = &bpe;
    test_vocab t;
    CHECK(load_edited(bpe, NULL, jina_with_mask, &t) == TERN_OK);
    const tern_vocab * v = &t.vocab;
    std::vector<tern_token> got = test_tokenize(v, "a  <mask> b", false, true);
    std::vector<tern_token> want = test_tokenize(v, "a", false, false);
    want.push_back(k_mask_id);
    for (tern_token id : test_tokenize(v, " b", false, false)) want.push_back(id);
    CHECK_MSG(got == want, "jina-v2: <mask> does not take the spaces before it (%zu tokens, %zu expected)", got.size(),
              want.size());
    // Without <mask> the vocabulary still loads (llama.cpp warns), with GPT-2 splits.
    test_vocab plain, gpt2;
    CHECK(load_edited(bpe, NULL, jina_without_mask, &plain) == TERN_OK);
    CHECK(load_edited(bpe, NULL, pre_gpt2, &gpt2) == TERN_OK);
    for (const char * text : {"Hello world", "I'm 12345 years  old\n\n ok", "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87!!"}) {
        CHECK_MSG(test_tokenize(&plain.vocab, text, false, false) == test_tokenize(&gpt2.vocab, text, false, false),
                  "jina-v2-code and gpt-2 split '%s' differently", text);
    }
}

int main() {
    g_dir = tern_test_shared_dir();
    test_vocab spm, bpe, wpm;
    if (load(&spm, "llama-spm")) {
        test_spm(&spm.vocab);
        expect_format_error(spm, "tokenizer.ggml.tokens", NULL, "tokenizer.ggml.tokens");
        expect_format_error(spm, NULL, short_scores, "tokenizer.ggml.scores");
        // An id outside the vocabulary is ignored (the default stays), as llama.cpp does.
        test_vocab edited;
        CHECK(load_edited(spm, NULL, bos_out_of_range, &edited) == TERN_OK && vocab_bos(&edited.vocab) == 1);
    }
    if (load(&bpe, "qwen2")) {
        test_bpe(&bpe.vocab);
        expect_format_error(bpe, "tokenizer.ggml.merges", NULL, "tokenizer.ggml.merges");
        test_jina_mask(bpe);
    }
    if (load(&wpm, "bert-bge")) test_wpm(&wpm.vocab);
    return tern_test_summary();
}
