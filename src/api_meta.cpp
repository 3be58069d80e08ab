// tern.h entry points: hyper-parameters, metadata and tensor table of a loaded model.
#include "tern.h"
#include "core/status.h"
#include "model/model.h"
#include "tensor/types.h"
#include "cpu/kernels/kernel_set.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

namespace tern {

extern "C" const char * tern_type_name(tern_type type) {
    const tern_type_traits * t = tern_type_traits_get(type);
    return t ? t->name : NULL;
}

extern "C" const char * tern_kernels_name(void) { return tern_kernels()->name; }

#if TERN_KSET_AVX2
#define TERN_KSET_AVX2_NAME " avx2"
#else
#define TERN_KSET_AVX2_NAME ""
#endif
#if TERN_KSET_AVXVNNI
#define TERN_KSET_AVXVNNI_NAME " avxvnni"
#else
#define TERN_KSET_AVXVNNI_NAME ""
#endif
#if TERN_KSET_AVX512
#define TERN_KSET_AVX512_NAME " avx512"
#else
#define TERN_KSET_AVX512_NAME ""
#endif
#if TERN_KSET_NEON
#define TERN_KSET_NEON_NAME " neon"
#else
#define TERN_KSET_NEON_NAME ""
#endif
#if TERN_KSET_DOTPROD
#define TERN_KSET_DOTPROD_NAME " dotprod"
#else
#define TERN_KSET_DOTPROD_NAME ""
#endif
#if TERN_KSET_I8MM
#define TERN_KSET_I8MM_NAME " i8mm"
#else
#define TERN_KSET_I8MM_NAME ""
#endif
extern "C" const char * tern_kernels_compiled_names(void) {
    return "scalar" TERN_KSET_AVX2_NAME TERN_KSET_AVXVNNI_NAME TERN_KSET_AVX512_NAME TERN_KSET_NEON_NAME TERN_KSET_DOTPROD_NAME
        TERN_KSET_I8MM_NAME;
}

extern "C" const char * tern_model_load_path(const tern_model * m) { return m ? m->files.load_path : ""; }
extern "C" double tern_model_load_ms(const tern_model * m) {
    return m ? m->files.load_ms + m->load_repack_ms + m->load_upload_ms : 0.0;
}

extern "C" void tern_model_load_split(const tern_model * m, double * file_ms, double * repack_ms, double * upload_ms) {
    if (file_ms) *file_ms = m ? m->files.load_ms : 0.0;
    if (repack_ms) *repack_ms = m ? m->load_repack_ms : 0.0;
    if (upload_ms) *upload_ms = m ? m->load_upload_ms : 0.0;
}
extern "C" const char * tern_model_arch(const tern_model * m) { return m ? m->arch_name : ""; }
extern "C" int32_t tern_model_n_vocab(const tern_model * m) { return m ? (int32_t) m->hp.n_vocab : 0; }
extern "C" int32_t tern_model_n_ctx_train(const tern_model * m) { return m ? (int32_t) m->hp.n_ctx_train : 0; }
extern "C" int32_t tern_model_n_embd(const tern_model * m) { return m ? (int32_t) m->hp.n_embd : 0; }
extern "C" int32_t tern_model_n_layer(const tern_model * m) { return m ? (int32_t) m->hp.n_layer : 0; }
extern "C" int32_t tern_model_n_head(const tern_model * m) { return m ? (int32_t) m->hp.n_head : 0; }
extern "C" int32_t tern_model_n_head_kv(const tern_model * m) { return m ? (int32_t) m->hp.n_head_kv : 0; }
extern "C" int32_t tern_model_n_ff(const tern_model * m) { return m ? (int32_t) m->hp.n_ff : 0; }
extern "C" int32_t tern_model_n_embd_head(const tern_model * m) { return m ? (int32_t) m->hp.n_embd_head_k : 0; }
extern "C" float tern_model_rope_freq_base(const tern_model * m) { return m ? m->hp.rope_freq_base : 0.0f; }
extern "C" float tern_model_norm_rms_eps(const tern_model * m) { return m ? m->hp.norm_rms_eps : 0.0f; }
extern "C" int32_t tern_model_n_swa(const tern_model * m) { return m && m->hp.n_swa <= INT32_MAX ? (int32_t) m->hp.n_swa : 0; }

extern "C" uint64_t tern_model_size(const tern_model * m) {
    uint64_t total = 0;
    if (!m) return 0;
    for (int64_t i = 0; i < m->files.n_tensors; i++) total += m->files.tensors[i].bytes;
    return total;
}

extern "C" size_t tern_model_arena_size(const tern_model * m) { return m ? m->files.arena.size : 0; }

// Metadata of a split model is split 0's.
static const gguf_file * meta_file(const tern_model * m) { return m ? &m->files.splits[0] : NULL; }

static int32_t copy_text(const char * s, size_t len, char * buf, size_t buf_size) {
    if (buf && buf_size) {
        size_t n = len < buf_size - 1 ? len : buf_size - 1;
        memcpy(buf, s, n);
        buf[n] = 0;
    }
    return (int32_t) len;
}

extern "C" int32_t tern_model_meta_count(const tern_model * m) {
    return m ? (int32_t) meta_file(m)->n_kv : 0;
}

extern "C" int32_t tern_model_meta_key_by_index(const tern_model * m, int32_t i, char * buf, size_t buf_size) {
    const gguf_file * f = meta_file(m);
    if (!f || i < 0 || (uint64_t) i >= f->n_kv) return -1;
    return copy_text(f->kv[i].key.data, f->kv[i].key.len, buf, buf_size);
}

extern "C" int32_t tern_model_meta_val_str_by_index(const tern_model * m, int32_t i, char * buf, size_t buf_size) {
    const gguf_file * f = meta_file(m);
    if (!f || i < 0 || (uint64_t) i >= f->n_kv) return -1;
    return gguf_value_to_text(&f->kv[i], buf, buf_size);
}

extern "C" int32_t tern_model_meta_val_str(const tern_model * m, const char * key, char * buf, size_t buf_size) {
    const gguf_file * f = meta_file(m);
    if (!f || !key) return -1;
    int64_t i = gguf_find_key(f, key);
    if (i < 0) return -1;
    return gguf_value_to_text(&f->kv[i], buf, buf_size);
}

extern "C" int32_t tern_model_n_tensors(const tern_model * m) { return m ? (int32_t) m->files.n_tensors : 0; }

extern "C" tern_status tern_model_tensor_info(const tern_model * m, int32_t i, tern_tensor_info * out) {
    if (!m || !out) return tern_fail(TERN_ERR_INVALID_ARG, "model or out is NULL");
    if (i < 0 || i >= m->files.n_tensors) {
        return tern_fail(TERN_ERR_NOT_FOUND, "tensor index %" PRId32 " outside [0, %lld)", i, (long long) m->files.n_tensors);
    }
    const model_file_tensor * t = &m->files.tensors[i];
    out->name = t->name;
    out->type = t->type;
    out->n_dims = t->n_dims;
    memcpy(out->ne, t->ne, sizeof(out->ne));
    out->bytes = t->bytes;
    out->offset = t->offset;
    out->split = t->split;
    return TERN_OK;
}

}  // namespace tern
