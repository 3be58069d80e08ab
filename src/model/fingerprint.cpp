// The model fingerprint (see fingerprint.h).
#include "model/fingerprint.h"

#include <string.h>

namespace tern {

namespace {

struct fnv64 {
    uint64_t h = 14695981039346656037ull;
    void add(const void * data, size_t n) {
        const uint8_t * p = (const uint8_t *) data;
        uint64_t x = h;
        for (size_t i = 0; i < n; i++) x = (x ^ p[i]) * 1099511628211ull;
        h = x;
    }
    void u32(uint32_t v) { add(&v, 4); }
    void u64(uint64_t v) { add(&v, 8); }
    void f32(float v) { add(&v, 4); }
};

uint64_t compute(const tern_model * m) {
    fnv64 f;
    f.add(m->arch_name, strlen(m->arch_name) + 1);
    const model_hparams & h = m->hp;
    const uint32_t u[] = { h.n_vocab, h.n_ctx_train, h.n_embd, h.n_layer, h.n_head, h.n_head_kv, h.n_ff,
                           h.n_embd_head_k, h.n_embd_head_v, h.n_rot, (uint32_t) h.rope_scaling, h.n_ctx_orig_yarn, h.n_swa };
    for (uint32_t v : u) f.u32(v);
    f.f32(h.norm_rms_eps);
    f.f32(h.rope_freq_base);
    f.f32(h.rope_freq_scale);
    for (int64_t i = 0; i < m->files.n_tensors; i++) {
        const model_file_tensor & t = m->files.tensors[i];
        f.add(t.name, strlen(t.name) + 1);
        f.u32((uint32_t) t.type);
        for (int d = 0; d < 4; d++) f.u64((uint64_t) t.ne[d]);
        if (!t.data || t.bytes == 0) continue;
        if (t.bytes <= FINGERPRINT_WHOLE) {
            f.add(t.data, (size_t) t.bytes);
            continue;
        }
        // runs [k * (bytes - RUN) / (RUNS - 1), + RUN), k = 0 .. RUNS - 1
        const uint64_t last = t.bytes - FINGERPRINT_RUN;
        for (uint64_t k = 0; k < FINGERPRINT_RUNS; k++) {
            f.add(t.data + last * k / (FINGERPRINT_RUNS - 1), FINGERPRINT_RUN);
        }
    }
    return f.h;
}

}  // namespace

void model_fingerprint_at_load(tern_model * m) {
    if (__atomic_load_n(&m->fingerprint_known, __ATOMIC_ACQUIRE)) return;
    m->fingerprint = compute(m);
    m->fingerprint_claim = 1;
    __atomic_store_n(&m->fingerprint_known, 1, __ATOMIC_RELEASE);
}

uint64_t model_fingerprint(const tern_model * m) {
    if (__atomic_load_n(&m->fingerprint_known, __ATOMIC_ACQUIRE)) return m->fingerprint;
    const uint64_t v = compute(m);
    // The first thread to claim the slot stores it; others use their own (equal) value.
    int expected = 0;
    tern_model * mm = const_cast<tern_model *>(m);
    if (__atomic_compare_exchange_n(&mm->fingerprint_claim, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        mm->fingerprint = v;
        __atomic_store_n(&mm->fingerprint_known, 1, __ATOMIC_RELEASE);
    }
    return v;
}

}  // namespace tern
