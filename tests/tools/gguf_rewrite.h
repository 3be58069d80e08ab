// Rewrite a GGUF file with Tern's own reader and writer: every key/value and
// tensor of the source, some keys set to new string values (in place, or
// appended when absent), some keys and tensors left out. Used by the
// pre-tokenizer vectors (a shared vocabulary with another tokenizer.ggml.pre)
// and by the `tern info` tests (files Tern cannot run), in tests and in the
// peer-linked generator alike, so both read the very same bytes.
#pragma once
#include <stdio.h>
#include <string.h>

#include <string>
#include <utility>
#include <vector>

#include "core/arena.h"
#include "core/status.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

struct gguf_edit {
    std::vector<std::pair<std::string, std::string>> set_str;  // key -> new string value
    std::vector<std::string> drop_keys;
    std::vector<std::string> drop_tensors;
};

static inline bool gguf_rewrite_read(const std::string & path, std::vector<uint8_t> * out) {
    FILE * f = fopen(path.c_str(), "rb");
    if (!f) return false;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    out->resize(n > 0 ? (size_t) n : 0);
    bool ok = n >= 0 && (n == 0 || fread(out->data(), 1, (size_t) n, f) == (size_t) n);
    fclose(f);
    return ok;
}

// A GGUF file read into memory and parsed (its bytes and index held here, so
// views into it stay valid while this lives).
struct gguf_source {
    std::vector<uint8_t> bytes, index_buf;
    tern_arena arena;
    gguf_file f;

    bool open(const std::string & path, std::string * err) {
        if (!gguf_rewrite_read(path, &bytes)) { *err = "cannot read " + path; return false; }
        gguf_span span = {bytes.data(), bytes.size(), bytes.size()};
        size_t index_bytes = 0;
        uint64_t need = 0;
        if (gguf_measure(&span, path.c_str(), NULL, NULL, NULL, &index_bytes, &need) != TERN_OK) {
            *err = tern_last_error();
            return false;
        }
        index_buf.resize(arena_buffer_size(index_bytes));
        arena_init(&arena, index_buf.data(), index_buf.size());
        if (gguf_parse(&span, path.c_str(), &arena, &f) != TERN_OK) { *err = tern_last_error(); return false; }
        return true;
    }
};

// Returns true on success; *err says why not.
static inline bool gguf_rewrite(const std::string & src, const std::string & dst, const gguf_edit & edit,
                                std::string * err) {
    gguf_source in;
    if (!in.open(src, err)) return false;
    const gguf_file & f = in.f;

    const uint32_t max_kv = (uint32_t) f.n_kv + (uint32_t) edit.set_str.size();
    const uint32_t max_tensors = (uint32_t) f.n_tensors;
    std::vector<uint8_t> writer_buf(arena_buffer_size((size_t) 1 << 20) + (size_t) max_kv * 256 +
                                    (size_t) max_tensors * 256);
    for (const auto & kv : edit.set_str) writer_buf.resize(writer_buf.size() + kv.first.size() + kv.second.size() + 64);
    tern_arena writer_arena;
    arena_init(&writer_arena, writer_buf.data(), writer_buf.size());
    gguf_writer w;
    if (gguf_writer_init(&w, &writer_arena, max_kv, max_tensors) != TERN_OK) { *err = tern_last_error(); return false; }

    auto listed = [](const std::vector<std::string> & names, const char * s, size_t n) {
        for (const std::string & x : names) {
            if (x.size() == n && memcmp(x.data(), s, n) == 0) return true;
        }
        return false;
    };
    for (uint64_t i = 0; i < f.n_kv; i++) {
        const gguf_kv * kv = &f.kv[i];
        if (listed(edit.drop_keys, kv->key.data, (size_t) kv->key.len)) continue;
        if (gguf_writer_copy_kv(&w, kv) != TERN_OK) { *err = tern_last_error(); return false; }
    }
    for (const auto & kv : edit.set_str) {
        if (gguf_writer_set_str(&w, kv.first.c_str(), kv.second.c_str()) != TERN_OK) {
            *err = tern_last_error();
            return false;
        }
    }
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const gguf_tensor_info * t = &f.tensors[i];
        if (listed(edit.drop_tensors, t->name, strlen(t->name))) continue;
        const uint8_t * data = f.base + f.data_offset + t->offset;
        if (gguf_writer_add_tensor(&w, t->name, t->type, t->n_dims, t->ne, data) != TERN_OK) {
            *err = tern_last_error();
            return false;
        }
    }
    if (gguf_writer_write(&w, dst.c_str()) != TERN_OK) { *err = tern_last_error(); return false; }
    return true;
}
