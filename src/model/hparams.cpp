#include "model/hparams.h"
#include "core/status.h"
#include "model/arch.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

namespace tern {

namespace {

// Largest count any hyper-parameter may hold: shapes, positions and context
// sizes are int32 in the API and the graph.
const uint32_t kMaxCount = (uint32_t) INT32_MAX;

struct key_reader {
    const gguf_file * f;
    const char * arch;
    char key[128];

    const char * name(const char * suffix) {
        snprintf(key, sizeof(key), "%s.%s", arch, suffix);
        return key;
    }
    // A u32 in [lo, hi]: missing (when required), a non-integer or a value out of
    // range is TERN_ERR_FORMAT naming the key and the value.
    tern_status u32_in(const char * suffix, bool required, uint32_t fallback, uint32_t lo, uint32_t hi,
                       uint32_t * out) {
        const int64_t i = gguf_find_key(f, name(suffix));
        if (i < 0) {
            if (required) return tern_fail(TERN_ERR_FORMAT, "missing key '%s'", key);
            *out = fallback;
            return TERN_OK;
        }
        int64_t v = 0;
        if (!gguf_kv_int(&f->kv[i], &v)) {
            return tern_fail(TERN_ERR_FORMAT, "key '%s': type %s, expected an integer", key,
                             gguf_type_name(f->kv[i].type));
        }
        if (v < (int64_t) lo || v > (int64_t) hi) {
            return tern_fail(TERN_ERR_FORMAT, "key '%s': %lld is out of range [%" PRIu32 ", %" PRIu32 "]", key, (long long) v, lo, hi);
        }
        *out = (uint32_t) v;
        return TERN_OK;
    }
    tern_status u32(const char * suffix, uint32_t * out) { return u32_in(suffix, true, 0, 1, kMaxCount, out); }
    tern_status u32_or(const char * suffix, uint32_t fallback, uint32_t * out) {
        return u32_in(suffix, false, fallback, 1, kMaxCount, out);
    }
    // A finite f32 in (lo, hi] (lo exclusive: epsilons and bases must be positive).
    tern_status f32_or(const char * suffix, float fallback, float lo, float hi, float * out) {
        if (gguf_find_key(f, name(suffix)) < 0) { *out = fallback; return TERN_OK; }
        if (!gguf_get_f32(f, key, out)) return TERN_ERR_FORMAT;  // gguf_get_f32 named the key and type
        if (!isfinite(*out) || !(*out > lo) || !(*out <= hi)) {
            return tern_fail(TERN_ERR_FORMAT, "key '%s': %g is out of range (%g, %g]", key, (double) *out,
                             (double) lo, (double) hi);
        }
        return TERN_OK;
    }
};

} // namespace

tern_status hparams_load(const gguf_file * f, const char * arch, uint32_t n_vocab, model_hparams * h) {
    memset(h, 0, sizeof(*h));
    key_reader r = { f, arch, {0} };
    // Counts are >= 1 and fit an int32 (context_length >= 2^31 would come back
    // negative from tern_model_n_ctx_train); shapes are checked against the
    // tensors when the weights are bound, block_count against the layers present.
    TERN_TRY(r.u32("context_length", &h->n_ctx_train));
    TERN_TRY(r.u32("embedding_length", &h->n_embd));
    TERN_TRY(r.u32("block_count", &h->n_layer));
    TERN_TRY(r.u32("feed_forward_length", &h->n_ff));
    TERN_TRY(r.u32("attention.head_count", &h->n_head));
    TERN_TRY(r.u32_in("attention.head_count_kv", false, h->n_head, 1, h->n_head, &h->n_head_kv));
    if (h->n_head % h->n_head_kv != 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s.attention.head_count %" PRIu32 " is not a multiple of head_count_kv %" PRIu32,
                         arch, h->n_head, h->n_head_kv);
    }
    const uint32_t head_default = h->n_embd / h->n_head;
    TERN_TRY(r.u32_in("attention.key_length", head_default == 0, head_default, 1, h->n_embd, &h->n_embd_head_k));
    TERN_TRY(r.u32_in("attention.value_length", head_default == 0, head_default, 1, h->n_embd, &h->n_embd_head_v));
    TERN_TRY(r.u32_in("rope.dimension_count", false, h->n_embd_head_k, 2, h->n_embd_head_k, &h->n_rot));
    if (h->n_rot % 2 != 0) {
        return tern_fail(TERN_ERR_FORMAT, "key '%s.rope.dimension_count': %" PRIu32 " is odd (RoPE rotates pairs)", arch,
                         h->n_rot);
    }
    // Per-layer widths must fit the graph's int32 shapes.
    if ((uint64_t) h->n_embd_head_k * h->n_head > kMaxCount || (uint64_t) h->n_embd_head_v * h->n_head > kMaxCount) {
        return tern_fail(TERN_ERR_FORMAT, "%s: head size x head_count overflows (%" PRIu32 " x %" PRIu32 ")", arch, h->n_embd_head_k,
                         h->n_head);
    }
    // Finite and positive: NaN, zero or negative values give NaN logits.
    TERN_TRY(r.f32_or("attention.layer_norm_rms_epsilon", 1e-5f, 0.0f, 1.0f, &h->norm_rms_eps));
    TERN_TRY(r.f32_or("rope.freq_base", 10000.0f, 0.0f, 3.0e38f, &h->rope_freq_base));

    // Rope scaling, as llama.cpp reads it: without a type key a factor scales
    // linearly (a file may write the factor alone).
    h->rope_freq_scale = 1.0f;
    h->rope_scaling = 1;
    gguf_str scaling;
    if (gguf_get_str(f, r.name("rope.scaling.type"), &scaling)) {
        if (gguf_str_eq(scaling, "none")) h->rope_scaling = 0;
        else if (gguf_str_eq(scaling, "linear")) h->rope_scaling = 1;
        else if (gguf_str_eq(scaling, "yarn")) h->rope_scaling = 2;
        else return tern_fail(TERN_ERR_UNSUPPORTED, "%s.rope.scaling.type '%.*s' is not supported", arch,
                              (int) scaling.len, scaling.data);
    }
    // The factor: 0 means no scaling (llama.cpp: "0 = unset"), as an absent key.
    float factor = 0.0f;
    static const char * const kFactorKeys[] = {"rope.scaling.factor", "rope.scale_linear"};
    for (const char * suffix : kFactorKeys) {
        if (gguf_find_key(f, r.name(suffix)) < 0) continue;
        if (!gguf_get_f32(f, r.key, &factor)) return TERN_ERR_FORMAT;  // gguf_get_f32 named the key and type
        if (!isfinite(factor) || factor < 0.0f || factor > 1.0e6f) {
            return tern_fail(TERN_ERR_FORMAT, "key '%s': %g is out of range [0, 1e6] (0: no scaling)", r.key, (double) factor);
        }
        break;
    }
    if (factor != 0.0f && h->rope_scaling != 0) h->rope_freq_scale = 1.0f / factor;
    if (h->rope_scaling == 2 && h->rope_freq_base == 1.0f) {
        return tern_fail(TERN_ERR_FORMAT, "key '%s': YaRN needs a base other than 1", r.name("rope.freq_base"));
    }
    TERN_TRY(r.u32_or("rope.scaling.original_context_length", h->n_ctx_train, &h->n_ctx_orig_yarn));
    // llama.cpp multiplies its attention factor into every RoPE (phi3's LongRoPE files carry one).
    TERN_TRY(r.f32_or("rope.scaling.attn_factor", 1.0f, 0.0f, 1.0e6f, &h->rope_attn_factor));
    h->attn_scale = 1.0f / sqrtf((float) h->n_embd_head_k);

    uint32_t vocab_key = 0;
    TERN_TRY(r.u32_in("vocab_size", false, n_vocab, 1, kMaxCount, &vocab_key));
    h->n_vocab = n_vocab ? n_vocab : vocab_key;
    return TERN_OK;
}

tern_status hparams_load_arch(const gguf_file * f, const char * arch, const model_arch * a, model_hparams * h) {
    key_reader r = { f, arch, {0} };
    if (k_arch_phi3 && (a->flags & ARCH_SLIDING_WINDOW) && !(a->flags & ARCH_GEMMA)) {
        uint32_t fallback = 0;  // llama.cpp's defaults for Phi-3 files written before the key existed
        if ((h->n_layer == 32 || h->n_layer == 40) && h->n_ctx_train == 4096) fallback = 2047;
        else if (h->n_layer == 32 && h->n_head_kv == 32 && h->n_ctx_train == 131072) fallback = 262144;
        else if (h->n_layer == 40 && h->n_ctx_train == 131072) fallback = 131072;
        if (gguf_find_key(f, r.name("attention.sliding_window")) < 0 && fallback == 0) {
            return tern_fail(TERN_ERR_FORMAT, "missing key '%s' (no default for this shape)", r.key);
        }
        TERN_TRY(r.u32_in("attention.sliding_window", false, fallback, 0, kMaxCount, &h->n_swa));
    }
    if (k_arch_gemma3 && (a->flags & ARCH_GEMMA) && strcmp(a->name, "gemma3") == 0) {
        h->embd_scale = sqrtf((float) h->n_embd);
        if (h->n_layer == 62) h->attn_scale = 1.0f / sqrtf((float) (h->n_embd / h->n_head));  // the 27B, as ik_llama
        h->swa_period = 6;
        TERN_TRY(r.u32("attention.sliding_window", &h->n_swa));
        h->rope_freq_base_swa = 10000.0f;
        h->rope_freq_scale_swa = 1.0f;
        return TERN_OK;
    }
    if (k_arch_smollm3 && (a->flags & ARCH_NOROPE_LAYERS)) h->norope_period = 4;
    if (k_arch_gemma && (a->flags & ARCH_GEMMA)) {
        if (h->n_layer != 26 && h->n_layer != 42 && h->n_layer != 46) {
            return tern_fail(TERN_ERR_UNSUPPORTED, "gemma2 with %u layers: llama.cpp knows the query scale of 26, 42 and 46 "
                             "layers only", (unsigned) h->n_layer);
        }
        h->embd_scale = sqrtf((float) h->n_embd);
        if (h->n_layer == 46) h->attn_scale = 1.0f / sqrtf((float) (h->n_embd / h->n_head));
        h->swa_period = 2;
        TERN_TRY(r.u32_in("attention.sliding_window", false, 4096, 1, kMaxCount, &h->n_swa));
        TERN_TRY(r.f32_or("attn_logit_softcapping", 50.0f, 0.0f, 1.0e6f, &h->attn_softcap));
        TERN_TRY(r.f32_or("final_logit_softcapping", 30.0f, 0.0f, 1.0e6f, &h->final_softcap));
    }
    if (k_arch_granite && (a->flags & ARCH_SCALES)) {
        const struct { const char * key; float * out; } scales[] = {
            { "embedding_scale", &h->embd_scale }, { "residual_scale", &h->residual_scale },
            { "attention.scale", &h->attn_scale }, { "logit_scale", &h->logit_scale },
        };
        for (const auto & s : scales) {
            if (gguf_find_key(f, r.name(s.key)) < 0) return tern_fail(TERN_ERR_FORMAT, "missing key '%s'", r.key);
            TERN_TRY(r.f32_or(s.key, 1.0f, 0.0f, 1.0e6f, s.out));
        }
    }
    return TERN_OK;
}

}  // namespace tern
