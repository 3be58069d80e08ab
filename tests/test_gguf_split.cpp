// Split models: ktest-llama-F32.gguf split into 3 parts as llama-gguf-split
// writes them (part 1 holds the metadata; every part has split.no u16,
// split.count u16, split.tensors.count i32) loads with the same tensors as
// the unsplit file on the mmap and read paths; a missing part, a wrong
// split.count and naming a later part fail cleanly.
#include "gguf/writer.h"
#include "gguf_test_util.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

// Writes parts <dir>/<stem>-0000k-of-0000n.gguf; count_in_file overrides split.count of the last part.
void write_parts(const gguf_file & src, const temp_dir & dir, const char * stem, int n, int last_count) {
    int64_t per = ((int64_t) src.n_tensors + n - 1) / n;
    for (int k = 0; k < n; k++) {
        heap_arena mem(1 << 22);
        gguf_writer w;
        CHECK(gguf_writer_init(&w, &mem.arena, (uint32_t) src.n_kv + 3, (uint32_t) per) == TERN_OK);
        if (k == 0) {
            for (uint64_t i = 0; i < src.n_kv; i++) CHECK(gguf_writer_copy_kv(&w, &src.kv[i]) == TERN_OK);
        }
        CHECK(gguf_writer_set_u16(&w, "split.no", (uint16_t) k) == TERN_OK);
        CHECK(gguf_writer_set_u16(&w, "split.count", (uint16_t) (k == n - 1 ? last_count : n)) == TERN_OK);
        CHECK(gguf_writer_set_i32(&w, "split.tensors.count", (int32_t) src.n_tensors) == TERN_OK);
        for (int64_t i = k * per; i < std::min<int64_t>((k + 1) * per, (int64_t) src.n_tensors); i++) {
            const gguf_tensor_info & t = src.tensors[i];
            CHECK(gguf_writer_add_tensor(&w, t.name, t.type, t.n_dims, t.ne, src.base + src.data_offset + t.offset) ==
                  TERN_OK);
        }
        char name[256];
        snprintf(name, sizeof(name), "%s-%05d-of-%05d.gguf", stem, k + 1, n);
        CHECK(gguf_writer_write(&w, dir.file(name).c_str()) == TERN_OK);
    }
}

tern_status open_first(const temp_dir & dir, const char * stem, int n, int use_mmap, model_files * m) {
    char name[256];
    snprintf(name, sizeof(name), "%s-00001-of-%05d.gguf", stem, n);
    tern_model_params p = load_params(use_mmap);
    return model_files_open_path(dir.file(name).c_str(), &p, NULL, m);
}

}  // namespace

int main() {
    std::string path = std::string(tern_test_shared_dir()) + "/models/ktest-llama-F32.gguf";
    model_files whole;
    tern_model_params p = load_params(1);
    CHECK_MSG(model_files_open_path(path.c_str(), &p, NULL, &whole) == TERN_OK, "%s", tern_last_error());
    if (whole.n_tensors == 0) return tern_test_summary();
    const gguf_file & src = whole.splits[0];

    temp_dir dir;
    write_parts(src, dir, "ktest", 3, 3);
    for (int use_mmap = 0; use_mmap < 2; use_mmap++) {
        model_files split;
        tern_status s = open_first(dir, "ktest", 3, use_mmap, &split);
        CHECK_MSG(s == TERN_OK, "split (mmap %d): %s", use_mmap, tern_last_error());
        if (s != TERN_OK) continue;
        CHECK(split.n_splits == 3);
        check_same_tensors(whole, split, use_mmap ? "split mmap" : "split read");
        CHECK(split.tensors[0].split == 0 && split.tensors[split.n_tensors - 1].split == 2);
        // Part 1's keys are the model metadata.
        gguf_str arch;
        CHECK(gguf_get_str(&split.splits[0], "general.architecture", &arch) && gguf_str_eq(arch, "llama"));
        model_files_close(&split);
    }

    // Naming a later part.
    model_files m;
    tern_status s = model_files_open_path(dir.file("ktest-00002-of-00003.gguf").c_str(), &p, NULL, &m);
    CHECK_MSG(s == TERN_ERR_FORMAT && strstr(tern_last_error(), "first part"), "%s", tern_last_error());

    // A missing part.
    temp_dir missing;
    write_parts(src, missing, "ktest", 3, 3);
    unlink(missing.file("ktest-00003-of-00003.gguf").c_str());
    s = open_first(missing, "ktest", 3, 1, &m);
    CHECK_MSG(s == TERN_ERR_IO && strstr(tern_last_error(), "ktest-00003-of-00003.gguf") &&
              strstr(tern_last_error(), "missing"), "%s", tern_last_error());
    CHECK(m.arena_buffer == NULL && m.sources[0].map.addr == NULL);

    // A part with the wrong split.count.
    temp_dir wrong;
    write_parts(src, wrong, "ktest", 3, 4);
    for (int use_mmap = 0; use_mmap < 2; use_mmap++) {
        s = open_first(wrong, "ktest", 3, use_mmap, &m);
        CHECK_MSG(s == TERN_ERR_FORMAT && strstr(tern_last_error(), "split.count"), "%s", tern_last_error());
        CHECK(m.arena_buffer == NULL && m.sources[0].buffer == NULL);
    }
    model_files_close(&whole);
    return tern_test_summary();
}
