#include "model/hparams.h"
#include "core/status.h"

#include <stdio.h>
#include <string.h>

namespace {

struct key_reader {
    const gguf_file * f;
    const char * arch;
    char key[128];

    const char * name(const char * suffix) {
        snprintf(key, sizeof(key), "%s.%s", arch, suffix);
        return key;
    }
    // Required u32: missing -> TERN_ERR_FORMAT naming the key.
    tern_status u32(const char * suffix, uint32_t * out) {
        if (!gguf_get_u32(f, name(suffix), out)) {
            if (gguf_find_key(f, key) >= 0) return tern_fail(TERN_ERR_FORMAT, "key '%s' has the wrong type", key);
            return tern_fail(TERN_ERR_FORMAT, "missing key '%s'", key);
        }
        return TERN_OK;
    }
    tern_status u32_or(const char * suffix, uint32_t fallback, uint32_t * out) {
        if (gguf_find_key(f, name(suffix)) < 0) { *out = fallback; return TERN_OK; }
        if (!gguf_get_u32(f, key, out)) return tern_fail(TERN_ERR_FORMAT, "key '%s' has the wrong type", key);
        return TERN_OK;
    }
    tern_status f32_or(const char * suffix, float fallback, float * out) {
        if (gguf_find_key(f, name(suffix)) < 0) { *out = fallback; return TERN_OK; }
        if (!gguf_get_f32(f, key, out)) return tern_fail(TERN_ERR_FORMAT, "key '%s' has the wrong type", key);
        return TERN_OK;
    }
};

} // namespace

tern_status hparams_load(const gguf_file * f, const char * arch, uint32_t n_vocab, model_hparams * h) {
    memset(h, 0, sizeof(*h));
    key_reader r = { f, arch, {0} };
    TERN_TRY(r.u32("context_length", &h->n_ctx_train));
    TERN_TRY(r.u32("embedding_length", &h->n_embd));
    TERN_TRY(r.u32("block_count", &h->n_layer));
    TERN_TRY(r.u32("feed_forward_length", &h->n_ff));
    TERN_TRY(r.u32("attention.head_count", &h->n_head));
    TERN_TRY(r.u32_or("attention.head_count_kv", h->n_head, &h->n_head_kv));
    if (h->n_embd == 0 || h->n_layer == 0 || h->n_head == 0 || h->n_head_kv == 0 || h->n_ff == 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s: zero embedding length, block count, head count or ffn length", arch);
    }
    if (h->n_head % h->n_head_kv != 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s.attention.head_count %u is not a multiple of head_count_kv %u",
                         arch, h->n_head, h->n_head_kv);
    }
    const uint32_t head_default = h->n_embd / h->n_head;
    TERN_TRY(r.u32_or("attention.key_length", head_default, &h->n_embd_head_k));
    TERN_TRY(r.u32_or("attention.value_length", head_default, &h->n_embd_head_v));
    TERN_TRY(r.u32_or("rope.dimension_count", h->n_embd_head_k, &h->n_rot));
    if (h->n_embd_head_k == 0 || h->n_embd_head_v == 0 || h->n_rot == 0 || h->n_rot > h->n_embd_head_k ||
        h->n_rot % 2 != 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s: bad head size (key %u, value %u, rope dims %u)", arch,
                         h->n_embd_head_k, h->n_embd_head_v, h->n_rot);
    }
    TERN_TRY(r.f32_or("attention.layer_norm_rms_epsilon", 1e-5f, &h->norm_rms_eps));
    TERN_TRY(r.f32_or("rope.freq_base", 10000.0f, &h->rope_freq_base));

    // Rope scaling, as llama.cpp reads it.
    h->rope_freq_scale = 1.0f;
    gguf_str scaling;
    if (gguf_get_str(f, r.name("rope.scaling.type"), &scaling)) {
        if (gguf_str_eq(scaling, "none")) h->rope_scaling = 0;
        else if (gguf_str_eq(scaling, "linear")) h->rope_scaling = 1;
        else if (gguf_str_eq(scaling, "yarn")) h->rope_scaling = 2;
        else return tern_fail(TERN_ERR_UNSUPPORTED, "%s.rope.scaling.type '%.*s' is not supported", arch,
                              (int) scaling.len, scaling.data);
    }
    float factor = 0.0f;
    TERN_TRY(r.f32_or("rope.scaling.factor", 0.0f, &factor));
    if (factor == 0.0f) TERN_TRY(r.f32_or("rope.scale_linear", 0.0f, &factor));
    if (factor != 0.0f && h->rope_scaling != 0) h->rope_freq_scale = 1.0f / factor;
    TERN_TRY(r.u32_or("rope.scaling.original_context_length", h->n_ctx_train, &h->n_ctx_orig_yarn));

    uint32_t vocab_key = 0;
    TERN_TRY(r.u32_or("vocab_size", n_vocab, &vocab_key));
    h->n_vocab = n_vocab ? n_vocab : vocab_key;
    return TERN_OK;
}
