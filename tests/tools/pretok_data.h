// The pre-tokenizer vectors of tests/data/pretok (see its README.md): texts,
// recipes and vector files, read by tests/test_pretokenizers.cpp and written
// by tests/tools/gen_pretok_vectors.cpp.
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "tools/gguf_rewrite.h"

static inline bool pretok_read_text(const std::string & path, std::string * out) {
    std::vector<uint8_t> bytes;
    if (!gguf_rewrite_read(path, &bytes)) return false;
    out->assign(bytes.begin(), bytes.end());
    return true;
}

static inline std::vector<std::string> pretok_lines(const std::string & s) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < s.size()) {
        size_t eol = s.find('\n', pos);
        if (eol == std::string::npos) eol = s.size();
        out.push_back(s.substr(pos, eol - pos));
        pos = eol + 1;
    }
    return out;
}

// llama.cpp's test-tokenizer-0 input format: each text followed by "\n__ggml_vocab_test__\n".
static inline std::vector<std::string> pretok_split_inp(const std::string & s) {
    static const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    for (size_t pos = 0;;) {
        size_t next = s.find(sep, pos);
        if (next == std::string::npos) break;
        out.push_back(s.substr(pos, next - pos));
        pos = next + sep.size();
    }
    return out;
}

// texts.txt: one text a line, '#' lines are comments; escapes \\ \n \r \t \xHH.
static inline std::vector<std::string> pretok_parse_texts(const std::string & s) {
    std::vector<std::string> out;
    for (const std::string & line : pretok_lines(s)) {
        if (!line.empty() && line[0] == '#') continue;
        std::string t;
        for (size_t i = 0; i < line.size(); i++) {
            char c = line[i];
            if (c != '\\' || i + 1 >= line.size()) { t += c; continue; }
            char e = line[++i];
            if (e == 'n') t += '\n';
            else if (e == 'r') t += '\r';
            else if (e == 't') t += '\t';
            else if (e == 'x' && i + 2 < line.size()) {
                t += (char) strtol(line.substr(i + 1, 2).c_str(), NULL, 16);
                i += 2;
            } else t += e;
        }
        out.push_back(t);
    }
    return out;
}

// Every test text: the shared .inp ones, then texts.txt. Empty when a file is missing.
static inline std::vector<std::string> pretok_texts(const std::string & shared_dir, const std::string & data_dir) {
    std::string inp, extra;
    if (!pretok_read_text(shared_dir + "/vocab/ggml-vocab-gpt-2.gguf.inp", &inp)) return {};
    if (!pretok_read_text(data_dir + "/texts.txt", &extra)) return {};
    std::vector<std::string> texts = pretok_split_inp(inp);
    for (const std::string & t : pretok_parse_texts(extra)) texts.push_back(t);
    return texts;
}

// recipes.txt:
//   base FILE               the vocabulary rewritten (in ../shared/vocab)
//   drop KEY...             keys left out of every rewritten file
//   pre NAME VECTORS        tokenizer.ggml.pre = NAME must give VECTORS.vec
//   refuse NAME             tokenizer.ggml.pre = NAME must be refused at load
struct pretok_recipe {
    std::string pre;
    std::string vectors;  // empty: refused
};
struct pretok_recipes {
    std::string base;
    std::vector<std::string> drop;
    std::vector<pretok_recipe> list;
};

static inline std::vector<std::string> pretok_words(const std::string & line) {
    std::vector<std::string> w;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) i++;
        size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t') j++;
        if (j > i) w.push_back(line.substr(i, j - i));
        i = j;
    }
    return w;
}

static inline bool pretok_parse_recipes(const std::string & s, pretok_recipes * out) {
    for (const std::string & line : pretok_lines(s)) {
        std::vector<std::string> w = pretok_words(line);
        if (w.empty() || w[0][0] == '#') continue;
        if (w[0] == "base" && w.size() == 2) out->base = w[1];
        else if (w[0] == "drop") out->drop.assign(w.begin() + 1, w.end());
        else if (w[0] == "pre" && w.size() == 3) out->list.push_back({w[1], w[2]});
        else if (w[0] == "refuse" && w.size() == 2) out->list.push_back({w[1], ""});
        else return false;
    }
    return !out->base.empty() && !out->list.empty();
}

// The edit that turns the base vocabulary into the one of a recipe.
static inline gguf_edit pretok_edit(const pretok_recipes & r, const std::string & pre) {
    gguf_edit e;
    e.set_str.push_back({"tokenizer.ggml.pre", pre});
    e.drop_keys = r.drop;
    return e;
}

// A vector file: for every text a "t" line (token ids, add_special = false,
// parse_special = false) and an "s" line (byte lengths of the pre-tokenizer's
// pieces), then one "b" line (ids of "Hello world" with add_special = true).
struct pretok_vectors {
    std::vector<std::vector<int>> ids, pieces;
    std::vector<int> bos_ids;
};

static inline std::vector<int> pretok_ints(const std::string & line, size_t from) {
    std::vector<int> v;
    const char * p = line.c_str() + from;
    while (*p) {
        char * q;
        long x = strtol(p, &q, 10);
        if (q == p) break;
        v.push_back((int) x);
        p = q;
    }
    return v;
}

static inline bool pretok_parse_vectors(const std::string & s, pretok_vectors * out) {
    bool have_bos = false;
    for (const std::string & line : pretok_lines(s)) {
        if (line.empty() || line[0] == '#') continue;
        if (line.size() < 1 || (line.size() > 1 && line[1] != ' ')) return false;
        if (line[0] == 't') out->ids.push_back(pretok_ints(line, 1));
        else if (line[0] == 's') out->pieces.push_back(pretok_ints(line, 1));
        else if (line[0] == 'b') { out->bos_ids = pretok_ints(line, 1); have_bos = true; }
        else return false;
    }
    return have_bos && out->ids.size() == out->pieces.size();
}

static inline std::string pretok_ints_text(const std::vector<int> & v) {
    std::string s;
    for (int x : v) s += " " + std::to_string(x);
    return s;
}

#define PRETOK_BOS_TEXT "Hello world"
