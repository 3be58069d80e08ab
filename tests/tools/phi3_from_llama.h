// Rewrite a llama GGUF as the same network in phi3's layout, with Tern's own
// reader and writer, so tests get a trained phi3 model without storing one:
//
//   keys       llama.* -> phi3.*, general.architecture = phi3, and
//              phi3.attention.sliding_window = n_swa (0: no window, as Phi-4)
//   attn_qkv   rows of attn_q | attn_k | attn_v, q and k permuted per head so
//              that NEOX rope (phi3) rotates the pairs NORMAL rope (llama)
//              rotated: new row i = old row 2i, new row i + n_rot/2 = old row
//              2i + 1 (i < n_rot/2). q.k is unchanged by the common permutation.
//   ffn_up     rows of ffn_gate | ffn_up (llama.cpp's LLM_FFN_SWIGLU: silu of
//              the first half times the second)
//   the rest   copied (rows are moved as bytes: any weight type works)
//
// With n_swa = 0 the result computes what the llama model computes (up to
// float order and phi3's q scaled before the product); with n_swa > 0 it is a
// sliding-window model whose answers come from llama.cpp (tests/data/phi3).
#pragma once
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "tools/gguf_rewrite.h"
#include "tensor/types.h"

struct phi3_tensor_buf {
    std::string name;
    std::vector<uint8_t> bytes;
};

static inline bool phi3_from_llama(const std::string & src, const std::string & dst, uint32_t n_swa, std::string * err) {
    gguf_source in;
    if (!in.open(src, err)) return false;
    const gguf_file & f = in.f;

    auto find = [&](const std::string & name) -> const gguf_tensor_info * {
        for (uint64_t i = 0; i < f.n_tensors; i++) if (name == f.tensors[i].name) return &f.tensors[i];
        return NULL;
    };
    auto u32_key = [&](const char * key, uint32_t * v) {
        int64_t x = 0;
        const int64_t i = gguf_find_key(&f, key);
        if (i < 0 || !gguf_kv_int(&f.kv[i], &x)) return false;
        *v = (uint32_t) x;
        return true;
    };
    uint32_t n_layer = 0, n_head = 0, n_head_kv = 0, n_embd = 0, n_rot = 0;
    if (!u32_key("llama.block_count", &n_layer) || !u32_key("llama.attention.head_count", &n_head) ||
        !u32_key("llama.embedding_length", &n_embd)) {
        *err = src + ": not a llama model";
        return false;
    }
    if (!u32_key("llama.attention.head_count_kv", &n_head_kv)) n_head_kv = n_head;
    const uint32_t hd = n_embd / n_head;
    if (!u32_key("llama.rope.dimension_count", &n_rot)) n_rot = hd;

    std::vector<uint8_t> writer_buf(arena_buffer_size((size_t) 1 << 20) + (size_t) (f.n_kv + 2) * 256 + (size_t) f.n_tensors * 256);
    tern_arena writer_arena;
    arena_init(&writer_arena, writer_buf.data(), writer_buf.size());
    gguf_writer w;
    if (gguf_writer_init(&w, &writer_arena, (uint32_t) f.n_kv + 2, (uint32_t) f.n_tensors) != TERN_OK) { *err = tern_last_error(); return false; }
    std::vector<std::string> renamed;  // keys the writer views (kept alive until the write)
    renamed.reserve((size_t) f.n_kv);
    for (uint64_t i = 0; i < f.n_kv; i++) {
        gguf_kv kv = f.kv[i];
        const std::string key(kv.key.data, (size_t) kv.key.len);
        if (key == "general.architecture") continue;
        if (key.compare(0, 6, "llama.") == 0) {
            renamed.push_back("phi3." + key.substr(6));
            kv.key.data = renamed.back().c_str();
            kv.key.len = renamed.back().size();
        }
        if (gguf_writer_copy_kv(&w, &kv) != TERN_OK) { *err = tern_last_error(); return false; }
    }
    if (gguf_writer_set_str(&w, "general.architecture", "phi3") != TERN_OK ||
        gguf_writer_set_u32(&w, "phi3.attention.sliding_window", n_swa) != TERN_OK) {
        *err = tern_last_error();
        return false;
    }

    // Fused tensors are built here; the writer holds views, so they live in `made`.
    std::vector<phi3_tensor_buf> made;
    made.reserve((size_t) n_layer * 2);
    auto rows_of = [&](const gguf_tensor_info * t) { return f.base + f.data_offset + t->offset; };
    auto concat = [&](const std::string & name, const std::vector<const gguf_tensor_info *> & parts,
                      const std::vector<uint32_t> & heads) -> bool {
        phi3_tensor_buf b;
        b.name = name;
        int64_t rows = 0;
        const size_t row_bytes = tern_row_size(parts[0]->type, parts[0]->ne[0]);
        for (size_t p = 0; p < parts.size(); p++) {
            const gguf_tensor_info * t = parts[p];
            if (t->type != parts[0]->type || t->ne[0] != parts[0]->ne[0]) { *err = name + ": parts differ in type or width"; return false; }
            const uint8_t * src_rows = rows_of(t);
            for (int64_t r = 0; r < t->ne[1]; r++) {
                int64_t from = r;
                if (heads[p] > 0) {  // permute within each head: NORMAL pairs -> NEOX pairs
                    const int64_t h = r / hd, i = r % hd;
                    if (i < n_rot) from = h * hd + (i < n_rot / 2 ? 2 * i : 2 * (i - n_rot / 2) + 1);
                }
                b.bytes.insert(b.bytes.end(), src_rows + (size_t) from * row_bytes, src_rows + (size_t) (from + 1) * row_bytes);
            }
            rows += t->ne[1];
        }
        made.push_back(std::move(b));
        const int64_t ne[2] = { parts[0]->ne[0], rows };
        if (gguf_writer_add_tensor(&w, made.back().name.c_str(), parts[0]->type, 2, ne, made.back().bytes.data()) != TERN_OK) {
            *err = tern_last_error();
            return false;
        }
        return true;
    };
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const gguf_tensor_info * t = &f.tensors[i];
        const std::string name = t->name;
        int il = -1;
        char suffix[64] = {0};
        if (sscanf(name.c_str(), "blk.%d.%63s", &il, suffix) == 2) {
            const std::string s = suffix, blk = "blk." + std::to_string(il) + ".";
            if (s == "attn_q.weight") {
                const gguf_tensor_info * k = find(blk + "attn_k.weight"), * v = find(blk + "attn_v.weight");
                if (!k || !v) { *err = blk + ": attn_k/attn_v missing"; return false; }
                if (!concat(blk + "attn_qkv.weight", {t, k, v}, {n_head, n_head_kv, 0})) return false;
                continue;
            }
            if (s == "ffn_gate.weight") {
                const gguf_tensor_info * up = find(blk + "ffn_up.weight");
                if (!up) { *err = blk + ": ffn_up missing"; return false; }
                if (!concat(blk + "ffn_up.weight", {t, up}, {0, 0})) return false;
                continue;
            }
            if (s == "attn_k.weight" || s == "attn_v.weight" || s == "ffn_up.weight") continue;  // fused above
        }
        if (gguf_writer_add_tensor(&w, t->name, t->type, t->n_dims, t->ne, rows_of(t)) != TERN_OK) { *err = tern_last_error(); return false; }
    }
    if (gguf_writer_write(&w, dst.c_str()) != TERN_OK) { *err = tern_last_error(); return false; }
    return true;
}
