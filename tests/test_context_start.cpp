// Context creation pays for no memory it will overwrite (issue 23, item 14):
// a context of 8192 cells on ktest-llama (16 MiB of F16 K/V rows) leaves the
// K/V pages untouched at creation (they are fresh zero pages until cells are
// written), so its resident memory grows by less than its arena minus half
// the cache (it grew by the whole arena when creation cleared it); and the cache still reads as zero where no cell was written
// (a decode's logits equal those of a small context, bit for bit).
#include <stdio.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "tern.h"

// ASan's and TSan's allocators clear what calloc returns (gcc names them by
// __SANITIZE_*__, clang by __has_feature).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

namespace {

// Resident bytes of this process (Linux /proc/self/statm).
long resident_bytes() {
    FILE * f = fopen("/proc/self/statm", "r");
    long size = 0, resident = -1;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
        fclose(f);
    }
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

std::vector<float> first_logits(tern_model * m, uint32_t n_ctx, long * grew, size_t * kv_bytes, size_t * total) {
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = 32;
    cp.n_threads = 1;
    const long before = resident_bytes();
    tern_context * ctx = NULL;
    CHECK_MSG(tern_context_create(m, &cp, &ctx) == TERN_OK, "%s", tern_last_error());
    if (grew) *grew = resident_bytes() - before;
    std::vector<float> out;
    if (!ctx) return out;
    tern_mem_audit mu;
    tern_context_mem_audit(ctx, &mu);
    if (kv_bytes) *kv_bytes = mu.kv_cache;
    if (total) *total = mu.total;
    tern_token t[4] = {1, 100, 200, 300};
    CHECK(tern_decode(ctx, tern_batch_get_one(t, 4)) == TERN_OK);
    const float * l = tern_get_logits_ith(ctx, -1);
    if (l) out.assign(l, l + tern_model_n_vocab(m));
    tern_context_free(ctx);
    return out;
}

}  // namespace

int main(void) {
    const std::string path = std::string(tern_test_shared_dir()) + "/models/ktest-llama-Q8_0.gguf";
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    CHECK_MSG(tern_model_load_file(path.c_str(), &mp, &m) == TERN_OK, "%s", tern_last_error());
    if (!m) return tern_test_summary();
    long grew = 0;
    size_t kv = 0, total = 0;
    const std::vector<float> small = first_logits(m, 64, NULL, NULL, NULL);
    const std::vector<float> big = first_logits(m, 8192, &grew, &kv, &total);
    printf("n_ctx 8192: arena %zu bytes, K/V %zu of them; resident memory grew by %ld bytes at creation\n", total, kv, grew);
    CHECK_MSG(kv >= (size_t) 16 << 20, "the case needs a large cache (%zu bytes)", kv);
#if SANITIZED
    printf("a sanitizer build: its calloc clears memory itself; the resident-memory check is left out\n");
#else
    // Everything but the K/V rows is touched (the attention scores grow with
    // n_ctx too); the K/V rows are not, but for the huge pages they share.
    CHECK_MSG(grew >= 0 && (size_t) grew < total - kv / 2, "creation touched the K/V rows: +%ld bytes resident, arena %zu, K/V %zu",
              grew, total, kv);
#endif
    CHECK_MSG(!small.empty() && small == big, "a large fresh context decodes other logits than a small one");
    tern_model_free(m);
    return tern_test_summary();
}
