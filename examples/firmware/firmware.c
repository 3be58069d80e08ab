/*
 * firmware: Tern the way a firmware uses it, in C99.
 *
 * The model (stories260K.gguf) is part of the image (model_blob.S: .incbin
 * into read-only data), and every byte Tern works in is a static array whose
 * size is fixed at build time: the model's tables, the context (KV cache,
 * activations, logits), the sampler and the tokenizer's scratch. At start-up
 * each array is checked against the library's own sizing function, so a
 * model, prompt length or library change that needs more memory stops with a
 * message naming the constant to raise, not with a corrupted heap. There is no
 * heap use and no file system call: the only contact with the board is
 * fw_write/fw_exit (fw_io.h).
 *
 * It prints a start marker, then greedily continues "Once upon a time" for up
 * to FW_N_PREDICT tokens. Greedy decoding makes the text the same on every
 * target: CI compares the x86-64 run with the aarch64 run under qemu.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fw_io.h"
#include "tern.h"

/* The embedded model (model_blob.S). */
extern const unsigned char fw_model[];
extern const uint32_t fw_model_size;

/* Sizes, each at least 25% over what stories260K needs. Measured with the
 * tern_*_mem_size functions (build with -DFW_..._BYTES=1 and start-up prints
 * the need) on x86-64, whose 64-bit pointers make the tables larger than on
 * 32-bit targets (ARMv7 in brackets):
 *   model tables, vocabulary, sizing scratch   205,119 B (182,079) -> 256 KiB
 *   context, n_ctx 256, n_batch 16 (KV cache,
 *     activations, logits, graph tables)        364,927 B (349,631) -> 448 KiB
 *   sampler (greedy)                              6,847 B   (6,847) ->  16 KiB
 *   tokenizer scratch for the prompt              4,351 B   (4,351) ->   8 KiB
 * The weights (about 1 MB) are not in these: they stay in the image.
 * Raise one with -D when start-up says it is too small. */
#ifndef FW_MODEL_ARENA_BYTES
#define FW_MODEL_ARENA_BYTES (256u * 1024u)
#endif
#ifndef FW_CONTEXT_ARENA_BYTES
#define FW_CONTEXT_ARENA_BYTES (448u * 1024u)
#endif
#ifndef FW_SAMPLER_BYTES
#define FW_SAMPLER_BYTES (16u * 1024u)
#endif
#ifndef FW_TOKENIZE_SCRATCH_BYTES
#define FW_TOKENIZE_SCRATCH_BYTES (8u * 1024u)
#endif
#define FW_N_CTX 256
#define FW_N_BATCH 16
#define FW_N_PREDICT 100
#define FW_PROMPT "Once upon a time"

/* 64-byte aligned like the library's own arenas (any alignment works; this
 * wastes nothing at the start). */
#define FW_ALIGNED __attribute__((aligned(64)))
static unsigned char g_model_arena[FW_MODEL_ARENA_BYTES] FW_ALIGNED;
static unsigned char g_context_arena[FW_CONTEXT_ARENA_BYTES] FW_ALIGNED;
static unsigned char g_sampler_mem[FW_SAMPLER_BYTES] FW_ALIGNED;
static unsigned char g_tokenize_scratch[FW_TOKENIZE_SCRATCH_BYTES] FW_ALIGNED;
static tern_token g_prompt[64];

static void say(const char * text) { fw_write(text, strlen(text)); }

/* "firmware: <what>: <tern_last_error()>" and a non-zero status. */
static int fail(const char * what) {
    say("firmware: ");
    say(what);
    say(": ");
    say(tern_last_error());
    say("\n");
    return 1;
}

/* Decimal text of n (no printf: it may allocate on some C libraries). */
static void say_size(size_t n) {
    char buf[24];
    int i = (int) sizeof(buf) - 1;
    buf[i] = 0;
    do {
        buf[--i] = (char) ('0' + n % 10);
        n /= 10;
    } while (n > 0 && i > 0);
    say(buf + i);
}

/* Checks one static array against the size the library asks for. */
static int fits(const char * constant, size_t have, size_t need) {
    if (need != 0 && need <= have) return 1;
    say("firmware: ");
    say(constant);
    if (need == 0) {
        say(": sizing failed: ");
        say(tern_last_error());
    } else {
        say(" is ");
        say_size(have);
        say(" bytes, ");
        say_size(need);
        say(" needed: build with -D");
        say(constant);
        say("=<bytes>");
    }
    say("\n");
    return 0;
}

/* Library log lines (warnings) go to the same place as the story. */
static void on_log(tern_log_level level, const char * text, void * user) {
    (void) level;
    (void) user;
    say(text);
}

static void say_piece(const tern_model * model, tern_token token) {
    char piece[64];
    int32_t n = tern_token_to_piece(model, token, piece, (int32_t) sizeof(piece), 0);
    if (n > 0) fw_write(piece, (size_t) n);
}

int main(void) {
    tern_model_params mp;
    tern_context_params cp;
    tern_sampler_params sp;
    tern_model * model = NULL;
    tern_context * ctx = NULL;
    tern_sampler * sampler = NULL;
    size_t need;
    int32_t n_prompt, k;
    tern_status st;

    /* Setup done (the log hook is the last of it): from the marker on, the
     * library is the only thing that runs (.ci/firmware.sh checks with strace
     * that it makes no heap or file call after this write). */
    tern_log_set(on_log, NULL);
    say("tern firmware: start\n");

    /* The model: tables in g_model_arena, weights read in place from the image. */
    mp = tern_model_default_params();
    need = tern_model_mem_size_blob(fw_model, fw_model_size, &mp);
    if (!fits("FW_MODEL_ARENA_BYTES", sizeof(g_model_arena), need)) return 1;
    mp.arena = g_model_arena;
    mp.arena_size = sizeof(g_model_arena);
    st = tern_model_load_blob(fw_model, fw_model_size, &mp, &model);
    if (st != TERN_OK) return fail("load");

    /* The context: one thread, a small window. */
    cp = tern_context_default_params();
    cp.n_ctx = FW_N_CTX;
    cp.n_batch = FW_N_BATCH;
    cp.n_threads = 1;
    need = tern_context_mem_size(model, &cp);
    if (!fits("FW_CONTEXT_ARENA_BYTES", sizeof(g_context_arena), need)) return 1;
    cp.arena = g_context_arena;
    cp.arena_size = sizeof(g_context_arena);
    st = tern_context_create(model, &cp, &ctx);
    if (st != TERN_OK) return fail("context");

    /* Greedy sampling: the same text on every target. */
    sp = tern_sampler_default_params();
    sp.temp = 0.0f;
    need = tern_sampler_mem_size(model, &sp);
    if (!fits("FW_SAMPLER_BYTES", sizeof(g_sampler_mem), need)) return 1;
    st = tern_sampler_create(model, &sp, g_sampler_mem, sizeof(g_sampler_mem), &sampler);
    if (st != TERN_OK) return fail("sampler");

    need = tern_tokenize_scratch_size(model, (int32_t) strlen(FW_PROMPT));
    if (!fits("FW_TOKENIZE_SCRATCH_BYTES", sizeof(g_tokenize_scratch), need)) return 1;
    n_prompt = tern_tokenize_in(model, FW_PROMPT, (int32_t) strlen(FW_PROMPT), g_prompt,
                                (int32_t) (sizeof(g_prompt) / sizeof(g_prompt[0])), 1, 0,
                                g_tokenize_scratch, sizeof(g_tokenize_scratch));
    if (n_prompt <= 0) return fail("tokenize");

    say(FW_PROMPT);
    st = tern_decode(ctx, tern_batch_get_one(g_prompt, n_prompt));
    for (k = 0; st == TERN_OK && k < FW_N_PREDICT; k++) {
        tern_token token = tern_sampler_sample(sampler, ctx, -1);
        if (tern_token_is_eog(model, token)) break;
        say_piece(model, token);
        st = tern_decode(ctx, tern_batch_get_one(&token, 1));
    }
    say("\n");
    if (st != TERN_OK) return fail("decode");

    /* Objects in caller memory own nothing: freeing only unhooks them. */
    tern_sampler_free(sampler);
    tern_context_free(ctx);
    tern_model_free(model);
    return 0;
}
