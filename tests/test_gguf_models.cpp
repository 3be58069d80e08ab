// Every GGUF of the shared models/ and vocab/ folders loads through the mmap,
// read and blob paths with identical tensor tables, the caller's reserved
// bytes are free in the arena afterwards, and the reader's prefix protocol
// (gguf_measure on a partial file) converges to the full-file answer.
#include "gguf_test_util.h"

namespace {

struct key_counter {
    uint64_t n;
};

void count_key(void * user, const gguf_kv *) { ((key_counter *) user)->n++; }
size_t reserve_4k(void *, uint64_t) { return 4096; }

// gguf_measure on a growing prefix, as the read path does.
void check_prefix_protocol(const std::string & path, const std::vector<uint8_t> & bytes) {
    gguf_span full = {bytes.data(), bytes.size(), bytes.size()};
    size_t want = 0;
    uint64_t need = 0;
    CHECK(gguf_measure(&full, path.c_str(), NULL, NULL, NULL, &want, &need) == TERN_OK);
    gguf_span part = {bytes.data(), 16, bytes.size()};
    size_t got = 0;
    int rounds = 0;
    tern_status s;
    while ((s = gguf_measure(&part, path.c_str(), NULL, NULL, NULL, &got, &need)) != TERN_OK && rounds++ < 64) {
        if (need <= part.avail) break;
        part.avail = need;
    }
    CHECK_MSG(s == TERN_OK && got == want, "%s: prefix protocol: %s", path.c_str(), tern_last_error());
}

void check_file(const std::string & path) {
    std::vector<uint8_t> bytes = read_bytes(path);
    CHECK_MSG(!bytes.empty(), "%s: cannot read", path.c_str());
    if (bytes.empty()) return;
    check_prefix_protocol(path, bytes);

    key_counter keys = {0};
    model_files_sizer sizer = {count_key, NULL, reserve_4k, &keys};
    model_files mapped, read, blob;
    tern_model_params p_map = load_params(1), p_read = load_params(0);
    tern_status s = model_files_open_path(path.c_str(), &p_map, &sizer, &mapped);
    CHECK_MSG(s == TERN_OK, "%s (mmap): %s", path.c_str(), tern_last_error());
    CHECK(s != TERN_OK || strcmp(mapped.load_path, TERN_WITH_MMAP ? "mmap" : "read") == 0);
    CHECK_MSG(s != TERN_OK || keys.n == mapped.splits[0].n_kv, "%s: visitor saw %llu of %llu keys", path.c_str(),
              (unsigned long long) keys.n, (unsigned long long) (s == TERN_OK ? mapped.splits[0].n_kv : 0));
    CHECK(s != TERN_OK || arena_free(&mapped.arena) >= 4096);
    CHECK(s != TERN_OK || (mapped.load_ms >= 0.0 && mapped.n_splits == 1));

    keys.n = 0;
    tern_status s_read = model_files_open_path(path.c_str(), &p_read, &sizer, &read);
    CHECK_MSG(s_read == TERN_OK, "%s (read): %s", path.c_str(), tern_last_error());
    CHECK(s_read != TERN_OK || strcmp(read.load_path, "read") == 0);
    CHECK_MSG(s_read != TERN_OK || keys.n == read.splits[0].n_kv, "%s (read): visitor saw %llu keys", path.c_str(),
              (unsigned long long) keys.n);
    CHECK(s_read != TERN_OK || arena_free(&read.arena) >= 4096);

    tern_status s_blob = model_files_open_blob(bytes.data(), bytes.size(), &p_map, NULL, &blob);
    CHECK_MSG(s_blob == TERN_OK, "%s (blob): %s", path.c_str(), tern_last_error());
    CHECK(s_blob != TERN_OK || strcmp(blob.load_path, "blob") == 0);
    if (s_blob == TERN_OK && blob.n_tensors > 0) {
        // Zero copy: weights point into the caller's memory.
        CHECK(blob.tensors[0].data >= bytes.data() && blob.tensors[0].data < bytes.data() + bytes.size());
    }
    if (s == TERN_OK && s_read == TERN_OK) check_same_tensors(mapped, read, path.c_str());
    if (s == TERN_OK && s_blob == TERN_OK) check_same_tensors(mapped, blob, path.c_str());
    if (s == TERN_OK && s_blob == TERN_OK) {
        CHECK(mapped.splits[0].n_kv == blob.splits[0].n_kv);
        gguf_str arch;
        CHECK(gguf_get_str(&blob.splits[0], "general.architecture", &arch) && arch.len > 0);
    }
    model_files_close(&mapped);
    model_files_close(&read);
    model_files_close(&blob);
}

}  // namespace

int main() {
    std::string shared = tern_test_shared_dir();
    std::vector<std::string> files = list_gguf(shared + "/models");
    std::vector<std::string> vocab = list_gguf(shared + "/vocab");
    files.insert(files.end(), vocab.begin(), vocab.end());
    CHECK(files.size() >= 20);
    for (const std::string & f : files) check_file(f);

    // A missing file is an i/o error naming it.
    model_files m;
    tern_model_params p = load_params(1);
    CHECK(model_files_open_path("/nonexistent/model.gguf", &p, NULL, &m) == TERN_ERR_IO);
    CHECK(strstr(tern_last_error(), "/nonexistent/model.gguf") != NULL);
    model_files_close(&m);
    return tern_test_summary();
}
