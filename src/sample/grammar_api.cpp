// tern.h entry points of the grammar stage and the JSON-schema conversion.
#include <string.h>

#include "core/arena.h"
#include "core/status.h"
#include "port.h"
#include "sample/sampler.h"
#include "sample/sampler_grammar.h"
#if TERN_WITH_JSON_SCHEMA
#include "sample/json_schema.h"
#endif

namespace tern {

extern "C" size_t tern_sampler_grammar_mem_size(const tern_model * model, const char * grammar, const char * root) {
    return sampler_grammar_mem_size(model, grammar, root);
}

extern "C" tern_status tern_sampler_init_grammar(tern_sampler * sampler, const tern_model * model, const char * grammar,
                                                 const char * root, void * mem, size_t mem_size) {
    if (!sampler || !model) {
        return tern_fail(TERN_ERR_INVALID_ARG, "tern_sampler_init_grammar: %s is NULL", sampler ? "model" : "sampler");
    }
    if (tern_model_n_vocab(model) != sampler->n_vocab) {
        return tern_fail(TERN_ERR_SHAPE, "tern_sampler_init_grammar: the model has %d tokens, the sampler %d",
                         (int) tern_model_n_vocab(model), (int) sampler->n_vocab);
    }
    sampler_grammar * g = NULL;
    TERN_TRY(sampler_grammar_init(model, grammar, root, mem, mem_size, &g));
    if (sampler->grammar) port_free(sampler->grammar->owned);
    sampler->grammar = g;
    return TERN_OK;
}

extern "C" tern_status tern_sampler_grammar_accept(tern_sampler * sampler, tern_token token) {
    if (!sampler || !sampler->grammar) {
        return tern_fail(TERN_ERR_INVALID_ARG, "tern_sampler_grammar_accept: %s", sampler ? "no grammar" : "sampler is NULL");
    }
    return sampler_grammar_accept(sampler->grammar, token);
}

extern "C" tern_status tern_sampler_grammar_reset(tern_sampler * sampler, int32_t budget) {
    if (!sampler || !sampler->grammar) {
        return tern_fail(TERN_ERR_INVALID_ARG, "tern_sampler_grammar_reset: %s", sampler ? "no grammar" : "sampler is NULL");
    }
    sampler->grammar->budget_set = budget < 0 ? -1 : budget;
    return sampler_grammar_reset(sampler->grammar);
}

extern "C" int tern_sampler_grammar_state(const tern_sampler * sampler) {
    if (!sampler || !sampler->grammar) return -1;
    const grammar * g = &sampler->grammar->g;
    return grammar_must_end(g) ? 2 : grammar_can_end(g) ? 1 : 0;
}

extern "C" int32_t tern_json_schema_to_grammar(const char * schema, int lenient, char * buf, int32_t length) {
#if TERN_WITH_JSON_SCHEMA
    if (!schema || length < 0 || (!buf && length > 0)) {
        tern_fail(TERN_ERR_INVALID_ARG, "tern_json_schema_to_grammar: %s", schema ? "bad buffer" : "schema is NULL");
        return -(int32_t) TERN_ERR_INVALID_ARG;
    }
    const size_t len = strlen(schema);
    const size_t need = json_schema_mem_size(schema, len);
    void * mem = port_alloc(need);
    if (!mem) {
        tern_fail(TERN_ERR_NO_MEMORY, "json schema: cannot obtain %zu bytes", need);
        return -(int32_t) TERN_ERR_NO_MEMORY;
    }
    tern_arena a;
    arena_init(&a, mem, need);
    const char * out = NULL;
    size_t out_len = 0;
    char err[512];
    tern_status st = json_schema_to_gbnf(schema, len, lenient ? JSON_SCHEMA_LENIENT : 0, &a, &out, &out_len, err,
                                         sizeof(err));
    int32_t r;
    if (st != TERN_OK) {
        tern_fail(st, "%s", err);
        r = -(int32_t) st;
    } else if (out_len > (size_t) INT32_MAX - 1) {
        tern_fail(TERN_ERR_INVALID_ARG, "json schema: the grammar exceeds INT32_MAX bytes");
        r = -(int32_t) TERN_ERR_INVALID_ARG;
    } else {
        if (buf && length > 0) {
            size_t n = out_len < (size_t) length ? out_len : (size_t) length;
            memcpy(buf, out, n);
            if (out_len < (size_t) length) buf[out_len] = 0;
        }
        r = (int32_t) out_len;
    }
    port_free(mem);
    return r;
#else
    (void) schema; (void) lenient; (void) buf; (void) length;
    tern_fail(TERN_ERR_UNSUPPORTED, "json schema: not compiled in (TERN_JSON_SCHEMA=OFF)");
    return -(int32_t) TERN_ERR_UNSUPPORTED;
#endif
}

}  // namespace tern
