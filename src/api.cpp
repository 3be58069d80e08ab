// The tern.h entry points for models and vocabularies: thin glue over
// model/ (files, hparams, weights) and vocab/. Context, decode and sampler
// entry points live with their layers (context/, sample/).
#include "tern.h"
#include "core/arena.h"
#include "core/log.h"
#include "core/status.h"
#include "context/context.h"
#include "model/model.h"
#include "model/placement.h"
#include "model/repack.h"
#include "port.h"
#include "tensor/types.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

namespace tern {

extern "C" tern_model_params tern_model_default_params(void) {
    tern_model_params p;
    memset(&p, 0, sizeof(p));
    p.use_mmap = TERN_WITH_MMAP;
    p.repack = 1;
    p.n_threads = 4;
    return p;
}

namespace {

// Sizes the model's tables from the GGUF header while it is measured: the
// vocabulary's, the layer table's, the tern_model struct itself, the context
// sizing scratch and the repack scratch (the largest group of rows any
// tensor of the header would be repacked in).
struct model_sizer {
    vocab_sizer vocab;
    uint32_t    max_block_count;
    bool        vocab_only;
    bool        repack;
    bool        devices;    // the parameters may place the model on devices
    size_t      repack_scratch;
};

void model_sizer_tensor(void * user, const gguf_tensor_info * ti) {
    model_sizer * s = (model_sizer *) user;
    if (!s->repack) return;
    const size_t group = model_repack_group_bytes(ti->type, (int32_t) ti->n_dims, ti->ne);
    if (group > s->repack_scratch) s->repack_scratch = group;
}

void model_sizer_visit(void * user, const gguf_kv * kv) {
    model_sizer * s = (model_sizer *) user;
    vocab_sizer_visit(&s->vocab, kv);
    // "<arch>.block_count" of any integer type, as hparams_load accepts it.
    const char suffix[] = ".block_count";
    const size_t n = sizeof(suffix) - 1;
    int64_t v;
    if (kv->key.len > n && memcmp(kv->key.data + kv->key.len - n, suffix, n) == 0 && gguf_kv_int(kv, &v) &&
        v > (int64_t) s->max_block_count && v < (1 << 20)) {
        s->max_block_count = (uint32_t) v;
    }
}

size_t model_sizer_extra(void * user, uint64_t n_tensors) {
    model_sizer * s = (model_sizer *) user;
    // Every layer needs tensors of its own: a block_count beyond the tensor count
    // is refused later (hparams vs tensors), so it never sizes the layer table.
    const uint32_t layers = (uint64_t) s->max_block_count < n_tensors ? s->max_block_count : (uint32_t) n_tensors;
    size_t bytes = arena_padded(sizeof(tern_model)) + vocab_tables_size(&s->vocab) + model_weights_size(layers);
    if (!s->vocab_only) {
        bytes += arena_padded(context_sizing_scratch_size(layers, s->devices)) + arena_padded(s->repack_scratch) +
                 model_devices_size(layers);
    }
    return bytes;
}

void model_sizer_init(model_sizer * s, const tern_model_params * p, bool blob) {
    memset(s, 0, sizeof(*s));
    vocab_sizer_init(&s->vocab);
    s->vocab_only = p->vocab_only != 0;
    s->repack = p->repack && !blob && !s->vocab_only;
    s->devices = TERN_WITH_HAL && ((p->devices && p->devices[0]) || p->n_gpu_layers != 0);
}

// Everything after the files are open: the model struct, vocabulary,
// hyper-parameters and weights. *out is set as soon as the model struct
// exists (it then owns the files), also when a later step fails.
tern_status model_finish(model_files * files, const tern_model_params * p, tern_model ** out) {
    tern_model * m = (tern_model *) arena_calloc(&files->arena, sizeof(tern_model), TERN_MEM_MODEL_TABLES);
    if (!m) return TERN_ERR_NO_MEMORY;
    m->files = *files;               // from here on the arena is m->files.arena
    memset(files, 0, sizeof(*files));  // ownership moved
    *out = m;
    m->vocab_only = p->vocab_only != 0;
    const gguf_file * f = &m->files.splits[0];

    // vocab_only reads any valid GGUF for its metadata: a file without an
    // architecture or a vocabulary, or with one Tern cannot tokenize with
    // (an unknown tokenizer.ggml.model or .pre), loads with a warning and an
    // empty architecture name / a TERN_VOCAB_NONE vocabulary (tokenizing
    // with it fails). Full loads refuse all of these.
    gguf_str arch;
    if (m->vocab_only && gguf_find_key(f, "general.architecture") < 0) {
        TERN_LOGW("no key 'general.architecture'\n");
    } else if (!gguf_get_str(f, "general.architecture", &arch)) {
        return tern_fail(TERN_ERR_FORMAT, "missing key 'general.architecture'");
    } else if (arch.len == 0 || arch.len >= sizeof(m->arch_name) || memchr(arch.data, 0, arch.len)) {
        return tern_fail(TERN_ERR_FORMAT, "key 'general.architecture': not a name (empty, too long or with a NUL byte)");
    } else {
        memcpy(m->arch_name, arch.data, arch.len);
        m->arch_name[arch.len] = 0;
    }

    tern_status vst = vocab_load(f, &m->files.arena, &m->vocab);
    if (vst != TERN_OK) {
        if (!m->vocab_only || (vst != TERN_ERR_UNSUPPORTED && gguf_find_key(f, "tokenizer.ggml.model") >= 0)) return vst;
        TERN_LOGW("%s: the vocabulary cannot be used\n", tern_last_error());
        tern_error_clear();
    }
    const uint32_t n_vocab = (uint32_t) vocab_n_tokens(&m->vocab);

    if (m->vocab_only) {
        // Hyper-parameters are informative here (any architecture may be read).
        if (hparams_load(f, m->arch_name, n_vocab, &m->hp) != TERN_OK) {
            memset(&m->hp, 0, sizeof(m->hp));
            m->hp.n_vocab = n_vocab;
            tern_error_clear();
        }
        m->arch = model_arch_find(m->arch_name);
        return TERN_OK;
    }
    m->arch = model_arch_find(m->arch_name);
    if (!m->arch) {
        const char * needs = model_arch_needs(m->arch_name);
        if (needs) {
            return tern_fail(TERN_ERR_UNSUPPORTED, "architecture '%s' is not compiled in (it needs: %s; TERN_ARCHS of this "
                             "build: %s)", m->arch_name, needs, model_arch_list());
        }
        return tern_fail(TERN_ERR_UNSUPPORTED, "unknown architecture '%s' (compiled in: %s)", m->arch_name,
                         model_arch_list());
    }
    TERN_TRY(hparams_load(f, m->arch_name, n_vocab, &m->hp));
    TERN_TRY(hparams_load_arch(f, m->arch_name, m->arch, &m->hp));
    TERN_TRY(model_bind_weights(m));
    m->sizing_scratch_size = context_sizing_scratch_size(m->hp.n_layer, TERN_WITH_HAL && ((p->devices && p->devices[0]) || p->n_gpu_layers != 0));
    m->sizing_scratch = (uint8_t *) arena_alloc(&m->files.arena, m->sizing_scratch_size, TERN_MEM_MODEL_TABLES);
    if (!m->sizing_scratch) return tern_fail(TERN_ERR_INTERNAL, "model arena: no room for the sizing scratch");
    return TERN_OK;
}

tern_status open_blob(const void * src, size_t size, const tern_model_params * p, const model_files_sizer * s,
                      model_files * out);

typedef tern_status (*open_fn)(const void * src, size_t size, const tern_model_params * p,
                               const model_files_sizer * s, model_files * out);

// The caller's progress callback over the whole load: the file's part maps
// to [0, file_share], the repack and upload to the rest; 1.0 once, at the end.
struct load_progress {
    tern_progress_callback cb;
    void *                 user;
    float                  file_share;
    float                  last;
    bool report(float v) {
        if (v < last) v = last;
        last = v;
        return cb == NULL || cb(v, user) != 0;
    }
};

int file_progress(float v, void * user) {
    load_progress * lp = (load_progress *) user;
    if (v >= 1.0f && lp->file_share >= 1.0f) return 1;  // the end is reported by model_load
    return lp->report(v * lp->file_share) ? 1 : 0;
}

bool repack_progress(void * user, float done) {
    load_progress * lp = (load_progress *) user;
    return done >= 1.0f || lp->report(lp->file_share + (1.0f - lp->file_share) * done);
}

tern_status model_load(const char * what, const void * src, size_t size, open_fn open,
                       const tern_model_params * params, tern_model ** out) {
    if (!out) return tern_fail(TERN_ERR_INVALID_ARG, "out_model is NULL");
    *out = NULL;
    tern_error_clear();
    tern_model_params p = params ? *params : tern_model_default_params();
    model_sizer sizer;
    model_sizer_init(&sizer, &p, open == open_blob);
    model_files_sizer fs = { model_sizer_visit, model_sizer_tensor, model_sizer_extra, &sizer };
    model_files files;
    memset(&files, 0, sizeof(files));
    // Work after the file: a repack (not of a caller's blob) or a device upload.
    const bool more = !p.vocab_only && ((p.repack && open != open_blob) || (p.devices && p.devices[0]) || p.n_gpu_layers != 0);
    load_progress lp = { p.progress_callback, p.progress_callback_user_data, more ? 0.9f : 1.0f, 0.0f };
    tern_model_params fp = p;
    fp.progress_callback = file_progress;
    fp.progress_callback_user_data = &lp;
    tern_status st = open(src, size, &fp, &fs, &files);
    if (st != TERN_OK) {
        model_files_close(&files);
        return st;
    }
    tern_model * m = NULL;
    st = model_finish(&files, &p, &m);
    // Placement first: the CPU repacks only the weights it runs, and the
    // devices get theirs in the file's layout.
    if (st == TERN_OK && !m->vocab_only) st = model_place(m, &p);
    // Timed only when it runs: a load without the repack reports exactly 0.
    if (m) m->load_repack_ms = 0.0;
    if (st == TERN_OK && p.repack) {
        const int64_t t0 = port_time_us();
        st = model_repack_weights(m, repack_progress, &lp);
        m->load_repack_ms = (double) (port_time_us() - t0) / 1000.0;
    }
    int64_t t = port_time_us();
    t = port_time_us();
    if (st == TERN_OK && !m->vocab_only) st = model_upload(m);
    if (m) m->load_upload_ms = (double) (port_time_us() - t) / 1000.0;
    if (st == TERN_OK && !lp.report(1.0f)) st = tern_fail(TERN_ERR_CANCELLED, "load cancelled by the progress callback");
    if (st != TERN_OK) {
        tern_error_prefix("%s: ", what);
        if (m) tern_model_free(m);
        else model_files_close(&files);
        return st;
    }
    *out = m;
    return TERN_OK;
}

tern_status open_path(const void * src, size_t, const tern_model_params * p, const model_files_sizer * s,
                      model_files * out) {
    return model_files_open_path((const char *) src, p, s, out);
}

tern_status open_blob(const void * src, size_t size, const tern_model_params * p, const model_files_sizer * s,
                      model_files * out) {
    return model_files_open_blob(src, size, p, s, out);
}

} // namespace

extern "C" tern_status tern_model_load_file(const char * path, const tern_model_params * params, tern_model ** out) {
    if (!path) return tern_fail(TERN_ERR_INVALID_ARG, "path is NULL");
    return model_load(path, path, 0, open_path, params, out);
}

extern "C" tern_status tern_model_load_blob(const void * data, size_t size, const tern_model_params * params,
                                            tern_model ** out) {
    if (!data) return tern_fail(TERN_ERR_INVALID_ARG, "blob is NULL");
    return model_load("blob", data, size, open_blob, params, out);
}

extern "C" size_t tern_model_mem_size_file(const char * path, const tern_model_params * params) {
    tern_error_clear();
    tern_model_params p = params ? *params : tern_model_default_params();
    model_sizer sizer;
    model_sizer_init(&sizer, &p, false);
    model_files_sizer fs = { model_sizer_visit, model_sizer_tensor, model_sizer_extra, &sizer };
    return model_files_size_path(path, &p, &fs);
}

extern "C" size_t tern_model_mem_size_blob(const void * data, size_t size, const tern_model_params * params) {
    tern_error_clear();
    tern_model_params p = params ? *params : tern_model_default_params();
    model_sizer sizer;
    model_sizer_init(&sizer, &p, true);
    model_files_sizer fs = { model_sizer_visit, model_sizer_tensor, model_sizer_extra, &sizer };
    return model_files_size_blob(data, size, &p, &fs);
}

extern "C" void tern_model_free(tern_model * model) {
    if (!model) return;
    // The model lives in the arena this frees: model_files_close releases the
    // arena last and touches nothing after it.
    model_devices_close(model);
    model_files_close(&model->files);
}

}  // namespace tern
