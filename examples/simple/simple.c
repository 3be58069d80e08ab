/*
 * simple: the smallest complete use of tern.h, in C99.
 *
 *   tern_simple MODEL.gguf "PROMPT" [N_PREDICT]
 *
 * Loads a model, tokenizes the prompt (with BOS when the model wants it),
 * decodes it in one batch, then greedily generates up to N_PREDICT tokens
 * (default 32), decoding each one, and prints the prompt and every piece as it
 * comes. Stops early at an end-of-generation token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tern.h"

static int report(const char * what, tern_status status) {
    fprintf(stderr, "simple: %s: %s (%s)\n", what, tern_status_str(status), tern_last_error());
    return 1;
}

/* Tokenize into a malloc'd array: the first call asks for the count. */
static tern_token * tokenize(const tern_model * model, const char * text, int32_t * out_n) {
    int32_t len = (int32_t) strlen(text);
    int32_t n = -tern_tokenize(model, text, len, NULL, 0, 1, 0);
    tern_token * tokens;
    if (n <= 0) return NULL;   /* INT32_MIN (error) or an empty prompt */
    tokens = (tern_token *) malloc((size_t) n * sizeof(tern_token));
    if (!tokens || tern_tokenize(model, text, len, tokens, n, 1, 0) != n) {
        free(tokens);
        return NULL;
    }
    *out_n = n;
    return tokens;
}

static void print_piece(const tern_model * model, tern_token token) {
    char buf[256];
    int32_t n = tern_token_to_piece(model, token, buf, (int32_t) sizeof(buf), 0);
    if (n > 0) fwrite(buf, 1, (size_t) n, stdout);
    fflush(stdout);
}

static int generate(const tern_model * model, tern_context * ctx, tern_sampler * sampler,
                    tern_token * prompt, int32_t n_prompt, int n_predict) {
    tern_status st = tern_decode(ctx, tern_batch_get_one(prompt, n_prompt));
    int i;
    if (st != TERN_OK) return report("decode prompt", st);
    for (i = 0; i < n_predict; i++) {
        tern_token token = tern_sampler_sample(sampler, ctx, -1);
        if (token < 0) return report("sample", TERN_ERR_INTERNAL);
        if (tern_token_is_eog(model, token)) break;
        print_piece(model, token);
        st = tern_decode(ctx, tern_batch_get_one(&token, 1));
        if (st != TERN_OK) return report("decode", st);
    }
    putchar('\n');
    return 0;
}

int main(int argc, char ** argv) {
    tern_model_params mp = tern_model_default_params();
    tern_context_params cp = tern_context_default_params();
    tern_sampler_params sp = tern_sampler_default_params();
    tern_model * model = NULL;
    tern_context * ctx = NULL;
    tern_sampler * sampler = NULL;
    tern_token * prompt = NULL;
    int32_t n_prompt = 0;
    int n_predict = argc > 3 ? atoi(argv[3]) : 32;
    tern_status st;
    int rc = 1;

    if (argc < 3 || n_predict < 0) {
        fprintf(stderr, "usage: %s MODEL.gguf \"PROMPT\" [N_PREDICT]\n", argv[0]);
        return 2;
    }
    st = tern_model_load_file(argv[1], &mp, &model);
    if (st != TERN_OK) return report("load model", st);

    prompt = tokenize(model, argv[2], &n_prompt);
    if (!prompt) {
        fprintf(stderr, "simple: cannot tokenize the prompt (%s)\n", tern_last_error());
        goto done;
    }
    cp.n_ctx = (uint32_t) (n_prompt + n_predict);
    st = tern_context_create(model, &cp, &ctx);
    if (st != TERN_OK) {
        report("create context", st);
        goto done;
    }
    sp.temp = 0.0f;   /* greedy */
    st = tern_sampler_create(model, &sp, NULL, 0, &sampler);
    if (st != TERN_OK) {
        report("create sampler", st);
        goto done;
    }

    fputs(argv[2], stdout);
    rc = generate(model, ctx, sampler, prompt, n_prompt, n_predict);

done:
    tern_sampler_free(sampler);
    tern_context_free(ctx);
    free(prompt);
    tern_model_free(model);
    return rc;
}
