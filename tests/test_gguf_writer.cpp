// The writer's files read back: every value type, string arrays, replaced
// keys, alignment, tensors of several block types; the typed getters and the
// text rendering of values; kv copying from a parsed file.
#include "gguf/writer.h"

#include "gguf_test_util.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

struct parsed {
    std::vector<uint8_t> bytes;
    heap_arena mem{1 << 20};
    gguf_file f;
    tern_status status;
    explicit parsed(const std::string & path) : bytes(read_bytes(path)) {
        gguf_span span = {bytes.data(), bytes.size(), bytes.size()};
        status = gguf_parse(&span, path.c_str(), &mem.arena, &f);
    }
};

std::string text_of(const gguf_file & f, const char * key) {
    int64_t i = gguf_find_key(&f, key);
    if (i < 0) return "<absent>";
    char buf[256];
    int32_t n = gguf_value_to_text(&f.kv[i], buf, sizeof(buf));
    return n < (int32_t) sizeof(buf) ? std::string(buf) : std::string("<too long>");
}

void write_everything(const std::string & path, std::vector<float> & f32, std::vector<uint8_t> & q8) {
    heap_arena mem(1 << 20);
    gguf_writer w;
    CHECK(gguf_writer_init(&w, &mem.arena, 32, 4) == TERN_OK);
    uint8_t u8 = 200; int8_t i8 = -100; uint16_t u16 = 60000; int16_t i16 = -30000;
    uint64_t u64 = 1ull << 40; int64_t i64 = -(1ll << 40); double f64 = 0.25;
    CHECK(gguf_writer_set_val(&w, "t.u8", GGUF_TYPE_UINT8, &u8) == TERN_OK);
    CHECK(gguf_writer_set_val(&w, "t.i8", GGUF_TYPE_INT8, &i8) == TERN_OK);
    CHECK(gguf_writer_set_u16(&w, "t.u16", u16) == TERN_OK);
    CHECK(gguf_writer_set_val(&w, "t.i16", GGUF_TYPE_INT16, &i16) == TERN_OK);
    CHECK(gguf_writer_set_u32(&w, "t.u32", 7) == TERN_OK);
    CHECK(gguf_writer_set_u32(&w, "t.u32", 4000000000u) == TERN_OK);  // replaces in place
    CHECK(gguf_writer_set_i32(&w, "t.i32", -5) == TERN_OK);
    CHECK(gguf_writer_set_f32(&w, "t.f32", 1.5f) == TERN_OK);
    CHECK(gguf_writer_set_bool(&w, "t.bool", true) == TERN_OK);
    CHECK(gguf_writer_set_str(&w, "t.str", "hello \"gguf\"") == TERN_OK);
    CHECK(gguf_writer_set_val(&w, "t.u64", GGUF_TYPE_UINT64, &u64) == TERN_OK);
    CHECK(gguf_writer_set_val(&w, "t.i64", GGUF_TYPE_INT64, &i64) == TERN_OK);
    CHECK(gguf_writer_set_val(&w, "t.f64", GGUF_TYPE_FLOAT64, &f64) == TERN_OK);
    const char * strs[] = {"a", "", "b\"c"};
    CHECK(gguf_writer_set_arr_str(&w, "t.arr_str", strs, 3) == TERN_OK);
    int32_t ints[] = {1, -2, 3};
    CHECK(gguf_writer_set_arr(&w, "t.arr_i32", GGUF_TYPE_INT32, ints, 3) == TERN_OK);
    float floats[] = {0.5f, -1.0f};
    CHECK(gguf_writer_set_arr(&w, "t.arr_f32", GGUF_TYPE_FLOAT32, floats, 2) == TERN_OK);
    CHECK(gguf_writer_set_arr(&w, "t.arr_empty", GGUF_TYPE_UINT8, NULL, 0) == TERN_OK);
    CHECK(gguf_writer_set_u32(&w, "general.alignment", 3) != TERN_OK);  // not a power of two
    CHECK(gguf_writer_set_u32(&w, "general.alignment", 64) == TERN_OK);

    int64_t ne_f32[2] = {5, 3};
    f32.resize(15);
    for (int i = 0; i < 15; i++) f32[i] = (float) i * 0.5f;
    int64_t ne_q8[2] = {64, 2};
    q8.resize(tern_row_size(TERN_TYPE_Q8_0, 64) * 2);
    for (size_t i = 0; i < q8.size(); i++) q8[i] = (uint8_t) (i * 7);
    for (size_t b = 0; b < q8.size(); b += sizeof(block_q8_0)) q8[b + 1] = 0x3c;  // finite scale
    CHECK(gguf_writer_add_tensor(&w, "w.f32", TERN_TYPE_F32, 2, ne_f32, f32.data()) == TERN_OK);
    CHECK(gguf_writer_add_tensor(&w, "w.q8", TERN_TYPE_Q8_0, 2, ne_q8, q8.data()) == TERN_OK);
    int64_t bad_ne[1] = {33};
    CHECK(gguf_writer_add_tensor(&w, "w.bad", TERN_TYPE_Q8_0, 1, bad_ne, q8.data()) != TERN_OK);
    CHECK(gguf_writer_write(&w, path.c_str()) == TERN_OK);
    CHECK(gguf_writer_write(&w, "/nonexistent/dir/x.gguf") == TERN_ERR_IO);
}

void check_values(const gguf_file & f) {
    CHECK(f.version == 3 && f.n_kv == 17 && f.n_tensors == 2 && f.alignment == 64);
    uint32_t u32 = 0; int32_t i32 = 0; float f32 = 0; bool b = false; gguf_str s = {NULL, 0};
    CHECK(gguf_get_u32(&f, "t.u32", &u32) && u32 == 4000000000u);
    CHECK(gguf_get_u32(&f, "t.u16", &u32) && u32 == 60000);  // any integer type that fits
    CHECK(gguf_get_i32(&f, "t.i32", &i32) && i32 == -5);
    CHECK(gguf_get_i32(&f, "t.i16", &i32) && i32 == -30000);
    CHECK(!gguf_get_i32(&f, "t.u32", &i32));   // does not fit
    CHECK(!gguf_get_u32(&f, "t.i32", &u32));   // negative
    CHECK(!gguf_get_u32(&f, "t.f32", &u32) && strstr(tern_last_error(), "t.f32") != NULL);
    CHECK(!gguf_get_u32(&f, "t.absent", &u32));
    CHECK(gguf_get_f32(&f, "t.f32", &f32) && f32 == 1.5f);
    CHECK(gguf_get_bool(&f, "t.bool", &b) && b);
    CHECK(gguf_get_str(&f, "t.str", &s) && gguf_str_eq(s, "hello \"gguf\""));
    const gguf_kv * arr = gguf_get_arr(&f, "t.arr_i32", GGUF_TYPE_INT32);
    CHECK(arr && arr->arr_n == 3 && gguf_arr_i32(arr, 1) == -2);
    CHECK(gguf_get_arr(&f, "t.arr_i32", GGUF_TYPE_FLOAT32) == NULL);
    const gguf_kv * fa = gguf_get_arr(&f, "t.arr_f32", GGUF_TYPE_FLOAT32);
    CHECK(fa && gguf_arr_f32(fa, 1) == -1.0f);
    const gguf_kv * sa = gguf_get_arr(&f, "t.arr_str", GGUF_TYPE_STRING);
    CHECK(sa && sa->arr_n == 3 && gguf_str_eq(sa->strs[0], "a") && sa->strs[1].len == 0 &&
          gguf_str_eq(sa->strs[2], "b\"c"));
    CHECK(text_of(f, "t.u8") == "200");
    CHECK(text_of(f, "t.i8") == "-100");
    CHECK(text_of(f, "t.u64") == "1099511627776");
    CHECK(text_of(f, "t.i64") == "-1099511627776");
    CHECK(text_of(f, "t.f64") == "0.250000");
    CHECK(text_of(f, "t.f32") == "1.500000");
    CHECK(text_of(f, "t.bool") == "true");
    CHECK(text_of(f, "t.str") == "hello \"gguf\"");
    CHECK(text_of(f, "t.arr_i32") == "[1, -2, 3]");
    CHECK(text_of(f, "t.arr_str") == "[\"a\", \"\", \"b\\\"c\"]");
    CHECK(text_of(f, "t.arr_empty") == "[]");
    // Cut to fit, full length returned, always terminated.
    char small[4];
    int64_t i = gguf_find_key(&f, "t.arr_i32");
    CHECK(gguf_value_to_text(&f.kv[i], small, sizeof(small)) == 10 && strcmp(small, "[1,") == 0);
    CHECK(strcmp(gguf_type_name(GGUF_TYPE_STRING), "str") == 0);
}

void check_tensors(const gguf_file & f, const std::vector<float> & f32, const std::vector<uint8_t> & q8) {
    int64_t a = gguf_find_tensor(&f, "w.f32"), b = gguf_find_tensor(&f, "w.q8");
    CHECK(a == 0 && b == 1 && gguf_find_tensor(&f, "w.none") == -1);
    if (a != 0 || b != 1) return;
    const gguf_tensor_info & t0 = f.tensors[0];
    const gguf_tensor_info & t1 = f.tensors[1];
    CHECK(t0.type == TERN_TYPE_F32 && t0.n_dims == 2 && t0.ne[0] == 5 && t0.ne[1] == 3 && t0.ne[2] == 1 &&
          t0.bytes == 60);
    CHECK(t1.type == TERN_TYPE_Q8_0 && t1.ne[0] == 64 && t1.bytes == q8.size());
    CHECK(f.data_offset % 64 == 0 && t1.offset % 64 == 0);
    CHECK(memcmp(f.base + f.data_offset + t0.offset, f32.data(), 60) == 0);
    CHECK(memcmp(f.base + f.data_offset + t1.offset, q8.data(), q8.size()) == 0);
}

// Copying every kv of a parsed file reproduces the same header.
void check_copy(const gguf_file & f, const temp_dir & tmp) {
    heap_arena mem(1 << 16);
    gguf_writer w;
    CHECK(gguf_writer_init(&w, &mem.arena, (uint32_t) f.n_kv, 0) == TERN_OK);
    for (uint64_t i = 0; i < f.n_kv; i++) CHECK(gguf_writer_copy_kv(&w, &f.kv[i]) == TERN_OK);
    CHECK(w.alignment == 64);
    std::string path = tmp.file("copy.gguf");
    CHECK(gguf_writer_write(&w, path.c_str()) == TERN_OK);
    parsed copy(path);
    CHECK_MSG(copy.status == TERN_OK, "%s", tern_last_error());
    if (copy.status != TERN_OK) return;
    CHECK(copy.f.n_kv == f.n_kv && copy.f.n_tensors == 0);
    for (uint64_t i = 0; i < f.n_kv; i++) {
        char k[64];
        snprintf(k, sizeof(k), "%.*s", (int) f.kv[i].key.len, f.kv[i].key.data);
        CHECK_MSG(text_of(copy.f, k) == text_of(f, k), "copied key %s", k);
    }
}

}  // namespace

int main() {
    temp_dir tmp;
    std::string path = tmp.file("all.gguf");
    std::vector<float> f32;
    std::vector<uint8_t> q8;
    write_everything(path, f32, q8);
    parsed p(path);
    CHECK_MSG(p.status == TERN_OK, "%s", tern_last_error());
    if (p.status == TERN_OK) {
        check_values(p.f);
        check_tensors(p.f, f32, q8);
        check_copy(p.f, tmp);
    }
    // The arena bytes gguf_measure reports are exactly enough for gguf_parse.
    gguf_span span = {p.bytes.data(), p.bytes.size(), p.bytes.size()};
    size_t need = 0;
    uint64_t more = 0;
    CHECK(gguf_measure(&span, "all.gguf", NULL, NULL, NULL, &need, &more) == TERN_OK && more == 0);
    std::vector<uint8_t> exact(need + TERN_ARENA_ALIGN);
    tern_arena a;
    arena_init(&a, exact.data(), arena_buffer_size(need));
    gguf_file f;
    CHECK(gguf_parse(&span, "all.gguf", &a, &f) == TERN_OK);
    arena_init(&a, exact.data(), arena_buffer_size(need - TERN_ARENA_ALIGN));
    CHECK(gguf_parse(&span, "all.gguf", &a, &f) == TERN_ERR_NO_MEMORY);
    return tern_test_summary();
}
