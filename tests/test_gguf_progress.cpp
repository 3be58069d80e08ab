// Load progress and cancellation, and check_tensors: progress values are in
// [0, 1], monotonic and end with 1.0; returning 0 at the first or a middle
// callback cancels with TERN_ERR_CANCELLED and releases everything (ASan
// reports any leak); check_tensors accepts the shared models and names a
// tensor holding a NaN value or a NaN block scale.
#include "gguf/writer.h"
#include "gguf_test_util.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

struct recorder {
    std::vector<float> values;
    int cancel_at;  // callback index that returns 0, -1 never
};

int record(float progress, void * user) {
    recorder * r = (recorder *) user;
    r->values.push_back(progress);
    return (int) r->values.size() - 1 == r->cancel_at ? 0 : 1;
}

tern_status load(const std::string & path, int use_mmap, int check, recorder * r) {
    tern_model_params p = load_params(use_mmap);
    p.check_tensors = check;
    p.n_threads = 4;
    p.progress_callback = record;
    p.progress_callback_user_data = r;
    model_files m;
    tern_status s = model_files_open_path(path.c_str(), &p, NULL, &m);
    model_files_close(&m);
    return s;
}

void check_progress(const std::string & path, int use_mmap, int check) {
    recorder r = {{}, -1};
    tern_status s = load(path, use_mmap, check, &r);
    CHECK_MSG(s == TERN_OK, "%s: %s", path.c_str(), tern_last_error());
    bool monotonic = true, in_range = true;
    for (size_t i = 0; i < r.values.size(); i++) {
        in_range = in_range && r.values[i] >= 0.0f && r.values[i] <= 1.0f;
        if (i > 0) monotonic = monotonic && r.values[i] >= r.values[i - 1];
    }
    CHECK(r.values.size() > 10 && monotonic && in_range && r.values.back() == 1.0f);
    size_t n = r.values.size();
    int points[2] = {0, (int) n / 2};
    for (int cancel_at : points) {
        recorder c = {{}, cancel_at};
        s = load(path, use_mmap, check, &c);
        CHECK_MSG(s == TERN_ERR_CANCELLED && (int) c.values.size() == cancel_at + 1,
                  "cancel at %d (mmap %d, check %d): status %d after %zu callbacks", cancel_at, use_mmap, check,
                  (int) s, c.values.size());
        CHECK(strstr(tern_last_error(), "cancel") != NULL);
    }
}

// The whole load (tern_model_load_file): the repack is inside the progress
// and the load time. The file takes [0, 0.9] when a repack may follow, the
// repack (0.9, 1) a weight at a time, and 1.0 comes once, last. On a kernel
// set that repacks Q8_0 (avx2, avxvnni, avx512) the progress moves during the repack
// and the split has its time (issue 23, item 12).
void check_whole_load(const std::string & path) {
    for (int repack = 0; repack < 2; repack++) {
        recorder r = {{}, -1};
        tern_model_params p = tern_model_default_params();
        p.repack = repack;
        p.progress_callback = record;
        p.progress_callback_user_data = &r;
        tern_model * m = NULL;
        CHECK_MSG(tern_model_load_file(path.c_str(), &p, &m) == TERN_OK, "%s", tern_last_error());
        if (!m) continue;
        int ones = 0, in_repack = 0;
        bool monotonic = true;
        for (size_t i = 0; i < r.values.size(); i++) {
            ones += r.values[i] == 1.0f;
            in_repack += r.values[i] > 0.9f && r.values[i] < 1.0f;
            if (i > 0) monotonic = monotonic && r.values[i] >= r.values[i - 1];
        }
        CHECK_MSG(monotonic && ones == 1 && !r.values.empty() && r.values.back() == 1.0f,
                  "repack %d: %zu values, %d of them 1.0", repack, r.values.size(), ones);
        double file_ms = -1, repack_ms = -1, upload_ms = -1;
        tern_model_load_split(m, &file_ms, &repack_ms, &upload_ms);
        CHECK(file_ms >= 0 && repack_ms >= 0 && upload_ms >= 0);
        CHECK(fabs(tern_model_load_ms(m) - (file_ms + repack_ms + upload_ms)) < 1e-9);
        const char * ks = tern_kernels_name();
        const bool repacks = repack && (!strcmp(ks, "avx2") || !strcmp(ks, "avxvnni") || !strcmp(ks, "avx512"));
        if (repacks) {
            CHECK_MSG(in_repack >= 2 && repack_ms > 0.0, "%s: %d progress values during the repack, %.3f ms of it",
                      tern_kernels_name(), in_repack, repack_ms);
        }
        if (!repack) CHECK(repack_ms < 0.05);
        printf("%s, repack %d (%s): load %.2f ms = file %.2f + repack %.2f + upload %.2f; %zu progress values, %d in the repack\n",
               path.c_str(), repack, tern_kernels_name(), tern_model_load_ms(m), file_ms, repack_ms, upload_ms, r.values.size(),
               in_repack);
        tern_model_free(m);
    }
}

// A copy of stories260K with a NaN put into one tensor (a value, or a block scale).
void check_bad_values(const temp_dir & tmp, const std::string & path) {
    std::vector<uint8_t> bytes = read_bytes(path);
    model_files m;
    tern_model_params p = load_params(1);
    p.check_tensors = 1;
    CHECK_MSG(model_files_open_blob(bytes.data(), bytes.size(), &p, NULL, &m) == TERN_OK, "%s", tern_last_error());
    if (m.n_tensors < 3) return;
    const std::string name = m.tensors[2].name;
    size_t at = (size_t) (m.tensors[2].data - bytes.data()) + 4 * 7;
    CHECK(m.tensors[2].type == TERN_TYPE_F32);
    model_files_close(&m);
    const uint32_t nan_bits = 0x7fc00000u;
    memcpy(bytes.data() + at, &nan_bits, 4);
    std::string bad = tmp.file("nan.gguf");
    CHECK(write_bytes(bad, bytes));
    for (int use_mmap = 0; use_mmap < 2; use_mmap++) {
        p.use_mmap = use_mmap;
        tern_status s = model_files_open_path(bad.c_str(), &p, NULL, &m);
        CHECK_MSG(s == TERN_ERR_FORMAT && strstr(tern_last_error(), name.c_str()), "%d: %s", (int) s, tern_last_error());
    }
    p.check_tensors = 0;  // unchecked, the same file loads
    CHECK(model_files_open_path(bad.c_str(), &p, NULL, &m) == TERN_OK);
    model_files_close(&m);

    // Q8_0 block with an infinite fp16 scale.
    heap_arena mem(1 << 16);
    gguf_writer w;
    gguf_writer_init(&w, &mem.arena, 1, 1);
    std::vector<uint8_t> q(34 * 4, 0);
    q[34 * 3 + 1] = 0x7c;  // d of block 3 = +inf
    int64_t ne[1] = {128};
    gguf_writer_add_tensor(&w, "q.weight", TERN_TYPE_Q8_0, 1, ne, q.data());
    std::string qpath = tmp.file("q.gguf");
    CHECK(gguf_writer_write(&w, qpath.c_str()) == TERN_OK);
    p.check_tensors = 1;
    tern_status s = model_files_open_path(qpath.c_str(), &p, NULL, &m);
    CHECK_MSG(s == TERN_ERR_FORMAT && strstr(tern_last_error(), "q.weight"), "%s", tern_last_error());
}

}  // namespace

int main() {
    std::string shared = tern_test_shared_dir();
    std::string stories = shared + "/models/stories260K.gguf";
    for (int use_mmap = 0; use_mmap < 2; use_mmap++) {
        check_progress(stories, use_mmap, 0);
        check_progress(stories, use_mmap, 1);
    }
    // check_tensors accepts every block type of the quantized models.
    for (const char * f : {"ktest-llama-Q2_K.gguf", "ktest-llama-Q3_K_M.gguf", "ktest-llama-Q4_1.gguf",
                           "ktest-llama-Q5_1.gguf", "ktest-llama-Q5_K_M.gguf", "ktest-llama-IQ4_NL.gguf",
                           "ktest-qwen2-F16.gguf", "TinyStories-656K-Q4_0.gguf"}) {
        recorder r = {{}, -1};
        CHECK_MSG(load(shared + "/models/" + f, 1, 1, &r) == TERN_OK, "%s: %s", f, tern_last_error());
    }
    check_whole_load(shared + "/models/ktest-llama-Q8_0.gguf");
    temp_dir tmp;
    check_bad_values(tmp, stories);
    return tern_test_summary();
}
