// Malformed GGUF files: every one gives a non-OK status and a non-empty
// tern_last_error() on the mmap, read and blob paths, never a crash.
//
// The corpus is made from valid files (one from the writer, with keys and
// tensors placed to be mutated, and the shared stories260K.gguf) by
// truncating them at every header boundary and at many points inside the
// tables, and by patching single fields (counts, lengths, types, dims,
// offsets, magic, version, alignment). Field positions come from a small
// independent walk of the valid file.
#include <random>

#include "gguf/writer.h"
#include "gguf_test_util.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

typedef std::vector<uint8_t> bytes_t;

// Where the fields of a valid file are.
struct layout {
    std::vector<size_t> boundaries;  // start of every field
    std::vector<size_t> kv_start, kv_type, kv_value;
    std::vector<size_t> t_start, t_ndims, t_ne, t_type, t_offset;
    size_t data_offset = 0;
};

uint64_t get_u64(const bytes_t & b, size_t at) { uint64_t v; memcpy(&v, b.data() + at, 8); return v; }
uint32_t get_u32(const bytes_t & b, size_t at) { uint32_t v; memcpy(&v, b.data() + at, 4); return v; }
void put_u64(bytes_t & b, size_t at, uint64_t v) { memcpy(b.data() + at, &v, 8); }
void put_u32(bytes_t & b, size_t at, uint32_t v) { memcpy(b.data() + at, &v, 4); }

size_t skip_value(const bytes_t & b, size_t at, uint32_t type, layout * L) {
    static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type == GGUF_TYPE_STRING) { L->boundaries.push_back(at + 8); return at + 8 + get_u64(b, at); }
    if (type != GGUF_TYPE_ARRAY) return at + sizes[type];
    uint32_t et = get_u32(b, at);
    uint64_t n = get_u64(b, at + 4);
    at += 12;
    L->boundaries.push_back(at);
    for (uint64_t i = 0; i < n; i++) {
        at = skip_value(b, at, et, L);
        if (i < 4 || i + 1 == n) L->boundaries.push_back(at);
    }
    return at;
}

layout layout_of(const bytes_t & b) {
    layout L;
    L.boundaries = {0, 4, 8, 16};
    uint64_t n_tensors = get_u64(b, 8), n_kv = get_u64(b, 16);
    size_t at = 24;
    uint32_t alignment = 32;
    for (uint64_t i = 0; i < n_kv; i++) {
        L.kv_start.push_back(at);
        L.boundaries.push_back(at);
        std::string key((const char *) b.data() + at + 8, get_u64(b, at));
        at += 8 + key.size();
        L.kv_type.push_back(at);
        L.boundaries.push_back(at);
        uint32_t type = get_u32(b, at);
        at += 4;
        L.kv_value.push_back(at);
        L.boundaries.push_back(at);
        if (key == "general.alignment") alignment = get_u32(b, at);
        at = skip_value(b, at, type, &L);
    }
    for (uint64_t i = 0; i < n_tensors; i++) {
        L.t_start.push_back(at);
        at += 8 + get_u64(b, at);
        L.t_ndims.push_back(at);
        uint32_t n_dims = get_u32(b, at);
        at += 4;
        L.t_ne.push_back(at);
        at += 8 * n_dims;
        L.t_type.push_back(at);
        at += 4;
        L.t_offset.push_back(at);
        at += 8;
        for (size_t x : {L.t_start.back(), L.t_ndims.back(), L.t_ne.back(), L.t_type.back(), L.t_offset.back(), at}) {
            L.boundaries.push_back(x);
        }
    }
    L.data_offset = (at + alignment - 1) / alignment * alignment;
    return L;
}

struct corpus_case {
    std::string name;
    bytes_t     bytes;
    const char * expect;  // substring of the error, or NULL
};

// A small valid file: keys of each kind, tensors "ta" F32, "tb" Q8_0, "tc" Q4_K.
bytes_t make_base(const temp_dir & tmp) {
    heap_arena mem(1 << 16);
    gguf_writer w;
    gguf_writer_init(&w, &mem.arena, 8, 3);
    gguf_writer_set_str(&w, "general.architecture", "llama");
    gguf_writer_set_u32(&w, "general.alignment", 32);
    const char * toks[] = {"<s>", "</s>", "hello"};
    gguf_writer_set_arr_str(&w, "tokenizer.ggml.tokens", toks, 3);
    int32_t types[] = {1, 2, 3};
    gguf_writer_set_arr(&w, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, 3);
    gguf_writer_set_u32(&w, "t.keyA", 1);
    gguf_writer_set_u32(&w, "t.keyB", 2);
    static float fa[64];
    static uint8_t qb[2 * 34];
    static uint8_t qc[144];
    int64_t ne_a[2] = {32, 2}, ne_b[2] = {64, 1}, ne_c[1] = {256};
    gguf_writer_add_tensor(&w, "ta", TERN_TYPE_F32, 2, ne_a, fa);
    gguf_writer_add_tensor(&w, "tb", TERN_TYPE_Q8_0, 2, ne_b, qb);
    gguf_writer_add_tensor(&w, "tc", TERN_TYPE_Q4_K, 1, ne_c, qc);
    std::string path = tmp.file("base.gguf");
    CHECK(gguf_writer_write(&w, path.c_str()) == TERN_OK);
    return read_bytes(path);
}

void add_truncations(std::vector<corpus_case> & out, const std::string & name, const bytes_t & b, size_t step) {
    layout L = layout_of(b);
    std::vector<size_t> cuts = L.boundaries;
    for (size_t x : L.boundaries) { cuts.push_back(x + 1); if (x > 0) cuts.push_back(x - 1); }
    for (size_t x = 0; x < L.data_offset; x += step) cuts.push_back(x);
    cuts.push_back(L.data_offset + 1);  // inside the first tensor's data (the last may end in padding)
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t cut : cuts) {
        if (cut >= b.size()) continue;
        out.push_back({name + "-cut" + std::to_string(cut), bytes_t(b.begin(), b.begin() + cut), NULL});
    }
}

std::vector<corpus_case> make_patches(const bytes_t & base) {
    layout L = layout_of(base);
    std::vector<corpus_case> out;
    auto patch = [&](const char * name, const char * expect, auto fn) {
        bytes_t b = base;
        fn(b);
        out.push_back({name, b, expect});
    };
    const size_t kv_arch = 0, kv_align = 1, kv_toks = 2, kv_types = 3, kv_b = 5;
    patch("bad-magic", "magic", [](bytes_t & b) { b[0] = 'X'; });
    patch("version-1", "version 1", [](bytes_t & b) { put_u32(b, 4, 1); });
    patch("version-4", "version 4", [](bytes_t & b) { put_u32(b, 4, 4); });
    patch("big-endian", "big-endian", [](bytes_t & b) { put_u32(b, 4, 0x03000000u); });
    patch("huge-n-kv", "key/value", [](bytes_t & b) { put_u64(b, 16, 1ull << 60); });
    patch("huge-n-tensors", "tensors", [](bytes_t & b) { put_u64(b, 8, 1ull << 60); });
    patch("n-kv-plus-1000", NULL, [](bytes_t & b) { put_u64(b, 16, get_u64(b, 16) + 1000); });
    patch("n-tensors-plus-1", NULL, [](bytes_t & b) { put_u64(b, 8, get_u64(b, 8) + 1); });
    patch("key-len-huge", NULL, [&](bytes_t & b) { put_u64(b, L.kv_start[kv_arch], 1ull << 62); });
    patch("str-len-huge", NULL, [&](bytes_t & b) { put_u64(b, L.kv_value[kv_arch], 1ull << 40); });
    patch("str-len-past-end", NULL, [&](bytes_t & b) { put_u64(b, L.kv_value[kv_arch], b.size()); });
    patch("arr-str-elem-huge", NULL, [&](bytes_t & b) { put_u64(b, L.kv_value[kv_toks] + 12, 1ull << 50); });
    patch("arr-count-huge", NULL, [&](bytes_t & b) { put_u64(b, L.kv_value[kv_types] + 4, 1ull << 61); });
    patch("arr-str-count-huge", NULL, [&](bytes_t & b) { put_u64(b, L.kv_value[kv_toks] + 4, 1ull << 61); });
    patch("kv-type-unknown", "type", [&](bytes_t & b) { put_u32(b, L.kv_type[kv_b], 99); });
    patch("arr-type-unknown", "type", [&](bytes_t & b) { put_u32(b, L.kv_value[kv_types], 99); });
    patch("arr-nested", "nested", [&](bytes_t & b) { put_u32(b, L.kv_value[kv_types], GGUF_TYPE_ARRAY); });
    patch("dup-key", "duplicated", [&](bytes_t & b) { b[L.kv_type[kv_b] - 1] = 'A'; });
    patch("alignment-0", "alignment", [&](bytes_t & b) { put_u32(b, L.kv_value[kv_align], 0); });
    patch("alignment-3", "alignment", [&](bytes_t & b) { put_u32(b, L.kv_value[kv_align], 3); });
    patch("alignment-type", "alignment", [&](bytes_t & b) { put_u32(b, L.kv_type[kv_align], GGUF_TYPE_INT32); });
    patch("alignment-64", NULL, [&](bytes_t & b) { put_u32(b, L.kv_value[kv_align], 64); });  // "tc" at 352
    patch("dup-tensor", "duplicated", [&](bytes_t & b) { b[L.t_ndims[1] - 1] = 'a'; });
    patch("n-dims-0", "dimensions", [&](bytes_t & b) { put_u32(b, L.t_ndims[0], 0); });
    patch("n-dims-5", "dimensions", [&](bytes_t & b) { put_u32(b, L.t_ndims[0], 5); });
    patch("ne-overflow", "overflow", [&](bytes_t & b) { put_u64(b, L.t_ne[0], 1ull << 62); });
    patch("ne-product-overflow", "overflow", [&](bytes_t & b) {
        put_u64(b, L.t_ne[0], 1ull << 32);
        put_u64(b, L.t_ne[0] + 8, 1ull << 32);
    });
    patch("ne-negative", "overflow", [&](bytes_t & b) { put_u64(b, L.t_ne[0] + 8, (uint64_t) -1); });
    patch("ne0-not-block-multiple", "block", [&](bytes_t & b) { put_u64(b, L.t_ne[1], 63); });
    patch("type-unknown", "type id 99", [&](bytes_t & b) { put_u32(b, L.t_type[0], 99); });
    patch("type-removed", "type id 4", [&](bytes_t & b) { put_u32(b, L.t_type[0], 4); });
    patch("type-huge", "type id", [&](bytes_t & b) { put_u32(b, L.t_type[0], 0xffffffffu); });
    patch("offset-past-end", "past the end", [&](bytes_t & b) { put_u64(b, L.t_offset[2], 1ull << 40); });
    patch("offset-overflow", NULL, [&](bytes_t & b) { put_u64(b, L.t_offset[2], (uint64_t) -32); });
    patch("offset-just-past-end", "past the end", [&](bytes_t & b) {
        put_u64(b, L.t_offset[2], (b.size() - L.data_offset - 144 + 32) / 32 * 32);
    });
    patch("offset-misaligned", "alignment", [&](bytes_t & b) { put_u64(b, L.t_offset[1], get_u64(b, L.t_offset[1]) + 1); });
    patch("offset-misaligned-16", "alignment", [&](bytes_t & b) { put_u64(b, L.t_offset[1], get_u64(b, L.t_offset[1]) + 16); });
    patch("overlap", "overlaps", [&](bytes_t & b) { put_u64(b, L.t_offset[1], get_u64(b, L.t_offset[0])); });
    patch("name-len-huge", NULL, [&](bytes_t & b) { put_u64(b, L.t_start[0], 1ull << 50); });
    return out;
}

void check_case(const corpus_case & c, const temp_dir & tmp) {
    std::string path = tmp.file("case.gguf");
    CHECK(write_bytes(path, c.bytes));
    tern_model_params p_map = load_params(1), p_read = load_params(0);
    const tern_model_params * params[2] = {&p_map, &p_read};
    for (int k = 0; k < 3; k++) {
        model_files m;
        tern_error_clear();
        tern_status s = k < 2 ? model_files_open_path(path.c_str(), params[k], NULL, &m)
                              : model_files_open_blob(c.bytes.data(), c.bytes.size(), &p_map, NULL, &m);
        const char * e = tern_last_error();
        CHECK_MSG(s != TERN_OK && e[0] != 0, "%s (path %d): status %d, error '%s'", c.name.c_str(), k, (int) s, e);
        if (c.expect && k == 2) CHECK_MSG(strstr(e, c.expect) != NULL, "%s: error '%s' lacks '%s'", c.name.c_str(), e, c.expect);
        CHECK(m.arena_buffer == NULL && m.sources[0].buffer == NULL && m.sources[0].map.addr == NULL);
        model_files_close(&m);
    }
}

// Random byte flips of a valid file: any status, never a crash (ASan/UBSan watch).
void check_random_flips(const bytes_t & base) {
    std::mt19937 rng(1234);
    layout L = layout_of(base);
    int ok = 0;
    for (int i = 0; i < 2000; i++) {
        bytes_t b = base;
        int flips = 1 + (int) (rng() % 4);
        for (int k = 0; k < flips; k++) b[rng() % L.data_offset] ^= (uint8_t) (1u << (rng() % 8));
        model_files m;
        tern_model_params p = load_params(1);
        if (model_files_open_blob(b.data(), b.size(), &p, NULL, &m) == TERN_OK) ok++;
        model_files_close(&m);
    }
    CHECK(ok < 2000);
}

}  // namespace

int main() {
    temp_dir tmp;
    bytes_t base = make_base(tmp);
    {
        // The unpatched base loads: the corpus really is one field away from valid.
        model_files m;
        tern_model_params p = load_params(0);
        std::string path = tmp.file("base.gguf");
        CHECK_MSG(model_files_open_path(path.c_str(), &p, NULL, &m) == TERN_OK, "%s", tern_last_error());
        CHECK(m.n_tensors == 3);
        model_files_close(&m);
    }
    std::vector<corpus_case> corpus = make_patches(base);
    add_truncations(corpus, "base", base, 5);
    bytes_t stories = read_bytes(std::string(tern_test_shared_dir()) + "/models/stories260K.gguf");
    CHECK(!stories.empty());
    if (!stories.empty()) add_truncations(corpus, "stories260K", stories, 997);
    corpus.push_back({"empty", bytes_t(), NULL});
    corpus.push_back({"short", bytes_t(base.begin(), base.begin() + 10), NULL});
    for (const corpus_case & c : corpus) check_case(c, tmp);
    check_random_flips(base);
    printf("%zu malformed files\n", corpus.size());
    return tern_test_summary();
}
