// Writes tests/data/pretok/*.vec from llama.cpp (the peer, linked as
// libllama.so): for every recipe of recipes.txt, the shared base vocabulary is
// rewritten with Tern's writer (tokenizer.ggml.pre set to the recipe's name),
// loaded vocab-only by llama.cpp, and every test text is
//   - tokenized (llama_tokenize, add_special = false, parse_special = false),
//   - split by the pre-tokenizer llama.cpp itself builds for that vocabulary
//     (llm_tokenizer_bpe's regex_exprs through unicode_regex_split, both
//     exported by libllama.so), written as the byte lengths of the pieces;
// then "Hello world" with add_special = true. Names sharing a vectors file
// must give identical vectors. A "refuse" recipe must fail to load.
//
// Not built by CMake (the peer is outside the repository); see tests/tools/README.md.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "llama.h"
#include "tools/pretok_data.h"

// llama.cpp internals with default visibility in libllama.so (src/llama-vocab.cpp,
// src/unicode.h at c392e509); the layouts must match that source.
struct llm_tokenizer {
    llm_tokenizer() {}
    virtual ~llm_tokenizer() = default;
};
struct llm_tokenizer_bpe : llm_tokenizer {
    llm_tokenizer_bpe(const llama_vocab & vocab);
    std::vector<std::string> regex_exprs;
};
std::vector<std::string> unicode_regex_split(const std::string & text, const std::vector<std::string> & regex_exprs);

static void quiet(ggml_log_level, const char *, void *) {}

// UTF-8 bytes a byte-level-encoded piece stands for: one per codepoint.
static int byte_count(const std::string & encoded) {
    int n = 0;
    for (unsigned char c : encoded) n += (c & 0xC0) != 0x80;
    return n;
}

static std::string vectors_text(const llama_vocab * vocab, const std::vector<std::string> & texts, bool * ok) {
    llm_tokenizer_bpe tok(*vocab);
    std::string out;
    for (const std::string & text : texts) {
        std::vector<llama_token> ids(text.size() + 16);
        int32_t n = llama_tokenize(vocab, text.data(), (int32_t) text.size(), ids.data(), (int32_t) ids.size(), false, false);
        if (n < 0) { *ok = false; return ""; }
        ids.resize((size_t) n);
        out += "t" + pretok_ints_text(std::vector<int>(ids.begin(), ids.end())) + "\n";
        std::vector<int> lens;
        for (const std::string & piece : unicode_regex_split(text, tok.regex_exprs)) lens.push_back(byte_count(piece));
        out += "s" + pretok_ints_text(lens) + "\n";
    }
    std::vector<llama_token> ids(64);
    int32_t n = llama_tokenize(vocab, PRETOK_BOS_TEXT, (int32_t) strlen(PRETOK_BOS_TEXT), ids.data(), 64, true, false);
    if (n < 0) { *ok = false; return ""; }
    ids.resize((size_t) n);
    out += "b" + pretok_ints_text(std::vector<int>(ids.begin(), ids.end())) + "\n";
    return out;
}

int main(int argc, char ** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SHARED_DIR DATA_DIR   (e.g. ../shared tests/data/pretok)\n", argv[0]);
        return 2;
    }
    const std::string shared = argv[1], data = argv[2];
    llama_log_set(quiet, NULL);
    llama_backend_init();

    std::string recipes_text;
    pretok_recipes recipes;
    if (!pretok_read_text(data + "/recipes.txt", &recipes_text) || !pretok_parse_recipes(recipes_text, &recipes)) {
        fprintf(stderr, "cannot read %s/recipes.txt\n", data.c_str());
        return 1;
    }
    std::vector<std::string> texts = pretok_texts(shared, data);
    if (texts.empty()) { fprintf(stderr, "no texts\n"); return 1; }

    char tmp[] = "/tmp/gen_pretok_XXXXXX";
    if (!mkdtemp(tmp)) return 1;
    const std::string path = std::string(tmp) + "/vocab.gguf";
    std::map<std::string, std::string> written;  // vectors file -> contents
    int failures = 0;
    for (const pretok_recipe & r : recipes.list) {
        std::string err;
        if (!gguf_rewrite(shared + "/vocab/" + recipes.base, path, pretok_edit(recipes, r.pre), &err)) {
            fprintf(stderr, "%s: rewrite failed: %s\n", r.pre.c_str(), err.c_str());
            return 1;
        }
        llama_model_params mp = llama_model_default_params();
        mp.vocab_only = true;
        llama_model * model = llama_model_load_from_file(path.c_str(), mp);
        if (r.vectors.empty()) {
            printf("%-18s %s\n", r.pre.c_str(), model ? "LOADED (expected a refusal)" : "refused");
            failures += model != NULL;
            if (model) llama_model_free(model);
            continue;
        }
        if (!model) { fprintf(stderr, "%s: llama.cpp refused the vocabulary\n", r.pre.c_str()); failures++; continue; }
        bool ok = true;
        std::string body = vectors_text(llama_model_get_vocab(model), texts, &ok);
        llama_model_free(model);
        if (!ok) { fprintf(stderr, "%s: tokenize failed\n", r.pre.c_str()); failures++; continue; }
        auto it = written.find(r.vectors);
        if (it != written.end()) {
            bool same = it->second == body;
            printf("%-18s -> %s.vec (%s)\n", r.pre.c_str(), r.vectors.c_str(), same ? "same" : "DIFFERENT");
            failures += !same;
            continue;
        }
        written[r.vectors] = body;
        std::string header = "# llama.cpp c392e509 on " + recipes.base + " with tokenizer.ggml.pre = " + r.pre +
                             " (" + std::to_string(texts.size()) +
                             " texts); generated by tests/tools/gen_pretok_vectors.cpp, do not edit\n";
        std::string out_path = data + "/" + r.vectors + ".vec";
        FILE * f = fopen(out_path.c_str(), "wb");
        if (!f || fwrite(header.data(), 1, header.size(), f) != header.size() ||
            fwrite(body.data(), 1, body.size(), f) != body.size() || fclose(f) != 0) {
            fprintf(stderr, "cannot write %s\n", out_path.c_str());
            return 1;
        }
        printf("%-18s -> %s.vec\n", r.pre.c_str(), r.vectors.c_str());
    }
    unlink(path.c_str());
    rmdir(tmp);
    llama_backend_free();
    return failures ? 1 : 0;
}
