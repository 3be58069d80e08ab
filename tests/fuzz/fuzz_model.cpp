// libFuzzer target over the whole model load and a first decode: the bytes are
// a GGUF file handed over as a blob (hyper-parameters, vocabulary, tensor
// binding, repacking), then a context, a tokenized prompt, one batch and two
// greedy steps. Every path must end in a status, never a crash, a hang or
// undefined behaviour (built with ASan + UBSan).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tern.h"

static void quiet(tern_log_level, const char *, void *) {}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    static bool init = false;
    if (!init) {
        tern_log_set(quiet, NULL);
        init = true;
    }
    // The blob contract: the caller's memory is aligned (a misaligned blob is
    // refused, which the unit tests cover); copy the input to aligned memory.
    void * blob = aligned_alloc(64, (size + 63) & ~(size_t) 63);
    if (!blob) return 0;
    memcpy(blob, data, size);
    tern_model_params mp = tern_model_default_params();
    mp.n_threads = 1;
    mp.check_tensors = size % 2;  // both: refused at load, and non-finite logits at decode
    tern_model * m = NULL;
    if (tern_model_load_blob(blob, size, &mp, &m) == TERN_OK) {
        tern_token toks[16];
        const char * text = "Hello world ab<|im_start|>\n";
        int32_t n = tern_tokenize(m, text, (int32_t) strlen(text), toks, 16, 1, 1);
        char piece[64];
        for (int32_t i = 0; i < n; i++) tern_token_to_piece(m, toks[i], piece, sizeof(piece), 1);
        tern_context_params cp = tern_context_default_params();
        cp.n_ctx = 16;
        cp.n_batch = 8;
        cp.n_threads = 1;
        tern_context * ctx = NULL;
        if (n > 0 && tern_context_create(m, &cp, &ctx) == TERN_OK) {
            if (n > 8) n = 8;
            tern_status st = tern_decode(ctx, tern_batch_get_one(toks, n));
            for (int step = 0; step < 2 && st == TERN_OK; step++) {
                const float * logits = tern_get_logits_ith(ctx, -1);
                if (!logits) abort();  // a successful decode keeps the last token's logits
                tern_token best = 0;
                for (int32_t v = 1; v < tern_model_n_vocab(m); v++) {
                    if (logits[v] > logits[best]) best = v;
                }
                st = tern_decode(ctx, tern_batch_get_one(&best, 1));
            }
            tern_context_free(ctx);
        }
        tern_model_free(m);
    }
    free(blob);
    return 0;
}
