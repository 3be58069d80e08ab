// The tern.h sampler entry points that need a model or a context: they read
// n_vocab and the logits row, then hand over to the chain in sampler.cpp.
// (Kept apart so the chain links and tests without the model code.)
#include "core/status.h"
#include "sample/sampler.h"

namespace tern {

extern "C" size_t tern_sampler_mem_size(const tern_model * model, const tern_sampler_params * params) {
    if (!model) return 0;
    return sampler_mem_size(tern_model_n_vocab(model), params);
}

extern "C" tern_status tern_sampler_create(const tern_model * model, const tern_sampler_params * params,
                                           void * mem, size_t mem_size, tern_sampler ** out_sampler) {
    if (out_sampler) *out_sampler = NULL;
    if (!model) return tern_fail(TERN_ERR_INVALID_ARG, "tern_sampler_create: model is NULL");
    return sampler_init(tern_model_n_vocab(model), params, mem, mem_size, out_sampler);
}

extern "C" tern_token tern_sampler_sample(tern_sampler * sampler, tern_context * ctx, int32_t i) {
    if (!sampler || !ctx) {
        tern_fail(TERN_ERR_INVALID_ARG, "tern_sampler_sample: %s is NULL", sampler ? "ctx" : "sampler");
        return -1;
    }
    const float * logits = tern_get_logits_ith(ctx, i);
    if (!logits) {
        tern_fail(TERN_ERR_INVALID_ARG, "tern_sampler_sample: no logits for token %d of the last batch", (int) i);
        return -1;
    }
    return sampler_sample_logits(sampler, logits, sampler->n_vocab);
}

}  // namespace tern
