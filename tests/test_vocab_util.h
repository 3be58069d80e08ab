// Helpers of the vocab tests: load a GGUF file's vocabulary the way the model
// loader does (measure with vocab_sizer_visit, one exactly-sized arena, parse,
// vocab_load) and tokenize / detokenize with std containers.
#pragma once
#include <stdio.h>

#include <string>
#include <vector>

#include "core/arena.h"
#include "gguf/gguf.h"
#include "vocab/vocab.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

struct test_vocab {
    std::vector<uint8_t> bytes;
    std::vector<uint8_t> buffer;
    tern_arena arena;
    gguf_file file;
    tern_vocab vocab;
    size_t vocab_planned;  // vocab_tables_size() from the measuring pass
    size_t vocab_used;     // arena bytes vocab_load took
};

static inline bool read_file_bytes(const std::string & path, std::vector<uint8_t> * out) {
    FILE * f = fopen(path.c_str(), "rb");
    if (!f) return false;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    out->resize((size_t) n);
    bool ok = n == 0 || fread(out->data(), 1, (size_t) n, f) == (size_t) n;
    fclose(f);
    return ok;
}

// Returns TERN_OK or the failing status (tern_last_error() says why).
static inline tern_status test_vocab_load_bytes(test_vocab * t, const char * what) {
    gguf_span span = {t->bytes.data(), t->bytes.size(), t->bytes.size()};
    vocab_sizer sizer;
    vocab_sizer_init(&sizer);
    size_t gguf_bytes = 0;
    uint64_t need = 0;
    tern_status st = gguf_measure(&span, what, vocab_sizer_visit, NULL, &sizer, &gguf_bytes, &need);
    if (st != TERN_OK) return st;
    t->vocab_planned = vocab_tables_size(&sizer);
    t->buffer.assign(arena_buffer_size(gguf_bytes + t->vocab_planned), 0);
    arena_init(&t->arena, t->buffer.data(), t->buffer.size());
    st = gguf_parse(&span, what, &t->arena, &t->file);
    if (st != TERN_OK) return st;
    size_t head = t->arena.head;
    st = vocab_load(&t->file, &t->arena, &t->vocab);
    t->vocab_used = t->arena.head - head;
    return st;
}

static inline tern_status test_vocab_load(test_vocab * t, const std::string & path) {
    if (!read_file_bytes(path, &t->bytes)) return TERN_ERR_IO;
    return test_vocab_load_bytes(t, path.c_str());
}

// Tokenize with a scratch arena of exactly vocab_tokenize_scratch_size(); *peak_ok
// tells whether the tokenizer stayed inside it.
static inline std::vector<tern_token> test_tokenize(const tern_vocab * v, const std::string & text, bool add_special,
                                                    bool parse_special, int32_t * status = nullptr,
                                                    bool * peak_ok = nullptr) {
    size_t scratch_bytes = vocab_tokenize_scratch_size(v, (int32_t) text.size());
    std::vector<uint8_t> buf(arena_buffer_size(scratch_bytes));
    tern_arena scratch;
    arena_init(&scratch, buf.data(), buf.size());
    std::vector<tern_token> out(text.size() + 4);
    int32_t n = vocab_tokenize(v, text.data(), (int32_t) text.size(), out.data(), (int32_t) out.size(), add_special,
                               parse_special, &scratch);
    if (status) *status = n;
    if (peak_ok) *peak_ok = scratch.temp_peak <= scratch_bytes && scratch.tail == 0;
    out.resize(n > 0 ? (size_t) n : 0);
    return out;
}

static inline std::string test_detokenize(const tern_vocab * v, const std::vector<tern_token> & tokens,
                                          bool special = false) {
    std::string s;
    for (tern_token t : tokens) {
        char buf[256];
        int32_t n = vocab_token_to_piece(v, t, buf, sizeof(buf), special);
        if (n < 0) {
            std::vector<char> big((size_t) -n);
            n = vocab_token_to_piece(v, t, big.data(), (int32_t) big.size(), special);
            s.append(big.data(), (size_t) n);
        } else {
            s.append(buf, (size_t) n);
        }
    }
    return s;
}
