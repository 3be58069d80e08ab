// Helpers shared by the GGUF tests: files, temp folders, an arena on the heap,
// and a comparison of two loaded tensor tables.
#pragma once
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "check.h"
#include "core/arena.h"
#include "core/status.h"
#include "model/model_file.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

static inline std::vector<uint8_t> read_bytes(const std::string & path) {
    std::vector<uint8_t> out;
    FILE * f = fopen(path.c_str(), "rb");
    if (!f) return out;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    out.resize((size_t) n);
    if (n > 0 && fread(out.data(), 1, (size_t) n, f) != (size_t) n) out.clear();
    fclose(f);
    return out;
}

static inline bool write_bytes(const std::string & path, const std::vector<uint8_t> & bytes) {
    FILE * f = fopen(path.c_str(), "wb");
    if (!f) return false;
    bool ok = bytes.empty() || fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return fclose(f) == 0 && ok;
}

// *.gguf files of a folder, sorted.
static inline std::vector<std::string> list_gguf(const std::string & dir) {
    std::vector<std::string> out;
    DIR * d = opendir(dir.c_str());
    if (!d) return out;
    while (dirent * e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) out.push_back(dir + "/" + n);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

// A temp folder removed (with its files) at scope exit.
struct temp_dir {
    std::string path;
    temp_dir() {
        char tmpl[] = "/tmp/tern_gguf_XXXXXX";
        path = mkdtemp(tmpl) ? tmpl : "/tmp";
    }
    ~temp_dir() {
        DIR * d = opendir(path.c_str());
        if (d) {
            while (dirent * e = readdir(d)) {
                if (e->d_name[0] != '.') unlink((path + "/" + e->d_name).c_str());
            }
            closedir(d);
        }
        rmdir(path.c_str());
    }
    std::string file(const std::string & name) const { return path + "/" + name; }
};

// An arena over a heap buffer (tests only).
struct heap_arena {
    std::vector<uint8_t> buf;
    tern_arena arena;
    explicit heap_arena(size_t bytes) : buf(bytes) { arena_init(&arena, buf.data(), buf.size()); }
};

static inline tern_model_params load_params(int use_mmap) {
    tern_model_params p;
    memset(&p, 0, sizeof(p));
    p.use_mmap = use_mmap;
    p.n_threads = 2;
    return p;
}

// Same names, types, shapes, splits' offsets and identical data bytes.
static inline void check_same_tensors(const model_files & a, const model_files & b, const char * what) {
    CHECK_MSG(a.n_tensors == b.n_tensors, "%s: %lld vs %lld tensors", what, (long long) a.n_tensors,
              (long long) b.n_tensors);
    if (a.n_tensors != b.n_tensors) return;
    int64_t bad = 0;
    for (int64_t i = 0; i < a.n_tensors; i++) {
        const model_file_tensor & x = a.tensors[i];
        const model_file_tensor & y = b.tensors[i];
        bool same = strcmp(x.name, y.name) == 0 && x.type == y.type && x.n_dims == y.n_dims &&
                    memcmp(x.ne, y.ne, sizeof(x.ne)) == 0 && x.bytes == y.bytes &&
                    memcmp(x.data, y.data, (size_t) x.bytes) == 0;
        if (!same && bad++ < 3) fprintf(stderr, "%s: tensor %lld '%s' differs\n", what, (long long) i, x.name);
    }
    CHECK_MSG(bad == 0, "%s: %lld tensors differ", what, (long long) bad);
}
